// Recording decisions on the adjudication page (DOM): the decision form's Ctrl+Enter,
// a / b / m on within-tolerance items, the bulk rule, and a decision recorded meanwhile
// in another tab (or by another adjudicator).
//
//   mountDeciding(adj); mountSettling(adj);
//
// - While a decision is being recorded the page's keys wait (adj.gate, key_gate.js); the
//   next item is selected and painted before they run, so a key acts on the item on
//   screen. A decision key (a / b / m, Ctrl+Enter) pressed meanwhile is refused with a
//   notice, never kept: the item it would decide was not on screen when it was pressed.
// - Every decision names the decision the page showed (`replaces`: its decided_at, null for
//   none). One recorded since then is refused by the server (412); the page shows theirs
//   beside this one and the adjudicator chooses: keep theirs, or record this one instead.
// - a / b / m decide at once, so they never replace a decision: an item already decided
//   is changed only through the form (1–5, r, Ctrl+Enter).

import { api } from "./api.js";
import { draftToEvent } from "./event_schema.js";
import { $ } from "./ui.js";
import { nextUndecided, openInTier, tierOf, toleranceDecision } from "./union_view.js";

const actionName = (action) => action.replace("_", " ");

// Resolves once what was drawn before it is painted: two animation frames (a hidden tab
// gets no frames; a tenth of a second is then enough).
const painted = () =>
  new Promise((resolve) => {
    setTimeout(resolve, 100);
    requestAnimationFrame(() => requestAnimationFrame(resolve));
  });
const describe = (decision) => `${actionName(decision.action)} — “${decision.rationale}”`;

export function mountDeciding(adj) {
  const { schema, canDecide, packetUrl, gate } = adj;
  adj.decide = async () => {
    if (!canDecide || adj.selected === null) return;
    adj.clearDecisionErrors();
    const action = adj.chosenAction();
    const rationale = $("#rationale").value.trim();
    if (!action) {
      $("#action-error").textContent = "Choose take A, take B, edit, drop or unknown.";
      return;
    }
    if (!rationale) {
      $("#rationale-error").textContent = "A rationale is required: say what in the video settles it.";
      $("#rationale").classList.add("invalid");
      $("#rationale").focus();
      return;
    }
    const body = { action, rationale };
    if (action === "edit") {
      const result = draftToEvent(schema, adj.editForm.draft);
      if (result.errors) {
        adj.editForm.showErrors(result.errors);
        return;
      }
      body.final_value = result.data;
    }
    await adj.send(adj.selected, body);
  };

  // The decision the form was drawn from (what a new one replaces).
  adj.shownToken = (position) => {
    const item = adj.items.find((it) => it.position === position);
    const seen = adj.formSeen && adj.formSeen.position === position ? adj.formSeen : null;
    if (seen) return seen.replaces;
    return item && item.decision ? item.decision.decided_at : null;
  };

  // Sends one decision; the list gets the focus back (the next keys are shortcuts, never
  // typed into the rationale) and the next undecided item is selected, all before the keys
  // typed meanwhile run.
  adj.send = async (position, body, { replaces = adj.shownToken(position) } = {}) => {
    $("#decide").disabled = true;
    gate.hold(`Recording the decision on item ${position + 1}`);
    $("#key-refused").hidden = true;
    let ok = false;
    try {
      const { data } = await api.request("POST", `${packetUrl}union/items/${position}/decision/`, { body: { ...body, replaces } });
      ok = true;
      $("#decision-conflict").hidden = true;
      adj.replace(data);
      const next = nextUndecided(adj.items, position);
      if (next !== null) {
        adj.select(next);
        adj.focusHome(); // once the next item is drawn: the list in view
      } else {
        adj.renderDetail();
        $("#publish").focus();
      }
    } catch (error) {
      if (error.status === 412) await adj.showConflict(position, body);
      else if (error.field === "rationale") {
        $("#rationale-error").textContent = error.message;
        $("#rationale").classList.add("invalid");
      } else if (error.field === "action" || !error.field) {
        $("#action-error").textContent = error.message;
      } else {
        adj.editForm.markError(error.field, error.message);
      }
    } finally {
      $("#decide").disabled = false;
      const dropped = ok ? 0 : gate.drop();
      if (dropped) $("#live-notice").textContent = `The decision on item ${position + 1} was not recorded, so the ${dropped} key(s) typed meanwhile were not used.`;
      await painted(); // the next item is on screen before a key typed meanwhile runs
      gate.release();
    }
  };

  // Another decision was recorded on this item since the page showed it: both side by side.
  adj.showConflict = async (position, body) => {
    let theirs = null;
    try {
      const union = await api.get(`${packetUrl}union/?start=${position}&limit=1`);
      theirs = union.items.find((it) => it.position === position) || null;
    } catch {
      theirs = null;
    }
    const mine = describe(body);
    const box = $("#decision-conflict");
    box.hidden = false;
    box.dataset.position = String(position);
    box.pending = body;
    if (theirs) {
      adj.keepForm = true; // the item is updated; the form keeps what was typed here
      adj.replace(theirs);
      adj.keepForm = false;
    }
    const decision = theirs && theirs.decision;
    box.theirs = decision ? decision.decided_at : null;
    $("#decision-conflict-text").textContent = decision
      ? `${decision.decided_by} recorded a decision on item ${position + 1} after this page showed it: ${describe(decision)}. Yours, not recorded: ${mine}.`
      : `The decision this page showed on item ${position + 1} was withdrawn meanwhile. Yours, not recorded: ${mine}.`;
    $("#decision-record-mine").focus();
  };

  $("#decision-keep-theirs").addEventListener("click", () => {
    const box = $("#decision-conflict");
    box.hidden = true;
    adj.formSeen = null;
    adj.renderDetail();
    $("#live-notice").textContent = `Kept the decision recorded on item ${Number(box.dataset.position) + 1}; yours was not recorded.`;
    adj.focusHome();
  });
  $("#decision-record-mine").addEventListener("click", () => {
    const box = $("#decision-conflict");
    box.hidden = true;
    adj.send(Number(box.dataset.position), box.pending, { replaces: box.theirs });
  });
}

// ---- within tolerance: one key, or the bulk rule ----------------------------------------------
export function mountSettling(adj) {
  const { schema, canDecide, packetUrl } = adj;
  // a / b / m on an undecided within-tolerance item: decided at once (the rationale box,
  // if filled, is the rationale; else the rule is written down with the deltas).
  adj.settleWithinTolerance = async (rule) => {
    const item = adj.items.find((it) => it.position === adj.selected);
    if (!canDecide || !item) return;
    if (tierOf(schema, item) !== "within_tolerance") {
      $("#action-error").textContent = "a / b / m settle items within the scorer's tolerance; for this one choose with 1–5.";
      return;
    }
    if (item.decision) {
      $("#action-error").textContent = `Item ${item.position + 1} is already decided (${actionName(item.decision.action)} by ${item.decision.decided_by}); a / b / m do not change a decision. To change it: choose 1–5, write why (r), Ctrl+Enter.`;
      return;
    }
    adj.clearDecisionErrors();
    await adj.send(item.position, toleranceDecision(schema, item, rule, $("#rationale").value), { replaces: null });
  };

  // The bulk rule: every undecided within-tolerance item, one request each, in order; one
  // decided elsewhere meanwhile stops it (412) and is left as it is.
  adj.settleAll = async (rule) => {
    const open = openInTier(schema, adj.items, "within_tolerance");
    const buttons = document.querySelectorAll("#tolerance-bulk button");
    for (const button of buttons) button.disabled = true;
    let done = 0;
    try {
      for (const item of open) {
        const body = { ...toleranceDecision(schema, item, rule), replaces: null };
        const { data } = await api.request("POST", `${packetUrl}union/items/${item.position}/decision/`, { body });
        adj.items = adj.items.map((it) => (it.position === data.position ? data : it));
        adj.renderRow(data);
        done += 1;
        $("#bulk-progress").textContent = `${done} of ${open.length} decided…`;
      }
      $("#bulk-progress").textContent = `${done} item(s) decided by the rule.`;
    } catch (error) {
      $("#bulk-progress").textContent = `Stopped after ${done} of ${open.length}: ${error.message}`;
    } finally {
      for (const button of buttons) button.disabled = false;
      adj.renderTimeline({ finalOnly: true });
      adj.renderProgress();
      adj.renderTiers();
      adj.renderDetail();
      adj.focusHome();
    }
  };
}
