"""The pure front-end modules (ledger_state, autosave, event_schema, timeline_model,
shortcuts, union_view), run in real Chromium: no node test runner in CI.

The modules are served from the source tree at a made-up origin through Playwright
request routing (no Django server needed). Each scenario is a function of
``tests/browser/js/ledger_logic.js``; it runs in the page and hands plain data back
to the test, which checks it here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from annotator.base.families.break_points import BreakPointsAdapter

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SERVED = {"/js/": ROOT / "frontend" / "static" / "frontend" / "js", "/scenarios/": ROOT / "tests" / "browser" / "js"}
ORIGIN = "http://frameledger.test"


@pytest.fixture
def page(chromium):
    context = chromium.new_context()

    def serve(route):
        path = route.request.url.removeprefix(ORIGIN)
        if path == "/":
            route.fulfill(status=200, content_type="text/html", body="<!doctype html><title>js</title>")
            return
        for prefix, folder in SERVED.items():
            if path.startswith(prefix):
                file = (folder / path.removeprefix(prefix)).resolve()
                if file.is_file() and folder in file.parents:
                    route.fulfill(status=200, content_type="text/javascript", body=file.read_bytes())
                    return
        route.fulfill(status=404, body="")

    context.route(ORIGIN + "/**", serve)
    page = context.new_page()
    page.goto(ORIGIN + "/")
    yield page
    context.close()


def run(page, scenario: str, argument=None):
    return page.evaluate(
        "async ([name, argument]) => (await import('/scenarios/ledger_logic.js'))[name](argument)",
        [scenario, argument],
    )


def test_edits_queue_operations_and_leave_the_queue_only_when_the_server_confirms(page):
    result = run(page, "edits_queue_operations_and_leave_the_queue_only_when_the_server_confirms")
    queued, shown, base, version, status, etag = result
    assert queued == [[["add", "k1", {"v": 1}]], [["k1", {"v": 1}, True]], "saving", "POST", '"ledger-7-v0"']
    assert shown == [["k1", {"v": 1}, False]]
    assert base == [{"key": "k1", "uid": "u1", "data": {"v": 1}}]
    assert (version, status, etag) == (1, "saved", '"ledger-7-v1"')


def test_the_queue_coalesces_unsent_operations_but_never_the_one_in_flight(page):
    result = run(page, "the_queue_coalesces_unsent_operations_but_never_the_one_in_flight")
    coalesced, inflight, never_sent, final, request = result
    assert coalesced == [["add", "k1", {"v": 2}]]
    assert inflight == [["add", "k1", {"v": 2}], ["update", "k1", {"v": 4}]]
    assert never_sent == inflight
    assert final == inflight + [["delete", "u0", None]]
    after_ops, next_request = request
    assert after_ops == [["update", "k1", {"v": 4}], ["delete", "u0", None]]
    assert (
        next_request["method"] == "PUT" and next_request["uid"] == "u1" and next_request["body"] == {"data": {"v": 4}}
    )


def test_undo_and_redo_replay_through_the_queue(page):
    result = run(page, "undo_and_redo_replay_through_the_queue")
    steps, undone, redo_left, redo_is_noop = result
    assert steps[0] == [["k1", {"v": 1}, True]]
    assert steps[1] == [["u0", {"v": 5}, True], ["k1", {"v": 1}, True]]  # the unsent delete is cancelled
    assert steps[2] == [["u0", {"v": 5}, True]]
    assert steps[3] == [["u0", {"v": 0}, False]]
    assert undone == []  # nothing was sent, so nothing needs sending
    assert steps[4] == [["u0", {"v": 5}, True]]
    assert redo_left == 0 and redo_is_noop


def test_a_refused_add_goes_back_with_its_latest_data_and_error(page):
    result = run(page, "a_refused_add_goes_back_with_its_latest_data_and_error")
    refused, rejected_after, status_after, ops_after = result
    assert refused[0] == {
        "key": "k1",
        "kind": "add",
        "data": {"v": 2},
        "field": "end_frame",
        "message": "must be after",
    }
    assert refused[1] == [["add", "k2", {"w": 1}]] and refused[2] == "invalid"
    assert rejected_after is None and status_after == "saving"
    assert ops_after == [["add", "k2", {"w": 1}], ["add", "k1", {"v": 3}]]


def test_rebase_merges_field_by_field_and_asks_where_both_changed_a_field(page):
    merged, asked, chose_theirs, delete_asked, delete_kept = run(
        page, "rebase_merges_field_by_field_and_asks_where_both_changed_a_field"
    )
    # This tab moved the end; the other changed the verb: both kept.
    assert merged == [["update", "u1", {"start": 10, "end": 21, "verb": "put"}]]
    # Both moved the end: a conflict with both values; mine unless "theirs" is chosen.
    assert asked == [{"field": "end", "base": 20, "theirs": 30, "mine": 21}]
    assert chose_theirs == []  # the server already holds the result: nothing to send
    # A delete of an event changed elsewhere: asked, and kept when so chosen.
    assert delete_asked == [None]
    assert delete_kept == [[], [["u1", {"start": 10, "end": 20, "verb": "put"}, False]]]


def test_rebase_reapplies_keeps_work_on_deleted_events_and_skips_what_the_server_has(page):
    result = run(page, "rebase_reapplies_keeps_work_on_deleted_events_and_skips_what_the_server_has")
    blocked, summary, queued, shown, version, method = result
    assert blocked == ["conflict", None]
    assert summary == {"reapplied": 1, "alreadySaved": 2, "restored": 1, "keptFromServer": 0, "conflicts": []}
    assert queued == [["add", "u1", {"v": 10}], ["update", "u2", {"v": 20}]]
    assert shown == [
        ["u2", {"v": 20}, True],
        ["k9", {"v": 9}, False],  # the server's copy took the local key: no duplicate
        ["u4", {"v": 4}, False],  # someone else's addition is kept
        ["u1", {"v": 10}, True],
    ]
    assert version == 6 and method == "POST"


def test_a_kept_queue_is_restored_on_the_next_visit_or_flagged_as_a_conflict(page):
    result = run(page, "a_kept_queue_is_restored_on_the_next_visit_or_flagged_as_a_conflict")
    kept, same_status, same_ops, uid, newer_status, newer_ops, both_status, both_ops = result
    assert kept["version"] == 3 and kept["keys"] == {"u7": "k1"}
    assert same_status == "saving" and same_ops == [["update", "k1", {"v": 8}]] and uid == "u7"
    # A newer version where nothing conflicts: re-applied at once, no dialog.
    assert newer_status == "saving" and newer_ops == same_ops
    # The same field changed on the server meanwhile: a conflict, the annotator chooses.
    assert both_status == "conflict" and both_ops == same_ops


def test_a_reload_after_a_save_whose_answer_was_lost_finds_it_on_the_server(page):
    saved, rest, live = run(page, "a_reload_after_a_save_whose_answer_was_lost_finds_it_on_the_server")
    status, queued, shown, already = saved
    assert status == "saved" and queued == [] and already == 1  # no conflict, nothing sent again
    assert shown == [["u1", {"v": 1}, False], ["k1", {"v": 7}, False]]  # the server's event took the local key
    status, queued, uid, version = rest
    assert status == "saving" and queued == [["update", "u1", {"v": 2}]] and uid == "u1" and version == 3
    assert live == [False, True]  # a live 412: resolved without asking only when the server has everything


def test_autosave_retries_failures_stops_on_conflict_and_hands_back_refusals(page):
    result = run(page, "autosave_retries_failures_stops_on_conflict_and_hands_back_refusals")
    sent, stored_while_pending, after_retries, status, pending, stored_after = result
    assert sent == [
        ["POST", '"ledger-7-v0"'],
        ["POST", '"ledger-7-v0"'],
        ["POST", '"ledger-7-v0"'],
        ["PUT", '"ledger-7-v1"'],
    ]  # the conflict is not retried
    assert stored_while_pending and after_retries == ["saved", False, 0]
    assert status == "conflict" and pending == 1 and stored_after == 1


def test_schema_helpers(page):
    result = run(page, "schema_helpers", BreakPointsAdapter().ui())
    incomplete, complete, matches, root, plain, token0, token1, snap, snap_end, warnings = result
    assert incomplete == {"errors": {"nouns": "required", "shots": "token 1 is incomplete"}}
    assert complete == {"data": {"verb": "take", "nouns": ["egg"], "start_frame": 12}}
    assert matches == ["egg", "egg", "egg_shells", None, "turn on", None]
    assert root == {"name": "shots", "index": 2, "sub": "stroke"} and plain["name"] == "end_frame"
    assert token0 == {"stroke": "serve"} and token1 == {"stroke": ""}
    assert (snap, snap_end) == (4, 9.5)
    assert len(warnings) == 2


def test_summaries_sections_and_warnings_follow_the_ui_the_family_sends(page):
    """The break-point adapter's ``ui`` (what the API sends inside the schema) gives the
    one-line summary, the form's sections and its warnings; a schema without them gets
    the plain summary and one section."""
    full, partial, empty, plain, sections, one, warnings, none = run(
        page, "summaries_sections_and_warnings", BreakPointsAdapter().ui()
    )
    assert full == "set 2 · 4–4 · 40–AD · Medvedev serves · BP 1 · saved · ace by Medvedev · 1 shot"
    assert partial == "set 1 · ?–? · ?–? · ? serves · BP ? · unforced error by ? · 2 shots"
    assert empty == "set ? · ?–? · ?–? · ? serves · BP ?"
    assert plain == "take · egg, milk"
    assert [title for title, _ in sections] == ["Score", "Last shot", "Shots", "In the video", "Other"]
    assert sections[-1] == ["Other", ["note"]] and one == [[None, ["verb", "nouns", "start_frame", "end_frame"]]]
    assert warnings == [
        "a point ending in ace usually has 3 shot token(s) for 3 rally shot(s); this one has 2",
        "an ace has exactly one shot token",
        'terminal_error is "none" for ace',
    ]
    assert none == []


def test_timeline_geometry_and_lane_packing(page):
    result = run(page, "timeline_geometry_and_lane_packing")
    assert result[0] == [0, 1000]
    assert result[1] == [375, 250]
    assert result[2] == [750, 999]
    assert result[3:6] == [375, 624, 125]
    assert result[6] == [0, 1, 0, 1] and result[7] == 2
    assert result[8] == 5 and result[9] == 20


def test_shortcut_names_and_union_progress(page):
    result = run(page, "shortcut_names_and_union_progress")
    combos, plain, in_field, ctrl_enter, progress, next_after_2, wrapped, delta, span = result
    assert combos == ["Shift+ArrowRight", "Ctrl+z", "Ctrl+Shift+z", "?", "Space", "i", "<"]
    assert (plain, in_field, ctrl_enter) == ("set-start", None, "commit")
    assert progress == {"needed": 3, "decided": 1, "agreed": 1}
    assert (next_after_2, wrapped) == (3, 2)
    assert delta == "Δ start −3 frames"
    assert span == {"start": 20, "end": 40}


def test_changes_kept_for_a_ledger_frozen_since_are_shown_not_dropped(page):
    status, pending, orphaned, kept_while_shown, kept_after = run(
        page, "changes_kept_for_a_ledger_frozen_since_are_shown_not_dropped"
    )
    assert (status, pending) == ("frozen", 0)
    assert orphaned == [{"id": 1, "kind": "add", "key": "k1", "data": {"v": 1}}]
    assert kept_while_shown and not kept_after


def test_tiers_snapping_candidates_and_seeking_targets(page):
    tiers, mean, snaps, choices, end_before, bounds, keyframes, drafts, prefix = run(
        page, "tiers_snapping_candidates_and_seeking_targets"
    )
    assert tiers == ["agreed", "within_tolerance", "conflict", "conflict", "one_sided"]
    action, start, end, rationale = mean
    assert (action, start, end) == ("edit", 12, 20)  # (10 + 13) / 2 = 11.5 rounds up; (20 + 19) / 2 = 19.5 too
    assert "tolerance of 12 frames" in rationale and "Δ start +3 frames" in rationale
    empty, at_the_end, plain = snaps
    assert empty["interval"] == [2, 4] and "widened" in empty["note"]
    assert at_the_end["interval"] == [8, 10]
    assert plain == {"interval": [4, 6], "note": ""}
    candidates, several, unknown = choices
    assert candidates == ["bagel", "bagel_container"]
    assert "bagel, bagel_container" in several and "did you mean bagel, bacon" in unknown
    assert end_before == {"errors": {"end_frame": "the end (60) is before the start (80)"}}
    assert bounds == [100, 30, None]
    assert keyframes == [24, 12, 30]
    assert drafts == [{"verb": "take", "nouns": []}, False]
    fed, taken, active = prefix
    assert fed == [False, True, True, True, True] and taken == 1290 and not active


def test_type_ahead_takes_the_exact_then_shortest_prefix_then_initials_then_substring(page):
    nouns, verbs, fr, em = run(page, "type_ahead_best_candidate")
    assert nouns == ["egg", "fridge", "egg_mixture", "orange_juice", "egg_mixture", "milk", "egg", None, None]
    assert verbs == ["take", "cut", "crack", "turn on", "move around"]
    assert fr == ["fridge", "freezer", "fridge_drawer"]  # the hint: the best first, then the others
    assert em == ["egg_mixture"]


def test_the_type_ahead_ranks_by_this_ledgers_use_and_takes_word_starts(page):
    usage, verbs_used, fr, best, verbs, starts = run(page, "type_ahead_ranks_by_use_and_word_starts")
    assert usage == {"freezer": 2, "plate": 1, "burner": 1} and verbs_used == {"put": 2, "take": 1}
    assert fr == ["freezer", "fridge", "fridge_drawer"]  # used twice: first, the rest by length
    # Used ones first among prefix matches; words' starts as abbreviations.
    assert best == ["freezer", "burner", "plate", "plastic_spatula", "plastic_spatula", "milk_container"]
    assert verbs == [["turn off"], ["turn on"], ["turn on", "turn off"], ["take", "turn on", "turn off", "put"]]
    assert starts == [True, True, False, True, True, False]


def test_the_offered_value_is_the_event_before_on_the_timeline(page):
    verbs, nouns, unbounded = run(page, "previous_value_is_the_event_before_on_the_timeline")
    # The latest start before this one (not the last typed); none before the first or unmarked.
    assert verbs == ["put", "open", "take", None, None, None]
    assert nouns is None and unbounded is None


def test_a_search_result_becomes_an_interval_and_c_is_free_in_both_key_tables(page):
    *lists, tables = run(page, "moment_search_adds_a_result_as_an_interval")
    assert lists == [[[12, 18]], [[0, 6], [12, 18]], [[0, 6], [12, 18]], [[0, 6], [12, 18]], [[12, 18]], [[12, 18]]]
    assert tables == [[n, n, "use-candidate"] for n, _, _ in tables]  # no key twice; c takes the result
