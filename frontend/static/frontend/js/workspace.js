// The annotator's workspace (DOM wiring). The ledger's logic is in ledger_state.js, the
// saving in autosave.js, the form in event_form.js, the keys in shortcuts.js.
// Only the annotator's own ledger is ever requested: /api/packets/<id>/ledger/.

import { api } from "./api.js";
import { Autosave } from "./autosave.js";
import { EventForm } from "./event_form.js";
import { boundaryFields, breakPointWarnings, draftToEvent, emptyDraft, eventToDraft, snapToGrid, summarize } from "./event_schema.js";
import { SAVE, createStore, eventByKey, events, hasUnsaved, initialState, orderedEvents, reducer } from "./ledger_state.js";
import { connectPacket, renderPresence } from "./live.js";
import { mountPlayer } from "./player.js";
import { WORKSPACE_SHORTCUTS, commandFor, keymap } from "./shortcuts.js";
import { Timeline } from "./timeline.js";
import { $, boot, anyDialogOpen, el, isField, pageConfig, shortcutSheet, when } from "./ui.js";

const config = pageConfig();
const packetUrl = `/api/packets/${config.packetId}/`;
const ledgerUrl = `${packetUrl}ledger/`;
const KEYS = keymap(WORKSPACE_SHORTCUTS);

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
  let thumbs = null;
  try {
    const response = await fetch(config.media.thumbsMeta, { credentials: "same-origin" });
    if (response.ok) thumbs = await response.json();
  } catch {
    thumbs = null;
  }
  const timeline = new Timeline($("#timeline"), { frameCount: player.frameCount || packet.video.frame_count || 1, thumbs });
  const form = new EventForm($("#event-form"), schema, { idPrefix: "ev" });

  let draftKey = null; // the selected event the form edits; null: a new event
  let reAddKey = null; // the key of a refused new event, reused when it is added again
  let boundary = "start"; // the boundary nudges move
  let lastAdded = null;

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
    store.dispatch({ type: "select", key: event ? key : null });
    draftKey = event ? key : null;
    if (event && seekTo) boundary = "start"; // the player shows the start: nudges move it
    form.setDraft(event ? eventToDraft(schema, event.data) : emptyDraft(schema));
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
    form.setDraft(emptyDraft(schema));
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
    return result;
  }

  async function setBoundary(which) {
    const frame = await frameNow();
    if (bounds) {
      boundary = which;
      changeEvent((data) => ({ ...data, [bounds[which]]: frame }));
    } else if (intervalField) {
      const step = intervalField.grid_step;
      const t = snapToGrid(timeOfFrame(frame), step, packet.video.duration || undefined);
      changeEvent((data) => {
        const list = (data[intervalField.name] || []).map((p) => [...p]);
        const last = list[list.length - 1];
        if (which === "start") {
          if (!last || (last[0] !== "" && last[1] !== "")) list.push([t, ""]);
          else last[0] = t;
        } else if (!last) list.push(["", t]);
        else last[1] = t;
        return { ...data, [intervalField.name]: list };
      });
    }
    showDraftTitle();
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

  function undoRedo(type) {
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

  function renderSelection() {
    const key = store.getState().selected;
    timeline.setSelected(key);
    for (const row of document.querySelectorAll("#ledger-table tbody tr")) row.classList.toggle("selected", row.dataset.key === key);
  }

  function renderTable(state) {
    const body = $("#ledger-table tbody");
    const list = orderedEvents(state, bounds && bounds.start);
    body.replaceChildren(
      ...list.map((event, i) => {
        const row = el("tr", { dataset: { key: event.key }, class: [event.key === state.selected ? "selected" : "", event.unsaved ? "unsaved" : ""].join(" ") }, [
          el("td", { text: String(i + 1) }),
          el("td", { class: "num", text: bounds ? String(event.data[bounds.start] ?? "—") : "" }),
          el("td", { class: "num", text: bounds ? String(event.data[bounds.end] ?? "—") : "" }),
          el("td", { class: "summary", text: summarize(schema, event.data) }),
          el("td", {}, event.unsaved ? el("span", { class: "pill saving", text: "unsaved" }) : el("span", { class: "pill ok", text: "saved" })),
        ]);
        row.addEventListener("click", () => select(event.key));
        return row;
      }),
    );
    $("#event-count").textContent = `(${list.length})`;
    if (lastAdded) {
      body.querySelector(`tr[data-key="${CSS.escape(lastAdded)}"]`)?.classList.add("just-added");
      lastAdded = null;
    }
  }

  function renderTimeline(state) {
    const items = events(state).map((event) => ({
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
    renderTable(state);
    renderTimeline(state);
    renderStatus(state);
    if (state.frozen !== frozenSeen) {
      frozenSeen = state.frozen;
      renderFrozen(state);
    }
    // Selecting re-dispatches: do it after this notification round.
    if (state.rejected && state.rejected !== previous.rejected) queueMicrotask(() => renderRejected(store.getState()));
    if (state.status === SAVE.CONFLICT && previous.status !== SAVE.CONFLICT) openConflict();
  });

  // ---- conflict -----------------------------------------------------------------------
  async function openConflict() {
    const dialog = $("#conflict-dialog");
    const list = $("#conflict-changes");
    const state = store.getState();
    list.replaceChildren(
      ...state.pending.map((op) => {
        const before = state.base.find((e) => e.key === op.key);
        const what = op.kind === "add" ? "add" : op.kind === "update" ? "change" : "delete";
        return el("li", { text: `${what}: ${summarize(schema, op.data || (before && before.data))}` });
      }),
    );
    $("#conflict-server").textContent = "Loading the ledger as it is on the server…";
    $("#conflict-reapply").disabled = true;
    $("#conflict-discard").disabled = true;
    $("#conflict-discard").dataset.armed = "";
    if (!dialog.open) dialog.showModal();
    try {
      const { ledger: server } = await loadLedger();
      dialog.server = server;
      $("#conflict-server").textContent = `On the server this ledger is now at version ${server.version} with ${server.events.length} event(s)${server.frozen ? " and is frozen" : ""} (this page last saw version ${state.version}).`;
      $("#conflict-reapply").disabled = Boolean(server.frozen);
      $("#conflict-discard").disabled = false;
    } catch (error) {
      $("#conflict-server").textContent = `The server could not be reached (${error.message}). Your changes are kept; try again.`;
      $("#conflict-retry").hidden = false;
    }
  }

  $("#conflict-retry").addEventListener("click", () => {
    $("#conflict-retry").hidden = true;
    openConflict();
  });
  $("#resolve-conflict").addEventListener("click", openConflict);
  $("#conflict-reapply").addEventListener("click", () => {
    const dialog = $("#conflict-dialog");
    store.dispatch({ type: "rebase", ledger: dialog.server });
    const summary = store.getState().lastRebase;
    dialog.close();
    select(draftKey !== null && eventByKey(store.getState(), draftKey) ? draftKey : null, { seek: false });
    setNotice(`Your changes were re-applied on version ${dialog.server.version}: ${summary.reapplied} re-applied, ${summary.alreadySaved} already there, ${summary.restored} restored.`);
  });
  $("#conflict-discard").addEventListener("click", () => {
    const button = $("#conflict-discard");
    const dialog = $("#conflict-dialog");
    if (!button.dataset.armed) {
      button.dataset.armed = "1";
      button.textContent = `Really discard ${store.getState().pending.length} change(s)?`;
      return;
    }
    button.textContent = "Discard my changes, use the server's version";
    store.dispatch({ type: "discard", ledger: dialog.server });
    dialog.close();
    newDraft();
    setNotice("Loaded the server's version; your unsaved changes were discarded.");
  });

  // ---- freeze -------------------------------------------------------------------------
  function renderFreezeDialog() {
    const state = store.getState();
    const text = $("#attestation").value.trim();
    const unsaved = state.pending.length;
    $("#freeze-count").textContent = `${events(state).length} event(s)`;
    $("#freeze-wait").textContent = unsaved ? `Waiting for ${unsaved} change(s) to be saved…` : "";
    $("#attestation-count").textContent = `${text.length} / 20 characters`;
    $("#freeze-confirm").disabled = unsaved > 0 || text.length < 20 || state.status === SAVE.CONFLICT;
  }
  $("#freeze-open").addEventListener("click", () => {
    $("#attestation-error").textContent = "";
    $("#freeze-dialog").showModal();
    renderFreezeDialog();
    $("#attestation").focus();
  });
  $("#attestation").addEventListener("input", renderFreezeDialog);
  store.subscribe(() => $("#freeze-dialog").open && renderFreezeDialog());
  $("#freeze-cancel").addEventListener("click", () => $("#freeze-dialog").close());
  $("#freeze-confirm").addEventListener("click", async () => {
    const state = store.getState();
    const button = $("#freeze-confirm");
    button.disabled = true;
    $("#attestation-error").textContent = "";
    try {
      const { data } = await api.request("POST", `${ledgerUrl}freeze/`, {
        body: { attestation: $("#attestation").value },
        headers: { "If-Match": `"ledger-${state.ledgerId}-v${state.version}"` },
      });
      store.dispatch({ type: "frozen", sha256: data.sha256, version: data.version });
      $("#frozen-at").textContent = when(data.frozen_at);
      $("#freeze-dialog").close();
      newDraft();
    } catch (error) {
      if (error.status === 412) {
        $("#freeze-dialog").close();
        store.dispatch({ type: "conflict", message: error.message });
      } else {
        $("#attestation-error").textContent = error.message || "The ledger could not be frozen.";
      }
      renderFreezeDialog();
    }
  });

  // ---- wiring -------------------------------------------------------------------------
  form.addEventListener("change", () => {
    if (readOnly()) return;
    if (draftKey !== null) {
      const result = draftToEvent(schema, form.draft);
      if (result.errors) form.showErrors(result.errors);
      else store.dispatch({ type: "update", key: draftKey, data: result.data });
    }
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
    if (hasUnsaved(store.getState())) {
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
    "play-half": () => {
      player.setRate(0.5);
      player.togglePlay();
    },
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
    deselect: () => {
      if (isField(document.activeElement)) focusHome();
      else newDraft();
    },
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

  // Commands that read the frame or the selection run one after another, in key order
  // (each waits for the seeks before it); moving and focusing run at once, so held keys
  // coalesce and typing after "e" lands in the field.
  const ORDERED = new Set([
    "set-start", "set-end", "commit", "prev-event", "next-event", "toggle-boundary",
    "nudge-1", "nudge+1", "nudge-10", "nudge+10", "delete", "undo", "redo",
  ]);
  let chain = Promise.resolve();
  document.addEventListener("keydown", (event) => {
    if (anyDialogOpen()) return;
    const target = event.target;
    if (target instanceof HTMLButtonElement && (event.key === "Enter" || event.key === " ")) return;
    const command = commandFor(KEYS, event, { inField: isField(target) });
    if (!command || !commands[command]) return;
    event.preventDefault();
    if (ORDERED.has(command)) chain = chain.then(() => commands[command]()).catch((error) => setNotice(String(error), "bad"));
    else commands[command]();
  });

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
  renderStatus(state);
  frozenSeen = state.frozen;
  renderFrozen(state);
  if (state.frozen && ledger.frozen_at) $("#frozen-at").textContent = when(ledger.frozen_at);
  if (state.status === SAVE.CONFLICT) openConflict();
  showDraftTitle();
  autosave.kick();
  $("#workspace").dataset.state = "ready";
  focusHome();
  window.frameledger.ready = true;
}

boot(main);
