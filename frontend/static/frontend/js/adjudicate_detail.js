// The adjudication page's decision panel (DOM, part of adjudicate.js): the selected item,
// A beside B with the differing fields and boundary deltas, and the decision form (the
// action, the rationale, the final value's editor). Recording a decision is in
// adjudicate_decisions.js.

import { emptyDraft, eventToDraft, formatValue } from "./event_schema.js";
import { $, el } from "./ui.js";
import { TIER_LABELS, comparisonRows, needsDecision, tierOf } from "./union_view.js";

// ---- the selected item: A beside B, the decision form ---------------------------------------
export function mountDetail(adj) {
  const { schema, fieldsByName } = adj;
  adj.renderDetail = () => {
    const item = adj.items.find((it) => it.position === adj.selected);
    $("#item-detail").hidden = !item;
    $("#no-item").hidden = Boolean(item);
    if (!item) return;
    $("#item-title").textContent = `Item ${item.position + 1}`;
    const within = tierOf(schema, item) === "within_tolerance";
    $("#item-status").className = `status ${within ? "within" : item.status}`;
    $("#item-status").textContent = within ? TIER_LABELS.within_tolerance : item.status.replace("_", " ");
    $("#compare tbody").replaceChildren(
      ...comparisonRows(schema, item).map((row) =>
        el("tr", { class: row.differs ? (within ? "differs within" : "differs") : "", dataset: { field: row.name } }, [
          el("th", { text: row.name.replace(/_/g, " ") }),
          el("td", { class: "a", text: formatValue(fieldsByName[row.name], row.a) }),
          el("td", { class: "b", text: formatValue(fieldsByName[row.name], row.b) }),
        ]),
      ),
    );
    $("#item-deltas").replaceChildren(...adj.deltaNodes(item));
    const current = item.decision;
    adj.formSeen = { position: item.position, replaces: current ? current.decided_at : null, action: current ? current.action : null, rationale: current ? current.rationale : "" };
    $("#current-decision").textContent = current
      ? `Decided: ${current.action.replace("_", " ")} by ${current.decided_by} — “${current.rationale}”`
      : needsDecision(item) ? "No decision yet." : "Agreed by both annotators: no decision needed (you may still override it).";
    if (!adj.canDecide) {
      $("#decision-form").hidden = true;
      return;
    }
    for (const input of document.querySelectorAll("#decision-form input[name=action]")) {
      input.checked = current ? input.value === current.action : false;
      input.disabled = (input.value === "take_a" && !item.a_value) || (input.value === "take_b" && !item.b_value);
    }
    $("#rationale").value = current ? current.rationale : "";
    adj.clearDecisionErrors();
    adj.showEditor();
    $("#tier-hint").hidden = tierOf(schema, item) !== "within_tolerance" || Boolean(current);
  };

  // The form holds something other than the decision it was drawn from.
  adj.formDirty = () => {
    const seen = adj.formSeen;
    if (!adj.canDecide || !seen) return false;
    return (adj.chosenAction() || null) !== seen.action || $("#rationale").value.trim() !== (seen.rationale || "").trim();
  };

  adj.chosenAction = () => {
    const checked = document.querySelector("#decision-form input[name=action]:checked");
    return checked ? checked.value : null;
  };

  adj.showEditor = () => {
    const item = adj.items.find((it) => it.position === adj.selected);
    const editing = adj.chosenAction() === "edit";
    $("#edit-box").hidden = !editing;
    if (editing && item) {
      const start = (item.decision && item.decision.action === "edit" && item.decision.final_value) || item.a_value || item.b_value;
      adj.editForm.setDraft(start ? eventToDraft(schema, start) : emptyDraft(schema));
    }
  };

  adj.clearDecisionErrors = () => {
    $("#rationale-error").textContent = "";
    $("#action-error").textContent = "";
    $("#rationale").classList.remove("invalid");
    if (adj.editForm) adj.editForm.clearErrors();
  };
}
