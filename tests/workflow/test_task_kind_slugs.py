"""Task-kind slugs are validated, and download names are safe header values even for old rows.

Issue 10, item 7: a slug holding CR/LF was accepted; from then on that version's export
answered 500 for everyone (``BadHeaderError`` building ``Content-Disposition``).
"""

from __future__ import annotations

import io
import zipfile

import pytest

from annotator.actions.grading import do_upload_submissions
from annotator.actions.versions import do_import_provisional_version
from annotator.base.canonical import sha256_hex
from annotator.base.filenames import safe_filename
from annotator.base.grading.uploads import SubmissionFile
from annotator.models import TaskKind
from tests.factories import client_for, make_packet
from tests.workflow.test_task_kinds import SWIM_KIND

BAD_SLUGS = [
    "swim\r\nX-Injected: 1",
    "swim\nturns",
    "Swim-Turns",
    "-swim",
    "_swim",
    "swim turns",
    "swim/turns",
    "../swim",
    "swïm",
    "",
    "s" * 51,
]


@pytest.mark.django_db
@pytest.mark.parametrize("slug", BAD_SLUGS)
def test_task_kind_slug_with_a_line_break_or_other_bad_characters_is_refused(maintainer, slug):
    response = client_for(maintainer).post("/api/task-kinds/", {**SWIM_KIND, "slug": slug}, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["field"] == "slug" and "lower-case letters" in error["message"], error
    assert not TaskKind.objects.filter(slug=slug).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("slug", ["swim-turns", "swim_turns_2", "7", "s" * 50])
def test_good_task_kind_slugs_are_taken(maintainer, slug):
    response = client_for(maintainer).post("/api/task-kinds/", {**SWIM_KIND, "slug": slug}, format="json")
    assert response.status_code == 201, response.content


@pytest.mark.django_db
def test_a_task_kind_name_too_long_for_its_column_is_a_400(maintainer):
    response = client_for(maintainer).post("/api/task-kinds/", {**SWIM_KIND, "name": "n" * 201}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "name"


def assert_safe_disposition(response):
    header = response["Content-Disposition"]
    assert header.startswith("attachment; filename")
    assert not any(ch in header for ch in "\r\n\0"), header
    return header


@pytest.fixture
def old_row_version(maintainer, annotator_a, annotator_b, adjudicator):
    """A kind saved before slugs were validated (straight to the table), and a version of it."""
    TaskKind.objects.create(
        slug="old\r\nX-Injected: 1/../../evil",
        name="old",
        scorer_id=SWIM_KIND["scorer_id"],
        schema=SWIM_KIND["schema"],
    )
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="old\r\nX-Injected: 1/../../evil")
    event = {"verb": "flip_turn", "nouns": ["wall"], "start_frame": 1, "end_frame": 9}
    return do_import_provisional_version(packet, [event], actor=maintainer, source="t", source_sha256="0" * 64)


@pytest.mark.django_db
def test_export_of_a_version_whose_old_slug_holds_a_line_break_is_not_a_500(old_row_version, maintainer):
    response = client_for(maintainer).get(f"/api/versions/{old_row_version.pk}/export/")
    assert response.status_code == 200
    header = assert_safe_disposition(response)
    assert "X-Injected" not in response.headers or response.headers.get("X-Injected") is None
    assert "/" not in header.split("filename", 1)[1]
    # The zip's own folder name is safe to extract too (no line breaks, no ``..``).
    names = zipfile.ZipFile(io.BytesIO(response.content)).namelist()
    assert names and all(".." not in n.split("/") and "\n" not in n and n.count("/") == 1 for n in names), names


@pytest.mark.django_db
def test_leaderboard_downloads_of_an_old_slug_are_not_a_500(old_row_version, maintainer):
    client = client_for(maintainer)
    for suffix in ("csv", "json"):
        response = client.get(f"/api/versions/{old_row_version.pk}/leaderboard.{suffix}")
        assert response.status_code == 200, response.content[:300]
        assert_safe_disposition(response)


@pytest.mark.django_db
def test_submission_download_name_with_a_line_break_is_a_safe_header(packet, maintainer):
    content = b'{"actions": []}'
    file = SubmissionFile(label="x", name="run\r\nSet-Cookie: a=b.json", content=content,
                          sha256=sha256_hex(content), size=len(content))  # fmt: skip
    [submission] = do_upload_submissions(packet, [file], actor=maintainer)
    response = client_for(maintainer).get(f"/api/submissions/{submission.pk}/content/")
    assert response.status_code == 200
    assert_safe_disposition(response)
    assert "Set-Cookie" not in response.headers


def test_safe_filename_keeps_good_names_and_cleans_bad_ones():
    assert safe_filename("action-ledger-adjudicated-v3.zip") == "action-ledger-adjudicated-v3.zip"
    assert safe_filename("leaderboard-x-provisional-v1-egocentric-f1-v2.csv") == (
        "leaderboard-x-provisional-v1-egocentric-f1-v2.csv"
    )
    assert safe_filename("a\r\nb/../c") == "a_b_.._c"
    assert safe_filename("..") == "download"
    assert safe_filename("run 7 (final).json") == "run 7 (final).json"
    assert safe_filename("résumé.json") == "résumé.json"
    assert len(safe_filename("x" * 1000)) <= 200
