"""Issue 14: the tennis kind no longer hard-codes the two players for every video. A
packet's ``parameters`` (``{"players": [...]}``) are checked against its kind's family,
hashed with the packet, and used in place of the kind's names: the form's choices and
labels, event validation, and the exported vocabulary."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from annotator.actions.versions import do_import_provisional_version
from tests.factories import client_for, make_ready_video

pytestmark = pytest.mark.django_db

PLAYERS = ["Carlos Alcaraz", "Jannik Sinner"]
EVENT = {
    "set": 1, "medvedev_games": 0, "de_minaur_games": 0, "medvedev_points": "0", "de_minaur_points": "40",
    "server": "Carlos Alcaraz", "opportunity": 1, "first_serve_in": True, "outcome": "saved",
    "serve_direction": "wide", "rally_shots": 1, "terminal_player": "Carlos Alcaraz",
    "terminal_stroke": "serve", "terminal_court_position": "serve", "terminal_result": "ace",
    "terminal_error": "none", "shots": [{"stroke": "serve", "direction": "wide"}],
}  # fmt: skip


def create(client, parameters=None, **extra):
    video = make_ready_video(f"match {len(str(parameters))} {extra}", frame_count=3000, fps=(30, 1))
    body = {
        "title": "Alcaraz v Sinner", "video": video.pk, "task_kind": "break-point-ledger",
        "annotator_a": "annotator_a", "annotator_b": "annotator_b", "adjudicator": "adjudicator",
    }  # fmt: skip
    if parameters is not None:
        body["parameters"] = parameters
    return client.post("/api/packets/", body, format="json")


@pytest.fixture
def boss(maintainer, annotator_a, annotator_b, adjudicator):
    return client_for(maintainer)


def test_players_replace_the_kinds_names_in_the_schema_each_role_gets(boss, annotator_a):
    answer = create(boss, {"players": ["  Carlos   Alcaraz ", "Jannik Sinner"]})
    assert answer.status_code == 201, answer.content
    packet = answer.json()
    assert packet["parameters"] == {"players": PLAYERS}  # names tidied, as hashed
    view = client_for(annotator_a).get(f"/api/packets/{packet['id']}/").json()
    fields = {f["name"]: f for f in view["task_kind"]["schema"]["fields"]}
    assert fields["server"]["choices"] == PLAYERS and fields["terminal_player"]["choices"] == PLAYERS
    assert fields["medvedev_games"]["label"] == "Carlos Alcaraz: games"
    assert fields["de_minaur_points"]["label"] == "Jannik Sinner: points"
    assert "Daniil Medvedev" not in json.dumps(view)


def test_events_name_the_packets_players_and_not_the_kinds_defaults(boss, annotator_a):
    packet_id = create(boss, {"players": PLAYERS}).json()["id"]
    client = client_for(annotator_a)
    added = client.post(f"/api/packets/{packet_id}/ledger/events/", {"data": EVENT, "version": 0}, format="json")
    assert added.status_code == 201, added.content
    old_name = {**EVENT, "server": "Daniil Medvedev", "opportunity": 2}
    refused = client.post(f"/api/packets/{packet_id}/ledger/events/", {"data": old_name, "version": 1}, format="json")
    assert refused.status_code == 400
    assert refused.json()["error"]["field"] == "server"


def test_without_parameters_the_kinds_own_players_stay(boss):
    packet = create(boss).json()
    fields = {f["name"]: f for f in packet["task_kind"]["schema"]["fields"]}
    assert fields["server"]["choices"] == ["Daniil Medvedev", "Alex De Minaur"]
    assert "label" not in fields["medvedev_games"]


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"players": ["Carlos Alcaraz"]}, "players must be a list of the two players' names"),
        ({"players": ["Carlos Alcaraz", "carlos  alcaraz"]}, "the two players must have different names"),
        ({"players": ["Carlos Alcaraz", ""]}, "each player's name must be a non-empty string"),
        ({"players": ["Carlos Alcaraz", 7]}, "each player's name must be a non-empty string"),
        ({"player": PLAYERS}, "unknown parameter 'player' (this kind takes: players)"),
    ],
)
def test_bad_parameters_are_refused_naming_the_field(boss, parameters, message):
    answer = create(boss, parameters)
    assert answer.status_code == 400, answer.content
    error = answer.json()["error"]
    assert error["message"].endswith(message)
    assert error["field"].startswith("parameters.")
    assert not boss.get("/api/packets/").json(), "nothing was created"


def test_parameters_are_part_of_the_packet_hash(boss):
    first = create(boss, {"players": PLAYERS}).json()
    second = create(boss, {"players": ["Iga Swiatek", "Aryna Sabalenka"]}).json()
    assert first["sha256"] != second["sha256"]


def test_the_export_vocabulary_lists_the_packets_players(boss, maintainer):
    from annotator.models import Packet

    packet = Packet.objects.get(pk=create(boss, {"players": PLAYERS}).json()["id"])
    version = do_import_provisional_version(packet, [EVENT], actor=maintainer, source="test", source_sha256="0" * 64)
    archive = zipfile.ZipFile(io.BytesIO(boss.get(f"/api/versions/{version.pk}/export/").content))
    vocabulary = json.loads(next(archive.read(n) for n in archive.namelist() if n.endswith("vocabulary.json")))
    assert vocabulary["server"] == PLAYERS and vocabulary["terminal_player"] == PLAYERS
