from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from annotator.login_guard import refuse_when_locked

urlpatterns = [
    path("admin/login/", refuse_when_locked(admin.site.login)),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/", include("annotator.api.urls")),
    path("", include("annotator.media_urls")),
    path("", include("frontend.urls")),
]
