"""Every write endpoint of the API takes a JSON *object*; any other JSON body is a 400.

Issue 10, item 8: ``POST /api/videos/`` with a JSON array body answered 500 (the view
called ``request.data.get``). The write routes are read from the URL configuration, so
a new one must be classified below or this test fails.
"""

from __future__ import annotations

import json

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from annotator.actions.ledgers import do_add_event
from annotator.actions.versions import do_import_provisional_version
from annotator.models import AuditEntry, Ledger, Packet, TaskKind, Video
from tests.factories import client_for, make_packet
from tests.workflow.test_blindness_matrix import build_scenario, expand

WRITE_METHODS = ("post", "put", "patch", "delete")
NOT_OBJECTS = [b"[1, 2]", b"[]", b'"a string"', b"3", b"null", b"true"]

# Write routes whose view reads the body (an object is required) ...
READS_BODY = {
    ("api-task-kinds", "post"),
    ("api-packets", "post"),
    ("video-list", "post"),
    ("api-ledger-events", "post"),
    ("api-ledger-event", "put"),
    ("api-ledger-event", "delete"),  # the version the client last saw, unless If-Match says it
    ("api-ledger-freeze", "post"),
    ("api-union-decision", "post"),
    ("api-submissions", "post"),
    ("api-scoring-runs", "post"),
    ("api-calibration", "post"),
    ("api-token", "post"),
    ("api-version-bundles", "post"),
    ("api-moment-imports", "post"),
    ("api-packet-search", "post"),
    ("api-video-search-index", "post"),
}
# ... and those that take none: the body is not read at all (docs/api.md).
NO_BODY = {
    ("api-union", "post"),
    ("api-publish", "post"),
    ("api-version-ready", "post"),
    ("video-detail", "delete"),
    ("api-token-detail", "delete"),  # revoking a token: the id is in the path
    ("api-packet-full-rendition", "post"),
    # Resumable uploads (tus): the metadata comes in headers, a piece is raw bytes of
    # application/offset+octet-stream; a JSON body is never parsed.
    ("upload-list", "post"),
    ("upload-detail", "patch"),
    ("upload-detail", "delete"),
}


def walk(patterns, prefix=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry


def write_routes():
    routes = []
    for route, entry in walk(get_resolver().url_patterns):
        view_class = getattr(entry.callback, "view_class", None) or getattr(entry.callback, "cls", None)
        if not route.startswith("api/") or view_class is None:
            continue
        routes += [(route, entry.name, m) for m in WRITE_METHODS if hasattr(view_class, m)]
    assert len(routes) >= 15
    return routes


def test_every_write_route_is_classified():
    unclassified = {(name, method) for _, name, method in write_routes()} - READS_BODY - NO_BODY
    assert not unclassified, f"classify these write routes: {sorted(unclassified)}"


def error_of(response) -> dict:
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    body = json.loads(response.content)
    assert set(body) == {"error"} and body["error"]["message"], body
    return body["error"]


@pytest.mark.django_db
def test_json_bodies_that_are_not_objects_are_refused_on_every_write_route(
    packet, annotator_a, annotator_b, adjudicator, maintainer
):
    users = {"annotator_a": annotator_a, "annotator_b": annotator_b, "adjudicator": adjudicator,
             "maintainer": maintainer}  # fmt: skip
    scenario = build_scenario("both_frozen", packet, users)
    # A second packet where annotator A's ledger is open, so the ledger routes reach the body.
    # Made as the application makes packets: a packet whose content does not match its
    # recorded SHA-256 is an integrity error on every read (docs/integrity.md).
    open_packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, title="open", video=packet.video)
    open_event = do_add_event(Ledger.objects.get(packet=open_packet, side="A"),
                              {"verb": "take", "nouns": ["cup"], "start_frame": 1, "end_frame": 9},
                              actor=annotator_a, expected_version=0)  # fmt: skip
    do_import_provisional_version(open_packet, [], actor=maintainer, source="t", source_sha256="0" * 64)
    counts = (AuditEntry.objects.count(), Video.objects.count(), TaskKind.objects.count(), Packet.objects.count())
    refused_as_body, problems = set(), []
    # The routes that read a body first: none of them may create or record anything.
    for route, name, method in sorted(write_routes(), key=lambda r: (r[1], r[2]) in NO_BODY):
        if (name, method) in NO_BODY and counts is not None:
            assert counts == (AuditEntry.objects.count(), Video.objects.count(), TaskKind.objects.count(),
                              Packet.objects.count()), "a refused body changed something"  # fmt: skip
            counts = None
        target = open_packet if "ledger/" in route else packet
        scenario["event_uid"] = {"A": open_event.uid}
        for url, _ in expand(route, target, scenario):
            for who in [None, *users.values()]:
                client = client_for(who)
                client.raise_request_exception = False  # a 500 is a finding, listed below
                for body in NOT_OBJECTS:
                    response = client.generic(method.upper(), "/" + url, body, content_type="application/json")
                    label = f"{who} {method.upper()} /{url} {body!r}: {response.status_code}"
                    if response.status_code >= 500:
                        problems.append(label)
                        continue
                    if response.status_code >= 400:
                        error = error_of(response)
                        if response.status_code == 400 and "JSON object" in error["message"]:
                            refused_as_body.add((name, method))
    assert counts is None
    assert not problems, "\n".join(problems)
    assert refused_as_body == READS_BODY, sorted(READS_BODY ^ refused_as_body)


@pytest.mark.django_db
@pytest.mark.parametrize("body", NOT_OBJECTS)
def test_post_videos_with_a_json_array_body_is_a_400_naming_the_problem(maintainer, body):
    response = client_for(maintainer).generic("POST", "/api/videos/", body, content_type="application/json")
    assert response.status_code == 400
    error = error_of(response)
    assert error["field"] == "body" and "must be a JSON object" in error["message"], error
    assert Video.objects.count() == 0


@pytest.mark.django_db
def test_the_token_route_refuses_a_json_array_with_the_error_body(annotator_a):
    response = client_for(None).generic("POST", "/api/auth/token/", b"[1]", content_type="application/json")
    assert response.status_code == 400
    error_of(response)
