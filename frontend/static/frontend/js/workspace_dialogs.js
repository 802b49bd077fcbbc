// The workspace's two dialogs (DOM): the conflict dialog (this ledger changed elsewhere:
// re-apply the unsaved changes on the newer version, field by field, choosing where both
// changed the same field; or discard them with a second click)
// and the freeze dialog (attestation, enabled once every change is saved).
//
//   const { openConflict } = mountConflictDialog({ store, schema, loadLedger, setNotice, afterRebase, afterReset });
//   mountFreezeDialog({ store, ledgerUrl, afterReset, afterFrozen });

import { api } from "./api.js";
import { formatValue, summarize } from "./event_schema.js";
import { SAVE, alreadyOnServer, events, rebasePreview } from "./ledger_state.js";
import { $, el, when } from "./ui.js";

export function mountConflictDialog({ store, schema, loadLedger, setNotice, afterRebase, afterReset }) {
  const byName = Object.fromEntries(schema.fields.map((f) => [f.name, f]));
  const show = (name, value) => formatValue(byName[name], value);
  const fieldList = (names, data) => names.map((n) => `${n.replace(/_/g, " ")} ${show(n, data && data[n])}`).join(", ");

  // One line per unsaved change: what it is, the fields this page changed, and (once the
  // server's version is known) the fields changed there that re-applying keeps.
  function changeLines(state, preview) {
    const rows = preview ? preview.changes : state.pending.map((op) => ({ ...op, mine: [], kept: [] }));
    return rows.map((op) => {
      const before = state.base.find((e) => e.key === op.key);
      const what = op.kind === "add" ? "add" : op.kind === "update" ? "change" : "delete";
      let text = `${what}: ${summarize(schema, op.data || (before && before.data) || op.base)}`;
      if (op.kind === "update" && op.mine.length) text += ` — your change: ${fieldList(op.mine, op.data)}`;
      if (op.kind === "update" && op.kept && op.kept.length) text += `; kept from the newer version: ${fieldList(op.kept, op.theirs)}`;
      return el("li", { dataset: { op: String(op.id) }, text });
    });
  }

  // A field both changed (or a delete of an event changed elsewhere): both values, and
  // the annotator chooses; re-applying waits until every one is chosen.
  function conflictRows(conflicts) {
    return conflicts.map((c) => {
      const name = `conflict-${c.id}-${c.field ?? ""}`;
      const label = c.field === null ? `delete ${summarize(schema, c.base)} (changed elsewhere to ${summarize(schema, c.theirs)})` : `${c.field.replace(/_/g, " ")} of ${summarize(schema, c.event) || "the event"}`; // c.base is the field's value
      const option = (side, text) =>
        el("label", { class: "conflict-choice" }, [el("input", { type: "radio", name, value: side, dataset: { choice: `${c.id}:${c.field ?? ""}` } }), ` ${text}`]);
      return el("li", { class: "conflict", dataset: { field: c.field ?? "" } }, [
        el("strong", { text: `Both changed: ${label}` }),
        el("div", {}, [
          option("theirs", c.field === null ? "keep the event as changed elsewhere" : `the newer version's: ${show(c.field, c.theirs)}`),
          " ",
          option("mine", c.field === null ? "delete it anyway" : `yours: ${show(c.field, c.mine)}`),
        ]),
      ]);
    });
  }

  function chosen() {
    const choices = {};
    for (const input of document.querySelectorAll("#conflict-choices input[type=radio]:checked")) choices[input.dataset.choice] = input.value;
    return choices;
  }

  function renderReady(dialog) {
    const open = dialog.conflicts ? dialog.conflicts.length - Object.keys(chosen()).length : 0;
    $("#conflict-reapply").disabled = !dialog.server || Boolean(dialog.server.frozen) || open > 0;
    $("#conflict-choose").textContent = open > 0 ? `Choose a value for ${open} field(s) both changed, then re-apply.` : "";
  }

  // A 412 after a save whose answer was lost (an outage, a timeout): when the server holds
  // every unsaved change already, there is nothing to choose: the page takes the server's
  // version and says so, without the dialog. Anything else opens the dialog.
  async function openConflict() {
    if (!$("#conflict-dialog").open) {
      try {
        const { ledger: server } = await loadLedger();
        if (store.getState().status === SAVE.CONFLICT && alreadyOnServer(store.getState(), server)) {
          store.dispatch({ type: "rebase", ledger: server, choices: {} });
          afterRebase();
          setNotice(`Your changes were already saved: the server has them (version ${server.version}).`);
          return;
        }
      } catch {
        // unreachable again: the dialog says so and offers to try again
      }
    }
    return showConflict();
  }

  async function showConflict() {
    const dialog = $("#conflict-dialog");
    const list = $("#conflict-changes");
    const state = store.getState();
    dialog.server = null;
    dialog.conflicts = null;
    list.replaceChildren(...changeLines(state, null));
    $("#conflict-choices").replaceChildren();
    $("#conflict-server").textContent = "Loading the ledger as it is on the server…";
    $("#conflict-reapply").disabled = true;
    $("#conflict-discard").disabled = true;
    $("#conflict-discard").dataset.armed = "";
    if (!dialog.open) dialog.showModal();
    try {
      const { ledger: server } = await loadLedger();
      const preview = rebasePreview(store.getState(), server);
      dialog.server = server;
      dialog.conflicts = preview.conflicts;
      list.replaceChildren(...changeLines(store.getState(), preview));
      $("#conflict-choices").replaceChildren(...conflictRows(preview.conflicts));
      $("#conflict-server").textContent = `On the server this ledger is now at version ${server.version} with ${server.events.length} event(s)${server.frozen ? " and is frozen" : ""} (this page last saw version ${state.version}). Re-applying carries over only the fields you changed.`;
      renderReady(dialog);
      $("#conflict-discard").disabled = false;
    } catch (error) {
      $("#conflict-server").textContent = `The server could not be reached (${error.message}). Your changes are kept; try again.`;
      $("#conflict-retry").hidden = false;
    }
  }

  $("#conflict-choices").addEventListener("change", () => renderReady($("#conflict-dialog")));
  $("#conflict-retry").addEventListener("click", () => {
    $("#conflict-retry").hidden = true;
    openConflict();
  });
  $("#resolve-conflict").addEventListener("click", openConflict);
  $("#conflict-reapply").addEventListener("click", () => {
    const dialog = $("#conflict-dialog");
    store.dispatch({ type: "rebase", ledger: dialog.server, choices: chosen() });
    const summary = store.getState().lastRebase;
    dialog.close();
    afterRebase();
    const parts = [`${summary.reapplied} re-applied`, `${summary.alreadySaved} already there`, `${summary.restored} restored`];
    if (summary.keptFromServer) parts.push(`${summary.keptFromServer} change(s) from the newer version kept`);
    if (summary.conflicts.length) parts.push(`${summary.conflicts.length} field(s) both changed, as you chose`);
    setNotice(`Your changes were re-applied on version ${dialog.server.version}: ${parts.join(", ")}.`);
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
    afterReset();
    setNotice("Loaded the server's version; your unsaved changes were discarded.");
  });
  return { openConflict };
}

export function mountFreezeDialog({ store, ledgerUrl, afterReset, afterFrozen = () => {} }) {
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
      afterReset();
      afterFrozen();
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
}
