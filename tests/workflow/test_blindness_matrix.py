"""Every URL of the app × every role × every workflow state.

The URL list is read from the URL configuration itself, so a new endpoint is covered
(or, for the API, must be classified in ``API_RULES`` or this test fails).
"""

from __future__ import annotations

import json
import re
import uuid

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from annotator.actions.adjudication import do_decide_item
from annotator.actions.grading import do_score_batch, do_start_scoring_run, do_upload_submissions
from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.actions.versions import do_import_provisional_version, do_publish_adjudicated_version
from annotator.canonical import sha256_hex
from annotator.grading.uploads import SubmissionFile
from annotator.models import Job, Ledger
from tests.factories import client_for

GOOD_EDIT = {"verb": "put", "nouns": ["cup"], "start_frame": 2, "end_frame": 30}
ROLES = ["annotator_a", "annotator_b", "adjudicator", "maintainer", "outsider"]
STATES = ["annotating", "a_frozen", "both_frozen", "published"]
ATTESTATION = "I labelled this video alone, from the video only."

# Frame numbers that occur only in one ledger (or the provisional tier).
A_FRAMES, B_FRAMES, PROVISIONAL_FRAMES = (11111, 11177), (22222, 22288), (3333, 3399)


def walk(patterns, prefix=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.name


def all_routes():
    routes = [(route, name) for route, name in walk(get_resolver().url_patterns) if not route.startswith("admin/")]
    assert len(routes) > 20
    return routes


def build_scenario(state, packet, users):
    a, b = (Ledger.objects.get(packet=packet, side=s) for s in "AB")
    event_a = do_add_event(a, {"verb": "take", "nouns": ["cup"], "start_frame": A_FRAMES[0], "end_frame": A_FRAMES[1]},
                           actor=users["annotator_a"], expected_version=0)  # fmt: skip
    event_b = do_add_event(b, {"verb": "put", "nouns": ["plate"], "start_frame": B_FRAMES[0], "end_frame": B_FRAMES[1]},
                           actor=users["annotator_b"], expected_version=0)  # fmt: skip
    first, last = PROVISIONAL_FRAMES
    provisional = do_import_provisional_version(
        packet, [{"verb": "cut", "nouns": ["bagel"], "start_frame": first, "end_frame": last}],
        actor=users["maintainer"], source="test", source_sha256="0" * 64,
    )  # fmt: skip
    scenario = {"event_uid": {"A": event_a.uid, "B": event_b.uid}, "provisional": provisional, "adjudicated": None}
    if state in {"a_frozen", "both_frozen", "published"}:
        do_freeze_ledger(a, actor=users["annotator_a"], attestation=ATTESTATION, expected_version=1)
    if state in {"both_frozen", "published"}:
        do_freeze_ledger(b, actor=users["annotator_b"], attestation=ATTESTATION, expected_version=1)
        union = do_build_union(packet, actor=users["adjudicator"])
        for item in union.items.all():
            do_decide_item(
                item, actor=users["adjudicator"], action="take_a" if item.a_value else "drop", rationale="seen"
            )
    if state == "published":
        scenario["adjudicated"] = do_publish_adjudicated_version(packet, actor=users["adjudicator"])
    scenario["job"] = Job.objects.create(kind="ingest", video=packet.video, created_by=users["maintainer"])
    # An agent's submission graded against the provisional tier: its diagnostics quote
    # third-party labels, so only maintainers may reach any of it.
    content = json.dumps(
        {"actions": [{"verb": "cut", "nouns": ["bagel"], "start_frame": 10, "end_frame": 20}]}
    ).encode()
    file = SubmissionFile(
        label="agent-x", name="agent-x.json", content=content, sha256=sha256_hex(content), size=len(content)
    )
    [submission] = do_upload_submissions(packet, [file], actor=users["maintainer"])
    run = do_start_scoring_run(provisional, [submission], actor=users["maintainer"], dispatch=False)
    do_score_batch(run.pk, list(run.results.values_list("pk", flat=True)))
    scenario["grading"] = {"submission_id": submission.pk, "run_id": run.pk, "score_id": run.results.get().pk}
    scenario["secrets"] = {
        "A": [str(event_a.uid), *map(str, A_FRAMES), "annotator_a"],
        "B": [str(event_b.uid), *map(str, B_FRAMES), "annotator_b"],
        "provisional": [provisional.sha256, *map(str, PROVISIONAL_FRAMES)],
    }
    a.refresh_from_db()
    if a.sha256:
        scenario["secrets"]["A"].append(a.sha256)
    return scenario


def expand(route, packet, scenario):
    """Concrete URLs for a route pattern, one per meaningful value of each parameter."""
    urls = [(route, {})]
    values = {
        "packet_id": [packet.pk],
        "side": ["A", "B"],
        "event_uid": list(scenario["event_uid"].values()),
        "position": [0],
        "version_id": [v.pk for v in (scenario["provisional"], scenario["adjudicated"]) if v is not None],
        "video_id": [packet.video_id],
        "job_id": [scenario["job"].pk],
        "slug": ["action-ledger"],
        **{name: [value] for name, value in scenario["grading"].items()},
        "name": ["reward.json"],
    }
    # Media routes name their owner in the path: /media/packets/<object_id>/, /media/videos/<object_id>/.
    values["object_id"] = [packet.pk] if "/packets/" in route else [packet.video_id]
    for name in re.findall(r"<(?:\w+:)?(\w+)>", route):
        if name not in values:
            values[name] = [0]  # frame numbers, indices: 0 is always in range
        urls = [
            (re.sub(rf"<(?:\w+:)?{name}>", str(v), url), {**params, name: v})
            for url, params in urls
            for v in values[name]
        ]
    return urls


def api_visible(name, params, role, state, scenario):
    """Whether GET on an API route must answer 200 for this role in this state."""
    on_packet = role != "outsider"
    frozen = state in {"both_frozen", "published"}
    rules = {
        "api-me": True,
        "api-task-kinds": True,
        "api-task-kind": True,
        "api-packets": True,
        "api-schema": True,
        "api-users": role == "maintainer",
        "api-packet": on_packet,
        "api-packet-versions": on_packet,
        "api-own-ledger": role in {"annotator_a", "annotator_b"},
        "api-ledger-side": role == f"annotator_{params.get('side', '').lower()}"
        or (role in {"adjudicator", "maintainer"} and frozen),
        "api-union": role in {"adjudicator", "maintainer"} and frozen,
        "api-audit": role == "maintainer",
        "video-list": role == "maintainer",
        "video-detail": role == "maintainer",
        "job-detail": role == "maintainer",
        # Grading (issue 7): maintainers only; the agreement report also for the adjudicator.
        **dict.fromkeys(["api-submissions", "api-scoring-runs", "api-calibration"], role == "maintainer"),
        **dict.fromkeys(["api-leaderboard", "api-leaderboard-csv", "api-leaderboard-json"], role == "maintainer"),
        "api-agreement": role in {"adjudicator", "maintainer"} and frozen,
        # A real submission, run and score (graded against the provisional tier).
        **dict.fromkeys(
            ["api-submission", "api-submission-content", "api-scoring-run", "api-score"], role == "maintainer"
        ),
        **dict.fromkeys(["api-score-file", "api-score-diagnostics"], role == "maintainer"),
    }
    if name in {"api-version", "api-version-export"}:
        provisional = params["version_id"] == scenario["provisional"].pk
        return role == "maintainer" if provisional else on_packet
    return rules.get(name)


# Parameters naming an object an outsider must not reach.
SCOPED = {
    "packet_id",
    "object_id",
    "version_id",
    "video_id",
    "job_id",
    "submission_id",
    "run_id",
    "score_id",
    "event_uid",
}

POST_ONLY = {
    "api-token",
    "api-ledger-events",
    "api-ledger-event",
    "api-ledger-freeze",
    "api-union-decision",
    "api-publish",
    "api-version-ready",
}


@pytest.mark.django_db
@pytest.mark.parametrize("state", STATES)
def test_every_route_answers_each_role_without_leaking(
    state, packet, annotator_a, annotator_b, adjudicator, maintainer, outsider
):
    users = {
        "annotator_a": annotator_a,
        "annotator_b": annotator_b,
        "adjudicator": adjudicator,
        "maintainer": maintainer,
        "outsider": outsider,
    }
    scenario = build_scenario(state, packet, users)
    unclassified = []
    for route, name in all_routes():
        for url, params in expand(route, packet, scenario):
            for role in ROLES:
                response = client_for(users[role]).get("/" + url)
                body = response.content.decode("utf-8", "replace")
                label = f"{state} {role} GET /{url} ({name})"
                if route.startswith("api/") and name not in POST_ONLY:
                    visible = api_visible(name, params, role, state, scenario)
                    if visible is None:
                        unclassified.append(name)
                    elif visible:
                        assert response.status_code == 200, label
                    else:
                        assert response.status_code == 404, label
                        assert json.loads(body) == {"error": {"code": "not_found", "message": "Not found."}}, label
                elif name in POST_ONLY:
                    assert response.status_code == 405, label
                if role == "outsider" and SCOPED & set(params):
                    assert response.status_code in {404, 405}, label
                if name != "api-schema":  # no data; it names the request field "annotator_b"
                    assert_no_leak(body, role, state, scenario, label)
    assert not unclassified, f"classify these API routes in api_visible: {sorted(set(unclassified))}"


def assert_no_leak(body, role, state, scenario, label):
    secrets = scenario["secrets"]
    forbidden = []
    if role != "maintainer":
        forbidden += secrets["provisional"]
    blind = state in {"annotating", "a_frozen"}
    if role == "annotator_b" and blind:
        forbidden += secrets["A"]
    if role == "annotator_a" and blind:
        forbidden += secrets["B"]
    if role == "outsider" or (role == "adjudicator" and blind):
        forbidden += secrets["A"] + secrets["B"]
    for secret in forbidden:
        assert not re.search(rf"(?<![0-9a-f]){re.escape(secret)}(?![0-9a-f])", body), f"{label} leaks {secret}"


@pytest.mark.django_db
def test_writes_by_the_wrong_person_are_refused_and_change_nothing(
    packet, annotator_a, annotator_b, adjudicator, outsider
):
    a_ledger = Ledger.objects.get(packet=packet, side="A")
    event = do_add_event(a_ledger, {"verb": "take", "nouns": ["cup"], "start_frame": 1, "end_frame": 20},
                         actor=annotator_a, expected_version=0)  # fmt: skip
    attempts = [
        (annotator_b, "put", f"/api/packets/{packet.pk}/ledger/events/{event.uid}/"),
        (annotator_b, "delete", f"/api/packets/{packet.pk}/ledger/events/{event.uid}/"),
        (outsider, "post", f"/api/packets/{packet.pk}/ledger/events/"),
        (adjudicator, "post", f"/api/packets/{packet.pk}/ledger/events/"),
        (outsider, "post", f"/api/packets/{packet.pk}/ledger/freeze/"),
        (annotator_a, "post", f"/api/packets/{packet.pk}/union/"),
        (annotator_a, "post", f"/api/packets/{packet.pk}/publish/"),
        (annotator_b, "post", f"/api/packets/{packet.pk}/union/items/0/decision/"),
    ]
    for user, method, url in attempts:
        body = {"data": {"verb": "put", "nouns": ["cup"], "start_frame": 2, "end_frame": 30}, "version": 1,
                "attestation": ATTESTATION, "action": "drop", "rationale": "x" * 10}  # fmt: skip
        body["version"] = 0  # the writer's own (current) version, so only access can refuse
        response = getattr(client_for(user), method)(url, body, format="json")
        # B editing A's event id looks exactly like editing a missing event of B's own.
        assert response.status_code in {400, 404}, (user.username, method, url, response.status_code)
        assert str(event.uid) not in response.content.decode()
    # Touching A's event looks exactly like touching an event that does not exist.
    client_b = client_for(annotator_b)
    url = f"/api/packets/{packet.pk}/ledger/events/{{}}/"
    via_a = client_b.put(url.format(event.uid), {"data": GOOD_EDIT, "version": 0}, format="json")
    via_random = client_b.put(url.format(uuid.uuid4()), {"data": GOOD_EDIT, "version": 0}, format="json")
    assert via_a.status_code == via_random.status_code == 400
    assert via_a.json() == via_random.json()
    a_ledger.refresh_from_db()
    event.refresh_from_db()
    assert a_ledger.version == 1 and not a_ledger.is_frozen
    assert event.data["start_frame"] == 1


@pytest.mark.django_db
def test_an_annotators_packet_view_says_nothing_of_the_other_ledger(packet, annotator_b):
    view = client_for(annotator_b).get(f"/api/packets/{packet.pk}/").json()
    assert set(view) == {
        "id",
        "title",
        "instructions",
        "params",
        "sha256",
        "created_at",
        "task_kind",
        "video",
        "your_role",
        "ledger",
    }
    assert view["ledger"]["side"] == "B"


@pytest.mark.django_db
def test_a_maintainer_assigned_as_annotator_gets_only_the_annotator_view(maintainer, annotator_b, adjudicator):
    from tests.factories import make_packet

    packet = make_packet(maintainer, maintainer, annotator_b, adjudicator)
    client = client_for(maintainer)
    view = client.get(f"/api/packets/{packet.pk}/").json()
    assert view["your_role"] == "annotator_a" and "ledgers" not in view
    assert client.get(f"/api/packets/{packet.pk}/ledgers/B/").status_code == 404
    assert client.get(f"/api/packets/{packet.pk}/audit/").status_code == 404
