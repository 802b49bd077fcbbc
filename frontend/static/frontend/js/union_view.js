// What the adjudicator sees of a union, computed from the API's items. Pure: no DOM.

import { boundaryFields } from "./event_schema.js";

export const ACTIONS = ["take_a", "take_b", "edit", "drop", "unknown"];

export function needsDecision(item) {
  return item.status !== "agreed";
}

export function progress(items) {
  const needed = items.filter(needsDecision);
  return {
    needed: needed.length,
    decided: needed.filter((it) => it.decision).length,
    agreed: items.length - needed.length,
  };
}

// The next item after `position` (wrapping) that needs a decision and has none; null if none.
export function nextUndecided(items, position) {
  const open = items.filter((it) => needsDecision(it) && !it.decision);
  if (!open.length) return null;
  const after = open.find((it) => it.position > position);
  return (after || open[0]).position;
}

// Field-by-field rows for one item: {name, a, b, differs}.
export function comparisonRows(schema, item) {
  const a = item.a_value || {};
  const b = item.b_value || {};
  const differing = new Set(item.differing_fields || []);
  return schema.fields
    .filter((field) => a[field.name] !== undefined || b[field.name] !== undefined)
    .map((field) => ({
      name: field.name,
      a: item.a_value ? a[field.name] : undefined,
      b: item.b_value ? b[field.name] : undefined,
      differs: differing.has(field.name) || (item.a_value !== null && item.b_value !== null && JSON.stringify(a[field.name]) !== JSON.stringify(b[field.name])),
    }));
}

// "Δ start_frame +3 frames" (B minus A).
export function deltaText(name, delta) {
  const sign = delta > 0 ? "+" : delta < 0 ? "−" : "±";
  return `Δ ${name.replace(/_frame$/, "")} ${sign}${Math.abs(delta)} frame${Math.abs(delta) === 1 ? "" : "s"}`;
}

// Where an event sits in frames: its boundaries, else its first interval (seconds -> frames).
export function itemSpan(schema, value, frameOfTime) {
  if (!value) return null;
  const bounds = boundaryFields(schema);
  if (bounds && Number.isInteger(value[bounds.start])) {
    const end = Number.isInteger(value[bounds.end]) ? value[bounds.end] : value[bounds.start];
    return { start: value[bounds.start], end };
  }
  const intervals = schema.fields.find((f) => f.type === "interval_list");
  const list = intervals && value[intervals.name];
  if (Array.isArray(list) && list.length) return { start: frameOfTime(list[0][0]), end: frameOfTime(list[0][1]) };
  return null;
}

// ---- tiers -------------------------------------------------------------------------
// The server's union pairs A and B with the scorer's own matching; from its differing
// fields and boundary deltas each item falls in one tier:
//   agreed            identical
//   within_tolerance  same labels, every boundary within the scorer's tolerance (the
//                     scorer would count either as a match): one key settles it
//   conflict          labels differ, or a boundary is off by more than the tolerance
//   one_sided         only A or only B has it
export const TIERS = ["within_tolerance", "conflict", "one_sided", "agreed"];
export const TIER_LABELS = { agreed: "agreed", within_tolerance: "within tolerance", conflict: "conflict", one_sided: "one-sided" };

export function tierOf(schema, item) {
  if (item.status === "agreed") return "agreed";
  if (!item.a_value || !item.b_value) return "one_sided";
  const bounds = boundaryFields(schema);
  if (!bounds) return "conflict";
  const tolerance = Number.isInteger(schema.tolerance) ? schema.tolerance : 0;
  const labelsDiffer = (item.differing_fields || []).some((name) => name !== bounds.start && name !== bounds.end);
  const deltas = item.boundary_deltas || {};
  const within = [bounds.start, bounds.end].every((name) => Number.isInteger(deltas[name]) && Math.abs(deltas[name]) <= tolerance);
  return !labelsDiffer && within ? "within_tolerance" : "conflict";
}

// A's value with each boundary at the rounded mean of A's and B's (halves round up).
export function meanValue(schema, item) {
  const bounds = boundaryFields(schema);
  const value = JSON.parse(JSON.stringify(item.a_value));
  for (const name of [bounds.start, bounds.end]) value[name] = Math.round((item.a_value[name] + item.b_value[name]) / 2);
  return value;
}

// The decision one key (or a bulk rule) makes for a within-tolerance item:
// rule "a" | "b" | "mean" -> {action, final_value?, rationale}.
export function toleranceDecision(schema, item, rule, rationale = "") {
  const tolerance = Number.isInteger(schema.tolerance) ? schema.tolerance : 0;
  const deltas = Object.entries(item.boundary_deltas || {}).map(([name, d]) => deltaText(name, d)).join(", ");
  const what = { a: "took A", b: "took B", mean: "took the rounded mean of the boundaries" }[rule];
  const text = rationale.trim() || `Same labels, boundaries within the scorer's tolerance of ${tolerance} frames (${deltas}): ${what}.`;
  if (rule === "a") return { action: "take_a", rationale: text };
  if (rule === "b") return { action: "take_b", rationale: text };
  return { action: "edit", final_value: meanValue(schema, item), rationale: text };
}

// Items of a tier that still need a decision.
export function openInTier(schema, items, tier) {
  return items.filter((it) => needsDecision(it) && !it.decision && tierOf(schema, it) === tier);
}
