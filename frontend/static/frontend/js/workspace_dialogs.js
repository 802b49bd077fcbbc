// The workspace's two dialogs (DOM): the conflict dialog (this ledger changed elsewhere:
// re-apply the unsaved changes on the newer version, or discard them with a second click)
// and the freeze dialog (attestation, enabled once every change is saved).
//
//   const { openConflict } = mountConflictDialog({ store, schema, loadLedger, setNotice, afterRebase, afterReset });
//   mountFreezeDialog({ store, ledgerUrl, afterReset });

import { api } from "./api.js";
import { summarize } from "./event_schema.js";
import { SAVE, events } from "./ledger_state.js";
import { $, el, when } from "./ui.js";

export function mountConflictDialog({ store, schema, loadLedger, setNotice, afterRebase, afterReset }) {
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
    afterRebase();
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
    afterReset();
    setNotice("Loaded the server's version; your unsaved changes were discarded.");
  });
  return { openConflict };
}

export function mountFreezeDialog({ store, ledgerUrl, afterReset }) {
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
