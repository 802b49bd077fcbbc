// The annotator's workspace (DOM wiring). The ledger's logic is in ledger_state.js, the
// saving in autosave.js, the form in event_form.js, the keys in shortcuts.js.
// Only the annotator's own ledger is ever requested: /api/packets/<id>/ledger/.

import { api } from "./api.js";
import { Autosave } from "./autosave.js";
import { EventForm } from "./event_form.js";
import { DraftKeeper, isEmptyDraft } from "./drafts.js";
import { boundaryFields, breakPointWarnings, draftToEvent, emptyDraft, eventToDraft, snapInterval, snapToGrid, summarize } from "./event_schema.js";
import { SAVE, createStore, eventByKey, events, hasUnsaved, initialState, orderedEvents, reducer } from "./ledger_state.js";
import { connectPacket, renderPresence } from "./live.js";
import { boundaryTarget, keyframeTarget, secondStep } from "./navigation.js";
import { RATES, mountPlayer } from "./player.js";
import { WORKSPACE_SHORTCUTS } from "./shortcuts.js";
import { Timeline } from "./timeline.js";
import { VirtualRows } from "./virtual_rows.js";
import { mountConflictDialog, mountFreezeDialog } from "./workspace_dialogs.js";
import { mountWorkspaceKeys } from "./workspace_keys.js";
import { $, boot, el, isField, pageConfig, shortcutSheet, when } from "./ui.js";

const config = pageConfig();
const packetUrl = `/api/packets/${config.packetId}/`;
const ledgerUrl = `${packetUrl}ledger/`;

window.frameledger = window.frameledger || {};

function newKey() {
  return globalThis.crypto && crypto.randomUUID ? `new-${crypto.randomUUID()}` : `new-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

// A stand-in when the video cannot be played: editing still works, frames typed by hand.
function stillPlayer(frameCount) {
  let current = 0;
  const target = new EventTarget();
  return Object.assign(target, {
    get currentFrame() { return current; },
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
  const schema = packet.task_kind.schema;
  const bounds = boundaryFields(schema);
  const intervalField = schema.fields.find((f) => f.type === "interval_list") || null;
  $("#task-kind").textContent = packet.task_kind.name;
  $("#instructions").textContent = packet.instructions || "No instructions.";

  // ---- state and saving -------------------------------------------------------------
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

  // ---- player, timeline, form -------------------------------------------------------
  let player;
  try {
    player = await mountPlayer($("#player"), { urls: config.media, keyboard: false });
  } catch (error) {
    $("#player-error").hidden = false;
    $("#player-error").textContent = `The video could not be loaded (${error.message}); frames can still be typed in.`;
    player = stillPlayer(packet.video.frame_count || 1);
  }
  window.frameledger.player = player;
  const thumbs = await api.get(config.media.thumbsMeta).catch(() => null);
  const timeline = new Timeline($("#timeline"), { frameCount: player.frameCount || packet.video.frame_count || 1, thumbs });
  const form = new EventForm($("#event-form"), schema, { idPrefix: "ev" });

  let draftKey = null; // the selected event the form edits; null: a new event
  let reAddKey = null; // the key of a refused new event, reused when it is added again
  let boundary = "start"; // the boundary nudges move
  let lastAdded = null;
  // The new event being written: kept in local storage per ledger; kept aside while an
  // existing event is selected; one cleared by Esc comes back with Ctrl+Z.
  const drafts = new DraftKeeper(localStorage, `frameledger:draft:${config.packetId}:${config.username}`);
  let stashedDraft = null;
  let clearedDraft = null;
  const keepDraft = () => {
    if (draftKey === null && !readOnly()) drafts.save(form.draft);
  };
  const hasDraft = () => draftKey === null && !isEmptyDraft(form.draft);

  // Seeks are asynchronous; commands that read the frame wait for the latest one, so a
  // key pressed right after a step uses the frame that step lands on.
  let lastSeek = Promise.resolve();
  const seek = (promise) => {
    lastSeek = Promise.resolve(promise).catch(() => undefined);
    return lastSeek;
  };
  const frameNow = async () => {
    let pending;
    do {
      pending = lastSeek;
      await pending;
    } while (pending !== lastSeek);
    return player.currentFrame;
  };
  const clampFrame = (n) => Math.max(0, Math.min((player.frameCount || 1) - 1, n));
  const readOnly = () => store.getState().frozen;
  const focusHome = () => $("#workspace").focus({ preventScroll: true });

  function timeOfFrame(frame) {
    return player.clock ? player.clock.ptsOf(frame) : frame / ((packet.video.frame_rate[0] || 1) / (packet.video.frame_rate[1] || 1));
  }

  function frameOfTime(seconds) {
    return player.clock ? player.clock.frameAtTime(seconds) : Math.round(seconds * (packet.video.frame_rate[0] / packet.video.frame_rate[1]));
  }

  function startFrameOf(data) {
    if (!data) return null;
    if (bounds && Number.isInteger(data[bounds.start])) return data[bounds.start];
    if (intervalField && Array.isArray(data[intervalField.name]) && data[intervalField.name].length) return frameOfTime(data[intervalField.name][0][0]);
    return null;
  }

  function endFrameOf(data) {
    if (bounds && Number.isInteger(data[bounds.end])) return data[bounds.end];
    if (intervalField && Array.isArray(data[intervalField.name]) && data[intervalField.name].length) {
      return frameOfTime(data[intervalField.name][0][1]);
    }
    return startFrameOf(data);
  }

  // ---- selection and drafts ---------------------------------------------------------
  function showDraftTitle() {
    const title = $("#form-title");
    if (readOnly()) title.textContent = "Frozen ledger (read-only)";
    else title.textContent = draftKey === null ? "New event" : "Selected event (changes save automatically)";
    $("#boundary-hint").textContent = bounds ? `Nudge moves the ${boundary} (${boundary === "start" ? bounds.start : bounds.end}); b switches.` : "";
  }

  function select(key, { seek: seekTo = true } = {}) {
    const event = key === null ? null : eventByKey(store.getState(), key);
    if (draftKey === null && event && hasDraft()) stashedDraft = form.draft; // back on Esc
    store.dispatch({ type: "select", key: event ? key : null });
    const wasNew = draftKey === null;
    draftKey = event ? key : null;
    if (event && seekTo) boundary = "start"; // the player shows the start: nudges move it
    if (event) form.setDraft(eventToDraft(schema, event.data), { keepTyped: false });
    else if (!wasNew || !hasDraft()) {
      form.setDraft(stashedDraft || emptyDraft(schema), { keepTyped: false });
      stashedDraft = null;
    }
    form.clearErrors();
    setNotice("");
    showDraftTitle();
    renderSelection();
    const start = event ? startFrameOf(event.data) : null;
    if (seekTo && start !== null) seek(player.seekToFrame(start));
  }

  function newDraft() {
    select(null, { seek: false });
  }

  function commit() {
    if (readOnly()) return;
    const active = document.activeElement;
    if (active && form.form.contains(active) && (active instanceof HTMLInputElement || active instanceof HTMLSelectElement)) {
      if (active.dataset.typeahead === undefined) active.dispatchEvent(new Event("change"));
    }
    const result = draftToEvent(schema, form.draft);
    if (result.errors) {
      form.showErrors(result.errors);
      setNotice("Fill in the marked fields first.", "bad");
      return;
    }
    if (draftKey !== null) {
      store.dispatch({ type: "update", key: draftKey, data: result.data });
      setNotice("Event updated.");
      focusHome();
      return;
    }
    const key = reAddKey || newKey();
    reAddKey = null;
    lastAdded = key;
    store.dispatch({ type: "add", key, data: result.data });
    // The playhead on the new event's end steps to the next frame, where a following
    // event starts when events are contiguous (segmentation): i marks it.
    if (bounds && player.currentFrame === result.data[bounds.end] && result.data[bounds.end] + 1 < (player.frameCount || 0)) {
      seek(player.seekToFrame(result.data[bounds.end] + 1));
    }
    form.setDraft(emptyDraft(schema), { keepTyped: false });
    drafts.clear();
    clearedDraft = null;
    form.clearErrors();
    setNotice("Event added.");
    focusHome();
  }

  // Apply `change` (data -> data) to the selected event, or to the new draft.
  function changeEvent(change) {
    if (readOnly()) return null;
    if (draftKey !== null) {
      const event = eventByKey(store.getState(), draftKey);
      if (!event) return null;
      const data = change(JSON.parse(JSON.stringify(event.data)));
      if (!data) return null;
      store.dispatch({ type: "update", key: draftKey, data });
      form.setDraft(eventToDraft(schema, data));
      return data;
    }
    const result = change(form.draft);
    if (result) form.setDraft(result);
    keepDraft();
    return result;
  }

  async function setBoundary(which) {
    const frame = await frameNow();
    if (bounds) {
      boundary = which;
      const data = changeEvent((d) => ({ ...d, [bounds[which]]: frame }));
      // A new event with both ends marked, in order: on to its first empty label (the verb).
      if (which === "end" && draftKey === null && data && Number.isInteger(data[bounds.start]) && data[bounds.start] <= frame) form.focusFirstEmpty();
    } else if (intervalField) {
      markInterval(which, timeOfFrame(frame));
    }
    showDraftTitle();
  }

  // i / o on a moment query: the time marked is kept exactly (marks) and the interval is
  // the snapped one, shown with the grid; never an empty interval.
  const marks = { start: null, end: null };
  function markInterval(which, t) {
    const step = intervalField.grid_step;
    const duration = packet.video.duration || undefined;
    marks[which] = t;
    let note = "";
    changeEvent((data) => {
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
        if (!snapped.interval) {
          note = snapped.note;
          return null;
        }
        [last[0], last[1]] = snapped.interval;
        note = snapped.note;
      } else {
        last[which === "start" ? 0 : 1] = snapToGrid(t, step, duration);
        if (start !== null && end !== null) note = "the end is before the start";
      }
      return { ...data, [intervalField.name]: list };
    });
    const shown = `${which} ${t.toFixed(2)} s → ${snapToGrid(t, step, duration)} s on the ${step} s grid`;
    setNotice(note ? `${shown}; ${note}.` : `${shown}.`, note.startsWith("no ") || note.startsWith("the end") ? "bad" : "");
  }

  function nudge(k) {
    if (!bounds) return;
    const name = bounds[boundary];
    const data = changeEvent((d) => (Number.isInteger(d[name]) ? { ...d, [name]: clampFrame(d[name] + k) } : null));
    if (data) seek(player.seekToFrame(data[name]));
  }

  async function jump(direction) {
    const frame = await frameNow();
    const state = store.getState();
    const list = orderedEvents(state, bounds && bounds.start).filter((e) => startFrameOf(e.data) !== null);
    if (!list.length) return;
    let index;
    const at = list.findIndex((e) => e.key === draftKey);
    if (at >= 0) index = at + direction;
    else {
      index = direction > 0 ? list.findIndex((e) => startFrameOf(e.data) > frame) : list.map((e) => startFrameOf(e.data) < frame).lastIndexOf(true);
    }
    if (index < 0 || index >= list.length) return;
    select(list[index].key);
  }

  // ---- seeking and playing keys ---------------------------------------------------------
  // h: play at 0.5x, and back to the rate before on the next h (or when pausing with h).
  let rateBeforeHalf = null;
  async function playHalf() {
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
  }

  // J / K / L: L plays forward, faster on each press (1x, 1.5x, 2x); K pauses; J pauses and
  // steps back one second per press (a browser's <video> cannot play backwards).
  async function shuttle(direction) {
    if (!player.play) return;
    if (direction === 0) return seek(player.pause());
    if (direction < 0) {
      await player.pause();
      return seek(player.step(-secondStep(player.clock)));
    }
    const rate = player.video ? player.video.playbackRate : 1;
    if (player.paused) {
      if (rate < 1) player.setRate(1);
      return player.play();
    }
    const faster = RATES.find((r) => r > rate);
    if (faster) player.setRate(faster);
  }

  function eventBoundaries() {
    const frames = [];
    for (const event of events(store.getState())) frames.push(startFrameOf(event.data), endFrameOf(event.data));
    return frames;
  }

  async function boundaryTargetNow(direction) {
    return boundaryTarget(eventBoundaries(), await frameNow(), direction);
  }

  async function keyframeTargetNow(direction) {
    const keyframes = player.clock ? player.clock.keyframes : [];
    return keyframeTarget(keyframes, await frameNow(), direction);
  }

  async function jumpTo(target) {
    const frame = await target;
    if (frame === null || frame === undefined) {
      setNotice("Nothing further that way.");
      return;
    }
    await seek(player.seekToFrame(frame));
  }

  // g: the player's "Go to" box; Enter there seeks and gives the keys back to the page.
  function goToBox() {
    const box = $("#player .fl-goto");
    if (!box) return;
    box.value = "";
    box.focus();
  }

  // Esc: leave a field; else back from a selected event to the new one; else clear the
  // new event's draft, which Ctrl+Z brings back (it is never lost silently).
  function escape() {
    if (isField(document.activeElement)) {
      focusHome();
      return;
    }
    if (draftKey !== null) {
      newDraft();
      return;
    }
    if (hasDraft() && !readOnly()) {
      clearedDraft = form.draft;
      form.setDraft(emptyDraft(schema), { keepTyped: false });
      form.clearErrors();
      drafts.clear();
      setNotice("Draft cleared. Ctrl+Z brings it back.");
    }
  }

  function undoRedo(type) {
    if (type === "undo" && clearedDraft && draftKey === null && !hasDraft()) {
      form.setDraft(clearedDraft);
      clearedDraft = null;
      keepDraft();
      setNotice("The cleared draft is back.");
      return;
    }
    store.dispatch({ type });
    const state = store.getState();
    const key = state.selected;
    if (key !== null && eventByKey(state, key)) select(key, { seek: false });
    else newDraft();
  }

  // ---- rendering ----------------------------------------------------------------------
  function setNotice(text, tone = "") {
    const box = $("#notice");
    box.textContent = text;
    box.dataset.tone = tone;
  }

  // The table and the timeline are redrawn only when the events change (not on every
  // save status or selection), and the table holds only the rows in view.
  const tableRows = new VirtualRows($("#ledger-scroll"), $("#ledger-table tbody"), { rowHeight: 28 });
  let shownEvents = { base: null, pending: null, list: [], index: new Map() };
  function currentList(state) {
    if (shownEvents.base !== state.base || shownEvents.pending !== state.pending) {
      const list = orderedEvents(state, bounds && bounds.start);
      shownEvents = { base: state.base, pending: state.pending, list, index: new Map(list.map((e, i) => [e.key, i])), changed: true };
    }
    return shownEvents;
  }

  function renderSelection() {
    const key = store.getState().selected;
    timeline.setSelected(key);
    for (const row of document.querySelectorAll("#ledger-table tbody tr")) row.classList.toggle("selected", row.dataset.key === key);
    const index = shownEvents.index.get(key);
    if (index !== undefined) tableRows.reveal(index);
  }

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
    row.addEventListener("click", () => select(event.key));
    return row;
  }

  function renderTable(state) {
    const shown = currentList(state);
    if (!shown.changed) return false;
    tableRows.setRows(shown.list, eventRow);
    $("#event-count").textContent = `(${shown.list.length})`;
    if (lastAdded) {
      const index = shown.index.get(lastAdded);
      if (index !== undefined) {
        tableRows.reveal(index);
        tableRows.rowOf(index)?.classList.add("just-added");
      }
      lastAdded = null;
    }
    return true;
  }

  function renderTimeline(state) {
    const items = shownEvents.list.map((event) => ({
      key: event.key,
      start: startFrameOf(event.data),
      end: endFrameOf(event.data),
      label: summarize(schema, event.data),
      className: event.unsaved ? "unsaved" : "",
    }));
    timeline.setLanes([{ id: "own", label: "Your events", className: "lane-own", items }]);
    timeline.setSelected(state.selected);
  }

  let countdown = null;
  function renderStatus(state) {
    const box = $("#save-status");
    const unsaved = state.pending.length;
    box.dataset.status = state.status;
    const suffix = unsaved ? ` (${unsaved} unsaved)` : "";
    let text;
    clearInterval(countdown);
    if (state.status === SAVE.SAVED) text = "All changes saved";
    else if (state.status === SAVE.SAVING) text = `Saving…${suffix}`;
    else if (state.status === SAVE.FAILED) {
      const update = () => {
        const wait = autosave.retryAt ? Math.max(0, Math.ceil((autosave.retryAt - Date.now()) / 1000)) : null;
        box.textContent = `${state.message}${wait !== null ? ` Retrying in ${wait} s.` : ""}${suffix}`;
      };
      update();
      countdown = setInterval(update, 1000);
    } else if (state.status === SAVE.CONFLICT) text = `Conflict: this ledger changed elsewhere.${suffix}`;
    else if (state.status === SAVE.INVALID) text = `Not saved: ${state.message}`;
    else if (state.status === SAVE.FROZEN) text = "Frozen";
    if (text !== undefined) box.textContent = text;
    $("#retry-save").hidden = state.status !== SAVE.FAILED;
    $("#resolve-conflict").hidden = state.status !== SAVE.CONFLICT;
  }

  function renderFrozen(state) {
    const frozen = state.frozen;
    $("#frozen-banner").hidden = !frozen;
    $("#freeze-open").hidden = frozen;
    if (frozen) {
      $("#frozen-sha").textContent = state.sha256 || "";
      form.setReadOnly(true);
    }
    document.body.classList.toggle("read-only", frozen);
    showDraftTitle();
  }

  function renderRejected(state) {
    const rejected = state.rejected;
    if (!rejected) return;
    // The server refused an event: put it back in the form with the error on its field.
    if (rejected.kind === "add") {
      store.dispatch({ type: "select", key: null });
      draftKey = null;
      reAddKey = rejected.key;
    } else {
      draftKey = eventByKey(state, rejected.key) ? rejected.key : null;
      if (draftKey === null) reAddKey = rejected.key;
      store.dispatch({ type: "select", key: draftKey });
    }
    form.setDraft(eventToDraft(schema, rejected.data));
    form.showErrors({ [rejected.field || "event"]: rejected.message });
    showDraftTitle();
    setNotice(`The server refused this event: ${rejected.message}. Fix the marked field and press Enter.`, "bad");
  }

  let frozenSeen = null;
  store.subscribe((state, previous) => {
    if (renderTable(state)) {
      renderTimeline(state);
      shownEvents.changed = false;
    }
    renderStatus(state);
    if (state.frozen !== frozenSeen) {
      frozenSeen = state.frozen;
      renderFrozen(state);
    }
    // Selecting re-dispatches: do it after this notification round.
    if (state.rejected && state.rejected !== previous.rejected) queueMicrotask(() => renderRejected(store.getState()));
    if (state.status === SAVE.CONFLICT && previous.status !== SAVE.CONFLICT) openConflict();
  });

  // ---- dialogs ----------------------------------------------------------------------
  const { openConflict } = mountConflictDialog({
    store,
    schema,
    loadLedger,
    setNotice,
    afterRebase: () => select(draftKey !== null && eventByKey(store.getState(), draftKey) ? draftKey : null, { seek: false }),
    afterReset: () => newDraft(),
  });
  mountFreezeDialog({ store, ledgerUrl, afterReset: () => newDraft() });

  // ---- wiring -------------------------------------------------------------------------
  form.addEventListener("change", () => {
    if (readOnly()) return;
    if (draftKey !== null) {
      const result = draftToEvent(schema, form.draft);
      if (result.errors) form.showErrors(result.errors);
      else store.dispatch({ type: "update", key: draftKey, data: result.data });
    }
    keepDraft();
    const warnings = schema.family === "break_points" ? breakPointWarnings(form.draft) : [];
    $("#form-warnings").textContent = warnings.join(" · ");
  });
  form.addEventListener("commit", commit);
  timeline.addEventListener("seek", (e) => seek(player.seekToFrame(e.detail.frame)));
  timeline.addEventListener("select", (e) => select(e.detail.key));
  player.addEventListener("frame", (e) => timeline.setPlayhead(e.detail.frame));
  $("#retry-save").addEventListener("click", () => autosave.retryNow());
  $("#help-open").addEventListener("click", () => $("#help-dialog").showModal());
  shortcutSheet($("#help-dialog"), WORKSPACE_SHORTCUTS);
  window.addEventListener("beforeunload", (event) => {
    if (hasUnsaved(store.getState()) || hasDraft()) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  const commands = {
    "step-1": () => seek(player.step(-1)),
    "step+1": () => seek(player.step(1)),
    "step-10": () => seek(player.step(-10)),
    "step+10": () => seek(player.step(10)),
    "first-frame": () => seek(player.seekToFrame(0)),
    "last-frame": () => seek(player.seekToFrame(player.frameCount - 1)),
    play: () => player.togglePlay(),
    "play-half": () => playHalf(),
    "shuttle-back": () => shuttle(-1),
    "shuttle-stop": () => shuttle(0),
    "shuttle-forward": () => shuttle(1),
    "step-second-back": () => seek(player.step(-secondStep(player.clock))),
    "step-second-forward": () => seek(player.step(secondStep(player.clock))),
    "prev-boundary": () => jumpTo(boundaryTargetNow(-1)),
    "next-boundary": () => jumpTo(boundaryTargetNow(1)),
    "prev-keyframe": () => jumpTo(keyframeTargetNow(-1)),
    "next-keyframe": () => jumpTo(keyframeTargetNow(1)),
    "go-to-frame": () => goToBox(),
    "set-start": () => setBoundary("start"),
    "set-end": () => setBoundary("end"),
    commit,
    "edit-fields": () => !readOnly() && form.focusFirst(),
    "prev-event": () => jump(-1),
    "next-event": () => jump(1),
    "toggle-boundary": () => {
      boundary = boundary === "start" ? "end" : "start";
      showDraftTitle();
    },
    "nudge-1": () => nudge(-1),
    "nudge+1": () => nudge(1),
    "nudge-10": () => nudge(-10),
    "nudge+10": () => nudge(10),
    deselect: () => escape(),
    delete: () => {
      if (draftKey !== null && !readOnly()) {
        store.dispatch({ type: "remove", key: draftKey });
        newDraft();
        setNotice("Event deleted (Ctrl+Z brings it back).");
      }
    },
    undo: () => undoRedo("undo"),
    redo: () => undoRedo("redo"),
    "zoom-in": () => timeline.zoomIn(),
    "zoom-out": () => timeline.zoomOut(),
    "zoom-fit": () => timeline.fit(),
    "save-now": () => autosave.retryNow(),
    help: () => $("#help-dialog").showModal(),
  };

  mountWorkspaceKeys({ commands, player, seek, focusHome, setNotice });

  connectPacket(config.packetId, {
    onPresence(people) {
      renderPresence($("#presence"), people);
      const me = people.find((p) => p.you);
      $("#tabs-warning").hidden = !(me && me.tabs > 1);
    },
  });

  // Changes kept from a visit before this ledger was frozen: never dropped unseen.
  if (store.getState().orphaned) {
    const orphaned = store.getState().orphaned;
    const box = $("#orphaned-banner");
    box.hidden = false;
    box.replaceChildren(
      `${orphaned.length} change(s) made on an earlier visit were never saved, and this ledger has since been frozen, so they cannot be. Here they are, to copy:`,
      el("pre", { class: "json", text: orphaned.map((op) => JSON.stringify({ [op.kind]: op.data })).join("\n") }),
    );
    const dismiss = el("button", { type: "button", id: "orphaned-dismiss", text: "I have copied them; forget them" });
    dismiss.addEventListener("click", () => {
      store.dispatch({ type: "dismissOrphaned" });
      box.hidden = true;
    });
    box.append(dismiss);
  }

  // First paint.
  const state = store.getState();
  renderTable(state);
  renderTimeline(state);
  shownEvents.changed = false;
  renderStatus(state);
  frozenSeen = state.frozen;
  renderFrozen(state);
  if (state.frozen && ledger.frozen_at) $("#frozen-at").textContent = when(ledger.frozen_at);
  if (state.status === SAVE.CONFLICT) openConflict();
  showDraftTitle();
  const kept = state.frozen ? null : drafts.load();
  if (kept) {
    form.setDraft(kept);
    setNotice("The new event you had not added yet is back (Esc clears it, Ctrl+Z undoes that).");
  }
  autosave.kick();
  $("#workspace").dataset.state = "ready";
  focusHome();
  window.frameledger.ready = true;
}

boot(main);
