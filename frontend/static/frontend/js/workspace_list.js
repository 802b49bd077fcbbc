// The workspace's views of the ledger (DOM, part of workspace.js): the event table (only
// the rows in view), the timeline's lane, the save status, the frozen state and the
// server's refusals. Each mount function takes the page's context `ws` and adds its
// render functions to it.

import { eventToDraft, summarize } from "./event_schema.js";
import { SAVE, eventByKey, orderedEvents } from "./ledger_state.js";
import { VirtualRows } from "./virtual_rows.js";
import { $, el } from "./ui.js";

// ---- the ledger table -------------------------------------------------------------------
// The table and the timeline are redrawn only when the events change (not on every save
// status or selection), and the table holds only the rows in view.
export function mountTable(ws) {
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
export function mountTimeline(ws) {
  const { schema, timeline, player } = ws;
  ws.renderTimeline = (state) => {
    const items = ws.shown.list.map((event) => {
      const [start, end, label] = [ws.startFrameOf(event.data), ws.endFrameOf(event.data), summarize(schema, event.data)];
      // The bar's name for assistive technology (timeline.js): what, which frames, saved or not.
      const title = `${label} \u00b7 frames ${start}\u2013${end} \u00b7 ${event.unsaved ? "not saved yet" : "saved"}`;
      return { key: event.key, start, end, label, title, className: event.unsaved ? "unsaved" : "" };
    });
    timeline.setLanes([{ id: "own", label: "Your events", className: "lane-own", items }]);
    timeline.setSelected(state.selected);
  };
  timeline.addEventListener("seek", (e) => ws.seek(player.seekToFrame(e.detail.frame)));
  timeline.addEventListener("select", (e) => e.detail.lane !== "search" && ws.select(e.detail.key));
  player.addEventListener("frame", (e) => timeline.setPlayhead(e.detail.frame));
}

// ---- the save status, the frozen state, refusals --------------------------------------------
export function mountStatus(ws) {
  const { store, schema, form, autosave } = ws;
  let countdown = null;
  ws.renderStatus = (state) => {
    const box = $("#save-status");
    const kept = state.status === SAVE.FAILED || state.status === SAVE.CONFLICT;
    const suffix = state.pending.length ? ` (${state.pending.length} unsaved${kept ? ", kept in this browser" : ""})` : "";
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
      $("#next-step").textContent = step && step.who !== ws.config.username ? step.text : "the adjudicator, once both ledgers are frozen: adjudicate and publish";
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
