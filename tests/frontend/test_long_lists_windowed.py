"""The people and projects pages show their lists a window of 100 at a time, with the total
counted over every row and links to the other windows: a list that grows is never cut in
silence, and a page's cost does not grow with it. ``?q=`` finds a person by name or e-mail."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User

from annotator.models import Project, TaskKind
from annotator.reads.windows import WINDOW
from tests.factories import client_for, ensure_builtin_rows

pytestmark = pytest.mark.django_db


def names_on(html: str, table: str) -> list[str]:
    body = html.split(f'id="{table}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<a href="/[a-z]+/\d+/">([^<]+)</a>', body)


def test_the_people_page_walks_every_account_a_window_at_a_time(maintainer):
    User.objects.bulk_create(
        [User(username=f"person-{k:04d}", email=f"p{k}@example.org") for k in range(2 * WINDOW + 7)]
    )
    everyone = list(User.objects.order_by("username", "pk").values_list("username", flat=True))
    client, seen, page = client_for(maintainer), [], 1
    while True:
        html = client.get("/people/", {"page": page}).content.decode()
        seen += names_on(html, "people")
        assert f"of {len(everyone)} people" in html
        if 'id="people-next"' not in html:
            break
        page += 1
    assert seen == everyone and page == 3
    found = client.get("/people/", {"q": "PERSON-012"}).content.decode()  # 0120–0129
    assert names_on(found, "people") == [f"person-{k:04d}" for k in range(120, 130)]
    by_mail = client.get("/people/", {"q": "p7@example"}).content.decode()
    assert names_on(by_mail, "people") == ["person-0007"]
    past = client.get("/people/", {"page": 99}).content.decode()  # past the last: the last
    assert names_on(past, "people") == everyone[2 * WINDOW :]


def test_the_projects_page_walks_every_project_a_window_at_a_time(maintainer):
    ensure_builtin_rows()
    kind = TaskKind.objects.order_by("pk").first()
    Project.objects.bulk_create(
        [Project(title=f"project {k:04d}", task_kind=kind, created_by=maintainer) for k in range(WINDOW + 3)]
    )
    client = client_for(maintainer)
    first = client.get("/projects/").content.decode()
    second = client.get("/projects/", {"page": 2}).content.decode()
    assert f"1–{WINDOW} of {WINDOW + 3} projects" in first and 'id="projects-next"' in first
    assert names_on(first, "projects") + names_on(second, "projects") == [f"project {k:04d}" for k in range(WINDOW + 3)]
    assert 'id="projects-prev"' in second and 'id="projects-next"' not in second
