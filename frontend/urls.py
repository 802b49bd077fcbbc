from django.contrib.auth import views as auth_views
from django.urls import include, path

from annotator.login_guard import refuse_when_locked
from frontend import pages, views

urlpatterns = [
    path(
        "login/",
        refuse_when_locked(auth_views.LoginView.as_view(template_name="frontend/login.html")),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", views.home, name="home"),
    path("", include("frontend.player_urls")),
    path("", include("frontend.grading_urls")),
    path("packets/<int:packet_id>/", pages.packet_home, name="packet"),
    path("packets/<int:packet_id>/adjudicate/", pages.adjudication, name="packet-adjudicate"),
    path("packets/<int:packet_id>/audit/", pages.audit_log, name="packet-audit"),
    path("versions/<int:version_id>/", pages.version_page, name="version"),
    path("maintainer/packets/new/", pages.new_packet, name="maintainer-new-packet"),
]
