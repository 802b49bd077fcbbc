// An annotator's own ledger as a pure reducer: confirmed events, a queue of unsaved
// operations, undo / redo, the selected event and the save status. No DOM, no fetch.
//
// The model. `base` is what the server has confirmed at `version`. `pending` is the
// ordered queue of operations the server has not confirmed yet ({id, kind: "add" |
// "update" | "delete", key, data}); the head is sent first and may be `inflight`.
// What the annotator sees is `events(state)`: base with every pending operation applied.
// So an operation leaves the queue only when the server confirms it (`saved`), when the
// server refuses it as invalid (`rejected`: its data goes back to the form, with the
// error) or when the annotator explicitly discards unsaved work after a conflict.
// Nothing is dropped silently.
//
// Events have a client `key` that never changes: the server uid for events loaded from
// the server, a fresh key (the caller passes one, e.g. crypto.randomUUID()) for new ones.
// The server uid of a new event is learnt when its add is confirmed; updates and deletes
// name the uid only when they are sent, by which time the add ahead of them is confirmed.
//
// Queue coalescing (never touches the in-flight head): an update to an unsent add or
// update of the same event replaces its data; deleting an event whose add was never sent
// removes its queued operations altogether.
//
// An update or a delete also keeps `base`: the event as this page showed it before the
// first of the coalesced edits. After a conflict (another tab saved first) the update is
// re-applied as a field-level three-way merge (mergeFields): base, the server's newer
// data ("theirs") and this page's ("mine"); only the fields this page changed are carried
// over, and a field both changed differently is a conflict the annotator settles.

export const SAVE = Object.freeze({
  SAVED: "saved",
  SAVING: "saving",
  FAILED: "failed", // a network or server failure; retried
  CONFLICT: "conflict", // 412: the ledger changed elsewhere; the annotator decides
  INVALID: "invalid", // 400: the server refused an event; it is back in the form
  FROZEN: "frozen",
});

export function initialState() {
  return {
    version: null,
    ledgerId: null,
    base: [], // [{key, uid, data}]
    pending: [], // [{id, kind, key, data}]
    inflight: null, // id of the operation being sent
    nextOp: 1,
    undo: [], // [{key, before, after}]
    redo: [],
    selected: null,
    frozen: false,
    sha256: null,
    status: SAVE.SAVED,
    message: "",
    rejected: null, // {key, kind, data, field, message}
    lastRebase: null,
    orphaned: null, // unsaved operations from an earlier visit to a now frozen ledger
  };
}

// ---- derived views -------------------------------------------------------------------

function clone(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

export function deepEqual(a, b) {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    const out = {};
    for (const name of Object.keys(value).sort()) out[name] = canonical(value[name]);
    return out;
  }
  return value;
}

function applyOp(list, op) {
  if (op.kind === "add") return [...list, { key: op.key, uid: null, data: op.data }];
  if (op.kind === "update") return list.map((e) => (e.key === op.key ? { ...e, data: op.data } : e));
  return list.filter((e) => e.key !== op.key);
}

// The events the annotator sees, each with `unsaved` when an operation on it is queued.
export function events(state) {
  let list = state.base.map((e) => ({ ...e }));
  for (const op of state.pending) list = applyOp(list, op);
  const dirty = new Set(state.pending.map((op) => op.key));
  return list.map((e) => ({ ...e, unsaved: dirty.has(e.key) }));
}

export function eventByKey(state, key) {
  return events(state).find((e) => e.key === key) || null;
}

export function hasUnsaved(state) {
  return state.pending.length > 0;
}

// Events in time order: by `startField` when given (missing last), then insertion order.
export function orderedEvents(state, startField) {
  const list = events(state).map((e, i) => ({ e, i }));
  if (startField) {
    list.sort((x, y) => {
      const a = x.e.data[startField];
      const b = y.e.data[startField];
      const av = Number.isInteger(a) ? a : Infinity;
      const bv = Number.isInteger(b) ? b : Infinity;
      return av - bv || x.i - y.i;
    });
  }
  return list.map((x) => x.e);
}

// The request the head operation needs, or null when nothing can be sent now.
export function nextRequest(state) {
  if (state.frozen || state.status === SAVE.CONFLICT || state.inflight !== null) return null;
  const op = state.pending[0];
  if (!op) return null;
  if (op.kind === "add") return { op, method: "POST", uid: null, body: { data: op.data } };
  const entry = state.base.find((e) => e.key === op.key);
  if (!entry) return null; // cannot happen: its add is ahead of it in the queue
  if (op.kind === "update") return { op, method: "PUT", uid: entry.uid, body: { data: op.data } };
  return { op, method: "DELETE", uid: entry.uid, body: undefined };
}

export function etag(state) {
  return state.ledgerId === null ? null : `"ledger-${state.ledgerId}-v${state.version}"`;
}

// ---- the reducer ---------------------------------------------------------------------

function statusAfter(state) {
  if (state.frozen) return { status: SAVE.FROZEN, message: "" };
  if (state.status === SAVE.CONFLICT) return { status: state.status, message: state.message };
  if (state.pending.length) {
    const keep = state.status === SAVE.FAILED || state.status === SAVE.INVALID;
    return keep ? { status: state.status, message: state.message } : { status: SAVE.SAVING, message: "" };
  }
  if (state.status === SAVE.INVALID) return { status: state.status, message: state.message };
  return { status: SAVE.SAVED, message: "" };
}

function withStatus(state) {
  const selected = state.selected !== null && !eventByKey(state, state.selected) ? null : state.selected;
  return { ...state, ...statusAfter(state), selected };
}

// Queue `op` for `key` with coalescing; returns the new pending list.
function enqueue(state, kind, key, data, base = null) {
  const pending = state.pending.slice();
  const movable = (op) => op.key === key && op.id !== state.inflight;
  const lastIndex = pending.map(movable).lastIndexOf(true);
  const last = lastIndex >= 0 ? pending[lastIndex] : null;
  const nextOp = state.nextOp;
  if (kind === "update" && last && (last.kind === "add" || last.kind === "update")) {
    const confirmed = state.base.find((e) => e.key === key);
    const sentBefore = pending.some((op) => op.key === key && op.id === state.inflight);
    if (last.kind === "update" && confirmed && !sentBefore && deepEqual(confirmed.data, data)) {
      pending.splice(lastIndex, 1); // back to what the server has: nothing to send
    } else {
      pending[lastIndex] = { ...last, data };
    }
    return { pending, nextOp };
  }
  if (kind === "delete") {
    const neverSent = pending.some((op) => movable(op) && op.kind === "add");
    const kept = pending.filter((op) => !movable(op));
    if (neverSent) return { pending: kept, nextOp };
    const earlier = pending.find((op) => movable(op) && op.kind === "update");
    const before = earlier && earlier.base !== undefined ? earlier.base : clone(base);
    return { pending: [...kept, { id: nextOp, kind, key, data: null, base: before }], nextOp: nextOp + 1 };
  }
  if (kind === "update") return { pending: [...pending, { id: nextOp, kind, key, data, base: clone(base) }], nextOp: nextOp + 1 };
  return { pending: [...pending, { id: nextOp, kind, key, data }], nextOp: nextOp + 1 };
}

// Make the event `key` hold `data` (null: not exist), queueing whatever that takes.
function setEvent(state, key, data) {
  const current = eventByKey(state, key);
  if (data === null) {
    if (!current) return state;
    return { ...state, ...enqueue(state, "delete", key, null, current.data) };
  }
  if (!current) {
    // Bringing back an event whose delete was never sent: cancel the delete instead.
    const unsent = state.pending.findIndex((op) => op.key === key && op.kind === "delete" && op.id !== state.inflight);
    if (unsent >= 0 && state.base.some((e) => e.key === key)) {
      const restored = { ...state, pending: state.pending.filter((_, i) => i !== unsent) };
      return setEvent(restored, key, data);
    }
    return { ...state, ...enqueue(state, "add", key, clone(data)) };
  }
  if (deepEqual(current.data, data)) return state;
  return { ...state, ...enqueue(state, "update", key, clone(data), current.data) };
}

function edit(state, key, data) {
  if (state.frozen) return state;
  const before = eventByKey(state, key);
  const beforeData = before ? clone(before.data) : null;
  const next = setEvent(state, key, data);
  if (next === state) return state;
  const undo = [...state.undo, { key, before: beforeData, after: data === null ? null : clone(data) }];
  const rejected = state.rejected && state.rejected.key === key ? null : state.rejected;
  const status = state.status === SAVE.INVALID && !rejected ? SAVE.SAVED : state.status;
  return withStatus({ ...next, undo: undo.slice(-500), redo: [], rejected, status });
}

function keyForUid(base, uid, rememberedKeys) {
  const known = base.find((e) => e.uid === uid);
  if (known) return known.key;
  return (rememberedKeys && rememberedKeys[uid]) || uid;
}

function fromServer(ledger, previousBase = [], rememberedKeys = null) {
  return ledger.events.map((e) => ({
    key: keyForUid(previousBase, e.uid, rememberedKeys),
    uid: e.uid,
    data: clone(e.data),
  }));
}

// A field-level three-way merge of one event: the fields `mine` changed from `base` are
// carried onto `theirs`; a field both changed to different values is a conflict, settled
// by `choose(field)` ("mine" | "theirs"; mine when nothing was chosen).
export function mergeFields(base, theirs, mine, choose = () => "mine") {
  const data = clone(theirs);
  const conflicts = [];
  const kept = []; // fields changed only on the server, kept
  const names = new Set([...Object.keys(base || {}), ...Object.keys(theirs || {}), ...Object.keys(mine || {})]);
  for (const name of [...names].sort()) {
    const b = base ? base[name] : undefined;
    const t = theirs ? theirs[name] : undefined;
    const m = mine ? mine[name] : undefined;
    const mineChanged = !deepEqual(b, m);
    const theirsChanged = !deepEqual(b, t);
    if (!mineChanged) {
      if (theirsChanged) kept.push(name);
      continue;
    }
    if (theirsChanged && !deepEqual(t, m)) {
      conflicts.push({ field: name, base: clone(b), theirs: clone(t), mine: clone(m) });
      if (choose(name) === "theirs") continue;
    }
    if (m === undefined) delete data[name];
    else data[name] = clone(m);
  }
  return { data, conflicts, kept };
}

// Re-apply the queued operations on top of the server's ledger (after a 412).
// Operations the server already reflects are dropped (a save whose answer was lost);
// an update is merged field by field with the server's newer data (mergeFields); an
// update of an event deleted elsewhere becomes an add, so the work is kept; a delete of
// an event changed elsewhere is a conflict too. `choices` maps "<op id>:<field>" (a
// delete: "<op id>:") to "mine" | "theirs". `oldBase` is the confirmed data this page
// had before the conflict (the base of operations kept without one).
function rebasePending(base, pending, { choices = {}, oldBase = [] } = {}) {
  const claimed = new Set(base.filter((e) => e.key !== e.uid).map((e) => e.uid));
  let view = base.map((e) => ({ ...e }));
  const kept = [];
  const summary = { reapplied: 0, alreadySaved: 0, restored: 0, keptFromServer: 0, conflicts: [] };
  for (const op of pending) {
    const current = view.find((e) => e.key === op.key);
    const confirmed = oldBase.find((e) => e.key === op.key);
    const opBase = op.base !== undefined && op.base !== null ? op.base : confirmed ? confirmed.data : null;
    if (op.kind === "add") {
      const twin = view.find((e) => e.key === e.uid && !claimed.has(e.uid) && deepEqual(e.data, op.data));
      if (twin && !current) {
        claimed.add(twin.uid);
        base = base.map((e) => (e.uid === twin.uid ? { ...e, key: op.key } : e));
        view = view.map((e) => (e.uid === twin.uid ? { ...e, key: op.key } : e));
        summary.alreadySaved += 1;
        continue;
      }
      kept.push({ ...op });
      view = applyOp(view, op);
      summary.reapplied += 1;
    } else if (op.kind === "update") {
      if (current && deepEqual(current.data, op.data)) {
        summary.alreadySaved += 1;
        continue;
      }
      const restored = !current;
      let data = op.data;
      if (current && opBase) {
        const merged = mergeFields(opBase, current.data, op.data, (field) => choices[`${op.id}:${field}`]);
        data = merged.data;
        summary.keptFromServer += merged.kept.length;
        summary.conflicts.push(...merged.conflicts.map((c) => ({ ...c, id: op.id, key: op.key, event: clone(opBase) })));
        if (deepEqual(current.data, data)) {
          summary.alreadySaved += 1;
          continue;
        }
      }
      const next = { ...op, kind: restored ? "add" : "update", data, base: current ? clone(current.data) : undefined };
      if (restored) delete next.base;
      kept.push(next);
      view = applyOp(view, next);
      summary[restored ? "restored" : "reapplied"] += 1;
    } else {
      if (!current) {
        summary.alreadySaved += 1;
        continue;
      }
      if (opBase && !deepEqual(opBase, current.data)) {
        // Changed on the server since this page deleted it: the annotator chooses.
        summary.conflicts.push({ id: op.id, key: op.key, field: null, base: clone(opBase), theirs: clone(current.data), mine: null });
        if (choices[`${op.id}:`] === "theirs") {
          summary.keptFromServer += 1;
          continue;
        }
      }
      kept.push({ ...op, base: clone(current.data) });
      view = applyOp(view, op);
      summary.reapplied += 1;
    }
  }
  return { base, pending: kept, summary };
}

// What re-applying on `ledger` would do, before the annotator chooses: the conflicts
// (a field both changed, a delete of an event changed elsewhere) and, per operation,
// the fields carried over and the fields kept from the server.
export function rebasePreview(state, ledger) {
  const base = fromServer(ledger, state.base);
  const { summary } = rebasePending(base, state.pending, { oldBase: state.base });
  const view = base;
  const changes = state.pending.map((op) => {
    const current = view.find((e) => e.key === op.key);
    const confirmed = state.base.find((e) => e.key === op.key);
    const opBase = op.base !== undefined && op.base !== null ? op.base : confirmed ? confirmed.data : null;
    if (op.kind !== "update" || !current || !opBase) return { id: op.id, kind: op.kind, key: op.key, data: op.data, base: opBase, mine: [], kept: [] };
    const merged = mergeFields(opBase, current.data, op.data);
    const mine = Object.keys({ ...opBase, ...op.data }).filter((name) => !deepEqual(opBase[name], op.data[name]));
    return { id: op.id, kind: op.kind, key: op.key, data: op.data, base: opBase, theirs: current.data, mine, kept: merged.kept };
  });
  return { conflicts: summary.conflicts, changes };
}

// Whether the server's `ledger` already holds every queued operation (a save done whose
// answer was lost): re-applying would send nothing and nothing conflicts.
export function alreadyOnServer(state, ledger) {
  if (!state.pending.length || ledger.frozen) return false;
  const { pending, summary } = rebasePending(fromServer(ledger, state.base), state.pending, { oldBase: state.base });
  return pending.length === 0 && summary.conflicts.length === 0;
}

export function reducer(state, action) {
  switch (action.type) {
    case "loaded": {
      // The server's ledger; `restore` = {version, pending, keys, nextOp} kept from an
      // earlier page (localStorage) whose changes never reached the server.
      const { ledger, ledgerId, restore } = action;
      let next = {
        ...initialState(),
        ledgerId,
        version: ledger.version,
        frozen: Boolean(ledger.frozen),
        sha256: ledger.sha256 || null,
        base: fromServer(ledger, [], restore && restore.keys),
      };
      if (restore && restore.pending && restore.pending.length && next.frozen) {
        // Kept from a visit before the ledger was frozen: they can never be saved now,
        // so they are shown (and kept in storage) until the annotator dismisses them.
        next.orphaned = restore.pending.map((op) => ({ ...op }));
      } else if (restore && restore.pending && restore.pending.length) {
        const ids = restore.pending.map((op) => op.id);
        next = {
          ...next,
          pending: restore.pending.map((op) => ({ ...op })),
          nextOp: Math.max(restore.nextOp || 1, ...ids.map((id) => id + 1)),
        };
        if (restore.version !== ledger.version) {
          // The server moved on since: often by these very changes, saved while their answer
          // was lost (an outage, a reload mid-save). Re-applied at once when nothing
          // conflicts (those the server already has are dropped); the annotator chooses only
          // when a field was changed on both sides.
          const rebased = rebasePending(next.base, next.pending, {});
          if (rebased.summary.conflicts.length) {
            next.status = SAVE.CONFLICT;
            next.message = "Unsaved changes from an earlier visit were made on an older version of this ledger.";
          } else {
            next = { ...next, base: rebased.base, pending: rebased.pending, lastRebase: rebased.summary };
          }
        }
      }
      return withStatus(next);
    }
    case "add":
      return edit(state, action.key, action.data);
    case "update":
      return edit(state, action.key, action.data);
    case "remove":
      return edit(state, action.key, null);
    case "undo":
    case "redo": {
      const from = action.type === "undo" ? state.undo : state.redo;
      if (!from.length || state.frozen) return state;
      const entry = from[from.length - 1];
      const target = action.type === "undo" ? entry.before : entry.after;
      const next = setEvent(state, entry.key, target === null ? null : clone(target));
      const rest = from.slice(0, -1);
      const moved = action.type === "undo" ? { undo: rest, redo: [...state.redo, entry] } : { redo: rest, undo: [...state.undo, entry] };
      return withStatus({ ...next, ...moved, selected: target === null ? next.selected : entry.key });
    }
    case "select":
      return { ...state, selected: action.key !== null && eventByKey(state, action.key) ? action.key : null };
    case "sendStarted":
      if (!state.pending.length || state.pending[0].id !== action.id) return state;
      return { ...state, inflight: action.id, status: SAVE.SAVING, message: "" };
    case "saved": {
      const op = state.pending[0];
      if (!op || op.id !== action.id) return state;
      let base = state.base;
      if (op.kind === "add") base = [...base, { key: op.key, uid: action.uid, data: clone(action.data ?? op.data) }];
      else if (op.kind === "update") base = base.map((e) => (e.key === op.key ? { ...e, data: clone(action.data ?? op.data) } : e));
      else base = base.filter((e) => e.key !== op.key);
      const status = state.status === SAVE.FAILED ? SAVE.SAVING : state.status;
      return withStatus({ ...state, base, pending: state.pending.slice(1), inflight: null, version: action.version, status });
    }
    case "failed":
      // Network failure or server error: the operation stays at the head and is retried.
      return { ...state, inflight: null, status: SAVE.FAILED, message: action.message || "Save failed." };
    case "conflict":
      return { ...state, inflight: null, status: SAVE.CONFLICT, message: action.message || "The ledger changed elsewhere." };
    case "rejected": {
      // 400: the server refused the head operation. Its data (with any queued edits of
      // the same event) goes back to the form with the error; nothing else changes.
      const op = state.pending[0];
      if (!op || op.id !== action.id) return state;
      const sameEvent = op.kind === "add" ? state.pending.filter((o) => o.key === op.key) : [op];
      const latest = sameEvent[sameEvent.length - 1];
      const pending = state.pending.filter((o) => !sameEvent.includes(o));
      const rejected = latest.kind === "delete"
        ? null // the annotator deleted the refused event meanwhile: nothing to give back
        : { key: op.key, kind: op.kind, data: clone(latest.data), field: action.field || null, message: action.message || "" };
      const status = rejected ? SAVE.INVALID : SAVE.SAVING;
      return withStatus({ ...state, pending, inflight: null, rejected, status, message: rejected ? action.message || "" : "" });
    }
    case "dismissOrphaned":
      return { ...state, orphaned: null };
    case "dismissRejected":
      return withStatus({ ...state, rejected: null, status: state.status === SAVE.INVALID ? SAVE.SAVED : state.status });
    case "rebase": {
      // The annotator chose to keep their changes: re-apply them on the server's ledger.
      const base = fromServer(action.ledger, state.base);
      const result = rebasePending(base, state.pending, { choices: action.choices || {}, oldBase: state.base });
      return withStatus({
        ...state,
        base: result.base,
        pending: result.pending,
        inflight: null,
        version: action.ledger.version,
        frozen: Boolean(action.ledger.frozen),
        sha256: action.ledger.sha256 || null,
        status: SAVE.SAVING,
        message: "",
        lastRebase: result.summary,
      });
    }
    case "discard": {
      // The annotator chose the server's ledger over their unsaved changes.
      return withStatus({
        ...state,
        base: fromServer(action.ledger, state.base),
        pending: [],
        inflight: null,
        undo: [],
        redo: [],
        version: action.ledger.version,
        frozen: Boolean(action.ledger.frozen),
        sha256: action.ledger.sha256 || null,
        status: SAVE.SAVED,
        message: "",
      });
    }
    case "frozen":
      return withStatus({ ...state, frozen: true, sha256: action.sha256, version: action.version ?? state.version, inflight: null });
    default:
      throw new Error(`unknown action ${action.type}`);
  }
}

// What survives a closed tab: the unsaved queue and the keys it refers to.
export function persistable(state) {
  const keys = {};
  for (const e of state.base) if (e.key !== e.uid) keys[e.uid] = e.key;
  const pending = state.pending.map(({ id, kind, key, data, base }) => (base === undefined ? { id, kind, key, data } : { id, kind, key, data, base }));
  return { version: state.version, pending, keys, nextOp: state.nextOp };
}

// A minimal store: dispatch, getState, subscribe.
export function createStore(reduce, state) {
  const listeners = new Set();
  return {
    getState: () => state,
    dispatch(action) {
      const previous = state;
      state = reduce(state, action);
      if (state !== previous) for (const listener of listeners) listener(state, previous, action);
      return state;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
