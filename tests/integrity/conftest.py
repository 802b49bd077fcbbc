"""A packet with both ledgers frozen, a union adjudicated and published, and a provisional
version: every kind of frozen row the integrity checks cover; ``graded`` adds a submission, its
scoring run and score."""

from __future__ import annotations

import json

import pytest

from annotator.actions.adjudication import do_decide_item
from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.actions.versions import do_import_provisional_version, do_publish_adjudicated_version
from annotator.models import Decision, Ledger, ScoringRun, SubmissionScore

ATTESTATION = "I labelled this video alone, from the video only."
A_EVENTS = [("take", ["cup"], 100, 200), ("put", ["plate"], 1000, 1100), ("cut", ["bagel"], 3000, 3100)]
B_EVENTS = [("take", ["cup"], 100, 200), ("put", ["plate"], 1020, 1120), ("open", ["fridge"], 5000, 5050)]
PROVISIONAL = [{"verb": "take", "nouns": ["cup"], "start_frame": 90, "end_frame": 210}]
AGENT = json.dumps({"actions": PROVISIONAL}).encode()


def fill_and_freeze(packet, side, user, events) -> Ledger:
    ledger = Ledger.objects.get(packet=packet, side=side)
    for version, (verb, nouns, start, end) in enumerate(events):
        data = {"verb": verb, "nouns": nouns, "start_frame": start, "end_frame": end}
        do_add_event(ledger, data, actor=user, expected_version=version)
    return do_freeze_ledger(ledger, actor=user, attestation=ATTESTATION, expected_version=len(events))


@pytest.fixture
def frozen(packet, annotator_a, annotator_b):
    """{"A": ledger, "B": ledger}, both frozen, no union yet."""
    return {
        "A": fill_and_freeze(packet, "A", annotator_a, A_EVENTS),
        "B": fill_and_freeze(packet, "B", annotator_b, B_EVENTS),
    }


@pytest.fixture
def adjudicated(packet, frozen, adjudicator):
    union = do_build_union(packet, actor=adjudicator)
    for item in union.items.exclude(status="agreed"):
        action = "take_a" if item.a_value else "drop"
        do_decide_item(item, actor=adjudicator, action=action, rationale="checked against the video")
    return do_publish_adjudicated_version(packet, actor=adjudicator)


@pytest.fixture
def provisional(packet, maintainer):
    return do_import_provisional_version(packet, PROVISIONAL, actor=maintainer, source="test", source_sha256="0" * 64)


@pytest.fixture
def graded(packet, frozen, adjudicated, provisional, maintainer):
    """Every sealed row by name: a frozen ledger, both versions, a decision, a submission scored
    against the provisional version, its run and its score."""
    from tests.grading.conftest import scored, upload

    [submission] = upload(packet, maintainer, {"agent": AGENT})
    score = scored(provisional, [submission], maintainer)["agent"]
    return {
        "ledger": frozen["A"],
        "adjudicated": adjudicated,
        "provisional": provisional,
        "decision": Decision.objects.filter(item__union__packet=packet).order_by("pk").first(),
        "submission": submission,
        "run": ScoringRun.objects.get(pk=score.run_id),
        "score": SubmissionScore.objects.get(pk=score.pk),
    }
