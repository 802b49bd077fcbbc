"""What a scorer is handed for one ground-truth version: the ground truth and the task
parameters. Reads rows, writes nothing.

The ground truth is the version's exported ``gt.json`` (``annotator.export``), the very
file that drops into a verifier folder, so the app grades against the same bytes a
benchmark does. Task parameters come from the packet: the video's frame count and the
task kind's tolerance for action ledgers, the video's time grid for moment queries.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import scoring
from annotator.errors import InvalidInput
from annotator.export import export_files
from annotator.models import GroundTruthVersion, Packet
from scoring import get_scorer


@dataclass(frozen=True)
class ScoringInputs:
    scorer_id: str
    ground_truth: dict
    ground_truth_sha256: str
    params: dict


class ScorerMismatch(ValueError):
    """The scorer grades another family of task than the version's task kind."""


def resolve_scorer(version: GroundTruthVersion, scorer_id: str | None) -> str:
    """The scorer id to use (default: the task kind's); its family must match
    (``ScorerMismatch`` / ``UnknownScorer`` otherwise, both ValueErrors)."""
    scorer_id = scorer_id or version.packet.task_kind.scorer_id
    scorer = get_scorer(scorer_id)  # UnknownScorer is a ValueError
    family = version.packet.task_kind.schema["family"]
    if scorer.kind != family:
        raise ScorerMismatch(f"{scorer_id} scores {scorer.kind} ledgers; this packet's task kind is {family}")
    return scorer_id


def check_scorer_id(version: GroundTruthVersion, scorer_id: str | None) -> str:
    """``resolve_scorer`` for untrusted input: a bad id is ``InvalidInput`` on ``scorer_id``."""
    try:
        return resolve_scorer(version, scorer_id)
    except ValueError as error:
        raise InvalidInput(str(error), field="scorer_id") from None


def task_parameters(packet: Packet, scorer_id: str) -> dict:
    """The scorer's task parameters for a packet (the same for all its versions)."""
    schema = packet.task_kind.schema
    kind = get_scorer(scorer_id).kind
    if kind == "actions":
        return {"frame_count": packet.video.frame_count, "tolerance": schema.get("tolerance", 12)}
    if kind == "moments":
        steps = [f.get("grid_step") for f in schema["fields"] if f.get("type") == "interval_list"]
        step = next((s for s in steps if s), None)
        video_id = packet.params.get("video_id") or f"video-{packet.video_id}"
        # A packet's own grid (imported published labels) wins over the task kind's step.
        grid = packet.params.get("grid") or ({"step": step} if step else [0.0, packet.video.duration])
        return {"corpus": [{"video_id": video_id, "duration": packet.video.duration, "grid": grid}]}
    return {}


def scoring_inputs(version: GroundTruthVersion, scorer_id: str) -> ScoringInputs:
    data = export_files(version)["gt.json"]
    return ScoringInputs(
        scorer_id=scorer_id,
        ground_truth=json.loads(data),
        ground_truth_sha256=hashlib.sha256(data).hexdigest(),
        params=task_parameters(version.packet, scorer_id),
    )


@lru_cache(maxsize=1)
def scorer_code_sha256() -> str:
    """SHA-256 over the scoring library's source files (name and bytes, sorted): which
    scorer code produced a result, so a later change of the library is visible."""
    root = Path(scoring.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
