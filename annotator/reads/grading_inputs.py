"""What a scorer is handed for one ground-truth version: the ground truth and the task
parameters. Reads rows, writes nothing.

The ground truth is the version's exported ``gt.json`` (``annotator.reads.export``), the very
file that drops into a verifier folder, so the app grades against the same bytes a
benchmark does. Task parameters come from the packet through the family's adapter
(``annotator.base.families``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import scoring
from annotator.base.errors import InvalidInput
from annotator.base.families import adapter_for_scorer
from annotator.models import GroundTruthVersion, Packet
from annotator.reads.export import export_files
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
    return adapter_for_scorer(scorer_id).task_parameters(packet)


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
