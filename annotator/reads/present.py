"""Plain-dict views of the domain objects, shaped by the viewer's role.

Nothing here decides *whether* a user may see an object (``annotator.reads.access`` does);
it decides *what* of it each role is shown. An annotator's packet view says nothing
about the other ledger or the other annotator. Every presenter of the REST API, the
websockets and the pages lives here: protocol objects, videos and jobs, grading.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Q
from django.urls import reverse

from annotator.base.families import browser_schema
from annotator.base.seals import EVENT_COLUMNS
from annotator.models import (
    GroundTruthVersion,
    Job,
    Ledger,
    LedgerEvent,
    Packet,
    ScoringRun,
    Submission,
    SubmissionScore,
    TaskKind,
    Union,
    UnionItem,
    VersionCalibration,
    VersionReadiness,
    Video,
)
from annotator.models.taskkind_schema import packet_schema
from annotator.reads.access import PacketAccess
from annotator.reads.grading import run_counts
from annotator.reads.integrity import (
    frozen_document,
    frozen_events,
    ledgers_by_side,
    verified_frozen_rows,
    verify_ledger_states,
)
from annotator.reads.media import media_urls_for
from annotator.reads.overview import next_step
from annotator.reads.publishing import answers_public, version_label


def task_kind_view(kind: TaskKind) -> dict:
    return {
        "slug": kind.slug,
        "name": kind.name,
        "description": kind.description,
        "scorer_id": kind.scorer_id,
        # The stored schema, with what the browser shows differently for its family (``ui``).
        "schema": browser_schema(kind.schema),
        "builtin": kind.builtin,
    }


def video_summary(packet: Packet) -> dict:
    video = packet.video
    return {
        "id": video.pk,
        "title": video.title,
        "status": video.status,
        "frame_rate": [video.frame_rate_num, video.frame_rate_den],
        "frame_count": video.frame_count,
        "duration": video.duration,
        "width": video.width,
        "height": video.height,
        "sha256": video.sha256,
    }


def ledger_summary(ledger: Ledger) -> dict:
    """``ledger.event_count``: its events when the caller counted them (``PacketFacts``)."""
    events = getattr(ledger, "event_count", None)
    return {
        "side": ledger.side,
        "version": ledger.version,
        "frozen": ledger.is_frozen,
        "frozen_at": ledger.frozen_at.isoformat() if ledger.frozen_at else None,
        "sha256": ledger.sha256 or None,
        "events": ledger.events.count() if events is None else events,
    }


def _published(version: GroundTruthVersion | None) -> dict | None:
    if version is None:
        return None
    return {"id": version.pk, "number": version.number, "label": version_label(version.tier, version.number)}


@dataclass
class PacketFacts:
    """What ``packet_view`` shows of many packets, read with one query per kind of thing:
    the ledgers with their event counts, the latest adjudicated version, the union's counts."""

    ledgers: dict[int, list[Ledger]] = field(default_factory=dict)
    published: dict[int, GroundTruthVersion] = field(default_factory=dict)
    unions: dict[int, dict] = field(default_factory=dict)

    @classmethod
    def of(cls, accesses: list[PacketAccess]) -> PacketFacts:
        ids = [a.packet.pk for a in accesses]
        facts = cls(ledgers={pk: [] for pk in ids})
        rows = Ledger.objects.filter(packet_id__in=ids).defer("canonical_json").select_related("annotator")
        for ledger in rows.annotate(event_count=Count("events")):
            facts.ledgers[ledger.packet_id].append(ledger)
        # Frozen states read against the audit log where the viewer may see both sides'
        # state (``both_frozen``); an annotator's view says nothing of the other side.
        staff = {a.packet.pk for a in accesses if not a.is_annotator}
        verify_ledger_states([ledger for pk in staff for ledger in facts.ledgers[pk]])
        adjudicated = GroundTruthVersion.objects.filter(packet_id__in=ids, tier=GroundTruthVersion.Tier.ADJUDICATED)
        for version in adjudicated.only("pk", "packet_id", "tier", "number").order_by("packet_id", "number"):
            facts.published[version.packet_id] = version
        not_agreed = ~Q(items__status=UnionItem.Status.AGREED)
        counts = (
            Union.objects.filter(packet_id__in=ids)
            .values("packet_id")
            .annotate(
                n=Count("items"),
                to_decide=Count("items", filter=not_agreed),
                decided=Count("items", filter=not_agreed & Q(items__decision__isnull=False)),
            )
        )
        facts.unions = {
            row["packet_id"]: {"items": row["n"], "to_decide": row["to_decide"], "decided": row["decided"]}
            for row in counts
        }
        return facts


def packet_views(accesses: list[PacketAccess]) -> list[dict]:
    """``packet_view`` of each packet: a fixed number of queries whatever their number."""
    facts = PacketFacts.of(accesses)
    return [packet_view(a, facts) for a in accesses]


def packet_view(access: PacketAccess, facts: PacketFacts | None = None) -> dict:
    packet = access.packet
    facts = facts or PacketFacts.of([access])
    view = {
        "id": packet.pk,
        "title": packet.title,
        "instructions": packet.instructions,
        "parameters": packet.parameters,
        "sha256": packet.sha256,
        "created_at": packet.created_at.isoformat(),
        # The schema with the packet's parameters applied (e.g. the two tennis players).
        "task_kind": {**task_kind_view(packet.task_kind), "schema": browser_schema(packet_schema(packet))},
        "video": video_summary(packet),
        "your_role": access.role,
        # The latest adjudicated version (every role on the packet may see that tier).
        "published": _published(facts.published.get(packet.pk)),
    }
    ledgers = ledgers_by_side(packet, facts.ledgers[packet.pk])
    if access.is_annotator:
        view["ledger"] = ledger_summary(ledgers[access.side])
        # Only about their own ledger (blind: nothing about the other side).
        own = ledgers[access.side]
        view["next_step"] = (
            {"text": "the adjudicator, once both ledgers are frozen: adjudicate and publish", "who": "the adjudicator"}
            if own.is_frozen
            else {"text": "you: label and freeze your ledger", "who": own.annotator.username}
        )
        return view
    frozen = all(ledger.is_frozen for ledger in ledgers.values())  # states verified by PacketFacts
    if access.sees_progress:
        view["assignment"] = {
            "annotator_a": packet.annotator_a.username,
            "annotator_b": packet.annotator_b.username,
            "adjudicator": packet.adjudicator.username,
        }
        view["ledgers"] = {side: ledger_summary(ledger) for side, ledger in ledgers.items()}
    else:
        view["ledgers"] = {side: {"side": side, "frozen": ledger.is_frozen} for side, ledger in ledgers.items()}
    view["union_ready"] = frozen
    union = facts.unions.get(packet.pk) if frozen else None
    if union is not None:
        view["union"] = dict(union)
    # Who is assigned is named to maintainers only (blindness: an adjudicator never learns
    # who annotated); others see the roles, and an adjudicator their own name.
    if access.sees_progress:
        names = (packet.annotator_a.username, packet.annotator_b.username, packet.adjudicator.username)
    else:
        own = packet.adjudicator.username if access.role == "adjudicator" else "the adjudicator"
        names = ("annotator A", "annotator B", own)
    step = next_step(
        a=(names[0], ledgers["A"].is_frozen),
        b=(names[1], ledgers["B"].is_frozen),
        adjudicator=names[2],
        has_union=union is not None,
        to_decide=view["union"]["to_decide"] if union is not None else 0,
        decided=view["union"]["decided"] if union is not None else 0,
        published=view["published"]["label"] if view["published"] else None,
    )
    view["next_step"] = step.as_dict()
    return view


def event_view(event: LedgerEvent) -> dict:
    return {"uid": str(event.uid), "data": event.data}


def own_ledger_view(ledger: Ledger) -> dict:
    # Two columns per event, no model instance each: the workspace loads the whole ledger
    # (its reducer, timeline and undo need every event), up to the cap's 5,000 events. A
    # frozen ledger's rows are read once and served only as verified against its freeze.
    if ledger.is_frozen:
        uid, data = EVENT_COLUMNS.index("uid"), EVENT_COLUMNS.index("data")
        rows = [(row[uid], row[data]) for row in verified_frozen_rows(ledger)]
    else:
        rows = list(ledger.events.values_list("uid", "data"))
    return {**ledger_summary(ledger), "events": [{"uid": str(uid), "data": data} for uid, data in rows]}


def frozen_ledger_view(ledger: Ledger) -> dict:
    frozen_document(ledger)  # the stored text is served only once it matches its SHA-256
    return {
        **ledger_summary(ledger),
        "attestation": ledger.attestation,
        "canonical_json": ledger.canonical_json,
    }


def union_item_view(item: UnionItem) -> dict:
    decision = getattr(item, "decision", None)
    return {
        "position": item.position,
        "status": item.status,
        "a_value": item.a_value,
        "b_value": item.b_value,
        "differing_fields": item.differing_fields,
        "boundary_deltas": item.boundary_deltas,
        "decision": None
        if decision is None
        else {
            "action": decision.action,
            "final_value": decision.final_value,
            "rationale": decision.rationale,
            "decided_by": decision.decided_by.username,
            "decided_at": decision.decided_at.isoformat(),
        },
    }


def version_view(version: GroundTruthVersion, *, include_events: bool = False) -> dict:
    events = frozen_events(version)  # content and manifest verified before anything is shown
    view = {
        "id": version.pk,
        "packet": version.packet_id,
        "tier": version.tier,
        "number": version.number,
        "label": version_label(version.tier, version.number),
        "sha256": version.sha256,
        "source": version.source,
        "answers": answers_public(version),
        "manifest": version.manifest,
        "changelog": version.changelog,
        "created_at": version.created_at.isoformat(),
        "export_url": reverse("api-version-export", args=[version.pk]),
    }
    if include_events:
        view["events"] = events
    return view


# ------------------------------------------------------------------ videos and jobs


def job_view(job: Job) -> dict:
    return {
        "id": job.pk,
        "kind": job.kind,
        "status": job.status,
        "progress": job.progress,
        "message": job.message,
        "result": job.result,
        "video": job.video_id,
        "created_at": job.created_at.isoformat(),
        "updated_at": job.updated_at.isoformat(),
    }


def video_view(video: Video) -> dict:
    ready = video.status == Video.Status.READY
    latest_job = video.jobs.order_by("-created_at", "-id").first()
    return {
        "id": video.pk,
        "title": video.title,
        "status": video.status,
        "error": video.error,
        "original_name": video.original_name,
        "size_bytes": video.size_bytes,
        "sha256": video.sha256,
        "codec": video.codec,
        "width": video.width,
        "height": video.height,
        "rotation": video.rotation,
        "frame_rate": [video.frame_rate_num, video.frame_rate_den],
        "frame_count": video.frame_count,
        "duration": video.duration,
        "proxy_sha256": video.proxy_sha256,
        "ingest_report": video.ingest_report,
        "ready_for_annotation": ready,
        "proxy_ready": ready and bool(video.proxy),
        "remux_sha256": video.remux_sha256,
        "media": media_urls_for("video", video.pk, video) if ready else None,
        "job": job_view(latest_job) if latest_job else None,
        "created_at": video.created_at.isoformat(),
    }


# ------------------------------------------------------------------------- grading

SCORE_FILES = {"reward.json": "reward_json", "reward.txt": "reward_txt", "details.json": "details_json"}


def _kept(s: Submission) -> bool | None:
    """Whether the bytes were kept: the ``kept`` annotation (or the upload's own mark), else
    the loaded content; None when neither was read."""
    kept = getattr(s, "kept", None)
    if kept is None and "content" not in s.get_deferred_fields():
        kept = s.content is not None
    return kept


def submission_view(s: Submission) -> dict:
    return {
        "id": s.pk,
        "packet": s.packet_id,
        "label": s.label,
        "original_name": s.original_name,
        "batch": s.batch,
        "sha256": s.sha256,
        "size_bytes": s.size_bytes,
        "kept": _kept(s),
        "rejected_reason": s.rejected_reason,
        "uploaded_at": s.uploaded_at.isoformat(),
    }


def run_view(run: ScoringRun) -> dict:
    job = run.job
    body = {
        "id": run.pk,
        "version": {"id": run.version_id, "tier": run.version.tier, "number": run.version.number},
        "packet": run.version.packet_id,
        "scorer_id": run.scorer_id,
        "params": run.params,
        "ground_truth_sha256": run.ground_truth_sha256,
        "scorer_code_sha256": run.scorer_code_sha256,
        "total": run.total,
        "counts": run_counts(run),
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "job": {"id": job.pk, "status": job.status, "progress": job.progress, "message": job.message},
    }
    return body


def run_score_view(s: SubmissionScore) -> dict:
    """One score as a run lists it (``submission`` selected with it)."""
    return {"id": s.pk, "submission": s.submission_id, "label": s.submission.label, "status": s.status,
            "reward": s.reward, "reason": s.reason, "error": s.error}  # fmt: skip


def score_view(s: SubmissionScore) -> dict:
    def text(data):
        return bytes(data).decode("utf-8") if data is not None else None

    return {
        "id": s.pk,
        "run": s.run_id,
        "submission": {"id": s.submission_id, "label": s.submission.label, "sha256": s.submission.sha256},
        "version": s.version_id,
        "scorer_id": s.scorer_id,
        "status": s.status,
        "reward": s.reward,
        "reason": s.reason,
        "error": s.error,
        "scored_at": s.scored_at.isoformat() if s.scored_at else None,
        "files": {name: text(getattr(s, field)) for name, field in SCORE_FILES.items()},
    }


def calibration_view(c: VersionCalibration) -> dict:
    return {
        "scorer_id": c.scorer_id,
        "status": c.status,
        "problems": c.problems,
        "anchors": c.anchors,
        "params": c.params,
        "scorer_code_sha256": c.scorer_code_sha256,
        "computed_at": c.computed_at.isoformat(),
    }


def readiness_view(r: VersionReadiness | None) -> dict | None:
    if r is None:
        return None
    return {"scorer_id": r.scorer_id, "marked_by": r.marked_by.username if r.marked_by else None,
            "marked_at": r.marked_at.isoformat()}  # fmt: skip


def token_view(token) -> dict:
    """An API token as its owner (or a maintainer) sees it: never the token itself."""
    return {
        "id": token.pk,
        "prefix": token.prefix,
        "user": token.user.username,
        "created_at": token.created_at.isoformat(),
        "expires_at": token.expires_at.isoformat(),
    }
