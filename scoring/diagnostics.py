"""Per-submission diagnostics for the timeline, computed with the scorer's own rules.

Pure: takes the ground truth, the submission bytes and the task parameters, and
returns plain dicts. The pairs shown as matched are exactly the pairs the scorer
counts (the same validation and matching functions of ``scoring``), so the page can
never disagree with the reward. What the scorer does not pair is explained:

* actions: an invalid entry says which check failed; an unmatched valid prediction
  or a missed reference is paired, where possible, with its nearest counterpart by
  the union step's weaker tiers (verb and boundaries, boundaries only, overlap), with
  the fields that differ and the boundary deltas;
* break points: each scorer pair lists the summary fields that differ and the shot
  token alignment; an unpaired prediction says why its identity found no partner;
* moment queries: each query's row, its IoU and why a row was not legal.

This module covers the built-in families and is reached through
``get_scorer(id).diagnose`` (``Scorer.diagnose``), which adds the scorer's id, family and
reason; a scorer registered from outside the library brings its own ``diagnose_fn``
instead. It never looks a scorer up itself: the registry above it does.

Frames: deltas are prediction minus reference. Items carry ``start_frame`` /
``end_frame`` when the event has them (break points take their reference's frames
when paired); the page seeks the player there.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from fractions import Fraction

from . import egocentric, tennis
from ._annotations import Any
from .align import BreakPointPair, align_break_points, union_actions
from .differences import distribution
from .jsonio import decode_json_document

ENTRY_MESSAGE = re.compile(r"^action (\d+) (.*)$")
NEAR_TIERS = {
    "verb_and_boundary": "same verb and boundaries",
    "boundary_only": "same boundaries",
    "overlap": "overlapping",
    "out_of_order": "matching but out of order",
}

ACTION_SUMMARY_KEYS = (
    "ground_truth_actions", "predicted_actions", "valid_predicted_actions", "invalid_predicted_actions",
    "true_positives", "false_positives", "false_negatives", "precision", "recall", "f1", "frame_tolerance",
    "verb_and_boundary_matches", "boundary_only_matches",
)  # fmt: skip
BREAK_POINT_SUMMARY_KEYS = (
    "n_ground_truth", "n_predicted", "identity_matches_in_quality_alignment", "invalid_identity_events",
    "false_identity_events", "duplicate_identity_events", "out_of_order_identity_matches",
    "exact_event_matches_ordered", "summary_accuracy", "shot_accuracy", "hierarchical_true_positive_credit",
    "hierarchical_precision", "hierarchical_recall", "summary_correct_by_field",
)  # fmt: skip
MOMENT_SUMMARY_KEYS = (
    "queries", "scored_queries", "missing", "invalid", "raw_quality", "r1_at_0.5", "r1_at_0.7", "r1_at_0.9",
    "mean_iou", "excluded_zero_normaliser",
)  # fmt: skip


def diagnostics(
    family: str,
    version: str,
    ground_truth: dict[str, Any],
    solution: bytes | BaseException,
    params: dict[str, Any],
    details: dict[str, Any],
    *,
    reference_frames: Sequence[tuple[int, int] | None] = (),
    frame_rate: tuple[int, int] = (24, 1),
) -> dict[str, Any]:
    """Timeline diagnostics of one submission scored by a built-in scorer of ``family``
    and ``version`` (``details``: the scorer's details)."""
    if family == "actions":
        return _actions(version, ground_truth, solution, params, details)
    if family == "break_points":
        return _break_points(version, ground_truth, solution, details, reference_frames)
    return _moments(ground_truth, details, frame_rate)


def _pick(details: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {key: details[key] for key in keys if key in details}


# ----------------------------------------------------------------------------- actions


def _action_label(event: object) -> str:
    if not isinstance(event, dict):
        return "(not an object)"
    nouns = event.get("nouns")
    nouns = "+".join(sorted(map(str, nouns))) if isinstance(nouns, list) else str(nouns)
    return f"{event.get('verb')} {nouns}"


def _frames(event: object) -> tuple[int | None, int | None]:
    def frame(name: str) -> int | None:
        value = event.get(name) if isinstance(event, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return frame("start_frame"), frame("end_frame")


def _submitted_actions(
    solution: bytes | BaseException, task: egocentric.EgocentricTask
) -> tuple[list[Any], str | None]:
    """The submitted entries, or the whole-file rejection reason (exactly the scorer's)."""
    parsed = egocentric.parse_submission(solution, task)
    if isinstance(solution, BaseException) or parsed.reason.startswith("invalid solution: "):
        return [], parsed.reason
    return decode_json_document(bytes(solution))["actions"], None


def _invalid_entries(messages: Sequence[str]) -> dict[int, str]:
    """Entry index -> what its validation said, from the scorer's own messages."""
    invalid = {}
    for message in messages:
        match = ENTRY_MESSAGE.match(message)
        if match:
            invalid[int(match[1]) - 1] = match[2]
    return invalid


def _action_pairs(valid: list[Any], task: egocentric.EgocentricTask, version: str) -> list[dict[str, Any]]:
    """The pairs the scorer counts, by reference index, with their boundary deltas."""
    truths = list(task.ground_truth)
    if version == "v1":
        truths = egocentric.chronological(truths)
    matched = []
    for i, j in egocentric.match_actions(valid, truths, tolerance=task.tolerance, version=version):
        p, r = valid[i], truths[j]
        matched.append(
            {"pred_index": p.index, "ref_index": r.index, "start_delta": p.start - r.start, "end_delta": p.end - r.end}
        )
    matched.sort(key=lambda pair: pair["ref_index"])
    return matched


def _action_item(index: int, event: object, status: str, note: str) -> dict[str, Any]:
    start, end = _frames(event)
    return {"index": index, "label": _action_label(event), "start_frame": start, "end_frame": end,
            "status": status, "note": note, "event": event}  # fmt: skip


def _actions(
    version: str,
    ground_truth: dict[str, Any],
    solution: bytes | BaseException,
    params: dict[str, Any],
    details: dict[str, Any],
) -> dict[str, Any]:
    task = egocentric.build_task(ground_truth, **params)
    references = egocentric.ground_truth_actions(ground_truth)
    entries, rejection = _submitted_actions(solution, task)
    valid, messages = egocentric.validate_actions(entries, task) if rejection is None else ([], [])
    invalid = _invalid_entries(messages)
    matched = _action_pairs(valid, task, version)
    pred_matched = {m["pred_index"] for m in matched}
    ref_matched = {m["ref_index"] for m in matched}
    near = _action_near_misses(
        [a.index for a in valid if a.index not in pred_matched],
        [r.index for r in task.ground_truth if r.index not in ref_matched],
        entries,
        references,
        task.tolerance,
        version,
    )
    near_by_pred = {n["pred_index"]: n for n in near}
    near_by_ref = {n["ref_index"]: n for n in near}
    predictions = []
    for index, event in enumerate(entries):
        if index in pred_matched:
            status, note = "matched", ""
        elif index in invalid:
            status, note = "invalid", f"action {index + 1} {invalid[index]}"
        else:
            status, note = "false_positive", _near_note(near_by_pred.get(index), "reference")
        predictions.append(_action_item(index, event, status, note))
    reference = [
        _action_item(index, event, "matched", "")
        if index in ref_matched
        else _action_item(index, event, "missed", _near_note(near_by_ref.get(index), "prediction"))
        for index, event in enumerate(references)
    ]
    return {
        "summary": _pick(details, ACTION_SUMMARY_KEYS),
        "file_rejection": rejection,
        "tolerance": task.tolerance,
        "reference": reference,
        "predictions": predictions,
        "matched": matched,
        "near_misses": near,
        "boundary_deltas": {
            "unit": "frames (prediction minus reference)",
            "start": distribution([m["start_delta"] for m in matched]),
            "end": distribution([m["end_delta"] for m in matched]),
        },
    }


def _action_near_misses(
    pred_left: list[int], ref_left: list[int], entries: list[Any], references: list[Any], tolerance: int, version: str
) -> list[dict[str, Any]]:
    """Leftovers paired by the union step's tiers (what each false positive almost was)."""
    if not pred_left or not ref_left:
        return []
    items = union_actions(
        [entries[i] for i in pred_left], [references[j] for j in ref_left], tolerance=tolerance, version=version
    )
    near = []
    for item in items:
        if item.a_index is None or item.b_index is None:
            continue
        near.append(
            {
                "pred_index": pred_left[item.a_index],
                "ref_index": ref_left[item.b_index],
                "tier": "out_of_order" if item.tier == "full" else item.tier,
                "differing_fields": list(item.differing_fields),
                "start_delta": -item.start_delta if item.start_delta is not None else None,
                "end_delta": -item.end_delta if item.end_delta is not None else None,
            }
        )
    return near


def _near_note(near: dict[str, Any] | None, counterpart: str) -> str:
    """Why an unmatched item did not match its nearest counterpart (``reference`` or
    ``prediction``)."""
    if near is None:
        return "nothing comparable nearby"
    tier = NEAR_TIERS.get(near["tier"], near["tier"])
    number = near["ref_index" if counterpart == "reference" else "pred_index"] + 1
    fields = ", ".join(near["differing_fields"]) or "none"
    return (
        f"closest {counterpart} #{number} ({tier}); differs in {fields}; "
        f"start {near['start_delta']:+d}, end {near['end_delta']:+d} frames"
    )


# ------------------------------------------------------------------------ break points


def _break_point_label(event: object) -> str:
    if not isinstance(event, dict):
        return "(not an object)"
    parts = [
        f"set {event.get('set')}",
        f"{event.get('medvedev_games')}-{event.get('de_minaur_games')}",
        f"{event.get('medvedev_points')}-{event.get('de_minaur_points')}",
        f"{event.get('server')} serving",
        f"#{event.get('opportunity')}",
    ]
    return ", ".join(parts)


def _token_dict(token: tuple[Any, ...]) -> dict[str, Any]:
    return {"stroke": token[0], "direction": token[1]}


def _shot_rows(pred_tokens: list[Any], ref_tokens: list[Any], steps: Sequence[Sequence[int]]) -> list[dict[str, Any]]:
    """The full shot alignment: diagonal steps with their atoms, gaps on either side."""
    rows = []
    i = j = 0
    for pi, rj, atoms in list(steps) + [(len(pred_tokens), len(ref_tokens), None)]:
        while i < pi:
            rows.append({"pred": i, "ref": None, "atoms": 0, "pred_token": _token_dict(pred_tokens[i])})
            i += 1
        while j < rj:
            rows.append({"pred": None, "ref": j, "atoms": 0, "ref_token": _token_dict(ref_tokens[j])})
            j += 1
        if atoms is not None:
            rows.append(
                {"pred": pi, "ref": rj, "atoms": atoms, "pred_token": _token_dict(pred_tokens[pi]),
                 "ref_token": _token_dict(ref_tokens[rj])}
            )  # fmt: skip
            i, j = pi + 1, rj + 1
    return rows


def _break_point_pair(pair: BreakPointPair, p: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    """One pair the scorer counts: its credit, bottleneck, field differences and shots."""
    wrong = [f for f in tennis.SUMMARY_FIELDS if f not in pair.correct_summary_fields]
    return {
        "pred_index": pair.pred_index,
        "ref_index": pair.ref_index,
        "event_credit": round(float(pair.event_credit), 4),
        "event_credit_exact": str(pair.event_credit),
        "summary_accuracy": round(float(pair.summary_accuracy), 4),
        "shot_accuracy": round(float(pair.shot_accuracy), 4),
        "shot_atoms": pair.shot_atoms,
        "shot_denominator": pair.shot_denominator,
        "bottleneck": "summary" if pair.summary_accuracy <= pair.shot_accuracy else "shots",
        "field_differences": [{"field": f, "predicted": p.get(f, "<missing>"), "reference": r.get(f)} for f in wrong],
        "shot_alignment": _shot_rows(
            tennis.shot_tokens(p), tennis.shot_tokens(r), [list(s) for s in pair.shot_alignment]
        ),
    }


def _unpaired_note(event: object, ref_keys: list[Any]) -> str:
    """Why a prediction found no partner."""
    key = tennis.identity_key(event)
    if key is None:
        return "identity fields missing or mistyped"
    if key not in ref_keys:
        return "no break point with this identity in the ground truth"
    return "identity already paired (a duplicate, or out of order)"


def _break_point_prediction(
    index: int, event: object, pred_to_ref: dict[int, int], frames: list[Any], ref_keys: list[Any]
) -> dict[str, Any]:
    start, end = _frames(event)
    placed_by = "prediction" if start is not None else None
    if index in pred_to_ref:
        status, note = "matched", ""
        if start is None and frames[pred_to_ref[index]]:
            (start, end), placed_by = frames[pred_to_ref[index]], "reference"
    else:
        status, note = "false_positive", _unpaired_note(event, ref_keys)
    return {"index": index, "label": _break_point_label(event), "start_frame": start, "end_frame": end,
            "placed_by": placed_by, "status": status, "note": note, "event": event}  # fmt: skip


def _break_points(
    version: str,
    ground_truth: dict[str, Any],
    solution: bytes | BaseException,
    details: dict[str, Any],
    reference_frames: Sequence[tuple[int, int] | None],
) -> dict[str, Any]:
    references = tennis.ground_truth_events(ground_truth)
    events, _, error = tennis.parse_submission(solution)
    pairs = align_break_points(events, references, version=version) if error is None else []
    ref_keys = [tennis.identity_key(e) for e in references]
    frames = list(reference_frames) + [None] * max(0, len(references) - len(reference_frames))
    matched = [_break_point_pair(pair, events[pair.pred_index], references[pair.ref_index]) for pair in pairs]
    pred_to_ref = {m["pred_index"]: m["ref_index"] for m in matched}
    ref_matched = set(pred_to_ref.values())
    predictions = [
        _break_point_prediction(index, event, pred_to_ref, frames, ref_keys) for index, event in enumerate(events)
    ]
    reference = []
    for index, event in enumerate(references):
        start, end = frames[index] or (None, None)
        status = "matched" if index in ref_matched else "missed"
        note = "" if status == "matched" else "no prediction with this identity in order"
        reference.append(
            {"index": index, "label": _break_point_label(event), "start_frame": start, "end_frame": end,
             "status": status, "note": note, "event": event}
        )  # fmt: skip
    return {
        "summary": _pick(details, BREAK_POINT_SUMMARY_KEYS),
        "file_rejection": None if error is None else details.get("reason"),
        "reference": reference,
        "predictions": predictions,
        "matched": sorted(matched, key=lambda m: m["ref_index"]),
        "near_misses": [],
        "boundary_deltas": None,
    }


# ----------------------------------------------------------------------------- moments


def _second_to_frame(seconds: float, frame_rate: tuple[int, int]) -> int:
    return math.floor(Fraction(seconds) * Fraction(frame_rate[0], frame_rate[1] or 1) + Fraction(1, 10**6))


def _moments(ground_truth: dict[str, Any], details: dict[str, Any], frame_rate: tuple[int, int]) -> dict[str, Any]:
    queries = {q["query_id"]: q for q in ground_truth.get("queries", []) if isinstance(q, dict)}
    reference: list[dict[str, Any]] = []
    predictions: list[dict[str, Any]] = []
    matched: list[dict[str, Any]] = []
    for index, record in enumerate(details.get("per_query", [])):
        query = queries.get(record["query_id"], {})
        intervals = query.get("intervals") or [[0.0, 0.0]]
        first = intervals[0]
        status = record.get("status", "")
        reference.append(
            {"index": index, "label": record["query_id"], "start_frame": _second_to_frame(first[0], frame_rate),
             "end_frame": _second_to_frame(first[1], frame_rate), "status": "matched" if status == "ok" else "missed",
             "note": "" if status == "ok" else status, "event": query}
        )  # fmt: skip
        if status == "ok":
            predictions.append(
                {"index": len(predictions), "label": record["query_id"],
                 "start_frame": _second_to_frame(record["start"], frame_rate),
                 "end_frame": _second_to_frame(record["end"], frame_rate), "status": "matched",
                 "note": f"IoU {record['iou']:.3f}, score {record['score']:.3f}",
                 "event": {"start": record["start"], "end": record["end"]}}
            )  # fmt: skip
            matched.append(
                {"pred_index": len(predictions) - 1, "ref_index": index, "iou": record["iou"],
                 "start_delta_seconds": record["start"] - first[0], "end_delta_seconds": record["end"] - first[1]}
            )  # fmt: skip
    return {
        "summary": _pick(details, MOMENT_SUMMARY_KEYS),
        "file_rejection": details.get("reason") if str(details.get("reason", "")).startswith("unreadable") else None,
        "reference": reference,
        "predictions": predictions,
        "matched": matched,
        "near_misses": [],
        "boundary_deltas": None,
    }
