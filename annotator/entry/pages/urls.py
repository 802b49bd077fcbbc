"""Every page's URL (``annotator.entry.pages.site``), included at the root."""

from django.contrib.auth import views as auth_views
from django.urls import path

import annotator.base.urlconverters  # noqa: F401  (registers the <id:…> path converter)
from annotator.base.login_guard import refuse_when_locked
from annotator.entry.pages import imports as pages_imports
from annotator.entry.pages import people as pages_people
from annotator.entry.pages import projects as pages_projects
from annotator.entry.pages import site as pages
from annotator.entry.pages import taskkinds as pages_taskkinds

urlpatterns = [
    path(
        "login/",
        refuse_when_locked(auth_views.LoginView.as_view(template_name="frontend/login.html")),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # everyone signed in: their own password (Django's views), and the help page
    path("account/password/", pages.password_change, name="password-change"),
    path("account/password/done/", pages.password_change_done, name="password-change-done"),
    path("account/tokens/", pages_people.own_tokens, name="own-tokens"),
    path("help/", pages.help_page, name="help"),
    path("", pages.home, name="home"),
    path("favicon.ico", pages.favicon, name="favicon"),
    # the protocol
    path("packets/<id:packet_id>/", pages.packet_home, name="packet"),
    path("packets/<id:packet_id>/player/", pages.packet_player, name="packet-player"),
    path("packets/<id:packet_id>/adjudicate/", pages.adjudication, name="packet-adjudicate"),
    path("packets/<id:packet_id>/audit/", pages.audit_log, name="packet-audit"),
    path("versions/<id:version_id>/", pages.version_page, name="version"),
    path("maintainer/packets/new/", pages.new_packet, name="maintainer-new-packet"),
    # people, projects, the dashboard and the audit view across packets (maintainers)
    path("people/", pages_people.people_list, name="people"),
    path("people/<id:person_id>/", pages_people.person, name="person"),
    path("people/set-password/<str:uidb64>/<str:token>/", pages_people.set_password_from_link, name="set-password"),
    path("projects/", pages_projects.project_list, name="projects"),
    path("projects/<id:project_id>/", pages_projects.project_detail, name="project"),
    path("packets/<id:packet_id>/assignment/", pages_projects.packet_assignment, name="packet-assignment"),
    path("packets/<id:packet_id>/labels/import/", pages_imports.import_labels, name="packet-import-labels"),
    path("imports/moments/", pages_imports.import_moments, name="import-moments"),
    path("dashboard/", pages_projects.dashboard, name="dashboard"),
    path("task-kinds/", pages_taskkinds.task_kinds, name="task-kinds"),
    path("task-kinds/check/", pages_taskkinds.task_kind_check, name="task-kind-check"),
    path("audit/", pages_projects.audit_view, name="audit"),
    # grading
    path("grading/packets/<id:packet_id>/", pages.packet_grading, name="grading-packet"),
    path("grading/packets/<id:packet_id>/agreement/", pages.agreement, name="grading-agreement"),
    path("grading/versions/<id:version_id>/", pages.version_grading, name="grading-version"),
    path("grading/scores/<id:score_id>/", pages.score_diagnostics, name="grading-score"),
]
