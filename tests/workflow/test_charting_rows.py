"""Match Charting Project point rows read as break-point events (``annotator.base.charting``):
the 16 break points of the published key, written as charting rows, read back as the
key; each code of the MatchChart instructions; the rows refused, with their reasons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.base.charting import ChartingError, break_point_event, decode_point, number_opportunities, read_rows

ROWS = Path("data/mcp/medvedev-de-minaur-break-points-as-charting-rows.csv")
KEY = Path(
    "data/agentic-vbench/medvedev-de-minaur-2023-us-open-break-point-ledger/calibration/baselines/anchors/oracle/solution.json"
)
PLAYERS = ["Daniil Medvedev", "Alex De Minaur"]


def row(first: str, second: str = "", *, pts: str = "30-40", svr: str = "1", winner: str = "2", **more) -> dict:
    cells = {"Pt": "1", "Set1": "0", "Set2": "0", "Gm1": "1", "Gm2": "1", "Pts": pts, "Svr": svr,
             "1st": first, "2nd": second, "PtWinner": winner}  # fmt: skip
    return cells | more


def test_the_published_break_points_read_back_from_charting_rows():
    rows = read_rows(ROWS.read_text())
    events = [break_point_event(r.cells, PLAYERS) for r in rows]
    number_opportunities(events)
    assert events == json.loads(KEY.read_text())["break_points"]


def test_the_players_may_be_given_in_the_other_order():
    cells = row("4b2v3*", svr="2", winner="2", Gm1="2", Gm2="1", Pts="30-40")  # player 2 serves, saves
    event = break_point_event(cells, PLAYERS[::-1], first_slot=2)
    # the file's player 1 is the packet's second player: its games fill the second slot
    assert (event["medvedev_games"], event["de_minaur_games"]) == (1, 2)
    assert (event["medvedev_points"], event["de_minaur_points"]) == ("30", "40")
    assert event["server"] == "Daniil Medvedev" and event["outcome"] == "saved"


@pytest.mark.parametrize(
    ("pts", "is_break_point"),
    [("30-40", True), ("0-40", True), ("40-AD", True), ("40-40", False), ("AD-40", False), ("40-30", False),
     ("15-0", False), ("5-6", False)],
)  # fmt: skip
def test_only_the_returners_game_points_are_break_points(pts, is_break_point):
    event = break_point_event(row("6*", pts=pts, winner="1"), PLAYERS)
    assert (event is not None) == is_break_point


def test_each_matchchart_stroke_code_names_its_stroke_of_the_vocabulary():
    """The code table is paired with the vocabulary's order (``scoring.tennis_vocabulary``):
    each letter of the MatchChart instructions reads as the stroke it names."""
    codes = {
        "f": "forehand_groundstroke", "b": "backhand_groundstroke", "r": "forehand_slice", "s": "backhand_slice",
        "v": "forehand_volley", "z": "backhand_volley", "o": "overhead", "p": "backhand_overhead",
        "u": "forehand_drop_shot", "y": "backhand_drop_shot", "l": "forehand_lob", "m": "backhand_lob",
        "h": "forehand_half_volley", "i": "backhand_half_volley", "j": "forehand_swinging_volley",
        "k": "backhand_swinging_volley", "t": "trick_shot", "q": "unknown",
    }  # fmt: skip
    for letter, stroke in codes.items():
        point = decode_point(f"4{letter}1*", "")
        assert point.shots[1]["stroke"] == stroke, letter
    serves = {"4": "wide", "5": "body", "6": "down_the_t", "0": "unknown"}
    rallies = {"1": "receiver_forehand", "2": "middle", "3": "receiver_backhand", "0": "unknown"}
    for code, direction in serves.items():
        assert decode_point(f"{code}*", "").serve_direction == direction
    for code, direction in rallies.items():
        assert decode_point(f"4f{code}*", "").shots[1]["direction"] == direction
    errors = {"n": "net", "w": "wide", "d": "deep", "x": "wide_and_deep", "!": "shank", "e": "unknown"}
    for code, error in errors.items():
        assert decode_point(f"4f1{code}@", "").terminal_error == error


def test_the_instruction_examples_decode():
    double = decode_point("4n", "5d")  # a double fault: the server's unforced error
    assert (double.first_serve_in, double.serve_direction, double.terminal_result, double.terminal_error) == (
        False, "body", "unforced_error", "deep")  # fmt: skip
    assert not double.server_won and double.rally_shots == 0
    rally = decode_point("5f2f1f1v2n@", "")  # the instructions' rally ending in a volley into the net
    assert [s["stroke"] for s in rally.shots] == ["serve"] + ["forehand_groundstroke"] * 3 + ["forehand_volley"]
    assert (rally.terminal_result, rally.terminal_error, rally.terminal_court_position) == (
        "unforced_error",
        "net",
        "net",
    )
    assert rally.rally_shots == 4 and not rally.server_won  # the server hit the fifth shot into the net
    ret = decode_point("cc4e", "6f37b3*")  # two lets and a fault, then a return with depth 7
    assert ret.shots[1] == {"stroke": "forehand_groundstroke", "direction": "receiver_backhand"}
    assert ret.server_won and ret.rally_shots == 3  # the server's backhand winner
    smash = decode_point("4+b27o=2*", "")  # serve and volley; a smash from the baseline
    assert smash.terminal_court_position == "baseline" and smash.server_won
    assert decode_point("6f#", "").terminal_result == "forced_error"
    assert decode_point("5#", "").terminal_result == "unreturnable"


@pytest.mark.parametrize(
    ("cells", "reason"),
    [
        (row("S"), "not charted shot by shot"),
        (row("4n"), "2nd is empty"),
        (row("6f1", ""), "the rally has no ending"),
        (row("6f1f2*", "5f1*"), "2nd must be empty"),
        (row("9f1*"), "a serve starts with its direction"),
        (row("6b29C"), "unexpected 'C'"),
        (row("6f1*", winner="1"), "PtWinner says the server won"),
        (row("6f2n@", Svr="3"), "Svr must be 1 or 2"),
        (row("6*", pts="thirty-40"), "Pts must be a score"),
        (row("6f1*", Gm1="²"), "Gm1 must be a whole number"),  # digits other than ASCII's
    ],
)
def test_unreadable_break_points_are_refused_with_a_reason(cells, reason):
    with pytest.raises(ChartingError) as refused:
        break_point_event(cells, PLAYERS)
    assert reason in refused.value.reason


def test_a_file_without_the_point_columns_is_refused():
    with pytest.raises(ChartingError, match="lacks the columns Svr, 1st"):
        read_rows("Pt,Set1,Set2,Gm1,Gm2,Pts,2nd,PtWinner\n1,0,0,0,0,0-0,,1\n")
