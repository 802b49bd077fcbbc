from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from annotator.base.login_guard import refuse_when_locked
from deploy import admin_users, health

admin_users.install()

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics, name="metrics"),
    path("admin/login/", refuse_when_locked(admin.site.login)),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/", include("annotator.entry.api.urls")),
    path("", include("annotator.entry.media_urls")),
    path("", include("annotator.entry.pages.urls")),
]

# On /api/ paths every error is the API's JSON error body; other pages keep Django's.
handler400 = "annotator.entry.api.errors.bad_request"
handler403 = "annotator.entry.api.errors.permission_denied"
handler404 = "annotator.entry.api.errors.page_not_found"
handler500 = "annotator.entry.api.errors.server_error"
