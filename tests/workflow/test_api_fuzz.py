"""Schemathesis over ``/api/schema/`` for each role: no 5xx, and every response conforms
to the schema (documented status code, content type, headers and body schema).

Each role gets a fresh database in the "both ledgers frozen, union decided" state of the
blindness matrix (with a provisional version, a submission, a scoring run and a score).
Every second generated case has its path parameters replaced by the ids of those real
objects, so the cases reach past the 404s into the views; the others keep the generated
values. Examples per operation are bounded (``FUZZ_EXAMPLES``) and each role's pass is
time-capped (``FRAMELEDGER_FUZZ_SECONDS``, default 90 s: operations not reached by then are
named and skipped, never silently), so the pass stays bounded on a loaded machine. It runs
in both passes of ``bin/test``: on SQLite, and on PostgreSQL (with Redis), where text and
integer limits differ (NUL characters, 64-bit ids). The role's API token is sent as
``Authorization: Token …``.
"""

from __future__ import annotations

import os
import time

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, connection
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis import checks

from annotator.actions.tokens import do_issue_token
from tests.workflow.test_blindness_matrix import build_scenario

FUZZ_EXAMPLES = int(os.environ.get("FRAMELEDGER_FUZZ_EXAMPLES", "4"))
FUZZ_SECONDS = float(os.environ.get("FRAMELEDGER_FUZZ_SECONDS", "90"))
ROLES = ["anonymous", "annotator", "adjudicator", "maintainer", "outsider"]
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
]


@pytest.fixture
def wsgi_app():
    """Django's WSGI application, keeping the test's database connection open across
    requests (as Django's test client does: no close_old_connections around requests)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield get_wsgi_application()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def real_ids(packet, scenario) -> dict:
    version = scenario["adjudicated"] or scenario["provisional"]
    return {
        "packet_id": packet.pk,
        "side": "A",
        "event_uid": str(scenario["event_uid"]["A"]),
        "position": 0,
        "version_id": version.pk,
        "video_id": packet.video_id,
        "job_id": scenario["ingest_job"].pk,
        "slug": "action-ledger",
        "name": "reward.json",
        **scenario["grading"],
    }


def failure_lines(operation, case, response, error) -> list[str]:
    label = f"{case.method} {case.formatted_path} -> {response.status_code}"
    return [f"{label}: {type(e).__name__}: {str(e).splitlines()[0]}" for e in getattr(error, "exceptions", [error])]


def fuzz_operation(operation, headers: dict, ids: dict, tally: dict) -> None:
    @given(case=operation.as_strategy())
    @hypothesis_settings(
        max_examples=FUZZ_EXAMPLES, deadline=None, database=None, derandomize=True,
        suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate],
    )  # fmt: skip
    def run(case):
        tally["cases"] += 1
        if tally["cases"] % 2 and case.path_parameters:
            case.path_parameters = {k: ids.get(k, v) for k, v in case.path_parameters.items()}
        response = case.call(headers=headers)
        tally["statuses"][response.status_code] = tally["statuses"].get(response.status_code, 0) + 1
        try:
            case.validate_response(response, checks=CHECKS)
        except Exception as error:  # collect every failure; the test reports them together
            tally["failures"].extend(failure_lines(operation, case, response, error))

    run()


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_the_api_answers_every_fuzzed_request_per_its_schema(
    role, packet, maintainer, annotator_a, adjudicator, outsider, wsgi_app
):
    users = {"maintainer": maintainer, "annotator_a": annotator_a, "annotator_b": packet.annotator_b,
             "adjudicator": adjudicator}  # fmt: skip
    scenario = build_scenario("both_frozen", packet, users)
    person = {"annotator": annotator_a, "adjudicator": adjudicator, "maintainer": maintainer, "outsider": outsider}
    headers = {"Authorization": f"Token {do_issue_token(person[role])[1]}"} if role in person else {}
    # The WSGI client does not undo gzip (tests/media/test_media_views.py covers compression).
    headers["Accept-Encoding"] = "identity"
    schema = schemathesis.openapi.from_wsgi(
        "/api/schema/?format=json", wsgi_app, headers={"Authorization": f"Token {do_issue_token(maintainer)[1]}"}
    )
    tally = {"cases": 0, "statuses": {}, "failures": []}
    operations, fuzzed, skipped = 0, 0, []
    started = time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        if time.monotonic() - started > FUZZ_SECONDS:
            skipped.append(f"{operation.method.upper()} {operation.path}")
            continue
        fuzz_operation(operation, headers, real_ids(packet, scenario), tally)
        fuzzed += 1
    elapsed = time.monotonic() - started
    print(
        f"\n{role} on {connection.vendor}: {tally['cases']} cases over {fuzzed} of {operations} operations in "
        f"{elapsed:.0f} s, statuses {sorted(tally['statuses'].items())}, "
        f"5xx {sum(n for s, n in tally['statuses'].items() if s >= 500)}"
        + (f"; over the {FUZZ_SECONDS:.0f} s cap, not reached: {', '.join(skipped)}" if skipped else "")
    )
    assert operations >= 40
    assert fuzzed >= min(operations, 10)  # the cap never turns the pass into nothing
    assert tally["cases"] >= fuzzed * 2
    assert not [line for line in tally["failures"] if "ServerError" in line], tally["failures"]
    assert tally["failures"] == []
