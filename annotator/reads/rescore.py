"""Re-scoring stored scores (``manage.py verify_integrity --rescore``): a stored score is
reproduced by scoring its submission's bytes again against its version with its scorer id
and the run's parameters, and the scorer's output bytes (``reward.json``, ``reward.txt``,
``details.json``) are compared with the stored ones. Reads only.

A score whose run was scored with other scorer code (``scorer_code_sha256``) is still
compared; a difference is reported with that fact, since a changed scorer may legitimately
score differently.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from annotator.models import SubmissionScore
from annotator.reads.grading_inputs import scorer_code_sha256, scoring_inputs
from annotator.reads.integrity import TamperedData, describe
from scoring import SolutionRejected, score_submission

SCORE_FILES = (("reward.json", "reward_json"), ("reward.txt", "reward_txt"), ("details.json", "details_json"))


@dataclass(frozen=True)
class Mismatch:
    obj: str
    message: str

    def __str__(self) -> str:
        return f"{self.obj}: {self.message}"


def _bytes(value) -> bytes | None:
    return bytes(value) if value is not None else None


def scores_to_check(sample: int | None, seed: int | None = None) -> list[int]:
    """Ids of the scored results to re-score: all, or ``sample`` of them at random."""
    ids = list(SubmissionScore.objects.filter(status=SubmissionScore.Status.SCORED).values_list("pk", flat=True))
    if sample is not None and sample < len(ids):
        ids = sorted(random.Random(seed).sample(ids, sample))
    return ids


def rescore(score_ids: list[int]) -> tuple[int, list[Mismatch]]:
    """(how many were re-scored, the mismatches)."""
    problems: list[Mismatch] = []
    inputs_cache: dict = {}
    code = scorer_code_sha256()
    rows = SubmissionScore.objects.filter(pk__in=score_ids).select_related("run", "submission", "version__packet")
    done = 0
    for score in rows.order_by("pk").iterator(chunk_size=100):
        name, run = describe(score), score.run
        key = (score.version_id, score.scorer_id)
        if key not in inputs_cache:
            try:
                inputs_cache[key] = scoring_inputs(score.version, score.scorer_id)
            except TamperedData as error:
                inputs_cache[key] = error
        inputs = inputs_cache[key]
        if isinstance(inputs, TamperedData):
            problems.append(Mismatch(name, f"its version cannot be read: {inputs.message}"))
            continue
        if inputs.ground_truth_sha256 != run.ground_truth_sha256:
            problems.append(Mismatch(name, "its version no longer exports the gt.json its run was scored against"))
            continue
        submission = score.submission
        if submission.content is not None:
            solution: bytes | BaseException = bytes(submission.content)
        else:
            solution = SolutionRejected(submission.rejected_reason or "the submission was not kept")
        try:
            outcome = score_submission(score.scorer_id, inputs.ground_truth, solution, **run.params)
        except Exception as error:  # the scorer failing now, where it scored before, is a mismatch
            problems.append(Mismatch(name, f"re-scoring failed: {type(error).__name__}: {error}"))
            continue
        done += 1
        differ = [name for name, column in SCORE_FILES if getattr(outcome, column) != _bytes(getattr(score, column))]
        if outcome.reward != score.reward and "reward.json" not in differ:
            differ.insert(0, "reward")
        if differ:
            note = "" if run.scorer_code_sha256 == code else " (its run used other scorer code)"
            problems.append(Mismatch(name, f"re-scoring gives other {', '.join(differ)}{note}"))
    return done, problems
