// The annotator's workspace (DOM wiring). The ledger's logic is in ledger_state.js, the
// saving in autosave.js, the form in event_form.js, the keys in shortcuts.js.
// Only the annotator's own ledger is ever requested: /api/packets/<id>/ledger/.
//
// main() builds one context `ws` (the packet, the store, the player, the form, the
// timeline, and the few values the parts share: draftKey, boundary …) and hands it to
// mount functions, each wiring one part of the page; a part calls another's functions
// through `ws` (ws.select(…), ws.setNotice(…)), looked up when called. The editing (the
// selection, drafts, Enter, Esc, undo) is in workspace_editing.js, the marking and moving
// in workspace_marking.js, the table, timeline and status in workspace_list.js, the
// dialogs in workspace_dialogs.js, the keydown listener in workspace_keys.js.

import { api } from "./api.js";
import { Autosave, SAVE_TIMEOUT_MS } from "./autosave.js";
import { EventForm } from "./event_form.js";
import { FrameKeeper } from "./drafts.js";
import { KeyGate } from "./key_gate.js";
import { KeyScope, afterDialogs, isVisible } from "./key_scope.js";
import { boundaryFields, draftToEvent, formWarnings, previousValue, usageCounts } from "./event_schema.js";
import { SAVE, createStore, eventByKey, events, hasUnsaved, initialState, reducer } from "./ledger_state.js";
import { connectPacket, renderLiveState, renderPresence } from "./live.js";
import { secondStep } from "./navigation.js";
import { mountPlayer } from "./player.js";
import { announceFrames, nameControls } from "./player_access.js";
import { mountNoVideo, stillPlayer } from "./player_still.js";
import { mountMomentSearch, withInterval } from "./moment_search.js";
import { FORM_KEYS, WORKSPACE_SHORTCUTS } from "./shortcuts.js";
import { Timeline } from "./timeline.js";
import { mountConflictDialog, mountFreezeDialog } from "./workspace_dialogs.js";
import { mountCommit, mountSelection, mountUndo } from "./workspace_editing.js";
import { mountWorkspaceKeys } from "./workspace_keys.js";
import { mountStatus, mountTable, mountTimeline } from "./workspace_list.js";
import { mountIntervals, mountMarking, mountSeeking } from "./workspace_marking.js";
import { $, anyDialogOpen, boot, el, pageConfig, shortcutSheet, when } from "./ui.js";

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
  // A key typed as the page opened came before it could take keys: the rest would mean
  // something else ("300i" read as "00i"), so none of them runs.
  onLost({ dropped }) {
    const box = document.querySelector("#notice");
    const rest = dropped ? ` so none of the ${dropped} typed after it was used` : "";
    box.textContent = `A key typed as the page opened came before it could take keys,${rest}: type them again.`;
    box.dataset.tone = "bad";
  },
});
window.frameledger.keyGate = gate;

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
      const { data } = await api.request(request.method, url, {
        body: request.body,
        headers: { "If-Match": ifMatch },
        timeoutMs: SAVE_TIMEOUT_MS,
      });
      return { version: data.version, uid: data.event ? data.event.uid : null, data: data.event ? data.event.data : null };
    },
  });
  window.frameledger.store = store;
  window.frameledger.autosave = autosave;
  return {
    config,
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
    keyScope: new KeyScope({ home: $("#workspace"), user: config.username }),
  };
}

// ---- player, timeline, form -----------------------------------------------------------
async function mountViews(ws) {
  let player;
  // No video by design (an annotation-only import; the server says so, and the page says
  // what to do): nothing is loaded and the controls are disabled. Any other video that does
  // not load gets the load error, and frames can still be typed in.
  nameControls($("#player"));
  if (config.annotationOnly) {
    player = mountNoVideo($("#player"), { frameCount: ws.packet.video.frame_count || 1, reason: "This packet has no video (annotation-only): type the interval's seconds in the form." });
  } else {
    try {
      player = await mountPlayer($("#player"), { urls: config.media, keyboard: false });
    } catch (error) {
      $("#player-error").hidden = false;
      $("#player-error").textContent = `The video could not be loaded (${error.message}); frames can still be typed in.`;
      player = stillPlayer(ws.packet.video.frame_count || 1);
    }
  }
  if (!config.annotationOnly) announceFrames($("#player"), player);
  window.frameledger.player = player;
  const thumbs = config.annotationOnly ? null : await api.get(config.media.thumbsMeta).catch(() => null);
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
      if (player.settled) await player.settled(); // a pause's snap too (not a seek of ours)
    } while (pending !== lastSeek);
    // Never a mark on a picture the player could not confirm (the caller says so, and
    // records nothing): the frame number would not be the frame on screen.
    if (player.confirmed === false) throw new Error(`Nothing marked: ${player.unconfirmedReason}. Step or go to a frame that shows, then mark.`);
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
  // Home for the focus: the player, drawn with a focus ring, where the next event starts
  // (find its start, i); the page itself where there is no player to show.
  ws.focusHome = () => {
    const home = $("#player .fl-player[tabindex]");
    (isVisible(home) ? home : $("#workspace")).focus({ preventScroll: true });
  };
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
  // The notice is shown at once; what a screen reader hears (#announce) is the same text,
  // except for an event added or saved (announceWhenSaved): that is said only once the
  // server has accepted it, never when the save is refused or runs into a conflict (those
  // say so themselves).
  ws.setNotice = (text, tone = "", { announce = true } = {}) => {
    const box = $("#notice");
    box.textContent = text;
    box.dataset.tone = tone;
    if (announce) $("#announce").textContent = text;
  };
  ws.awaitingSave = new Map(); // key -> what to announce once the server has it
  ws.announceWhenSaved = (key, text) => ws.awaitingSave.set(key, text);
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
    announceSaved(ws, state);
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
  // Frozen: the banner that says so (and what comes next) takes the focus.
  mountFreezeDialog({ store, ledgerUrl, afterReset: () => ws.newDraft(), afterFrozen: () => $("#frozen-banner").focus() });
}

// An awaited event is accepted once no operation on it is left to send and the server's
// copy (base) holds it; a refusal of it or a conflict drops the wait unsaid.
function announceSaved(ws, state) {
  for (const [key, text] of ws.awaitingSave) {
    if ((state.rejected && state.rejected.key === key) || state.status === SAVE.CONFLICT) ws.awaitingSave.delete(key);
    else if (!state.pending.some((op) => op.key === key) && state.base.some((event) => event.key === key)) {
      ws.awaitingSave.delete(key);
      $("#announce").textContent = text;
    }
  }
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
  shortcutSheet($("#help-dialog"), WORKSPACE_SHORTCUTS, undefined, { formKeys: FORM_KEYS, setting: ws.keyScope.settingControl() });
  afterDialogs(() => ws.focusHome());
  window.addEventListener("beforeunload", (event) => {
    if (hasUnsaved(store.getState()) || ws.hasDraft()) {
      event.preventDefault();
      event.returnValue = "";
    }
  });
}

// ---- the keys: command name -> what it does (the key table is in shortcuts.js) ----------------
// The commands that need a video to play or step through (refused where there is none).
const NO_VIDEO_COMMANDS = [
  "step-1", "step+1", "step-10", "step+10", "step-second-back", "step-second-forward", "first-frame", "last-frame",
  "prev-keyframe", "next-keyframe", "go-to-frame", "play", "play-half", "shuttle-back", "shuttle-stop", "shuttle-forward",
];
// The commands that change the ledger (refused, with a notice, on a frozen one).
const CHANGING_COMMANDS = [
  "set-start", "set-end", "commit", "edit-fields", "nudge-1", "nudge+1", "nudge-10", "nudge+10", "delete", "undo", "redo", "use-candidate",
];
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
    "edit-fields": () => form.focusFirst(),
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
  // A frozen ledger: the keys that would change it say so instead of doing nothing.
  for (const name of CHANGING_COMMANDS) {
    const run = commands[name];
    commands[name] = () => (ws.readOnly() ? ws.setNotice(`This ledger is frozen: it can no longer change, so “${name.replace(/-/g, " ")}” did nothing. Moving and playing still work.`, "bad") : run());
  }
  // No video by design: the keys that would play, step or seek through it say so instead
  // of doing nothing (typed frames, i / o, Enter and the form work as everywhere).
  if (player.noVideo) {
    for (const name of NO_VIDEO_COMMANDS) {
      commands[name] = () => ws.setNotice("This packet has no video: nothing to play or step through. Type the interval's start and end (seconds) in the form, then Enter.", "bad");
    }
  }
  // The start a relative end ("32O") counts from: the selected event's, else the draft's.
  const startFrame = () => {
    if (!ws.bounds) return null;
    const event = ws.draftKey !== null ? eventByKey(ws.store.getState(), ws.draftKey) : null;
    const value = event ? event.data[ws.bounds.start] : form.draft[ws.bounds.start];
    return Number.isInteger(value) ? value : null;
  };
  ({ inKeyOrder: ws.inKeyOrder } = mountWorkspaceKeys({ commands, player, seek, focusHome: ws.focusHome, setNotice: ws.setNotice, scope: ws.keyScope, onEndKey: ws.endKeyPressed, frameNow: ws.frameNow, startFrame }));
  mountZeroEnter(ws);
}

// "0⏎" goes to frame 0. A typed frame number cannot start with 0 (0 alone zooms the
// timeline to the whole video), so Enter straight after a lone 0 on the page would add the
// draft or say "Fill in the marked fields first"; it goes to frame 0 instead, in key order,
// and says so. A 0 inside a number ("10⏎") is the number's, as before. Listened to in the
// capture phase, before the page's keys, which then do not see that Enter.
function mountZeroEnter(ws) {
  let inNumber = false; // digits typed on the page make a frame number (its first is 1-9)
  let loneZero = false;
  document.addEventListener(
    "keydown",
    (event) => {
      const plain = !event.ctrlKey && !event.metaKey && !event.altKey && ws.keyScope.ownsFocus(event.target) && ws.keyScope.singleKeysOn && !ws.keyScope.standardKey(event) && !anyDialogOpen();
      const zeroEnter = plain && event.key === "Enter" && loneZero;
      loneZero = plain && event.key === "0" && !inNumber;
      if (event.key !== "Backspace") inNumber = plain && /^[0-9]$/.test(event.key) && (inNumber || event.key !== "0");
      if (!zeroEnter || ws.player.noVideo) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      ws.inKeyOrder(() => ws.seek(ws.player.seekToFrame(0)));
      ws.setNotice("Frame 0 (0 then Enter; 0 alone zooms the timeline to the whole video, Home goes to the first frame).");
    },
    true,
  );
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
