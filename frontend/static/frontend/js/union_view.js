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
