"""Command line: ``python -m scoring score|anchors|agreement|list``.

``score`` stands in for the published verifiers: it reads the submission the way the
published verifier does (the file layer), calls :func:`scoring.score_submission` and
writes the result's bytes unchanged. It exits 0 whenever the reward files were
written, including for a malformed submission; 2 for a usage, ground-truth or
parameter error (nothing written).
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from pathlib import Path

from . import egocentric, moments
from .agreement import agreement
from .anchors import anchors
from .errors import ScoringError, SolutionRejected
from .registry import SCORERS, get_scorer, score_submission

OPTION_PARAMETERS = {
    "frame_count": "--frame-count",
    "tolerance": "--tolerance",
    "vocabulary": "--vocabulary",
    "corpus": "--corpus",
    "a": "--reward-map-a",
    "b": "--reward-map-b",
}


class UsageError(Exception):
    """A command-line problem reported on stderr with exit status 2."""


def read_egocentric_solution(path: Path) -> bytes | BaseException:
    """The published egocentric file layer: no symlinks, a regular file, size cap."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        return error
    try:
        metadata = os.fstat(descriptor)
        if not stat.S_ISREG(metadata.st_mode):
            return SolutionRejected("solution must be a regular file")
        if metadata.st_size > egocentric.MAX_SOLUTION_BYTES:
            return SolutionRejected(f"solution exceeds {egocentric.MAX_SOLUTION_BYTES} bytes")
        with os.fdopen(descriptor, "rb") as handle:
            descriptor = -1
            return handle.read(egocentric.MAX_SOLUTION_BYTES + 1)
    except OSError as error:
        return error
    finally:
        if descriptor >= 0:
            os.close(descriptor)


def read_plain_solution(path: Path) -> bytes | BaseException:
    """The tennis and moment file layer: read the file; an OSError is the reason."""
    try:
        return path.read_bytes()
    except OSError as error:
        return error


def read_solution(scorer_id: str, path: Path) -> bytes | BaseException:
    if get_scorer(scorer_id).kind == "actions":
        return read_egocentric_solution(path)
    return read_plain_solution(path)


def _load_json(path: str, what: str) -> object:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read {what} {path}: {error}") from None


def _load_corpus(path: str) -> list:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read corpus {path}: {error}") from None
    return moments.parse_corpus_jsonl(text)


def task_parameters(args: argparse.Namespace, scorer_id: str) -> dict:
    """The task parameters given on the command line, checked against the scorer."""
    values = {
        "frame_count": args.frame_count,
        "tolerance": args.tolerance,
        "vocabulary": _load_json(args.vocabulary, "vocabulary") if args.vocabulary else None,
        "corpus": _load_corpus(args.corpus) if args.corpus else None,
        "a": args.reward_map_a,
        "b": args.reward_map_b,
    }
    accepted = {parameter.name for parameter in get_scorer(scorer_id).parameters}
    params = {}
    for name, value in values.items():
        if value is None:
            continue
        if name not in accepted:
            raise UsageError(f"{scorer_id} does not take {OPTION_PARAMETERS[name]}")
        params[name] = value
    return params


def _write(path: str, data: bytes) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def command_score(args: argparse.Namespace) -> int:
    scorer_id = get_scorer(args.scorer).scorer_id
    ground_truth = _load_json(args.ground_truth, "ground truth")
    params = task_parameters(args, scorer_id)
    solution = read_solution(scorer_id, Path(args.solution))
    result = score_submission(scorer_id, ground_truth, solution, **params)
    _write(args.reward_json, result.reward_json)
    if result.reward_txt is not None:
        _write(args.reward_txt, result.reward_txt)
    if args.details_json:
        if result.details_json is None:
            print(
                f"{scorer_id} writes its details inside {args.reward_json}; no separate details file",
                file=sys.stderr,
            )
        else:
            _write(args.details_json, result.details_json)
    return 0


def command_anchors(args: argparse.Namespace) -> int:
    scorer_id = get_scorer(args.scorer).scorer_id
    ground_truth = _load_json(args.ground_truth, "ground truth")
    table = anchors(scorer_id, ground_truth, **task_parameters(args, scorer_id))
    if args.json:
        rows = [{"name": a.name, "reward": a.reward, "description": a.description} for a in table]
        print(json.dumps({"scorer": scorer_id, "anchors": rows}, indent=2))
        return 0
    width = max(len(anchor.name) for anchor in table)
    print(f"anchors of {scorer_id} on {args.ground_truth}")
    for anchor in table:
        print(f"{anchor.name:<{width}}  {anchor.reward:>9.6f}  {anchor.description}")
    return 0


def command_agreement(args: argparse.Namespace) -> int:
    scorer_id = get_scorer(args.scorer).scorer_id
    ledger_a = _load_json(args.ledger_a, "ledger")
    ledger_b = _load_json(args.ledger_b, "ledger")
    report = agreement(scorer_id, ledger_a, ledger_b, **task_parameters(args, scorer_id))
    print(json.dumps(report, indent=2, default=str))
    return 0


def command_list(args: argparse.Namespace) -> int:
    for scorer in SCORERS.values():
        print(f"{scorer.scorer_id:<28} {scorer.kind:<13} {scorer.description}")
        for parameter in scorer.parameters:
            default = "required" if parameter.required else repr(parameter.default)
            print(f"    {parameter.name} ({default}): {parameter.description}")
    return 0


def _add_task_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frame-count", type=int, help="video frame count (egocentric)")
    parser.add_argument("--tolerance", type=int, help="boundary tolerance in frames (12)")
    parser.add_argument("--vocabulary", help="vocabulary.json with verbs and nouns")
    parser.add_argument("--corpus", help="corpus records.jsonl (moment search)")
    parser.add_argument("--reward-map-a", type=float, help="reward-map anchor a (15)")
    parser.add_argument("--reward-map-b", type=float, help="reward-map quality b")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scoring", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    score = commands.add_parser("score", help="score one submission, write reward files")
    score.add_argument("--scorer", required=True)
    score.add_argument("--ground-truth", required=True)
    score.add_argument("--solution", required=True)
    score.add_argument("--reward-json", required=True)
    score.add_argument("--reward-txt", required=True)
    score.add_argument("--details-json")
    _add_task_options(score)
    score.set_defaults(run=command_score)

    table = commands.add_parser("anchors", help="print the calibration anchors")
    table.add_argument("--scorer", required=True)
    table.add_argument("--ground-truth", required=True)
    table.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _add_task_options(table)
    table.set_defaults(run=command_anchors)

    compare = commands.add_parser("agreement", help="compare two annotators' ledgers")
    compare.add_argument("--scorer", required=True)
    compare.add_argument("--ledger-a", required=True)
    compare.add_argument("--ledger-b", required=True)
    _add_task_options(compare)
    compare.set_defaults(run=command_agreement)

    listing = commands.add_parser("list", help="list the registered scorers")
    listing.set_defaults(run=command_list)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (UsageError, ScoringError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
