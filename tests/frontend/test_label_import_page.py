"""GTEA labels imported from the browser: a dry run with counts and every refused line,
then the import of exactly the bytes previewed; maintainers of the packet only."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.base.canonical import sha256_hex
from annotator.models import GroundTruthVersion
from tests.factories import client_for

LABELS = Path("data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests/Ahmad_American.txt")
BAD = (
    b"<take><cup> (10-40)\n\n<put><cup,plate> (50-45)\ngarbage line\n"
    b"<open><fridge> (100-99999)\n<close><fridge> (60-90)\n"
)


def preview(client, packet, name, data):
    return client.post(
        f"/packets/{packet.pk}/labels/import/", {"op": "preview", "labels": SimpleUploadedFile(name, data)}
    )


def commit(client, packet, name, data, sha=None):
    form = {
        "op": "import",
        "name": name,
        "sha256": sha or sha256_hex(data),
        "data_b64": base64.b64encode(data).decode(),
    }
    return client.post(f"/packets/{packet.pk}/labels/import/", form)


@pytest.mark.django_db
def test_the_published_file_previews_then_imports_as_the_command_does(packet, maintainer):
    client = client_for(maintainer)
    data = LABELS.read_bytes()
    page = preview(client, packet, LABELS.name, data).content.decode()
    assert re.search(
        r"<strong>172</strong> valid actions · 15 verbs · 35 nouns · <strong>0</strong> refused lines", page
    )
    assert "would become provisional version 1" in page
    assert not GroundTruthVersion.objects.exists()  # a dry run writes nothing
    done = commit(client, packet, LABELS.name, data)
    assert done.status_code == 200 and b"Imported as provisional version 1" in done.content
    version = GroundTruthVersion.objects.get(packet=packet, tier="provisional")
    assert version.manifest["source"] == "gtea:Ahmad_American.txt"
    assert version.manifest["source_sha256"] == sha256_hex(data)
    assert b"importing it again changes nothing" in preview(client, packet, LABELS.name, data).content


@pytest.mark.django_db
def test_refused_lines_are_listed_with_reasons_and_nothing_is_imported(packet, maintainer):
    client = client_for(maintainer)
    page = preview(client, packet, "bad.txt", BAD).content.decode()
    assert "<strong>2</strong> valid actions" in page and "<strong>3</strong> refused lines" in page
    rows = re.findall(r"<tr><td>(\d+)</td><td><code>[^<]*</code></td><td>([^<]+)</td></tr>", page)
    assert rows == [
        ("3", "start must be before end"),
        ("4", "expected &lt;verb&gt;&lt;noun,...&gt; (start-end)"),
        ("5", "end_frame: must be at most 25691"),
    ]
    assert 'id="do-import"' not in page
    refused = commit(client, packet, "bad.txt", BAD)
    assert refused.status_code == 400 and b"fix the refused lines" in refused.content
    assert not GroundTruthVersion.objects.exists()


@pytest.mark.django_db
def test_an_import_of_other_bytes_than_previewed_is_refused(packet, maintainer):
    data = LABELS.read_bytes()
    response = commit(client_for(maintainer), packet, LABELS.name, data, sha=sha256_hex(b"something else"))
    assert response.status_code == 409 and b"differs from the one previewed" in response.content
    for junk in [b"\xff\xfe not utf-8", b""]:
        page = preview(client_for(maintainer), packet, "x.txt", junk)
        assert page.status_code in {200, 400}
        assert 'id="do-import"' not in page.content.decode()
    assert not GroundTruthVersion.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("persona", ["annotator_a", "annotator_b", "adjudicator", "outsider"])
def test_the_import_page_is_404_for_everyone_but_the_packets_maintainers(persona, request, packet):
    client = client_for(request.getfixturevalue(persona))
    url = f"/packets/{packet.pk}/labels/import/"
    assert client.get(url).status_code == 404
    assert commit(client, packet, LABELS.name, LABELS.read_bytes()).status_code == 404
    assert not GroundTruthVersion.objects.exists()
