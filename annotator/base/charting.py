"""The Match Charting Project's point-by-point CSV, read into break-point events.

One row per point (``charting-m-points-*.csv``): ``Pt``, ``Set1``/``Set2`` (sets won by
player 1 / player 2 before the point), ``Gm1``/``Gm2`` (games in the set), ``Pts`` (the
point score, the server's first), ``Svr`` and ``PtWinner`` (1 or 2), and ``1st``/``2nd``:
the serve and rally codes of MatchChart 0.3.x (``data/mcp/MatchChart-0.3.2-Instructions-
sheet-extract.txt``). Player 1 is the one who served first.

Only break points become events: a point the returner wins the game with (returner at
40 against 0, 15 or 30, or at AD). Tiebreak points (numeric ``Pts``) are never break
points. A row carries no video position, so the events have no frames unless the file
adds ``start_frame`` and ``end_frame`` columns (frames of the packet's video).

Pure Python: ``ChartingError(reason)`` for a row that cannot be read.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from scoring import tennis_vocabulary as vocabulary

COLUMNS = ("Pt", "Set1", "Set2", "Gm1", "Gm2", "Pts", "Svr", "1st", "2nd", "PtWinner")
FRAME_COLUMNS = ("start_frame", "end_frame")
POINTS = vocabulary.POINTS
# The MatchChart codes of the vocabulary's names (``scoring.tennis_vocabulary``), paired in
# its order. Serves: 4 wide, 5 body, 6 down_the_t, 0 unknown. Rally directions, for
# right-handed receivers as the MatchChart instructions define 1, 2 and 3: 1
# receiver_forehand, 2 middle, 3 receiver_backhand, 0 unknown.
SERVE_DIRECTIONS = dict(zip("4560", vocabulary.SERVE_DIRECTIONS, strict=True))
RALLY_DIRECTIONS = dict(zip("1230", vocabulary.RALLY_DIRECTIONS, strict=True))
# Every stroke but the serve: f forehand_groundstroke, b backhand_groundstroke, r/s forehand/
# backhand slice, v/z volleys, o overhead, p backhand_overhead, u/y drop shots, l/m lobs, h/i
# half volleys, j/k swinging volleys, t trick_shot, q unknown.
STROKES = dict(zip("fbrsvzopuylmhijktq", vocabulary.STROKES[1:], strict=True))
NET_STROKES = set("vzophijk")  # volleys, smashes, half and swinging volleys: at the net unless "="
# n net, w wide, d deep, x wide_and_deep, ! shank, e and g unknown (every error but "none").
MISSES = tuple(e for e in vocabulary.ERRORS if e != vocabulary.NO_ERROR)
ERRORS = {**dict(zip("nwdx!e", MISSES, strict=True)), "g": "unknown"}
# How an error is charted: # forced, @ unforced, neither: not known.
ERROR_KINDS = dict(zip(("#", "@", None), vocabulary.ERROR_RESULTS, strict=True))
UNCHARTED = {"S": "the server", "R": "the returner", "P": "a penalty", "Q": "a penalty"}

SERVE = re.compile(r"c*([0456])\+?")
FAULT = re.compile(r"c*[0456]\+?[nwdxge!]")
SHOT = re.compile(r"([fbrsvzopuylmhijktq])([+\-=;^]*)([0-3])?[0789]?([+\-=;^]*)")
ENDING = re.compile(r"(?P<winner>\*)|(?:(?P<error>[nwdxe!])?(?P<kind>[@#])?)")


class ChartingError(ValueError):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Point:
    first_serve_in: bool
    serve_direction: str
    shots: list[dict]
    terminal_index: int  # the token whose hitter ended the point (0: the serve)
    terminal_result: str
    terminal_error: str
    terminal_court_position: str
    server_won: bool

    @property
    def rally_shots(self) -> int:
        """Shots in play: every token, except the missed stroke of a point ending in an error."""
        return len(self.shots) - 1 if self.terminal_result in vocabulary.ERROR_RESULTS else len(self.shots)


def decode_point(first: str, second: str) -> Point:
    """The ``1st`` and ``2nd`` cells of one point."""
    first, second = first.strip(), second.strip()
    if first in UNCHARTED:
        raise ChartingError(f"1st is {first!r} (the point goes to {UNCHARTED[first]}, not charted shot by shot)")
    if first == "V" or FAULT.fullmatch(first):  # a time violation or a first-serve fault
        if not second:
            raise ChartingError("the first serve is a fault but 2nd is empty")
        if FAULT.fullmatch(second):
            return _double_fault(second)
        return _rally(second, first_serve_in=False, cell="2nd")
    if second:
        raise ChartingError("the first serve is in, so 2nd must be empty")
    return _rally(first, first_serve_in=True, cell="1st")


def _double_fault(code: str) -> Point:
    direction = SERVE_DIRECTIONS[SERVE.match(code)[1]]
    return Point(False, direction, [{"stroke": "serve", "direction": direction}], 0, "unforced_error",
                 ERRORS[code[-1]], "serve", server_won=False)  # fmt: skip


def _rally(code: str, *, first_serve_in: bool, cell: str) -> Point:
    serve = SERVE.match(code)
    if serve is None:
        raise ChartingError(f"{cell} {code!r}: a serve starts with its direction (4, 5, 6 or 0)")
    direction = SERVE_DIRECTIONS[serve[1]]
    shots = [{"stroke": "serve", "direction": direction}]
    rest, at = code, serve.end()
    if rest[at:] in {"*", "#"}:  # an ace or an unreturnable serve
        result = "ace" if rest[at:] == "*" else "unreturnable"
        return Point(first_serve_in, direction, shots, 0, result, "none", "serve", server_won=True)
    position = "baseline"
    while True:
        shot = SHOT.match(rest, at)
        if shot is None:
            what = repr(rest[at]) if at < len(rest) else "the end"
            raise ChartingError(f"{cell} {code!r}: unexpected {what} at character {at + 1}")
        letter, modifiers = shot[1], shot[2] + shot[4]
        shots.append({"stroke": STROKES[letter], "direction": RALLY_DIRECTIONS[shot[3] or "0"]})
        at_net = ("-" in modifiers) or (letter in NET_STROKES and "=" not in modifiers)
        position = "net" if at_net else "baseline"
        at = shot.end()
        ending = ENDING.fullmatch(rest, at)
        if ending and (ending["winner"] or ending["error"] or ending["kind"]):
            break
        if at >= len(rest):
            raise ChartingError(f"{cell} {code!r}: the rally has no ending (*, @ or #)")
    last = len(shots) - 1
    server_hit_last = last % 2 == 0
    if ending["winner"]:
        return Point(first_serve_in, direction, shots, last, "winner", "none", position, server_won=server_hit_last)
    result = ERROR_KINDS[ending["kind"]]
    error = ERRORS[ending["error"]] if ending["error"] else "unknown"
    return Point(first_serve_in, direction, shots, last, result, error, position, server_won=not server_hit_last)


@dataclass
class Row:
    number: int  # line in the file
    text: str
    cells: dict


def read_rows(text: str) -> list[Row]:
    """The CSV rows with their line numbers; ``ChartingError`` when columns are missing."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ChartingError(f"the header lacks the column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    lines = text.splitlines()
    rows = []
    for cells in reader:
        number = reader.line_num
        rows.append(Row(number, lines[number - 1][:200] if number <= len(lines) else "", cells))
    return rows


def _player(value: str, column: str) -> int:
    if value.strip() not in {"1", "2"}:
        raise ChartingError(f"{column} must be 1 or 2, not {value!r}")
    return int(value)


def _count(value: str, column: str) -> int:
    if not (value.isascii() and value.strip().isdigit()):
        raise ChartingError(f"{column} must be a whole number, not {value!r}")
    return int(value)


def break_point_event(cells: dict, players: list[str], *, first_slot: int = 1) -> dict | None:
    """The row as a break-point event, or ``None`` when the point is not a break point.
    ``players``: the names of the file's player 1 and player 2; ``first_slot``: which of
    them fills the first player's score fields (``medvedev_*``, the packet's first player)."""
    server = _player(cells["Svr"], "Svr")
    winner = _player(cells["PtWinner"], "PtWinner")
    sets = _count(cells["Set1"], "Set1") + _count(cells["Set2"], "Set2")
    games = (_count(cells["Gm1"], "Gm1"), _count(cells["Gm2"], "Gm2"))
    score = cells["Pts"].strip().split("-")
    if len(score) != 2 or not all(s.strip().isdigit() or s.strip() == "AD" for s in score):
        raise ChartingError(f"Pts must be a score such as 30-40 or AD-40, not {cells['Pts']!r}")
    server_points, returner_points = (s.strip() for s in score)
    if server_points not in POINTS or returner_points not in POINTS:
        return None  # a tiebreak point
    below_40 = POINTS[: POINTS.index("40")]
    returner_wins_game = returner_points == "AD" or (returner_points == "40" and server_points in below_40)
    if not returner_wins_game:
        return None
    point = decode_point(cells["1st"], cells["2nd"])
    if point.server_won != (winner == server):
        said = "the server" if winner == server else "the returner"
        raise ChartingError(f"PtWinner says {said} won, but the codes end with a point for the other player")
    by_player = {server: server_points, 3 - server: returner_points}
    hitter = server if point.terminal_index % 2 == 0 else 3 - server
    return {
        "set": sets + 1,
        "medvedev_games": games[first_slot - 1],
        "de_minaur_games": games[2 - first_slot],
        "medvedev_points": by_player[first_slot],
        "de_minaur_points": by_player[3 - first_slot],
        "server": players[server - 1],
        "first_serve_in": point.first_serve_in,
        "outcome": "saved" if point.server_won else "converted",
        "serve_direction": point.serve_direction,
        "rally_shots": point.rally_shots,
        "terminal_player": players[hitter - 1],
        "terminal_stroke": point.shots[point.terminal_index]["stroke"],
        "terminal_court_position": point.terminal_court_position,
        "terminal_result": point.terminal_result,
        "terminal_error": point.terminal_error,
        "shots": point.shots,
    }


def number_opportunities(events: list[dict]) -> None:
    """``opportunity``: the break point's number within its game (1, 2, …), in file order."""
    seen: dict[tuple, int] = {}
    for event in events:
        game = (event["set"], event["medvedev_games"], event["de_minaur_games"])
        seen[game] = seen.get(game, 0) + 1
        event["opportunity"] = seen[game]


def frames(cells: dict) -> dict:
    """``start_frame`` / ``end_frame`` when the file has them (the task kind checks the range)."""
    found = {}
    for column in FRAME_COLUMNS:
        value = (cells.get(column) or "").strip()
        if value:
            if not (value.isascii() and value.isdigit()):
                raise ChartingError(f"{column} must be a frame number, not {value!r}")
            found[column] = int(value)
    return found
