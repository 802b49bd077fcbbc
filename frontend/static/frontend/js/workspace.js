// The annotator's workspace (DOM wiring). The ledger's logic is in ledger_state.js, the
// saving in autosave.js, the form in event_form.js, the keys in shortcuts.js.
// Only the annotator's own ledger is ever requested: /api/packets/<id>/ledger/.
//
// main() builds one context `ws` (the packet, the store, the player, the form, the
// timeline, and the few values the parts share: draftKey, boundary …) and hands it to
// mount functions, each wiring one part of the page; a part calls another's functions
// through `ws` (ws.select(…), ws.setNotice(…)), looked up when called.

import { api } from "./api.js";
import { Autosave } from "./autosave.js";
import { EventForm } from "./event_form.js";
import { DraftKeeper, FrameKeeper, isEmptyDraft } from "./drafts.js";
import { KeyGate } from "./key_gate.js";
import { boundaryFields, draftToEvent, emptyDraft, eventToDraft, formWarnings, previousValue, snapInterval, snapToGrid, summarize, usageCounts } from "./event_schema.js";
import { SAVE, createStore, eventByKey, events, hasUnsaved, initialState, orderedEvents, reducer } from "./ledger_state.js";
import { connectPacket, renderLiveState, renderPresence } from "./live.js";
import { boundaryTarget, keyframeTarget, secondStep } from "./navigation.js";
import { RATES, mountPlayer } from "./player.js";
import { mountMomentSearch, withInterval } from "./moment_search.js";
import { FORM_KEYS, WORKSPACE_SHORTCUTS } from "./shortcuts.js";
import { Timeline } from "./timeline.js";
import { VirtualRows } from "./virtual_rows.js";
import { mountConflictDialog, mountFreezeDialog } from "./workspace_dialogs.js";
import { mountWorkspaceKeys } from "./workspace_keys.js";
import { $, boot, el, isField, pageConfig, shortcutSheet, when } from "./ui.js";

const config = pageConfig();
const packetUrl = `/api/packets/${config.packetId}/`;
const ledgerUrl = `${packetUrl}ledger/`;

window.frameledger = window.frameledger || {};

// Keys typed while the page loads wait here and run, in order, once it is ready.
const gate = new KeyGate({
  onChange({ held, count }) {
    if (!held || !count) return;
    const box = document.querySelector("#notice");
    if (box) box.textContent = `The page is still loading: ${count} key(s) typed so far will run once it is ready.`;
  },
});
window.frameledger.keyGate = gate;

function newKey() {
  return globalThis.crypto && crypto.randomUUID ? `new-${crypto.randomUUID()}` : `new-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

// A stand-in when the video cannot be played: editing still works, frames typed by hand.
function stillPlayer(frameCount) {
  let current = 0;
  const target = new EventTarget();
  // (Object.assign would copy the getter's value once: define it on the object.)
  Object.defineProperty(target, "currentFrame", { get: () => current });
  return Object.assign(target, {
    frameCount,
    clock: null,
    async seekToFrame(n) { current = Math.max(0, Math.min(frameCount - 1, Math.round(n))); target.dispatchEvent(new CustomEvent("frame", { detail: { frame: current } })); return current; },
    step(k) { return this.seekToFrame(current + k); },
    togglePlay() {},
    setRate() {},
    pause() { return current; },
  });
}

async function loadLedger() {
  const { data, etag } = await api.request("GET", ledgerUrl);
  const match = /ledger-(\d+)-v/.exec(etag || "");
  return { ledger: data, ledgerId: match ? Number(match[1]) : null };
}

async function main() {
  const [packet, { ledger, ledgerId }] = await Promise.all([api.get(packetUrl), loadLedger()]);
  const ws = mountStore(packet, ledger, ledgerId);
  await mountViews(ws);
  mountFrames(ws);
  mountSelection(ws);
  mountCommit(ws);
  mountUndo(ws);
  mountMarking(ws);
  mountIntervals(ws);
  mountSeeking(ws);
  mountTable(ws);
  mountTimeline(ws);
  mountStatus(ws);
  mountRendering(ws);
  mountFormWiring(ws);
  mountKeys(ws);
  mountPresence();
  mountOrphaned(ws);
  firstPaint(ws, ledger);
  if (config.search && ws.intervalField) await mountSearch(ws);
}

// ---- state and saving ---------------------------------------------------------------
function mountStore(packet, ledger, ledgerId) {
  const schema = packet.task_kind.schema;
  $("#task-kind").textContent = packet.task_kind.name;
  $("#instructions").textContent = packet.instructions || "No instructions.";
  const storageKey = `frameledger:ledger:${config.packetId}:${config.username}`;
  const store = createStore(reducer, initialState());
  store.dispatch({ type: "loaded", ledger, ledgerId, restore: Autosave.restore(localStorage, storageKey) });
  const autosave = new Autosave(store, {
    storage: localStorage,
    storageKey,
    async send(request, ifMatch) {
      const url = request.uid ? `${ledgerUrl}events/${request.uid}/` : `${ledgerUrl}events/`;
      const { data } = await api.request(request.method, url, { body: request.body, headers: { "If-Match": ifMatch } });
      return { version: data.version, uid: data.event ? data.event.uid : null, data: data.event ? data.event.data : null };
    },
  });
  window.frameledger.store = store;
  window.frameledger.autosave = autosave;
  return {
    packet,
    schema,
    bounds: boundaryFields(schema),
    intervalField: schema.fields.find((f) => f.type === "interval_list") || null,
    store,
    autosave,
    draftKey: null, // the selected event the form edits; null: a new event
    reAddKey: null, // the key of a refused new event, reused when it is added again
    boundary: "start", // the boundary nudges move
    lastAdded: null,
  };
}

// ---- player, timeline, form -----------------------------------------------------------
async function mountViews(ws) {
  let player;
  try {
    player = await mountPlayer($("#player"), { urls: config.media, keyboard: false });
  } catch (error) {
    $("#player-error").hidden = false;
    $("#player-error").textContent = `The video could not be loaded (${error.message}); frames can still be typed in.`;
    player = stillPlayer(ws.packet.video.frame_count || 1);
  }
  window.frameledger.player = player;
  const thumbs = await api.get(config.media.thumbsMeta).catch(() => null);
  ws.player = player;
  ws.timeline = new Timeline($("#timeline"), { frameCount: player.frameCount || ws.packet.video.frame_count || 1, thumbs });
  // The type-ahead ranks the values this ledger used most first (event_schema.js).
  const usage = (name) => usageCounts(events(ws.store.getState()).map((e) => e.data), name);
  // An empty closed-list box offers the previous event's value for Enter (the verb of the
  // event before this one's start).
  const previous = (name) => previousValue(events(ws.store.getState()).map((e) => e.data), ws.bounds, ws.form.draft[ws.bounds?.start], name);
  ws.form = new EventForm($("#event-form"), ws.schema, { idPrefix: "ev", usage, previous });
  window.frameledger.form = ws.form; // for tests and the console, as the store
}

// Frames and times, seeks in order, the notice line.
function mountFrames(ws) {
  const { player, packet, bounds, intervalField } = ws;
  // Seeks are asynchronous; commands that read the frame wait for the latest one, so a
  // key pressed right after a step uses the frame that step lands on.
  let lastSeek = Promise.resolve();
  ws.seek = (promise) => {
    lastSeek = Promise.resolve(promise).catch(() => undefined);
    return lastSeek;
  };
  ws.frameNow = async () => {
    let pending;
    do {
      pending = lastSeek;
      await pending;
    } while (pending !== lastSeek);
    return player.currentFrame;
  };
  ws.frames = new FrameKeeper(localStorage, `frameledger:frame:${config.packetId}:${config.username}`);
  let frameTimer = null;
  player.addEventListener("frame", () => {
    if (frameTimer === null) frameTimer = setTimeout(() => ((frameTimer = null), ws.frames.save(player.currentFrame)), 200);
  });
  window.addEventListener("pagehide", () => {
    ws.frames.save(player.currentFrame);
    ws.keepDraft();
  });
  ws.clampFrame = (n) => Math.max(0, Math.min((player.frameCount || 1) - 1, n));
  ws.readOnly = () => ws.store.getState().frozen;
  ws.focusHome = () => $("#workspace").focus({ preventScroll: true });
  const rate = () => (packet.video.frame_rate[0] || 1) / (packet.video.frame_rate[1] || 1);
  ws.timeOfFrame = (frame) => (player.clock ? player.clock.ptsOf(frame) : frame / rate());
  ws.frameOfTime = (seconds) => (player.clock ? player.clock.frameAtTime(seconds) : Math.round(seconds * (packet.video.frame_rate[0] / packet.video.frame_rate[1])));
  const intervals = (data) => (intervalField && Array.isArray(data[intervalField.name]) && data[intervalField.name].length ? data[intervalField.name] : null);
  ws.startFrameOf = (data) => {
    if (!data) return null;
    if (bounds && Number.isInteger(data[bounds.start])) return data[bounds.start];
    return intervals(data) ? ws.frameOfTime(intervals(data)[0][0]) : null;
  };
  ws.endFrameOf = (data) => {
    if (bounds && Number.isInteger(data[bounds.end])) return data[bounds.end];
    return intervals(data) ? ws.frameOfTime(intervals(data)[0][1]) : ws.startFrameOf(data);
  };
  ws.setNotice = (text, tone = "") => {
    const box = $("#notice");
    box.textContent = text;
    box.dataset.tone = tone;
  };
}

// ---- selection and drafts -------------------------------------------------------------
// The new event being written: kept in local storage per ledger; kept aside while an
// existing event is selected; one cleared by Esc comes back with Ctrl+Z.
function mountSelection(ws) {
  const { store, schema, form, bounds } = ws;
  ws.drafts = new DraftKeeper(localStorage, `frameledger:draft:${config.packetId}:${config.username}`);
  ws.stashedDraft = null;
  ws.clearedDraft = null;
  // Text typed into the focused box that the draft has not taken in yet (a half-typed noun).
  ws.typedText = () => {
    const box = document.activeElement;
    if (!box || !form.form.contains(box) || !(box instanceof HTMLInputElement || box instanceof HTMLTextAreaElement) || !box.name) return null;
    const taken = form.draft[box.name];
    if (!box.value || box.value === String(taken ?? "")) return null;
    return { name: box.name, value: box.value };
  };
  ws.keepDraft = () => {
    if (ws.draftKey === null && !ws.readOnly()) ws.drafts.save(form.draft, ws.typedText());
  };
  form.form.addEventListener("input", () => ws.keepDraft());
  ws.hasDraft = () => ws.draftKey === null && !isEmptyDraft(form.draft);

  ws.showDraftTitle = () => {
    const title = $("#form-title");
    if (ws.readOnly()) title.textContent = "Frozen ledger (read-only)";
    else title.textContent = ws.draftKey === null ? "New event" : "Selected event (changes save automatically)";
    const { boundary } = ws;
    $("#boundary-hint").textContent = bounds ? `Nudge moves the ${boundary} (${boundary === "start" ? bounds.start : bounds.end}); b switches.` : "";
  };

  ws.select = (key, { seek: seekTo = true } = {}) => {
    const event = key === null ? null : eventByKey(store.getState(), key);
    if (ws.draftKey === null && event && ws.hasDraft()) ws.stashedDraft = form.draft; // back on Esc
    store.dispatch({ type: "select", key: event ? key : null });
    const wasNew = ws.draftKey === null;
    ws.draftKey = event ? key : null;
    if (event && seekTo) ws.boundary = "start"; // the player shows the start: nudges move it
    if (event) form.setDraft(eventToDraft(schema, event.data), { keepTyped: false });
    else if (!wasNew || !ws.hasDraft()) {
      form.setDraft(ws.stashedDraft || emptyDraft(schema), { keepTyped: false });
      ws.stashedDraft = null;
    }
    form.clearErrors();
    ws.setNotice("");
    ws.showDraftTitle();
    ws.renderSelection();
    const start = event ? ws.startFrameOf(event.data) : null;
    if (seekTo && start !== null) ws.seek(ws.player.seekToFrame(start));
  };
  ws.newDraft = () => ws.select(null, { seek: false });

  // Apply `change` (data -> data) to the selected event, or to the new draft.
  ws.changeEvent = (change) => {
    if (ws.readOnly()) return null;
    if (ws.draftKey !== null) {
      const event = eventByKey(store.getState(), ws.draftKey);
      if (!event) return null;
      const data = change(JSON.parse(JSON.stringify(event.data)));
      if (!data) return null;
      store.dispatch({ type: "update", key: ws.draftKey, data });
      form.setDraft(eventToDraft(schema, data));
      return data;
    }
    const result = change(form.draft);
    if (result) form.setDraft(result);
    ws.keepDraft();
    return result;
  };
}

// Enter (add or save), Esc.
function mountCommit(ws) {
  const { store, schema, form, bounds, player } = ws;
  ws.commit = () => {
    if (ws.readOnly()) return;
    const active = document.activeElement;
    if (active && form.form.contains(active) && (active instanceof HTMLInputElement || active instanceof HTMLSelectElement)) {
      if (active.dataset.typeahead === undefined) active.dispatchEvent(new Event("change"));
    }
    const result = draftToEvent(schema, form.draft);
    if (result.errors) {
      form.showErrors(result.errors);
      ws.setNotice("Fill in the marked fields first.", "bad");
      return;
    }
    if (ws.draftKey !== null) {
      store.dispatch({ type: "update", key: ws.draftKey, data: result.data });
      ws.setNotice("Event updated.");
      ws.focusHome();
      return;
    }
    const key = ws.reAddKey || newKey();
    ws.reAddKey = null;
    ws.lastAdded = key;
    store.dispatch({ type: "add", key, data: result.data });
    // The playhead on the new event's end steps to the next frame, where a following
    // event starts when events are contiguous (segmentation): i marks it.
    if (bounds && player.currentFrame === result.data[bounds.end] && result.data[bounds.end] + 1 < (player.frameCount || 0)) {
      ws.seek(player.seekToFrame(result.data[bounds.end] + 1));
    }
    form.setDraft(emptyDraft(schema), { keepTyped: false });
    ws.drafts.clear();
    ws.clearedDraft = null;
    form.clearErrors();
    $(".ws-form").scrollTop = 0; // the next event's first fields in view (a long form: tennis)
    ws.setNotice("Event added.");
    ws.focusHome();
  };

  // Esc: leave a field; else back from a selected event to the new one; else clear the
  // new event's draft, which Ctrl+Z brings back (it is never lost silently).
  ws.escape = () => {
    if (isField(document.activeElement)) ws.focusHome();
    else if (ws.draftKey !== null) ws.newDraft();
    else if (ws.hasDraft() && !ws.readOnly()) {
      ws.clearedDraft = form.draft;
      form.setDraft(emptyDraft(schema), { keepTyped: false });
      form.clearErrors();
      ws.drafts.clear();
      ws.setNotice("Draft cleared. Ctrl+Z brings it back.");
    }
  };
}

// Ctrl+Z / Ctrl+Y, Delete.
function mountUndo(ws) {
  const { store, form } = ws;
  ws.undoRedo = (type) => {
    if (type === "undo" && ws.clearedDraft && ws.draftKey === null && !ws.hasDraft()) {
      form.setDraft(ws.clearedDraft);
      ws.clearedDraft = null;
      ws.keepDraft();
      ws.setNotice("The cleared draft is back.");
      return;
    }
    store.dispatch({ type });
    const state = store.getState();
    const key = state.selected;
    if (key !== null && eventByKey(state, key)) ws.select(key, { seek: false });
    else ws.newDraft();
  };

  ws.deleteSelected = () => {
    if (ws.draftKey !== null && !ws.readOnly()) {
      store.dispatch({ type: "remove", key: ws.draftKey });
      ws.newDraft();
      ws.setNotice("Event deleted (Ctrl+Z brings it back).");
    }
  };
}

// i / o, nudges, [ / ].
function mountMarking(ws) {
  const { store, form, bounds, intervalField, player } = ws;
  // At the keydown of "o" (before the queued marks run): a new event whose start is marked,
  // or about to be, moves on to its first empty label (the verb) at once, so letters typed
  // straight after "o" land there instead of being taken as shortcuts.
  ws.labelsEarly = false;
  ws.endKeyPressed = (startQueued) => {
    ws.labelsEarly =
      Boolean(bounds) && ws.draftKey === null && !ws.readOnly() && (startQueued || Number.isInteger(form.draft[bounds.start])) && form.focusFirstEmpty();
  };
  ws.setBoundary = async (which) => {
    const early = which === "end" && ws.labelsEarly;
    if (which === "end") ws.labelsEarly = false;
    const frame = await ws.frameNow();
    if (bounds) {
      ws.boundary = which;
      const data = ws.changeEvent((d) => ({ ...d, [bounds[which]]: frame }));
      // A new event with both ends marked, in order: on to its first empty label (the verb).
      const inOrder = which === "end" && ws.draftKey === null && data && Number.isInteger(data[bounds.start]) && data[bounds.start] <= frame;
      if (inOrder && !early) form.focusFirstEmpty();
      // The end is before the start: the keys go back to the page, unless something was typed.
      const typing = document.activeElement;
      if (early && !inOrder && form.form.contains(typing) && !typing.value) ws.focusHome();
      ws.flagReversed(data);
    } else if (intervalField) {
      ws.markInterval(which, ws.timeOfFrame(frame));
    }
    ws.showDraftTitle();
  };

  // Marked the wrong way round: said at once, with the end box flagged (Enter would refuse it).
  ws.flagReversed = (data) => {
    if (!data || !Number.isInteger(data[bounds.start]) || !Number.isInteger(data[bounds.end])) return;
    if (data[bounds.end] >= data[bounds.start]) return; // (a re-render cleared any old flag)
    form.markError(bounds.end, `before the start (${data[bounds.start]})`);
    ws.setNotice(`The end (${data[bounds.end]}) is before the start (${data[bounds.start]}): mark the start (i) or the end (o) again.`, "bad");
  };

  ws.nudge = (k) => {
    if (!bounds) return;
    const name = bounds[ws.boundary];
    let clamped = false;
    const data = ws.changeEvent((d) => {
      if (!Number.isInteger(d[name])) return null;
      clamped = ws.clampFrame(d[name] + k) !== d[name] + k;
      return { ...d, [name]: ws.clampFrame(d[name] + k) };
    });
    if (clamped) ws.setNotice(`The ${ws.boundary} is at the ${k < 0 ? "first" : "last"} frame (${data[name]}): it goes no further.`, "bad");
    else if (data) ws.flagReversed(data);
    if (data) ws.seek(player.seekToFrame(data[name]));
  };

  ws.jump = async (direction) => {
    const frame = await ws.frameNow();
    const list = orderedEvents(store.getState(), bounds && bounds.start).filter((e) => ws.startFrameOf(e.data) !== null);
    if (!list.length) return;
    let index;
    const at = list.findIndex((e) => e.key === ws.draftKey);
    if (at >= 0) index = at + direction;
    else {
      index = direction > 0 ? list.findIndex((e) => ws.startFrameOf(e.data) > frame) : list.map((e) => ws.startFrameOf(e.data) < frame).lastIndexOf(true);
    }
    if (index < 0 || index >= list.length) return;
    ws.select(list[index].key);
  };
}

// i / o on a moment query: the time marked is kept exactly (marks) and the interval is
// the snapped one, shown with the grid; never an empty interval.
function mountIntervals(ws) {
  const { intervalField } = ws;
  const marks = { start: null, end: null };
  ws.markInterval = (which, t) => {
    const step = intervalField.grid_step;
    const duration = ws.packet.video.duration || undefined;
    marks[which] = t;
    let note = "";
    ws.changeEvent((data) => {
      const list = (data[intervalField.name] || []).map((p) => [...p]);
      let last = list[list.length - 1];
      if (which === "start" && (!last || (last[0] !== "" && last[1] !== ""))) {
        list.push(["", ""]);
        last = list[list.length - 1];
        marks.end = null;
      } else if (!last) {
        list.push(["", ""]);
        last = list[0];
      }
      const start = which === "start" ? t : marks.start ?? (last[0] === "" ? null : last[0]);
      const end = which === "end" ? t : marks.end ?? (last[1] === "" ? null : last[1]);
      if (start !== null && end !== null && end > start - 1e-9) {
        const snapped = snapInterval(start, end, step, duration);
        note = snapped.note;
        if (!snapped.interval) return null;
        [last[0], last[1]] = snapped.interval;
      } else {
        last[which === "start" ? 0 : 1] = snapToGrid(t, step, duration);
        if (start !== null && end !== null) note = "the end is before the start";
      }
      return { ...data, [intervalField.name]: list };
    });
    // "→" only when the mark was moved to the grid; a mark on a grid point says so.
    const snapped = snapToGrid(t, step, duration);
    const shown = !step ? `${which} ${Number(t.toFixed(3))} s` : Math.abs(snapped - t) < 1e-6 ? `${which} ${snapped} s (on the ${step} s grid)` : `${which} ${t.toFixed(2)} s → ${snapped} s, snapped to the ${step} s grid`;
    ws.setNotice(note ? `${shown}; ${note}.` : `${shown}.`, note.startsWith("no ") || note.startsWith("the end") ? "bad" : "");
  };
}

// ---- seeking and playing keys -----------------------------------------------------------
function mountSeeking(ws) {
  const { player, store } = ws;
  // h: play at 0.5x, and back to the rate before on the next h (or when pausing with h).
  let rateBeforeHalf = null;
  ws.playHalf = async () => {
    if (!player.play) return;
    if (!player.paused) {
      if (rateBeforeHalf !== null) player.setRate(rateBeforeHalf);
      rateBeforeHalf = null;
      await player.pause();
      return;
    }
    rateBeforeHalf = player.video ? player.video.playbackRate : 1;
    player.setRate(0.5);
    await player.play();
  };

  // J / K / L: L plays forward, faster on each press (1x, 1.5x, 2x); K pauses; J pauses and
  // steps back one second per press (a browser's <video> cannot play backwards).
  ws.shuttle = async (direction) => {
    if (!player.play) return;
    if (direction === 0) return ws.seek(player.pause());
    if (direction < 0) {
      await player.pause();
      return ws.seek(player.step(-secondStep(player.clock)));
    }
    const rate = player.video ? player.video.playbackRate : 1;
    if (player.paused) {
      if (rate < 1) player.setRate(1);
      return player.play();
    }
    const faster = RATES.find((r) => r > rate);
    if (faster) player.setRate(faster);
  };

  const eventBoundaries = () => events(store.getState()).flatMap((event) => [ws.startFrameOf(event.data), ws.endFrameOf(event.data)]);
  ws.boundaryTargetNow = async (direction) => boundaryTarget(eventBoundaries(), await ws.frameNow(), direction);
  ws.keyframeTargetNow = async (direction) => keyframeTarget(player.clock ? player.clock.keyframes : [], await ws.frameNow(), direction);
  ws.jumpTo = async (target) => {
    const frame = await target;
    if (frame === null || frame === undefined) {
      ws.setNotice("Nothing further that way.");
      return;
    }
    await ws.seek(player.seekToFrame(frame));
  };

  // g: the player's "Go to" box; Enter there seeks and gives the keys back to the page.
  ws.goToBox = () => {
    const box = $("#player .fl-goto");
    if (!box) return;
    box.value = "";
    box.focus();
  };
}

// ---- the ledger table -------------------------------------------------------------------
// The table and the timeline are redrawn only when the events change (not on every save
// status or selection), and the table holds only the rows in view.
function mountTable(ws) {
  const { store, schema, bounds, intervalField, timeline } = ws;
  const tableRows = new VirtualRows($("#ledger-scroll"), $("#ledger-table tbody"), { rowHeight: 28 });
  ws.shown = { base: null, pending: null, list: [], index: new Map() };
  const currentList = (state) => {
    if (ws.shown.base !== state.base || ws.shown.pending !== state.pending) {
      const list = orderedEvents(state, bounds && bounds.start);
      ws.shown = { base: state.base, pending: state.pending, list, index: new Map(list.map((e, i) => [e.key, i])), changed: true };
    }
    return ws.shown;
  };

  ws.renderSelection = () => {
    const key = store.getState().selected;
    timeline.setSelected(key);
    for (const row of document.querySelectorAll("#ledger-table tbody tr")) row.classList.toggle("selected", row.dataset.key === key);
    const index = ws.shown.index.get(key);
    if (index !== undefined) tableRows.reveal(index);
  };

  // Start / end cells: the frame boundaries, or a moment's first interval in seconds.
  function boundaryText(data, side) {
    if (bounds) return String(data[side ? bounds.end : bounds.start] ?? "—");
    const list = intervalField && data[intervalField.name];
    if (!Array.isArray(list) || !list.length) return "—";
    return `${list[0][side]} s${side && list.length > 1 ? ` (+${list.length - 1})` : ""}`;
  }

  function eventRow(event, i) {
    const row = el("tr", { dataset: { key: event.key }, class: [event.key === store.getState().selected ? "selected" : "", event.unsaved ? "unsaved" : ""].join(" ") }, [
      el("td", { class: "num", text: String(i + 1) }),
      el("td", { class: "num", text: boundaryText(event.data, 0) }),
      el("td", { class: "num", text: boundaryText(event.data, 1) }),
      el("td", { class: "summary", text: summarize(schema, event.data), title: summarize(schema, event.data) }),
      el("td", {}, event.unsaved ? el("span", { class: "pill saving", text: "unsaved" }) : el("span", { class: "pill ok", text: "saved" })),
    ]);
    row.addEventListener("click", () => ws.select(event.key));
    return row;
  }

  ws.renderTable = (state) => {
    const shown = currentList(state);
    if (!shown.changed) return false;
    tableRows.setRows(shown.list, eventRow);
    $("#event-count").textContent = `(${shown.list.length})`;
    if (ws.lastAdded) {
      const index = shown.index.get(ws.lastAdded);
      if (index !== undefined) {
        tableRows.reveal(index);
        tableRows.rowOf(index)?.classList.add("just-added");
      }
      ws.lastAdded = null;
    }
    return true;
  };
}

// ---- the timeline ------------------------------------------------------------------------
function mountTimeline(ws) {
  const { schema, timeline, player } = ws;
  ws.renderTimeline = (state) => {
    const items = ws.shown.list.map((event) => ({
      key: event.key,
      start: ws.startFrameOf(event.data),
      end: ws.endFrameOf(event.data),
      label: summarize(schema, event.data),
      className: event.unsaved ? "unsaved" : "",
    }));
    timeline.setLanes([{ id: "own", label: "Your events", className: "lane-own", items }]);
    timeline.setSelected(state.selected);
  };
  timeline.addEventListener("seek", (e) => ws.seek(player.seekToFrame(e.detail.frame)));
  timeline.addEventListener("select", (e) => e.detail.lane !== "search" && ws.select(e.detail.key));
  player.addEventListener("frame", (e) => timeline.setPlayhead(e.detail.frame));
}

// ---- the save status, the frozen state, refusals --------------------------------------------
function mountStatus(ws) {
  const { store, schema, form, autosave } = ws;
  let countdown = null;
  ws.renderStatus = (state) => {
    const box = $("#save-status");
    const suffix = state.pending.length ? ` (${state.pending.length} unsaved)` : "";
    box.dataset.status = state.status;
    clearInterval(countdown);
    const texts = {
      [SAVE.SAVED]: "All changes saved",
      [SAVE.SAVING]: `Saving…${suffix}`,
      [SAVE.CONFLICT]: `Conflict: this ledger changed elsewhere.${suffix}`,
      [SAVE.INVALID]: `Not saved: ${state.message}`,
      [SAVE.FROZEN]: "Frozen",
    };
    if (state.status === SAVE.FAILED) {
      const update = () => {
        const wait = autosave.retryAt ? Math.max(0, Math.ceil((autosave.retryAt - Date.now()) / 1000)) : null;
        box.textContent = `${state.message}${wait !== null ? ` Retrying in ${wait} s.` : ""}${suffix}`;
      };
      update();
      countdown = setInterval(update, 1000);
    } else if (state.status in texts) box.textContent = texts[state.status];
    $("#retry-save").hidden = state.status !== SAVE.FAILED;
    $("#resolve-conflict").hidden = state.status !== SAVE.CONFLICT;
  };

  ws.renderFrozen = (state) => {
    const frozen = state.frozen;
    $("#frozen-banner").hidden = !frozen;
    $("#freeze-open").hidden = frozen;
    if (frozen) {
      $("#frozen-sha").textContent = state.sha256 || "";
      const step = ws.packet.next_step;
      $("#next-step").textContent = step && step.who !== config.username ? step.text : "the adjudicator, once both ledgers are frozen: adjudicate and publish";
      form.setReadOnly(true);
    }
    document.body.classList.toggle("read-only", frozen);
    ws.showDraftTitle();
  };

  // The server refused an event: put it back in the form with the error on its field.
  ws.renderRejected = (state) => {
    const rejected = state.rejected;
    if (!rejected) return;
    if (rejected.kind === "add") {
      store.dispatch({ type: "select", key: null });
      ws.draftKey = null;
      ws.reAddKey = rejected.key;
    } else {
      ws.draftKey = eventByKey(state, rejected.key) ? rejected.key : null;
      if (ws.draftKey === null) ws.reAddKey = rejected.key;
      store.dispatch({ type: "select", key: ws.draftKey });
    }
    form.setDraft(eventToDraft(schema, rejected.data));
    form.showErrors({ [rejected.field || "event"]: rejected.message });
    ws.showDraftTitle();
    ws.setNotice(`The server refused this event: ${rejected.message}. Fix the marked field and press Enter.`, "bad");
  };
}

// ---- what a store change redraws, and the dialogs ------------------------------------------
function mountRendering(ws) {
  const { store, schema } = ws;
  ws.frozenSeen = null;
  store.subscribe((state, previous) => {
    if (ws.renderTable(state)) {
      ws.renderTimeline(state);
      ws.shown.changed = false;
    }
    ws.renderStatus(state);
    if (state.frozen !== ws.frozenSeen) {
      ws.frozenSeen = state.frozen;
      ws.renderFrozen(state);
    }
    // Selecting re-dispatches: do it after this notification round.
    if (state.rejected && state.rejected !== previous.rejected) queueMicrotask(() => ws.renderRejected(store.getState()));
    if (state.status === SAVE.CONFLICT && previous.status !== SAVE.CONFLICT) ws.openConflict();
  });
  const { openConflict } = mountConflictDialog({
    store,
    schema,
    loadLedger,
    setNotice: ws.setNotice,
    afterRebase: () => ws.select(ws.draftKey !== null && eventByKey(store.getState(), ws.draftKey) ? ws.draftKey : null, { seek: false }),
    afterReset: () => ws.newDraft(),
  });
  ws.openConflict = openConflict;
  mountFreezeDialog({ store, ledgerUrl, afterReset: () => ws.newDraft() });
}

// ---- the form's events, the buttons, leaving the page ----------------------------------------
function mountFormWiring(ws) {
  const { store, schema, form, autosave } = ws;
  form.addEventListener("change", () => {
    if (ws.readOnly()) return;
    if (ws.draftKey !== null) {
      const result = draftToEvent(schema, form.draft);
      if (result.errors) form.showErrors(result.errors);
      else store.dispatch({ type: "update", key: ws.draftKey, data: result.data });
    }
    ws.keepDraft();
    const warnings = formWarnings(schema, form.draft); // the checks the kind asks for (schema.ui)
    $("#form-warnings").textContent = warnings.join(" · ");
  });
  // Enter in a field saves after the marks typed before it (see workspace_keys.js).
  form.addEventListener("commit", () => (ws.inKeyOrder ? ws.inKeyOrder(() => ws.commit()) : ws.commit()));
  $("#retry-save").addEventListener("click", () => autosave.retryNow());
  $("#help-open").addEventListener("click", () => $("#help-dialog").showModal());
  shortcutSheet($("#help-dialog"), WORKSPACE_SHORTCUTS, undefined, { formKeys: FORM_KEYS });
  window.addEventListener("beforeunload", (event) => {
    if (hasUnsaved(store.getState()) || ws.hasDraft()) {
      event.preventDefault();
      event.returnValue = "";
    }
  });
}

// ---- the keys: command name -> what it does (the key table is in shortcuts.js) ----------------
function mountKeys(ws) {
  const { player, timeline, form, seek } = ws;
  const commands = {
    "step-1": () => seek(player.step(-1)),
    "step+1": () => seek(player.step(1)),
    "step-10": () => seek(player.step(-10)),
    "step+10": () => seek(player.step(10)),
    "first-frame": () => seek(player.seekToFrame(0)),
    "last-frame": () => seek(player.seekToFrame(player.frameCount - 1)),
    play: () => player.togglePlay(),
    "play-half": () => ws.playHalf(),
    "shuttle-back": () => ws.shuttle(-1),
    "shuttle-stop": () => ws.shuttle(0),
    "shuttle-forward": () => ws.shuttle(1),
    "step-second-back": () => seek(player.step(-secondStep(player.clock))),
    "step-second-forward": () => seek(player.step(secondStep(player.clock))),
    "prev-boundary": () => ws.jumpTo(ws.boundaryTargetNow(-1)),
    "next-boundary": () => ws.jumpTo(ws.boundaryTargetNow(1)),
    "prev-keyframe": () => ws.jumpTo(ws.keyframeTargetNow(-1)),
    "next-keyframe": () => ws.jumpTo(ws.keyframeTargetNow(1)),
    "go-to-frame": () => ws.goToBox(),
    "set-start": () => ws.setBoundary("start"),
    "set-end": () => ws.setBoundary("end"),
    commit: () => ws.commit(),
    "edit-fields": () => !ws.readOnly() && form.focusFirst(),
    "prev-event": () => ws.jump(-1),
    "next-event": () => ws.jump(1),
    "toggle-boundary": () => {
      ws.boundary = ws.boundary === "start" ? "end" : "start";
      ws.showDraftTitle();
    },
    "nudge-1": () => ws.nudge(-1),
    "nudge+1": () => ws.nudge(1),
    "nudge-10": () => ws.nudge(-10),
    "nudge+10": () => ws.nudge(10),
    deselect: () => ws.escape(),
    delete: () => ws.deleteSelected(),
    undo: () => ws.undoRedo("undo"),
    redo: () => ws.undoRedo("redo"),
    "zoom-in": () => timeline.zoomIn(),
    "zoom-out": () => timeline.zoomOut(),
    "zoom-fit": () => timeline.fit(),
    "save-now": () => ws.autosave.retryNow(),
    "use-candidate": () => ws.search && ws.search.useHighlighted(),
    help: () => $("#help-dialog").showModal(),
  };
  // The start a relative end ("32O") counts from: the selected event's, else the draft's.
  const startFrame = () => {
    if (!ws.bounds) return null;
    const event = ws.draftKey !== null ? eventByKey(ws.store.getState(), ws.draftKey) : null;
    const value = event ? event.data[ws.bounds.start] : form.draft[ws.bounds.start];
    return Number.isInteger(value) ? value : null;
  };
  ({ inKeyOrder: ws.inKeyOrder } = mountWorkspaceKeys({ commands, player, seek, focusHome: ws.focusHome, setNotice: ws.setNotice, onEndKey: ws.endKeyPressed, frameNow: ws.frameNow, startFrame }));
}

// ---- moment search (where the task kind allows it): a result becomes an interval ------------
async function mountSearch(ws) {
  const { intervalField, form } = ws;
  ws.search = await mountMomentSearch($("#moment-search"), {
    packetId: config.packetId,
    timeline: ws.timeline,
    player: ws.player,
    setNotice: ws.setNotice,
    // The draft's last complete interval, in frames.
    example() {
      const list = (form.draft[intervalField.name] || []).filter(([a, b]) => a !== "" && b !== "");
      if (!list.length) return "Mark an interval first (i / o), then Find similar.";
      const [start, end] = list[list.length - 1];
      return [ws.frameOfTime(start), ws.frameOfTime(end)];
    },
    onUse(hit) {
      if (ws.readOnly()) return;
      ws.changeEvent((data) => ({ ...data, [intervalField.name]: withInterval(data[intervalField.name], hit) }));
      ws.setNotice(`Interval ${hit.start}–${hit.end} s (search result ${hit.rank}) added to the event.`);
    },
  });
}

function mountPresence() {
  connectPacket(config.packetId, {
    onPresence(people) {
      renderPresence($("#presence"), people);
      const me = people.find((p) => p.you);
      $("#tabs-warning").hidden = !(me && me.tabs > 1);
    },
    onState: (state) => renderLiveState($("#presence"), state),
  });
}

// Changes kept from a visit before this ledger was frozen: never dropped unseen.
function mountOrphaned(ws) {
  const orphaned = ws.store.getState().orphaned;
  if (!orphaned) return;
  const box = $("#orphaned-banner");
  box.hidden = false;
  box.replaceChildren(
    `${orphaned.length} change(s) made on an earlier visit were never saved, and this ledger has since been frozen, so they cannot be. Here they are, to copy:`,
    el("pre", { class: "json", text: orphaned.map((op) => JSON.stringify({ [op.kind]: op.data })).join("\n") }),
  );
  const dismiss = el("button", { type: "button", id: "orphaned-dismiss", text: "I have copied them; forget them" });
  dismiss.addEventListener("click", () => {
    ws.store.dispatch({ type: "dismissOrphaned" });
    box.hidden = true;
  });
  box.append(dismiss);
}

function firstPaint(ws, ledger) {
  const state = ws.store.getState();
  ws.renderTable(state);
  ws.renderTimeline(state);
  ws.shown.changed = false;
  ws.renderStatus(state);
  ws.frozenSeen = state.frozen;
  ws.renderFrozen(state);
  if (state.frozen && ledger.frozen_at) $("#frozen-at").textContent = when(ledger.frozen_at);
  if (state.status === SAVE.CONFLICT) ws.openConflict();
  ws.showDraftTitle();
  const kept = state.frozen ? null : ws.drafts.load();
  const typed = state.frozen ? null : ws.drafts.loadTyped();
  if (kept) ws.form.setDraft(kept);
  if (kept || typed) ws.setNotice("The new event you had not added yet is back (Esc clears it, Ctrl+Z undoes that).");
  // The player goes back to where it was; the focus back into a box being typed in.
  const frame = ws.frames.load();
  if (frame !== null && frame < (ws.player.frameCount || 0)) ws.seek(ws.player.seekToFrame(frame));
  if (typed) {
    const box = ws.form.form.querySelector(`[name="${CSS.escape(typed.name)}"]`);
    if (box) {
      box.value = typed.value;
      box.dispatchEvent(new Event("input"));
      box.focus();
    }
  }
  ws.autosave.kick();
  $("#workspace").dataset.state = "ready";
  if (!typed) ws.focusHome();
  window.frameledger.ready = true;
  if (gate.keys.length) ws.setNotice("");
  gate.release();
}

boot(async () => {
  try {
    await main();
  } catch (error) {
    const lost = gate.drop();
    if (lost) document.querySelector("#notice").textContent = `${lost} key(s) typed while the page was loading were not used: it could not load.`;
    throw error;
  }
});
