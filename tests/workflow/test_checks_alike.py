"""One operation, one check: the page, the API route and the management command of an
operation refuse the same input with the same limit and the same reason, because each
calls the operation's ``check_*`` (``tests/architecture/test_check_tier.py`` holds the
rule). Real requests through Django's test client; real files for the commands."""

from __future__ import annotations

import html
import io
import json
import re
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotator.actions.moment_imports import STAGED_SECONDS, do_stage_moment_files
from annotator.base.canonical import sha256_hex
from annotator.base.moment_sources import MAX_FILE_BYTES, size_refusal
from annotator.models import GroundTruthVersion, Packet, TaskKind
from annotator.reads.label_imports import MAX_LABEL_BYTES, TOO_LARGE, staged_folder
from tests.factories import client_for
from tests.frontend.test_label_import_page import commit as commit_labels
from tests.frontend.test_label_import_page import preview as preview_labels
from tests.workflow.test_task_kinds import SWIM_KIND

ROW = json.dumps({"qid": 1, "query": "a person waves", "vid": "vid_a", "duration": 30, "relevant_windows": [[0, 4]]})
BAD_ROWS = (ROW + "\n{not json\n").encode()
PEOPLE = ("annotator_a", "annotator_b", "adjudicator")


def _staged() -> list[str]:
    folder = staged_folder()
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def api_import(client, data: bytes, people, *, reannotated=()):
    form = {"source": "qvhighlights", **{k: p.username for k, p in zip(PEOPLE, people, strict=True)}}
    files = {"file": _named(data, "rows.jsonl"), "reannotated": [_named(x, "extra.csv") for x in reannotated]}
    return client.post("/api/moment-imports/", {**form, **files})


def _named(data: bytes, name: str):
    handle = io.BytesIO(data)
    handle.name = name
    return handle


def page_form(people) -> dict:
    return {"source": "qvhighlights", **{k: p.pk for k, p in zip(PEOPLE, people, strict=True)}}


def page_preview(client, data: bytes, people, *, reannotated=()):
    files = {"rows": SimpleUploadedFile("rows.jsonl", data)}
    if reannotated:
        files["reannotated"] = [SimpleUploadedFile(f"extra{i}.csv", x) for i, x in enumerate(reannotated)]
    return client.post("/imports/moments/", {"op": "preview", **page_form(people), **files})


def page_import_staged(client, preview_page: str, people):
    """The import form as the preview page rendered it: the files named, not carried."""
    hidden = dict(re.findall(r'<input type="hidden" name="(sha256|staged|name)" value="([^"]*)"', preview_page))
    return client.post("/imports/moments/", {"op": "import", **page_form(people), **hidden})


def page_import_uploaded(client, data: bytes, people):
    """An import POST that uploads the file itself (a script, no dry run first)."""
    body = {
        "op": "import",
        "sha256": sha256_hex(data),
        **page_form(people),
        "rows": SimpleUploadedFile("rows.jsonl", data),
    }
    return client.post("/imports/moments/", body)


def command_import(tmp_path, data: bytes, people, *, reannotated=()):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(data)
    extra = []
    for i, x in enumerate(reannotated):
        extra.append(tmp_path / f"extra{i}.csv")
        extra[-1].write_bytes(x)
    args = [
        str(path),
        "--source=qvhighlights",
        *(f"--{k.replace('_', '-')}={p.username}" for k, p in zip(PEOPLE, people, strict=True)),
    ]
    if extra:
        args += ["--reannotated", *map(str, extra)]
    call_command("import_moments", *args, stdout=io.StringIO())


@pytest.fixture
def trio(annotator_a, annotator_b, adjudicator):
    return annotator_a, annotator_b, adjudicator


@pytest.mark.django_db
def test_a_moment_file_past_the_limit_is_refused_alike_by_the_page_the_api_and_the_command(maintainer, trio, tmp_path):
    client = client_for(maintainer)
    too_large = b"x" * (MAX_FILE_BYTES + 1)
    reason = size_refusal(MAX_FILE_BYTES + 1)
    assert "64 MiB" in reason
    api = api_import(client, too_large, trio)
    assert api.status_code == 400
    assert api.json() == {"error": {"code": "invalid", "message": reason, "field": "file"}}
    page = page_preview(client, too_large, trio)
    assert page.status_code == 200 and html.escape(reason) in page.content.decode()
    assert 'id="do-import" disabled' in page.content.decode() and _staged() == []  # nothing kept
    imported = page_import_uploaded(client, too_large, trio)
    assert imported.status_code == 400 and html.escape(reason) in imported.content.decode()
    with pytest.raises(CommandError, match=re.escape(reason)):
        command_import(tmp_path, too_large, trio)
    assert not Packet.objects.exists()


@pytest.mark.django_db
def test_a_re_annotation_csv_past_the_limit_is_refused_alike(maintainer, trio, tmp_path):
    """The page read one byte past the limit of a CSV and went on with the cut file."""
    client = client_for(maintainer)
    csv = b"x" * (MAX_FILE_BYTES + 1)
    reason = size_refusal(len(csv))
    api = api_import(client, ROW.encode(), trio, reannotated=[csv])
    assert api.status_code == 400 and api.json()["error"]["message"] == reason
    page = page_preview(client, ROW.encode(), trio, reannotated=[csv]).content.decode()
    assert html.escape(reason) in page and 'id="do-import" disabled' in page
    with pytest.raises(CommandError, match=re.escape(reason)):
        command_import(tmp_path, ROW.encode(), trio, reannotated=[csv])
    assert not Packet.objects.exists()


@pytest.mark.django_db
def test_a_moment_file_of_exactly_the_limit_imports_through_the_page_and_the_api(maintainer, trio):
    """64 MiB through the page too: the dry run keeps the file, the import form names it
    (a form field could carry 2 MiB)."""
    client = client_for(maintainer)
    data = (ROW + " " * (MAX_FILE_BYTES - len(ROW))).encode()
    assert len(data) == MAX_FILE_BYTES
    preview = page_preview(client, data, trio)
    assert preview.status_code == 200 and 'id="do-import" >' in preview.content.decode()
    assert _staged() == [sha256_hex(data)]
    assert not Packet.objects.exists()  # the dry run stored no row
    done = page_import_staged(client, preview.content.decode(), trio)
    assert done.status_code == 200 and b"1 created, 0 updated, 0 unchanged" in done.content
    api = api_import(client, data, trio)
    assert api.status_code == 201 and (api.json()["created"], api.json()["unchanged"]) == (0, 1)
    assert GroundTruthVersion.objects.filter(tier="provisional").count() == 1


@pytest.mark.django_db
def test_a_malformed_row_is_refused_alike_with_its_line(maintainer, trio, tmp_path):
    client = client_for(maintainer)
    api = api_import(client, BAD_ROWS, trio)
    assert api.status_code == 400
    message = api.json()["error"]["message"]
    assert message.startswith("rows.jsonl line 2: not JSON")
    page = page_preview(client, BAD_ROWS, trio).content.decode()
    reason = message.removeprefix("rows.jsonl line 2: ")
    assert re.search(r"<tr><td>2</td><td><code>\{not json</code></td><td>" + re.escape(html.escape(reason)), page)
    assert page_import_uploaded(client, BAD_ROWS, trio).status_code == 400
    with pytest.raises(CommandError, match=re.escape(message)):
        command_import(tmp_path, BAD_ROWS, trio)
    assert not Packet.objects.exists() and _staged() == []


@pytest.mark.django_db
def test_a_previewed_file_no_longer_kept_asks_for_a_new_preview(maintainer, trio):
    client = client_for(maintainer)
    preview = page_preview(client, ROW.encode(), trio).content.decode()
    for name in _staged():
        (staged_folder() / name).unlink()
    refused = page_import_staged(client, preview, trio)
    assert refused.status_code == 409 and b"preview it again" in refused.content
    assert not Packet.objects.exists()


def _labels_of_size(size: int) -> bytes:
    """One valid GTEA line, then blank lines (which the reader skips) up to ``size`` bytes."""
    line = b"<take><cup> (10-40)\n"
    return line + b"\n" * (size - len(line))


@pytest.mark.django_db
def test_a_label_file_past_the_limit_is_refused_alike_by_the_page_and_the_command(packet, maintainer, tmp_path):
    client = client_for(maintainer)
    data = _labels_of_size(MAX_LABEL_BYTES + 1)
    page = preview_labels(client, packet, "big.txt", data).content.decode()
    assert html.escape(TOO_LARGE) in page and "1 MiB" in TOO_LARGE
    refused = commit_labels(client, packet, "big.txt", data)  # the bytes fit the form body
    assert refused.status_code == 400 and html.escape(TOO_LARGE) in refused.content.decode()
    path = tmp_path / "big.txt"
    path.write_bytes(data)
    with pytest.raises(CommandError, match=re.escape(TOO_LARGE)):
        call_command("import_gtea_labels", str(path), packet=packet.pk, stdout=io.StringIO())
    assert not GroundTruthVersion.objects.exists()


@pytest.mark.django_db
def test_a_label_file_of_exactly_the_limit_imports_through_the_page_and_the_command(packet, maintainer, tmp_path):
    """The page carries the previewed bytes back in its import form; at the limit they
    still fit Django's form body (``DATA_UPLOAD_MAX_MEMORY_SIZE``)."""
    client = client_for(maintainer)
    data = _labels_of_size(MAX_LABEL_BYTES)
    assert b"would become provisional version 1" in preview_labels(client, packet, "full.txt", data).content
    done = commit_labels(client, packet, "full.txt", data)
    assert done.status_code == 200 and b"Imported as provisional version 1" in done.content
    path = tmp_path / "full.txt"
    path.write_bytes(data)
    out = io.StringIO()
    call_command("import_gtea_labels", str(path), packet=packet.pk, stdout=out)
    assert "provisional version 1 " in out.getvalue()  # the same events: the same version
    assert GroundTruthVersion.objects.filter(tier="provisional").count() == 1


@pytest.mark.django_db
def test_a_bad_label_line_is_refused_alike_by_the_page_and_the_command(packet, maintainer, tmp_path):
    client = client_for(maintainer)
    data = b"<take><cup> (10-40)\n<juggle><cup> (50-60)\n"
    page = preview_labels(client, packet, "bad.txt", data).content.decode()
    reason = re.search(r"<tr><td>2</td><td><code>[^<]*</code></td><td>([^<]+)</td></tr>", page)[1]
    assert reason.startswith("verb: ")
    assert commit_labels(client, packet, "bad.txt", data).status_code == 400
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    with pytest.raises(CommandError, match=re.escape(f"bad.txt: line 2: {html.unescape(reason)}")):
        call_command("import_gtea_labels", str(path), packet=packet.pk, stdout=io.StringIO())
    assert not GroundTruthVersion.objects.exists()


def _editor_form(kind: dict) -> dict:
    fields = {}
    for i, field in enumerate(kind["schema"]["fields"]):
        fields |= {f"field-{i}-name": field["name"], f"field-{i}-type": field["type"], f"field-{i}-required": "on"}
        if "choices" in field:
            fields[f"field-{i}-choices"] = "\n".join(field["choices"])
        if field.get("frame"):
            fields[f"field-{i}-frame"] = "on"
    schema = kind["schema"]
    return {
        "slug": kind["slug"], "name": kind["name"], "family": schema["family"], "scorer_id": kind["scorer_id"],
        "root_key": schema["root_key"], "tolerance": str(schema["tolerance"]),
        "boundary_start": schema["boundary_fields"][0], "boundary_end": schema["boundary_fields"][1],
        "sort_keys": ", ".join(schema.get("sort_keys", [])), "description": "",
        "field_count": str(len(schema["fields"])), **fields,
    }  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "field"),
    [({"slug": "Bad Slug"}, "slug"), ({"name": "n" * 201}, "name"), ({"scorer_id": "moment-utility-v1"}, "scorer_id")],
)
def test_a_task_kind_is_refused_alike_by_the_editor_and_the_api(maintainer, change, field):
    client = client_for(maintainer)
    api = client.post("/api/task-kinds/", {**SWIM_KIND, **change}, format="json")
    assert api.status_code == 400 and api.json()["error"]["field"] == field
    page = client.post("/task-kinds/", {**_editor_form(SWIM_KIND), **change})
    assert page.status_code == 400
    assert html.escape(api.json()["error"]["message"]) in page.content.decode()
    assert f'data-field="{field}"' in page.content.decode()
    assert not TaskKind.objects.filter(name__in=[SWIM_KIND["name"], "n" * 201]).exists()


@pytest.mark.django_db
def test_a_valid_task_kind_is_made_alike_by_the_editor_and_the_api(maintainer):
    client = client_for(maintainer)
    assert client.post("/task-kinds/", _editor_form(SWIM_KIND)).status_code == 302
    again = client.post("/api/task-kinds/", SWIM_KIND, format="json")
    assert (
        again.status_code == 400
        and again.json()["error"]["message"] == f"a task kind {SWIM_KIND['slug']!r} exists already"
    )
    other = client.post("/api/task-kinds/", {**SWIM_KIND, "slug": "swim-turns-api"}, format="json")
    assert other.status_code == 201
    page_kind, api_kind = TaskKind.objects.get(slug=SWIM_KIND["slug"]), TaskKind.objects.get(slug="swim-turns-api")
    assert page_kind.schema == api_kind.schema and page_kind.scorer_id == api_kind.scorer_id


@pytest.mark.django_db
def test_files_kept_past_their_day_go_with_the_next_preview(maintainer, trio):
    client = client_for(maintainer)
    page_preview(client, ROW.encode(), trio)
    [old] = _staged()
    later = time.time() + STAGED_SECONDS + 60
    other = (ROW + "\n").encode()
    assert do_stage_moment_files([other], now=later) == [sha256_hex(other)]
    assert _staged() == [sha256_hex(other)] and old != sha256_hex(other)
