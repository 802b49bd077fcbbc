"""Command line: ``python -m scoring score|anchors|agreement|list``.

``score`` stands in for the published verifiers: it reads the submission the way the
published verifier does (the file layer), calls :func:`scoring.score_submission` and
writes the result's bytes unchanged. It exits 0 whenever the reward files were
written, including for a malformed submission; 2 for a usage, ground-truth or
parameter error (nothing written).
"""

import os
import sys

from ._annotations import TYPE_CHECKING, Any
from .errors import ScoringError
from .files import read_egocentric_solution  # noqa: F401  (kept importable here)
from .registry import SCORERS, get_scorer, score_submission

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

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


def read_plain_solution(path: str) -> bytes | BaseException:
    """The tennis file layer (kept for callers of the old name)."""
    from .files import read_tennis_solution

    return read_tennis_solution(path)


def read_solution(scorer_id: str, path: str) -> bytes | BaseException:
    """The submission bytes as the scorer's published verifier reads them, caps included
    (the drop-in mode of scoring.files: a tennis file is read whole, as its judge does)."""
    from .files import read_solution as read

    return read(get_scorer(scorer_id).kind, path, drop_in=True)


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _load_json(path: str, what: str) -> object:
    from .jsonio import loads

    try:
        return loads(_read_text(path))
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read {what} {path}: {error}") from None


def _load_corpus(path: str) -> list[Any]:
    from . import moments

    try:
        text = _read_text(path)
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read corpus {path}: {error}") from None
    return moments.parse_corpus_jsonl(text)


def task_parameters(args: Any, scorer_id: str) -> dict[str, Any]:
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
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def command_score(args: Any) -> int:
    scorer_id = get_scorer(args.scorer).scorer_id
    ground_truth = _load_json(args.ground_truth, "ground truth")
    params = task_parameters(args, scorer_id)
    solution = read_solution(scorer_id, args.solution)
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


def command_anchors(args: Any) -> int:
    import json

    from .anchors import anchors

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


def command_agreement(args: Any) -> int:
    import json

    from .agreement import agreement

    scorer_id = get_scorer(args.scorer).scorer_id
    ledger_a = _load_json(args.ledger_a, "ledger")
    ledger_b = _load_json(args.ledger_b, "ledger")
    report = agreement(scorer_id, ledger_a, ledger_b, **task_parameters(args, scorer_id))
    print(json.dumps(report, indent=2, default=str))
    return 0


def command_list(args: Any) -> int:
    for scorer in SCORERS.values():
        print(f"{scorer.scorer_id:<28} {scorer.kind:<13} {scorer.description}")
        for parameter in scorer.parameters:
            default = "required" if parameter.required else repr(parameter.default)
            print(f"    {parameter.name} ({default}): {parameter.description}")
    return 0


def _add_task_options(parser: "argparse.ArgumentParser") -> None:
    parser.add_argument("--frame-count", type=int, help="video frame count (egocentric)")
    parser.add_argument("--tolerance", type=int, help="boundary tolerance in frames (12)")
    parser.add_argument("--vocabulary", help="vocabulary.json with verbs and nouns")
    parser.add_argument("--corpus", help="corpus records.jsonl (moment search)")
    parser.add_argument("--reward-map-a", type=float, help="reward-map anchor a (15)")
    parser.add_argument("--reward-map-b", type=float, help="reward-map quality b")


def build_parser() -> "argparse.ArgumentParser":
    import argparse

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


class _ScoreArgs:
    """The parsed options of ``score`` (the fast path's stand-in for a Namespace)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


_SCORE_OPTIONS = {
    "--scorer": ("scorer", str),
    "--ground-truth": ("ground_truth", str),
    "--solution": ("solution", str),
    "--reward-json": ("reward_json", str),
    "--reward-txt": ("reward_txt", str),
    "--details-json": ("details_json", str),
    "--frame-count": ("frame_count", int),
    "--tolerance": ("tolerance", int),
    "--vocabulary": ("vocabulary", str),
    "--corpus": ("corpus", str),
    "--reward-map-a": ("reward_map_a", float),
    "--reward-map-b": ("reward_map_b", float),
}
_SCORE_REQUIRED = ("scorer", "ground_truth", "solution", "reward_json", "reward_txt")


def parse_score_fast(argv: list[str]) -> _ScoreArgs | None:
    """``score --name value ...`` without importing argparse (it costs a noticeable
    share of a verifier call). Anything unusual -- an unknown, repeated, abbreviated
    or missing option, a bad number, ``-h`` -- returns None and argparse takes over,
    so its messages and exit status stay the reference."""
    if not argv or argv[0] != "score" or len(argv) % 2 != 1:
        return None
    values: dict[str, Any] = {name: None for name, _ in _SCORE_OPTIONS.values()}
    seen = set()
    for position in range(1, len(argv), 2):
        option, value = argv[position], argv[position + 1]
        spec = _SCORE_OPTIONS.get(option)
        if spec is None or option in seen or value.startswith("-"):
            return None
        seen.add(option)
        name, convert = spec
        try:
            values[name] = convert(value)
        except ValueError:
            return None
    if any(values[name] is None for name in _SCORE_REQUIRED):
        return None
    values["run"] = command_score
    return _ScoreArgs(values)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args: Any = parse_score_fast(argv) or build_parser().parse_args(argv)
    run: Callable[[Any], int] = args.run
    try:
        return run(args)
    except (UsageError, ScoringError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
