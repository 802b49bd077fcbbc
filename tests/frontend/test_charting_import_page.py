"""Match Charting Project point rows imported from the browser into a tennis packet's
provisional tier: a dry run with counts and every refused row, then the import of
exactly the bytes previewed, with the packet's players."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.base.canonical import sha256_hex
from annotator.models import GroundTruthVersion
from tests.factories import client_for, make_packet

ROWS = Path("data/mcp/medvedev-de-minaur-break-points-as-charting-rows.csv")
KEY = Path(
    "data/agentic-vbench/medvedev-de-minaur-2023-us-open-break-point-ledger/calibration/baselines/anchors/oracle/solution.json"
)
HEADER = "Pt,Set1,Set2,Gm1,Gm2,Pts,Svr,1st,2nd,PtWinner,start_frame,end_frame\n"


@pytest.fixture
def tennis(maintainer, annotator_a, annotator_b, adjudicator):
    return make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="break-point-ledger",
                       parameters={"players": ["Daniil Medvedev", "Alex De Minaur"]})  # fmt: skip


def events_of(version) -> list[dict]:
    return json.loads(version.canonical_json)["events"]


def preview(client, packet, name, data, **form):
    body = {"op": "preview", "labels": SimpleUploadedFile(name, data), **form}
    return client.post(f"/packets/{packet.pk}/labels/import/", body)


def commit(client, packet, name, data, **form):
    body = {"op": "import", "name": name, "sha256": sha256_hex(data),
            "data_b64": base64.b64encode(data).decode(), **form}  # fmt: skip
    return client.post(f"/packets/{packet.pk}/labels/import/", body)


@pytest.mark.django_db
def test_the_break_points_preview_then_import_as_the_published_key(tennis, maintainer):
    client = client_for(maintainer)
    data = ROWS.read_bytes()
    page = client.get(f"/packets/{tennis.pk}/labels/import/").content.decode()
    assert "Match Charting Project" in page and ">Alex De Minaur</option>" in page
    page = preview(client, tennis, ROWS.name, data).content.decode()
    assert re.search(r"<strong>16</strong> points read · <strong>16</strong> valid break points "
                     r"\(7 converted, 9 saved, 0 with frames\) · <strong>0</strong> refused rows", page)  # fmt: skip
    assert not GroundTruthVersion.objects.exists()  # a dry run writes nothing
    done = commit(client, tennis, ROWS.name, data)
    assert done.status_code == 200 and b"Imported as provisional version 1" in done.content
    version = GroundTruthVersion.objects.get(packet=tennis, tier="provisional")
    assert version.manifest["source"] == f"mcp-charting:{ROWS.name}"
    key = json.loads(KEY.read_text())["break_points"]

    def order(event):
        return json.dumps(event, sort_keys=True)

    assert sorted(events_of(version), key=order) == sorted(key, key=order)


@pytest.mark.django_db
def test_refused_rows_are_listed_with_reasons_and_nothing_is_imported(tennis, maintainer):
    client = client_for(maintainer)
    data = (HEADER
            + "1,0,0,0,0,0-0,1,6f1f2*,,2,,\n"          # not a break point: counted only
            + "2,0,0,1,1,30-40,1,6f2f1f3b3y1f3m3d#,,1,120,180\n"  # a break point, saved, with frames
            + "3,0,0,2,2,30-40,1,S,,1,,\n"             # not charted shot by shot
            + "4,0,0,2,4,15-40,1,6b2f2n#,,1,,\n"       # the codes say the returner won
            + "5,0,1,2,1,40-AD,2,0e,5b3b3,2,,\n"       # no ending
            + "6,0,1,2,1,AD-40,2,4*,,2,,\n"            # the server's game point: counted only
            + "7,0,1,2,1,40-AD,2,4*,,2,9999990,9999999\n"  # frames beyond the video
            ).encode()  # fmt: skip
    response = preview(client, tennis, "points.csv", data)
    page = response.content.decode()
    assert "<strong>7</strong> points read · <strong>1</strong> valid break point" in page
    rows = re.findall(r"<tr><td>(\d+)</td><td><code>[^<]*</code></td><td>([^<]+)</td></tr>", page)
    assert [n for n, _ in rows] == ["4", "5", "6", "8"]
    reasons = dict(rows)
    assert "not charted shot by shot" in reasons["4"]
    assert "PtWinner says the server won" in reasons["5"]
    assert "the rally has no ending" in reasons["6"]
    assert reasons["8"].startswith("start_frame: must be at most")
    refused = commit(client, tennis, "points.csv", data)
    assert refused.status_code == 400 and not GroundTruthVersion.objects.exists()


@pytest.mark.django_db
def test_player_one_may_be_the_packets_second_player(tennis, maintainer):
    data = (HEADER + "1,0,0,1,2,30-40,1,6*,,1,,\n").encode()  # the file's player 1 serves at 1-2
    page = preview(client_for(maintainer), tennis, "p.csv", data, player_one="second").content.decode()
    assert "valid break point" in page
    done = commit(client_for(maintainer), tennis, "p.csv", data, player_one="second")
    (event,) = events_of(GroundTruthVersion.objects.get(packet=tennis))
    assert (event["server"], event["medvedev_games"], event["de_minaur_games"]) == ("Alex De Minaur", 2, 1)
    assert (event["de_minaur_points"], event["medvedev_points"], event["outcome"]) == ("30", "40", "saved")
    assert done.status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("persona", ["annotator_a", "adjudicator", "outsider"])
def test_only_the_packets_maintainers_import(tennis, persona, request):
    client = client_for(request.getfixturevalue(persona))
    assert client.get(f"/packets/{tennis.pk}/labels/import/").status_code == 404
    assert commit(client, tennis, ROWS.name, ROWS.read_bytes()).status_code == 404
    assert not GroundTruthVersion.objects.exists()
