// Scenarios for tests/browser/test_ledger_logic_js.py: each runs the pure front-end
// modules in Chromium and returns plain data for pytest to check.

import * as L from "/js/ledger_state.js";
import * as S from "/js/event_schema.js";
import * as T from "/js/timeline_model.js";
import * as K from "/js/shortcuts.js";
import * as U from "/js/union_view.js";
import * as A from "/js/autosave.js";
import * as N from "/js/navigation.js";
import * as D from "/js/drafts.js";

const start = (events = [], version = 0) => L.reducer(L.initialState(), { type: "loaded", ledgerId: 7, ledger: { version, events } });
const view = (s) => L.events(s).map((e) => [e.key, e.data, e.unsaved]);
const ops = (s) => s.pending.map((o) => [o.kind, o.key, o.data]);

export async function edits_queue_operations_and_leave_the_queue_only_when_the_server_confirms() {
  let s = start();
  s = L.reducer(s, { type: "add", key: "k1", data: { v: 1 } });
  const queued = [ops(s), view(s), s.status, L.nextRequest(s).method, L.etag(s)];
  s = L.reducer(s, { type: "sendStarted", id: s.pending[0].id });
  s = L.reducer(s, { type: "saved", id: s.pending[0].id, version: 1, uid: "u1", data: { v: 1 } });
  return [queued, view(s), s.base, s.version, s.status, L.etag(s)];
}

export async function the_queue_coalesces_unsent_operations_but_never_the_one_in_flight() {
  let s = start([{ uid: "u0", data: { v: 0 } }], 3);
  s = L.reducer(s, { type: "add", key: "k1", data: { v: 1 } });
  s = L.reducer(s, { type: "update", key: "k1", data: { v: 2 } });
  const coalesced = ops(s);
  s = L.reducer(s, { type: "sendStarted", id: s.pending[0].id });
  s = L.reducer(s, { type: "update", key: "k1", data: { v: 3 } });
  s = L.reducer(s, { type: "update", key: "k1", data: { v: 4 } });
  const inflight = ops(s);
  s = L.reducer(s, { type: "add", key: "k2", data: { v: 9 } });
  s = L.reducer(s, { type: "remove", key: "k2" });
  const neverSent = ops(s);
  s = L.reducer(s, { type: "remove", key: "u0" });
  const request = (() => { const t = L.reducer(s, { type: "saved", id: s.pending[0].id, version: 4, uid: "u1" }); return [ops(t), L.nextRequest(t)]; })();
  return [coalesced, inflight, neverSent, ops(s), request];
}

export async function undo_and_redo_replay_through_the_queue() {
  let s = start([{ uid: "u0", data: { v: 0 } }], 1);
  s = L.reducer(s, { type: "update", key: "u0", data: { v: 5 } });
  s = L.reducer(s, { type: "add", key: "k1", data: { v: 1 } });
  s = L.reducer(s, { type: "remove", key: "u0" });
  const steps = [view(s)];
  for (let i = 0; i < 3; i++) { s = L.reducer(s, { type: "undo" }); steps.push(view(s)); }
  const undone = ops(s);
  s = L.reducer(s, { type: "redo" });
  steps.push(view(s));
  s = L.reducer(s, { type: "undo" });
  s = L.reducer(s, { type: "add", key: "k9", data: { v: 9 } });  // a new edit clears redo
  return [steps, undone, s.redo.length, L.reducer(s, { type: "redo" }) === s];
}

export async function a_refused_add_goes_back_with_its_latest_data_and_error() {
  let s = start();
  s = L.reducer(s, { type: "add", key: "k1", data: { v: 1 } });
  s = L.reducer(s, { type: "sendStarted", id: s.pending[0].id });
  s = L.reducer(s, { type: "update", key: "k1", data: { v: 2 } });
  s = L.reducer(s, { type: "add", key: "k2", data: { w: 1 } });
  s = L.reducer(s, { type: "rejected", id: s.pending[0].id, field: "end_frame", message: "must be after" });
  const refused = [s.rejected, ops(s), s.status];
  s = L.reducer(s, { type: "add", key: "k1", data: { v: 3 } });  // fixed and added again
  return [refused, s.rejected, s.status, ops(s)];
}

export async function rebase_reapplies_keeps_work_on_deleted_events_and_skips_what_the_server_has() {
  let s = start([{ uid: "u1", data: { v: 1 } }, { uid: "u2", data: { v: 2 } }, { uid: "u3", data: { v: 3 } }], 3);
  s = L.reducer(s, { type: "add", key: "k9", data: { v: 9 } });       // answer lost: the server has it
  s = L.reducer(s, { type: "update", key: "u1", data: { v: 10 } });    // u1 deleted elsewhere: restored
  s = L.reducer(s, { type: "update", key: "u2", data: { v: 20 } });    // still there: re-applied
  s = L.reducer(s, { type: "remove", key: "u3" });                     // already deleted elsewhere
  s = L.reducer(s, { type: "sendStarted", id: s.pending[0].id });
  s = L.reducer(s, { type: "conflict", id: s.pending[0].id });
  const blocked = [s.status, L.nextRequest(s)];
  const server = { version: 6, events: [{ uid: "u2", data: { v: 2 } }, { uid: "u9", data: { v: 9 } }, { uid: "u4", data: { v: 4 } }] };
  s = L.reducer(s, { type: "rebase", ledger: server });
  return [blocked, s.lastRebase, ops(s), view(s), s.version, L.nextRequest(s).method];
}

export async function rebase_merges_field_by_field_and_asks_where_both_changed_a_field() {
  const begin = () => start([{ uid: "u1", data: { start: 10, end: 20, verb: "take" } }], 3);
  const conflictOn = (s) => {
    s = L.reducer(s, { type: "sendStarted", id: s.pending[0].id });
    return L.reducer(s, { type: "conflict", id: s.pending[0].id });
  };
  const server = (data) => ({ version: 4, events: [{ uid: "u1", data }] });
  let s = conflictOn(L.reducer(begin(), { type: "update", key: "u1", data: { start: 10, end: 21, verb: "take" } }));
  const merged = ops(L.reducer(s, { type: "rebase", ledger: server({ start: 10, end: 20, verb: "put" }) }));
  const both = server({ start: 10, end: 30, verb: "take" });
  const asked = L.rebasePreview(s, both).conflicts.map(({ field, base, theirs, mine }) => ({ field, base, theirs, mine }));
  const id = s.pending[0].id;
  const choseTheirs = ops(L.reducer(s, { type: "rebase", ledger: both, choices: { [`${id}:end`]: "theirs" } }));
  let d = conflictOn(L.reducer(begin(), { type: "remove", key: "u1" }));
  const changed = server({ start: 10, end: 20, verb: "put" });
  const deleteAsked = L.rebasePreview(d, changed).conflicts.map((c) => c.field);
  const kept = L.reducer(d, { type: "rebase", ledger: changed, choices: { [`${d.pending[0].id}:`]: "theirs" } });
  return [merged, asked, choseTheirs, deleteAsked, [ops(kept), view(kept)]];
}

export async function a_kept_queue_is_restored_on_the_next_visit_or_flagged_as_a_conflict() {
  let s = start([{ uid: "u1", data: { v: 1 } }], 2);
  s = L.reducer(s, { type: "add", key: "k1", data: { v: 7 } });
  s = L.reducer(s, { type: "sendStarted", id: s.pending[0].id });
  s = L.reducer(s, { type: "saved", id: s.pending[0].id, version: 3, uid: "u7" });
  s = L.reducer(s, { type: "update", key: "k1", data: { v: 8 } });
  const kept = JSON.parse(JSON.stringify(L.persistable(s)));
  const server = { version: 3, events: [{ uid: "u1", data: { v: 1 } }, { uid: "u7", data: { v: 7 } }] };
  const same = L.reducer(L.initialState(), { type: "loaded", ledgerId: 7, ledger: server, restore: kept });
  const newer = L.reducer(L.initialState(), { type: "loaded", ledgerId: 7, ledger: { ...server, version: 4 }, restore: kept });
  // The same field changed on the server meanwhile: the annotator chooses.
  const changed = { version: 4, events: [{ uid: "u1", data: { v: 1 } }, { uid: "u7", data: { v: 9 } }] };
  const both = L.reducer(L.initialState(), { type: "loaded", ledgerId: 7, ledger: changed, restore: kept });
  return [kept, same.status, ops(same), L.nextRequest(same).uid, newer.status, ops(newer), both.status, ops(both)];
}

export async function a_reload_after_a_save_whose_answer_was_lost_finds_it_on_the_server() {
  // Version 2; an add is sent, the server saves it (version 3) but the answer never comes;
  // an edit of another event waits behind it. The page is reloaded mid-outage.
  let s = start([{ uid: "u1", data: { v: 1 } }], 2);
  s = L.reducer(s, { type: "add", key: "k1", data: { v: 7 } });
  s = L.reducer(s, { type: "sendStarted", id: s.pending[0].id });
  s = L.reducer(s, { type: "failed", id: s.pending[0].id, message: "Save failed: the server could not be reached." });
  const onlyAdd = JSON.parse(JSON.stringify(L.persistable(s)));
  s = L.reducer(s, { type: "update", key: "u1", data: { v: 2 } });
  const addAndEdit = JSON.parse(JSON.stringify(L.persistable(s)));
  const server = { version: 3, events: [{ uid: "u1", data: { v: 1 } }, { uid: "u9", data: { v: 7 } }] };
  const saved = L.reducer(L.initialState(), { type: "loaded", ledgerId: 7, ledger: server, restore: onlyAdd });
  const rest = L.reducer(L.initialState(), { type: "loaded", ledgerId: 7, ledger: server, restore: addAndEdit });
  // A live page whose retry was refused (412) learns the same from the server's ledger.
  const live = L.reducer(s, { type: "conflict", id: s.pending[0].id, message: "stale" });
  const liveOnlyAdd = L.reducer(
    L.reducer(start([{ uid: "u1", data: { v: 1 } }], 2), { type: "add", key: "k1", data: { v: 7 } }),
    { type: "conflict", id: 1, message: "stale" },
  );
  return [
    [saved.status, ops(saved), view(saved), saved.lastRebase && saved.lastRebase.alreadySaved],
    [rest.status, ops(rest), L.nextRequest(rest).uid, rest.version],
    [L.alreadyOnServer(live, server), L.alreadyOnServer(liveOnlyAdd, server)],
  ];
}

export async function autosave_retries_failures_stops_on_conflict_and_hands_back_refusals() {
  const outcomes = [
    () => { throw new TypeError("Failed to fetch"); },
    () => { const e = new Error("HTTP 503"); e.status = 503; throw e; },
    (r) => ({ version: 1, uid: "u1", data: r.body.data }),
    () => { const e = new Error("stale"); e.status = 412; throw e; },
  ];
  const sent = [];
  const store = L.createStore(L.reducer, start());
  const storage = new Map();
  const fakeStorage = { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => storage.set(k, v), removeItem: (k) => storage.delete(k) };
  const saver = new A.Autosave(store, { delays: [5, 5], storage: fakeStorage, storageKey: "q", online: null,
    send: async (request, ifMatch) => { sent.push([request.method, ifMatch]); return outcomes.shift()(request); } });
  store.dispatch({ type: "add", key: "k1", data: { v: 1 } });
  const storedWhilePending = storage.has("q");
  const wait = (f) => new Promise((resolve) => { const t = setInterval(() => { if (f()) { clearInterval(t); resolve(); } }, 5); });
  await wait(() => store.getState().pending.length === 0);
  const afterRetries = [store.getState().status, storage.has("q"), saver.attempts];
  store.dispatch({ type: "update", key: "k1", data: { v: 2 } });
  await wait(() => store.getState().status === "conflict");
  await wait(() => !saver.running && saver.timer === null); // nothing in flight, no retry due: nothing more is sent
  return [sent, storedWhilePending, afterRetries, store.getState().status, store.getState().pending.length, JSON.parse(storage.get("q")).pending.length];
}

export async function schema_helpers(ui) {
  const schema = { fields: [
    { name: "verb", type: "enum", choices: ["take", "put", "turn on", "turn off"] },
    { name: "nouns", type: "enum_set", choices: ["egg", "egg_shells", "milk"] },
    { name: "start_frame", type: "int", frame: true },
    { name: "end_frame", type: "int", frame: true, required: false },
    { name: "shots", type: "token_list", required: false, subfields: [{ name: "stroke", type: "enum", choices: ["serve", "lob"] }], first_token_choices: { stroke: ["serve"] } },
  ], boundary_fields: ["start_frame", "end_frame"] };
  const incomplete = S.draftToEvent(schema, { verb: "take", nouns: [], start_frame: "12", end_frame: null, shots: [{ stroke: "" }] });
  const complete = S.draftToEvent(schema, { verb: "take", nouns: ["egg"], start_frame: "12", end_frame: "", shots: [] });
  return [incomplete, complete,
    ["egg", "EGG", "shel", "turn", "turn_on", "zz"].map((t) => S.matchChoice(["egg", "egg_shells", "turn on", "turn off"], t)),
    S.fieldRoot("shots[2].stroke"), S.fieldRoot("end_frame"),
    S.emptyToken(schema.fields[4], 0), S.emptyToken(schema.fields[4], 1),
    S.snapToGrid(3.1, 2), S.snapToGrid(9.9, 2, 9.5),
    S.formWarnings({ ...schema, ui }, { shots: [{}, {}], rally_shots: 2, terminal_result: "unforced_error", terminal_error: "none" })];
}

// ``ui``: the break-point adapter's, as the API sends it inside the schema.
export async function summaries_sections_and_warnings(ui) {
  const names = ["set", "medvedev_games", "shots", "terminal_result", "note", "start_frame", "end_frame"];
  const tennis = { fields: names.map((name) => ({ name, type: name === "shots" ? "token_list" : "int" })), boundary_fields: ["start_frame", "end_frame"], ui };
  const actions = { fields: [{ name: "verb", type: "enum" }, { name: "nouns", type: "enum_set" }, { name: "start_frame", type: "int" }, { name: "end_frame", type: "int" }], boundary_fields: ["start_frame", "end_frame"], ui: { asks: [] } };
  const full = { set: 2, medvedev_games: 4, de_minaur_games: 4, medvedev_points: "40", de_minaur_points: "AD", server: "Daniil Medvedev", opportunity: 1, outcome: "saved", terminal_result: "ace", terminal_player: "Daniil Medvedev", shots: [{ stroke: "serve", direction: "wide" }] };
  const ace = { shots: [{}, {}], rally_shots: 3, terminal_result: "ace", terminal_error: "net" };
  return [
    S.summarize(tennis, full),
    S.summarize(tennis, { set: 1, terminal_result: "unforced_error", shots: [{}, {}] }),
    S.summarize(tennis, {}),
    S.summarize(actions, { verb: "take", nouns: ["egg", "milk"], start_frame: 1, end_frame: 9 }),
    S.formSections(tennis),
    S.formSections(actions),
    S.formWarnings(tennis, ace),
    S.formWarnings(actions, ace),
  ];
}

export async function timeline_geometry_and_lane_packing() {
  const v = new T.TimelineView(1000);
  const zoomed = v.zoom(4, 500);
  const followed = zoomed.follow(990);
  const packed = T.packRows([{ start: 0, end: 10 }, { start: 5, end: 20 }, { start: 11, end: 30 }, { start: 21, end: 25 }]);
  return [[v.first, v.visible], [zoomed.first, zoomed.visible], [followed.first, followed.last],
          zoomed.frameAt(0, 250), zoomed.frameAt(249.9, 250), zoomed.x(500, 250),
          packed.items.map((i) => i.row), packed.rows, new T.TimelineView(5).visible,
          zoomed.zoom(1000, 500).visible];
}

export async function shortcut_names_and_union_progress() {
  const combos = [
    { key: "ArrowRight", shiftKey: true }, { key: "z", ctrlKey: true }, { key: "Z", ctrlKey: true, shiftKey: true },
    { key: "?", shiftKey: true }, { key: " " }, { key: "I", shiftKey: true }, { key: "<", shiftKey: true },
  ].map(K.comboOf);
  const map = K.keymap(K.WORKSPACE_SHORTCUTS);
  const items = [{ position: 0, status: "agreed" }, { position: 1, status: "conflicting", decision: { action: "drop" } },
                 { position: 2, status: "a_only" }, { position: 3, status: "b_only" }];
  return [combos, K.commandFor(map, { key: "i" }), K.commandFor(map, { key: "i" }, { inField: true }),
          K.commandFor(map, { key: "Enter", ctrlKey: true }, { inField: true }), U.progress(items),
          U.nextUndecided(items, 2), U.nextUndecided(items, 3), U.deltaText("start_frame", -3),
          U.itemSpan({ fields: [{ name: "intervals", type: "interval_list" }] }, { intervals: [[2, 4]] }, (t) => t * 10)];
}

export async function changes_kept_for_a_ledger_frozen_since_are_shown_not_dropped() {
  const kept = { version: 2, pending: [{ id: 1, kind: "add", key: "k1", data: { v: 1 } }], keys: {}, nextOp: 2 };
  const frozen = { version: 3, frozen: true, sha256: "ab", events: [] };
  let s = L.reducer(L.initialState(), { type: "loaded", ledgerId: 7, ledger: frozen, restore: kept });
  const storage = new Map([["q", JSON.stringify(kept)]]);
  const fakeStorage = { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => storage.set(k, v), removeItem: (k) => storage.delete(k) };
  const store = L.createStore(L.reducer, s);
  new A.Autosave(store, { storage: fakeStorage, storageKey: "q", online: null, send: async () => { throw new Error("no"); } });
  store.dispatch({ type: "select", key: null });
  store.dispatch({ type: "select", key: "x" });
  const keptWhileShown = storage.has("q");
  store.dispatch({ type: "dismissOrphaned" });
  return [s.status, s.pending.length, s.orphaned, keptWhileShown, storage.has("q")];
}

export async function tiers_snapping_candidates_and_seeking_targets() {
  const schema = { family: "actions", tolerance: 12, boundary_fields: ["start_frame", "end_frame"], fields: [] };
  const item = (status, differing, deltas, both = true) => ({ status, a_value: both ? { start_frame: 10, end_frame: 20 } : null, b_value: { start_frame: 12, end_frame: 19 }, differing_fields: differing, boundary_deltas: deltas });
  const tiers = [
    item("agreed", [], {}),
    item("conflicting", ["start_frame", "end_frame"], { start_frame: 2, end_frame: -1 }),
    item("conflicting", ["start_frame"], { start_frame: 13, end_frame: 0 }),
    item("conflicting", ["nouns", "start_frame"], { start_frame: 2, end_frame: 0 }),
    item("b_only", [], {}, false),
  ].map((it) => U.tierOf(schema, it));
  const within = item("conflicting", ["start_frame", "end_frame"], { start_frame: 3, end_frame: -1 });
  within.b_value = { start_frame: 13, end_frame: 19 };
  const mean = U.toleranceDecision(schema, within, "mean");
  const storage = new Map();
  const fake = { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => storage.set(k, v), removeItem: (k) => storage.delete(k) };
  const keeper = new D.DraftKeeper(fake, "d");
  keeper.save({ verb: "take", nouns: [] });
  const kept = keeper.load();
  keeper.save({ verb: null, nouns: [] });
  const prefix = new N.FramePrefix();
  const fed = ["0", "1", "2", "9", "0"].map((k) => prefix.feed(k));
  return [
    tiers,
    [mean.action, mean.final_value.start_frame, mean.final_value.end_frame, mean.rationale],
    [S.snapInterval(1.25, 2.08, 2, 10), S.snapInterval(9.5, 9.9, 2, 10), S.snapInterval(3.1, 6.9, 2, 10)],
    [S.choiceCandidates(["bagel", "bagel_container", "bacon"], "bage"), S.choiceError(["bagel", "bagel_container", "bacon"], "bage"), S.choiceError(["bagel", "bacon"], "bx")],
    S.draftToEvent({ fields: [{ name: "start_frame", type: "int" }, { name: "end_frame", type: "int" }], boundary_fields: ["start_frame", "end_frame"] }, { start_frame: 80, end_frame: 60 }),
    [N.boundaryTarget([30, 50, 100, 120, 50], 50, 1), N.boundaryTarget([30, 50, 100, 120], 50, -1), N.boundaryTarget([30], 40, 1)],
    [N.keyframeTarget([0, 12, 24], 12, 1), N.keyframeTarget([0, 12, 24], 13, -1), N.secondStep({ fpsNum: 30000, fpsDen: 1001 })],
    [kept, storage.has("d")],
    [fed, prefix.take(), prefix.active],
  ];
}

export async function type_ahead_best_candidate() {
  const nouns = ["bowl", "egg", "egg_container", "egg_mixture", "freezer", "fridge", "fridge_drawer", "milk", "milk_container", "orange_juice"];
  const verbs = ["close", "crack", "cut", "mix", "move around", "take", "transfer", "turn off", "turn on"];
  return [
    ["e", "fr", "em", "oj", "mix", "m", "EGG", "zz", ""].map((t) => S.bestChoice(nouns, t)),
    ["t", "c", "cr", "turn", "mo"].map((t) => S.bestChoice(verbs, t)),
    S.choiceCandidates(nouns, "fr"),
    S.choiceCandidates(nouns, "em"),
  ];
}

export async function type_ahead_ranks_by_use_and_word_starts() {
  const nouns = ["bacon", "bagel", "burner", "freezer", "fridge", "fridge_drawer", "milk_container", "plastic_spatula", "plate"];
  const verbs = ["close", "open", "pour", "put", "take", "turn off", "turn on"];
  const events = [{ verb: "put", nouns: ["freezer", "plate"] }, { verb: "put", nouns: ["freezer"] }, { verb: "take", nouns: ["burner"] }];
  const usage = S.usageCounts(events, "nouns");
  return [
    usage,
    S.usageCounts(events, "verb"),
    S.choiceCandidates(nouns, "fr", 8, usage),
    ["fr", "b", "p", "ps", "plsp", "mc"].map((t) => S.bestChoice(nouns, t, usage)),
    ["tof", "ton", "to", "t"].map((t) => S.choiceCandidates(verbs, t)),
    [["turn off", "tof"], ["turn off", "to"], ["turn off", "tn"], ["plastic spatula", "plasp"], ["plate", "pl"], ["plate", "x"]].map(([n, t]) => S.wordStarts(n, t)),
  ];
}

export async function previous_value_is_the_event_before_on_the_timeline() {
  const bounds = { start: "start_frame", end: "end_frame" };
  const events = [
    { verb: "open", nouns: ["fridge"], start_frame: 3400 },
    { verb: "take", nouns: ["egg"], start_frame: 1200 },
    { verb: "put", nouns: ["egg"], start_frame: 5000 },
  ];
  return [
    [5100, 3401, 2000, 1200, 500, null].map((start) => S.previousValue(events, bounds, start, "verb")),
    S.previousValue(events, bounds, 5100, "nouns"), // a set: nothing offered
    S.previousValue(events, null, 5100, "verb"),
  ];
}

export async function moment_search_adds_a_result_as_an_interval() {
  const M = await import("/js/moment_search.js");
  const K = await import("/js/shortcuts.js");
  const hit = { start: 12, end: 18 };
  const keys = (table) => table.flatMap((row) => row.keys);
  return [
    M.withInterval([], hit), M.withInterval([[0, 6]], hit), M.withInterval([[0, 6], ["", ""]], hit),
    M.withInterval([[0, 6], [4, ""]], hit), M.withInterval([[12, 18]], hit), M.withInterval(undefined, hit),
    [K.WORKSPACE_SHORTCUTS, K.ADJUDICATE_SHORTCUTS].map((t) => [keys(t).length, new Set(keys(t)).size, K.keymap(t).get("c")]),
  ];
}
