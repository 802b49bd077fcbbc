"""Every URL of the app × every role × every workflow state × two casts.

The URL list is read from the URL configuration itself, so a new endpoint is covered
(or, for the API, must be classified in ``api_visible`` or this test fails).

Casts: ``plain`` (five different people, one of them the maintainer), ``dual``
(annotator A and the adjudicator are maintainers too, and the submissions and scoring
runs are another maintainer's) and ``administered``: annotator B is a maintainer who,
through the people pages' own writes, made a maintainer account for himself (invited it and
used its one-time link: the ``sockpuppet`` persona) and set annotator A's password (a
taken-over account); separation of duties leaves both with nothing of the packet while B is
blind on it (``docs/workflow.md``). A dual-role person is judged by their role on the
packet: blind like anyone else in that role, maintainer-wide material (users, videos,
ingest jobs) aside. A maintainer who annotated gets the maintainer's view of the
packet only once an adjudicated version is published (``docs/workflow.md``).
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
from annotator.actions.people import do_invite_person, do_set_password
from annotator.actions.union import do_build_union
from annotator.actions.versions import do_import_provisional_version, do_publish_adjudicated_version
from annotator.base.canonical import sha256_hex
from annotator.base.grading.uploads import SubmissionFile
from annotator.models import BundleRun, Job, Ledger
from tests.factories import after_commit, body_of, client_for, make_maintainer

GOOD_EDIT = {"verb": "put", "nouns": ["cup"], "start_frame": 2, "end_frame": 30}
ROLES = ["annotator_a", "annotator_b", "adjudicator", "maintainer", "outsider"]
STATES = ["annotating", "a_frozen", "both_frozen", "published"]
CASTS = ["plain", "dual", "administered"]
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
    scenario["ingest_job"] = Job.objects.create(kind="ingest", video=packet.video, created_by=users["maintainer"])
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
    # An executable bundle run (issue 13); a row only: this packet is not a moment packet.
    bundle_run = BundleRun.objects.create(
        version=provisional, label="bundle-x", bundle=b"", bundle_sha256="0" * 64, queue="test"
    )
    scenario["grading"]["bundle_run_id"] = bundle_run.pk
    scenario["scoring_job"] = run.job
    scenario["secrets"] = {
        "A": [str(event_a.uid), *map(str, A_FRAMES), "annotator_a"],
        "B": [str(event_b.uid), *map(str, B_FRAMES), "annotator_b"],
        "provisional": [provisional.sha256, run.ground_truth_sha256, *map(str, PROVISIONAL_FRAMES)],
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
        "job_id": [scenario["ingest_job"].pk, scenario["scoring_job"].pk],
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


def packet_role(persona, cast, state):
    """The role the packet gives this persona: a maintainer who annotated is treated as
    the annotator until an adjudicated version is published, a maintainer who
    adjudicates stays the adjudicator (decisions stay revisable). Accounts whose password
    annotator B may hold get nothing of the packet until B's blind phase is over."""
    if cast == "dual" and persona == "annotator_a" and state == "published":
        return "maintainer"
    if cast == "administered":
        released = state == "published"
        return {
            "annotator_a": "annotator_a" if released else "outsider",
            "annotator_b": "maintainer" if released else "annotator_b",
            "sockpuppet": "maintainer" if released else "outsider",
        }.get(persona, persona)
    return persona


def administer_accounts(annotator_a, annotator_b):
    """Annotator B, a maintainer, makes an account for himself and takes over A's: the
    people writes as they ran before B was blind (the pages refuse them now)."""
    make_maintainer(annotator_b)
    sockpuppet, _ = do_invite_person(actor=annotator_b, username="sockpuppet", roles=["maintainer"])
    do_set_password(actor=sockpuppet, person=sockpuppet, password="Sock-puppet-9", confirmation="Sock-puppet-9")
    do_set_password(actor=annotator_b, person=annotator_a, password="Taken-over-9", confirmation="Taken-over-9")
    return sockpuppet


def api_visible(name, params, persona, state, scenario, cast):
    """Whether GET on an API route must answer 200 for this persona in this state."""
    role = packet_role(persona, cast, state)
    in_group = (
        persona == "maintainer"
        or (cast == "dual" and persona in {"annotator_a", "adjudicator"})
        or (cast == "administered" and persona in {"annotator_b", "sockpuppet"})
    )
    on_packet = role != "outsider"
    frozen = state in {"both_frozen", "published"}
    rules = {
        "api-me": True,
        "api-tokens": True,  # one's own API tokens
        "api-task-kinds": True,
        "api-task-kind": True,
        "api-packets": True,
        "api-schema": True,
        # Maintainer-wide material, not about any packet's labels.
        "api-users": in_group,
        "video-list": in_group,
        "video-detail": in_group,
        "api-packet": on_packet,
        "api-packet-versions": on_packet,
        # The full-height rendition of the packet's video (issue 16): anyone on the packet.
        "api-packet-full-rendition": on_packet,
        "api-own-ledger": persona in {"annotator_a", "annotator_b"} and on_packet,
        "api-ledger-side": (persona == f"annotator_{params.get('side', '').lower()}" and on_packet)
        or (role in {"adjudicator", "maintainer"} and frozen),
        "api-union": role in {"adjudicator", "maintainer"} and frozen,
        # The publishing preview (issue 14): whoever may read the union.
        "api-publish": role in {"adjudicator", "maintainer"} and frozen,
        "api-audit": role == "maintainer",
        # Grading (issue 7): maintainers of the packet only; the agreement report also for the adjudicator.
        **dict.fromkeys(["api-submissions", "api-scoring-runs", "api-calibration"], role == "maintainer"),
        **dict.fromkeys(["api-leaderboard", "api-leaderboard-csv", "api-leaderboard-json"], role == "maintainer"),
        "api-agreement": role in {"adjudicator", "maintainer"} and frozen,
        # A real submission, run and score (graded against the provisional tier).
        **dict.fromkeys(
            ["api-submission", "api-submission-content", "api-scoring-run", "api-scoring-run-scores", "api-score"],
            role == "maintainer",
        ),
        **dict.fromkeys(["api-score-file", "api-score-diagnostics"], role == "maintainer"),
        # Executable bundles (issue 13): maintainers of the packet only.
        **dict.fromkeys(["api-version-bundles", "api-bundle-run"], role == "maintainer"),
        # Moment search (issue 13): results come from the video's features only. The
        # adjudicator always, the packet's maintainers, annotators only where the task kind
        # allows assistance (not this one); the index status is maintainer-wide video material.
        "api-packet-search": role in {"adjudicator", "maintainer"},
        "api-video-search-index": in_group,
        # A resumable upload is its uploader's own; the scenario has none, so every key is unknown.
        "upload-detail": False,
    }
    if name == "job-detail":
        # An ingest job is about a video; a scoring job is grading material of its packet.
        return in_group if params["job_id"] == scenario["ingest_job"].pk else role == "maintainer"
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
    "bundle_run_id",
    "event_uid",
}

POST_ONLY = {
    "api-token",
    "api-token-detail",  # DELETE only (revoke)
    "api-ledger-events",
    "api-ledger-event",
    "api-ledger-freeze",
    "api-union-decision",
    "api-version-ready",
    "api-moment-imports",
    "upload-list",  # tus: creation by POST (and OPTIONS), nothing to list
}


@pytest.mark.django_db
@pytest.mark.parametrize("cast", CASTS)
@pytest.mark.parametrize("state", STATES)
def test_every_route_answers_each_role_without_leaking(
    state, cast, packet, annotator_a, annotator_b, adjudicator, maintainer, outsider
):
    users = {
        "annotator_a": annotator_a,
        "annotator_b": annotator_b,
        "adjudicator": adjudicator,
        "maintainer": maintainer,
        "outsider": outsider,
    }
    if cast == "dual":
        make_maintainer(annotator_a)
        make_maintainer(adjudicator)
    roles = ROLES
    if cast == "administered":
        users["sockpuppet"] = administer_accounts(annotator_a, annotator_b)
        roles = [*ROLES, "sockpuppet"]
    with after_commit():  # the state as its derived work leaves it (agreement report, anchors)
        scenario = build_scenario(state, packet, users)
    unclassified, problems, checked = [], [], 0
    for route, name in all_routes():
        for url, params in expand(route, packet, scenario):
            for role in roles:
                response = client_for(users[role]).get("/" + url)
                checked += 1
                body = body_of(response).decode("utf-8", "replace")
                if name == "metrics":
                    body = metric_names_and_labels(body)
                label = f"{cast} {state} {role} GET /{url} ({name})"
                expected = expected_statuses(route, name, params, role, state, scenario, cast)
                if expected is None:
                    unclassified.append(name)
                elif response.status_code not in expected:
                    problems.append(f"{label}: {response.status_code}, expected {sorted(expected)}")
                elif expected == {404} and route.startswith("api/") and json.loads(body) != NOT_FOUND:
                    problems.append(f"{label}: a 404 body other than a missing object's")
                problems += leaks(body, packet_role(role, cast, state), state, scenario, label, name, persona=role)
    print(f"\nblindness matrix {cast} {state}: {checked} responses checked, {len(problems)} problems")
    assert not unclassified, f"classify these API routes in api_visible: {sorted(set(unclassified))}"
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:60])


NOT_FOUND = {"error": {"code": "not_found", "message": "Not found."}}


def expected_statuses(route, name, params, role, state, scenario, cast) -> set[int] | None:
    """The statuses GET may answer; ``None`` for an API route nobody classified."""
    if name in POST_ONLY:
        return {405}
    if route.startswith("api/"):
        visible = api_visible(name, params, role, state, scenario, cast)
        return None if visible is None else ({200} if visible else {404})
    if role == "outsider" and SCOPED & set(params):
        return {404, 405}
    return set(range(200, 500))  # pages: anything but a server error; the leak check decides


# Routes listing every user of the installation (maintainers pick people for packets,
# manage accounts, filter the dashboard and the audit view by person): a username there
# says nothing about who is on which packet. Which packets these pages list is checked
# in tests/frontend/test_dashboard_audit.py.
ALL_USERS_ROUTES = {
    "api-users",
    "maintainer-new-packet",
    "people",
    "person",
    "projects",
    "dashboard",
    "audit",
    "import-moments",
}


def metric_names_and_labels(body: str) -> str:
    """A Prometheus exposition without its sample values: the values are measurements (seconds,
    bytes) whose digits may spell a secret frame number by chance; names and labels are what
    could carry a packet's data."""
    return re.sub(r" \S+( \d+)?$", "", body, flags=re.MULTILINE)


def leaks(body, role, state, scenario, label, name, persona=None) -> list[str]:
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
    if name in ALL_USERS_ROUTES or name == "api-schema":  # the schema holds no data; it names the field "annotator_b"
        forbidden = [s for s in forbidden if s not in {"annotator_a", "annotator_b"}]
    forbidden = [s for s in forbidden if s != persona]  # a fenced account still knows its own name
    return [
        f"{label} leaks {secret}"
        for secret in forbidden
        if re.search(rf"(?<![0-9a-f]){re.escape(secret)}(?![0-9a-f])", body)
    ]


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
        (outsider, "post", f"/api/packets/{packet.pk}/renditions/full/"),
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
        "parameters",
        "published",
        "sha256",
        "created_at",
        "task_kind",
        "video",
        "your_role",
        "ledger",
        "next_step",
    }
    assert view["ledger"]["side"] == "B"
    # The next step speaks of this annotator's own ledger only.
    assert view["next_step"] == {"text": "you: label and freeze your ledger", "who": "annotator_b"}


@pytest.mark.django_db
def test_a_maintainer_assigned_as_annotator_gets_only_the_annotator_view(maintainer, annotator_b, adjudicator):
    from tests.factories import make_packet

    packet = make_packet(maintainer, maintainer, annotator_b, adjudicator)
    client = client_for(maintainer)
    view = client.get(f"/api/packets/{packet.pk}/").json()
    assert view["your_role"] == "annotator_a" and "ledgers" not in view
    assert client.get(f"/api/packets/{packet.pk}/ledgers/B/").status_code == 404
    assert client.get(f"/api/packets/{packet.pk}/audit/").status_code == 404
