// The workspace's editing (DOM wiring, part of workspace.js): the selection and the new
// event's draft (kept in local storage), Enter (add or save) and Esc, undo / redo and
// Delete. Each mount function takes the page's context `ws` and adds its functions to it.

import { DraftKeeper, isEmptyDraft } from "./drafts.js";
import { draftToEvent, emptyDraft, eventToDraft } from "./event_schema.js";
import { eventByKey } from "./ledger_state.js";
import { $, isField } from "./ui.js";

function newKey() {
  return globalThis.crypto && crypto.randomUUID ? `new-${crypto.randomUUID()}` : `new-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}


// ---- selection and drafts -------------------------------------------------------------
// The new event being written: kept in local storage per ledger; kept aside while an
// existing event is selected; one cleared by Esc comes back with Ctrl+Z.
export function mountSelection(ws) {
  const { store, schema, form, bounds } = ws;
  ws.drafts = new DraftKeeper(localStorage, `frameledger:draft:${ws.config.packetId}:${ws.config.username}`);
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
export function mountCommit(ws) {
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
      ws.setNotice("Event updated.", "", { announce: false });
      ws.announceWhenSaved(ws.draftKey, "Event updated and saved.");
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
    $("#event-form").scrollTop = 0; // the next event's first fields in view (a long form: tennis)
    ws.setNotice("Event added.", "", { announce: false });
    ws.announceWhenSaved(key, "Event added and saved.");
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
export function mountUndo(ws) {
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
