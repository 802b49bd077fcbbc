"""Grading reads: the queries behind the grading GET endpoints, pages and commands.

Nothing here writes a row, an audit entry or a task; the write operations live in
``annotator.actions.grading``. Two reads score something on the way:

* the human rows of the leaderboard (each frozen annotator ledger scored like an agent)
  are kept in Django's cache under a key made of everything the outcome depends on
  (scorer id, the version's and the ledger's SHA-256, the task parameters, the packet
  parameters and the scorer code's SHA-256), so a leaderboard GET scores them once, not
  on every request;
* the agreement report is stored by a task after the second freeze and after each
  adjudicated publication (``annotator.actions.derived``); a GET returns the stored one,
  says so while that task is queued or running (``agreement_read``), and only computes,
  without storing, when none matches and none is on its way (see ``docs/grading.md``).

``agreement_job`` and ``calibration_job`` are the derived work's ``Job`` rows while they
have not ended well (queued, running, failed), for the reads that show their results.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count

from annotator.base.canonical import canonical_sha256
from annotator.base.errors import Conflict, InvalidInput
from annotator.base.families import adapter_for
from annotator.base.grading import leaderboard as board
from annotator.models import (
    AgreementReport,
    GroundTruthVersion,
    Job,
    Ledger,
    Packet,
    ScoringRun,
    SubmissionScore,
    VersionCalibration,
    VersionReadiness,
)
from annotator.reads import leaderboard as ranked
from annotator.reads.documents import ledger_submission
from annotator.reads.grading_inputs import scorer_code_sha256, scoring_inputs, task_parameters
from annotator.reads.integrity import frozen_document, frozen_events, ledgers_by_side, verify_ledger_states
from annotator.reads.publishing import answers_public, version_label
from annotator.reads.sealed_derived import readiness_of, sealed_report, verified_calibration, verified_calibrations
from scoring import SolutionRejected, agreement, get_scorer, score_submission

HUMAN_SCORE_CACHE_SECONDS = 7 * 24 * 3600


def resolve_version(packet: Packet, *, version_id=None, tier: str | None = None) -> GroundTruthVersion:
    """The version a run is pinned to: the one named, else the latest of ``tier``
    (default: the latest adjudicated version)."""
    versions = GroundTruthVersion.objects.filter(packet=packet).select_related("packet__task_kind", "packet__video")
    if version_id is not None:
        version = versions.filter(pk=version_id).first()
        if version is None:
            raise InvalidInput(f"packet {packet.pk} has no version {version_id}", field="version")
        return version
    tier = tier or GroundTruthVersion.Tier.ADJUDICATED
    if tier not in GroundTruthVersion.Tier.values:
        raise InvalidInput(f"tier must be one of {', '.join(GroundTruthVersion.Tier.values)}", field="tier")
    version = versions.filter(tier=tier).order_by("-number").first()
    if version is None:
        raise Conflict(f"packet {packet.pk} has no {tier} version yet")
    return version


def require_ready_for_grading(version: GroundTruthVersion) -> None:
    """Scoring runs started from the browser or the REST API are pinned only to a version
    a maintainer marked ready (its anchors held under the task scorer); ``Conflict``
    saying so otherwise. The verifier's command line (``score_submissions``) is not
    gated: it names the version it scores against (docs/grading.md)."""
    if readiness_of(version) is None:  # a mark read through its seal: one added by SQL is an integrity error
        raise Conflict(
            f"{version_label(version.tier, version.number)} (version {version.pk}) is not marked ready for grading: "
            "check its calibration and mark it ready on the version's grading page first"
        )


def latest_adjudicated(packet: Packet) -> GroundTruthVersion | None:
    return (
        GroundTruthVersion.objects.filter(packet=packet, tier=GroundTruthVersion.Tier.ADJUDICATED)
        .order_by("-number")
        .first()
    )


def run_counts(run: ScoringRun) -> dict:
    counts = dict(run.results.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    return {status: counts.get(status, 0) for status in SubmissionScore.Status.values}


# ------------------------------------------------------------------------ leaderboard


def leaderboard(
    version: GroundTruthVersion,
    scorer_id: str,
    *,
    sort: str | None = None,
    cursor: str | None = None,
    size: int = ranked.PAGE_SIZE,
) -> dict:
    """One page of the leaderboard (``annotator.reads.leaderboard``): ``rows`` (agents and
    the human ceiling, ranked over all), ``next`` (the cursor of the next page, or None),
    ``count`` (agent rows in all) and, on the first page, the version's ``references``."""
    humans = human_rows(version, scorer_id)
    found = ranked.page(version, scorer_id, humans, sort=sort, cursor=cursor, size=size)
    return {
        **leaderboard_head(version, scorer_id),
        "count": found.count + len(humans),
        "rows": found.rows,
        "next": found.next_cursor,
        "references": board.reference_rows(scorer_id, _anchors(version, scorer_id)) if not cursor else [],
    }


def leaderboard_head(version: GroundTruthVersion, scorer_id: str) -> dict:
    return {
        "version": {
            "id": version.pk,
            "tier": version.tier,
            "number": version.number,
            "sha256": version.sha256,
            "answers": answers_public(version),
        },  # fmt: skip
        "scorer_id": scorer_id,
        "columns": list(board.columns(scorer_id)),
    }


def leaderboard_download(version: GroundTruthVersion, scorer_id: str, *, sort: str | None = None) -> Iterator[dict]:
    """Every row of the leaderboard in order, then the reference rows, a page at a time
    (never every score in memory at once). The human rows and the first page are read now,
    so that a bad sort or a row that fails its seal is answered before the first byte."""
    humans = human_rows(version, scorer_id)
    first = ranked.page(version, scorer_id, humans, sort=sort, size=ranked.MAX_PAGE_SIZE)
    references = leaderboard_references(version, scorer_id)

    def rows() -> Iterator[dict]:
        yield from first.rows
        if first.next_cursor is not None:
            yield from ranked.every_row(version, scorer_id, humans, sort=sort, cursor=first.next_cursor)
        yield from references

    return rows()


def leaderboard_references(version: GroundTruthVersion, scorer_id: str) -> list[dict]:
    return board.reference_rows(scorer_id, _anchors(version, scorer_id))


def _anchors(version: GroundTruthVersion, scorer_id: str) -> list[dict]:
    calibration = verified_calibration(VersionCalibration.objects.filter(version=version, scorer_id=scorer_id).first())
    return calibration.anchors if calibration is not None else []


def version_calibrations(version: GroundTruthVersion) -> list[VersionCalibration]:
    """Every calibration of the version, each read through its seal."""
    return verified_calibrations(version.calibrations.all())


def version_readiness(version: GroundTruthVersion) -> VersionReadiness | None:
    """The version's readiness mark, read through its seal (None: not marked ready)."""
    return readiness_of(version)


def frozen_ledgers(packet: Packet) -> dict[str, Ledger] | None:
    """Both ledgers of a packet by side, or None until both are frozen."""
    ledgers = ledgers_by_side(packet, Ledger.objects.filter(packet=packet).select_related("annotator"))
    # A ledger unfrozen by SQL after its freeze is an integrity error, never a row left out.
    verify_ledger_states(list(ledgers.values()))
    if not all(ledger.is_frozen for ledger in ledgers.values()):
        return None
    return ledgers


def ledger_as_submission(packet: Packet, ledger: Ledger) -> tuple[dict, bytes]:
    """A frozen ledger in the scorer's ledger shape and as submission bytes."""
    schema = packet.task_kind.schema
    document = ledger_submission(frozen_events(ledger), schema)
    return adapter_for(schema["family"]).ledger_as_submission(packet, document)


def human_rows(version: GroundTruthVersion, scorer_id: str) -> list[dict]:
    """The human ceiling: each frozen annotator ledger scored like an agent (cached)."""
    packet = version.packet
    ledgers = frozen_ledgers(packet)
    if ledgers is None:
        return []
    rows = []
    for side, ledger in sorted(ledgers.items()):
        outcome = human_score(version, scorer_id, ledger)
        rows.append(
            board.make_row(
                scorer_id,
                kind="human",
                label=f"annotator {side} ({ledger.annotator.username})",
                sha256=ledger.sha256,
                **outcome,
            )
        )
    return rows


def human_score(version: GroundTruthVersion, scorer_id: str, ledger: Ledger) -> dict:
    """``reward``, ``reason`` and ``details`` of one frozen ledger scored against a
    version, from the cache when the same inputs were scored before."""
    packet = version.packet
    frozen_document(ledger)  # a cached score is served only while the ledger and version verify
    frozen_events(version)
    _, digest = canonical_sha256(
        {
            "scorer_id": scorer_id,
            "version_sha256": version.sha256,
            "ledger_sha256": ledger.sha256,
            "task_parameters": task_parameters(packet, scorer_id),
            "packet_params": packet.parameters,
            "scorer_code_sha256": scorer_code_sha256(),
        }
    )
    key = f"frameledger:human-score:{digest}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    inputs = scoring_inputs(version, scorer_id)
    _, data = ledger_as_submission(packet, ledger)
    outcome = score_submission(scorer_id, inputs.ground_truth, data, **inputs.params)
    value = {"reward": outcome.reward, "reason": outcome.reason, "details": outcome.details}
    cache.set(key, value, HUMAN_SCORE_CACHE_SECONDS)
    return value


# ------------------------------------------------------------------------ diagnostics


def reference_frames(version: GroundTruthVersion) -> list[tuple[int, int] | None]:
    """Where each exported ground-truth event sits in the video, when it says so."""
    schema = version.packet.task_kind.schema
    boundaries = schema.get("boundary_fields") or []
    frames = []
    for event in frozen_events(version):
        values = [event.get(name) for name in boundaries]
        ok = len(values) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in values)
        frames.append(tuple(values) if ok else None)
    return frames


def score_diagnostics(score: SubmissionScore) -> dict:
    """Timeline diagnostics of one final score (recomputed from the stored bytes)."""
    if score.status != SubmissionScore.Status.SCORED:
        raise Conflict(f"score {score.pk} is {score.status}; there is nothing to diagnose")
    run, submission, version = score.run, score.submission, score.version
    video = version.packet.video
    if submission.content is not None:
        solution: bytes | BaseException = bytes(submission.content)
    else:
        solution = SolutionRejected(submission.rejected_reason)
    inputs = scoring_inputs(version, score.scorer_id)
    body = get_scorer(score.scorer_id).diagnose(
        inputs.ground_truth,
        solution,
        run.params,
        score.details or {},
        reference_frames=reference_frames(version),
        frame_rate=(video.frame_rate_num, video.frame_rate_den),
    )
    body.update(
        result=score.pk,
        reward=score.reward,
        submission={"id": submission.pk, "label": submission.label, "sha256": submission.sha256},
        version={"id": version.pk, "tier": version.tier, "number": version.number},
        packet=version.packet_id,
        video={"frame_count": video.frame_count, "frame_rate": [video.frame_rate_num, video.frame_rate_den]},
    )
    return body


# -------------------------------------------------------------------------- agreement


def stored_agreement(packet: Packet, ledgers: dict[str, Ledger]) -> AgreementReport | None:
    """The stored report for the packet's frozen ledgers, its latest adjudicated version
    and the current scorer code, if there is one, read through its seal (one stored before
    seals existed counts as none: it is computed again)."""
    found = AgreementReport.objects.filter(
        packet=packet,
        scorer_id=packet.task_kind.scorer_id,
        ledger_a_sha256=ledgers["A"].sha256,
        ledger_b_sha256=ledgers["B"].sha256,
        version=latest_adjudicated(packet),
        report__scorer_code_sha256=scorer_code_sha256(),
    ).first()
    return sealed_report(found)


# The kinds of the derived jobs (``annotator.actions.derived`` creates them).
AGREEMENT_JOB_KIND = "agreement"
CALIBRATION_JOB_KIND = "calibration"


def _unfinished(jobs) -> Job | None:
    """The latest of these jobs, unless it is done."""
    job = jobs.order_by("-created_at", "-id").first()
    return job if job is not None and job.status != Job.Status.DONE else None


def agreement_job(packet: Packet) -> Job | None:
    """The packet's latest agreement-report job while it is queued, running or failed."""
    return _unfinished(Job.objects.filter(kind=AGREEMENT_JOB_KIND, packet=packet))


def calibration_job(version: GroundTruthVersion) -> Job | None:
    """The version's latest calibration job while it is queued, running or failed."""
    return _unfinished(Job.objects.filter(kind=CALIBRATION_JOB_KIND, version=version))


@dataclass(frozen=True)
class AgreementRead:
    """What a GET of the agreement report answers: the ``report`` (None while the task
    that stores it is queued or running) and that task's ``job`` when it has not ended
    well (pending, or failed: the report is then computed now, not stored)."""

    report: AgreementReport | None
    job: Job | None


def agreement_read(packet: Packet) -> AgreementRead:
    """``agreement_report``, or no report while its task is still on its way."""
    ledgers = _verified_ledgers(packet)
    existing = _stored_verified(packet, ledgers)
    if existing is not None:
        return AgreementRead(existing, None)
    job = agreement_job(packet)
    if job is not None and job.status in (Job.Status.QUEUED, Job.Status.RUNNING):
        return AgreementRead(None, job)
    return AgreementRead(_computed_agreement(packet, ledgers), job)


def _verified_ledgers(packet: Packet) -> dict[str, Ledger]:
    ledgers = frozen_ledgers(packet)
    if ledgers is None:
        raise Conflict("the agreement report needs both ledgers frozen")
    for ledger in ledgers.values():  # a stored report is served only while its ledgers verify
        frozen_document(ledger)
    return ledgers


def _stored_verified(packet: Packet, ledgers: dict[str, Ledger]) -> AgreementReport | None:
    existing = stored_agreement(packet, ledgers)
    if existing is not None and existing.version is not None:
        frozen_events(existing.version)
    return existing


def agreement_report(packet: Packet) -> AgreementReport:
    """The agreement report of a packet: the stored one, else one computed now and not
    saved (``pk`` and ``created_at`` None). ``Conflict`` until both ledgers are frozen."""
    ledgers = _verified_ledgers(packet)
    return _stored_verified(packet, ledgers) or _computed_agreement(packet, ledgers)


def _computed_agreement(packet: Packet, ledgers: dict[str, Ledger]) -> AgreementReport:
    version = latest_adjudicated(packet)
    return AgreementReport(
        packet=packet,
        scorer_id=packet.task_kind.scorer_id,
        ledger_a_sha256=ledgers["A"].sha256,
        ledger_b_sha256=ledgers["B"].sha256,
        version=version,
        report=compute_agreement(packet, ledgers, version),
    )


def compute_agreement(packet: Packet, ledgers: dict[str, Ledger], version: GroundTruthVersion | None) -> dict:
    """Annotator A vs B with the task scorer (both ways, per-field kappa, boundary
    differences, unmatched events) and each annotator vs ``version`` when given."""
    scorer_id = packet.task_kind.scorer_id
    a_document, _ = ledger_as_submission(packet, ledgers["A"])
    b_document, _ = ledger_as_submission(packet, ledgers["B"])
    params = task_parameters(packet, scorer_id)
    root_key = packet.task_kind.schema["root_key"]
    report = {
        "scorer_id": scorer_id,
        "scorer_code_sha256": scorer_code_sha256(),
        "params": params,
        "ledgers": {
            side: {"sha256": ledger.sha256, "annotator": ledger.annotator.username, "events": len(doc[root_key])}
            for side, ledger, doc in (("A", ledgers["A"], a_document), ("B", ledgers["B"], b_document))
        },
        "a_vs_b": agreement(scorer_id, a_document, b_document, **params),
        "version": None,
        "versus_version": {},
    }
    if version is not None:
        report["version"] = {"id": version.pk, "tier": version.tier, "number": version.number, "sha256": version.sha256}
        report["versus_version"] = {
            side: _versus_version(packet, version, scorer_id, ledger) for side, ledger in sorted(ledgers.items())
        }
    return json.loads(json.dumps(report, default=str))


def _versus_version(packet: Packet, version: GroundTruthVersion, scorer_id: str, ledger: Ledger) -> dict:
    inputs = scoring_inputs(version, scorer_id)
    document, data = ledger_as_submission(packet, ledger)
    outcome = score_submission(scorer_id, inputs.ground_truth, data, **inputs.params)
    return {
        "reward": outcome.reward,
        "reason": outcome.reason,
        "details": outcome.details,
        "agreement": agreement(scorer_id, document, inputs.ground_truth, **inputs.params),
    }
