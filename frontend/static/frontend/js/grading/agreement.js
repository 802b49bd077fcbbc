// The agreement report of a packet: A vs B with the task scorer (both ways), per-field
// Cohen's kappa, the boundary differences as a histogram, and each annotator against
// the published adjudicated version.

import { api } from "../api.js";
import { textEl } from "../ui.js";
import { derivedJobText, isPending, RECHECK_MS } from "./derived_job.js";

const SVG = "http://www.w3.org/2000/svg";

function fmt(value) {
  if (value === null || value === undefined) return "–";
  return typeof value === "number" && !Number.isInteger(value) ? String(Math.round(value * 1e4) / 1e4) : String(value);
}

// Bars of a {delta: count} histogram (deltas in frames), zero marked.
export function histogramSvg(histogram, { width = 420, height = 120, title = "" } = {}) {
  const entries = Object.entries(histogram || {}).map(([k, v]) => [Number(k), v]).sort((a, b) => a[0] - b[0]);
  const root = document.createElementNS(SVG, "svg");
  root.setAttribute("width", width);
  root.setAttribute("height", height + 30);
  root.setAttribute("class", "agreement-histogram");
  root.setAttribute("role", "img");
  root.setAttribute("aria-label", title);
  if (!entries.length) return root;
  const low = Math.min(0, entries[0][0]);
  const high = Math.max(0, entries[entries.length - 1][0]);
  const span = Math.max(1, high - low + 1);
  const top = Math.max(...entries.map(([, v]) => v));
  const barWidth = Math.max(2, (width - 20) / span);
  const x = (delta) => 10 + (delta - low) * ((width - 20) / span);
  for (const [delta, count] of entries) {
    const h = (count / top) * height;
    const rect = document.createElementNS(SVG, "rect");
    rect.setAttribute("x", x(delta));
    rect.setAttribute("y", height - h);
    rect.setAttribute("width", Math.max(1, barWidth - 1));
    rect.setAttribute("height", h);
    rect.setAttribute("data-delta", delta);
    rect.setAttribute("data-count", count);
    const tip = document.createElementNS(SVG, "title");
    tip.textContent = `${delta > 0 ? "+" : ""}${delta} frames: ${count}`;
    rect.append(tip);
    root.append(rect);
  }
  const marks = [[low, "start"], [0, "middle"], [high, "end"]].filter(([value], i, all) => all.findIndex(([v]) => v === value) === i);
  for (const [value, anchor] of marks) {
    const label = document.createElementNS(SVG, "text");
    label.setAttribute("x", x(value) + barWidth / 2);
    label.setAttribute("y", height + 16);
    label.setAttribute("text-anchor", anchor);
    label.textContent = `${value > 0 ? "+" : ""}${value}`;
    root.append(label);
  }
  return root;
}

// Pure: the scorer's unit names its sides "A" and "B" (its first and second ledger);
// a section comparing other things says what they are.
export function unitText(unit, names) {
  return String(unit || "").replace("B minus A", `${names.second} minus ${names.first}`);
}

// Pure: unmatched indices (0-based, in the compared document's order) as a sentence.
export function unmatchedText(indices, name) {
  if (!indices || !indices.length) return `nothing only in ${name}`;
  const numbers = indices.map((i) => `#${i + 1}`).join(", ");
  return `${indices.length} event(s) only in ${name} (${numbers})`;
}

const UNION_NAMES = { agreed: "agreed", conflicting: "conflicting", a_only: "only first", b_only: "only second" };

function comparison(title, result, names) {
  const box = textEl("section", undefined, { class: "card" });
  box.append(textEl("h2", title));
  box.append(
    textEl("p", `reward with ${names.first} as the prediction: ${fmt(result.a_as_prediction.reward)} · with ${names.second} as the prediction: ${fmt(result.b_as_prediction.reward)} · ${result.pairs} matched pair(s)`),
  );
  const union = Object.entries(result.union).map(([k, v]) => `${(UNION_NAMES[k] || k).replace("first", names.first).replace("second", names.second)}: ${v}`);
  box.append(textEl("p", `union: ${union.join(" · ")}`, { class: "muted" }));
  const kappa = textEl("table", undefined, { class: "table kappa" });
  kappa.append(textEl("thead"), textEl("tbody"));
  const head = textEl("tr");
  head.append(textEl("th", "field"), textEl("th", "Cohen's kappa"));
  kappa.tHead.append(head);
  for (const [field, value] of Object.entries(result.kappa || {})) {
    const tr = textEl("tr", undefined, { "data-field": field });
    tr.append(textEl("td", field.replaceAll("_", " ")), textEl("td", fmt(value)));
    kappa.tBodies[0].append(tr);
  }
  box.append(kappa);
  const boundaries = result.boundary_differences;
  if (boundaries) {
    for (const side of ["start", "end"]) {
      const d = boundaries[side];
      box.append(textEl("h3", `${side} boundary differences, ${unitText(boundaries.unit, names)}: n ${d.count}, mean ${fmt(d.mean)}, median ${fmt(d.median)}, max |Δ| ${fmt(d.max_abs)}`, { "data-boundary": side }));
      box.append(histogramSvg(d.histogram, { title: `${side} boundary differences` }));
    }
  }
  if (result.shot_count_differences) {
    const d = result.shot_count_differences;
    box.append(textEl("h3", `shot-count differences (${names.second} minus ${names.first}): n ${d.count}, mean ${fmt(d.mean)}`));
    box.append(histogramSvg(d.histogram, { title: "shot count differences" }));
  }
  box.append(textEl("p", `Unmatched: ${unmatchedText(result.unmatched.a, names.first)} · ${unmatchedText(result.unmatched.b, names.second)}.`, { class: "muted", "data-field": "unmatched" }));
  return box;
}

export async function mountAgreement(root, { packetId }) {
  let report;
  try {
    report = await api.get(`/api/packets/${packetId}/agreement/`);
  } catch (error) {
    root.replaceChildren(textEl("p", error.status === 404 ? "No report: both ledgers must be frozen first." : error.message, { class: "error" }));
    return null;
  }
  if (report.id === null && isPending(report.job)) {
    // Stored by a task after the freeze (or publication) committed: say so, look again.
    root.replaceChildren(textEl("p", derivedJobText(report.job, "The agreement report"), { class: "muted", "data-field": "job" }));
    root.dataset.state = "pending";
    await new Promise((resolve) => setTimeout(resolve, RECHECK_MS));
    return mountAgreement(root, { packetId });
  }
  const a = report.ledgers.A;
  const b = report.ledgers.B;
  const parts = [
    textEl("p", `${report.scorer_id} · A: ${a.annotator} (${a.events} events) · B: ${b.annotator} (${b.events} events)`),
    comparison("Annotator A vs annotator B", report.a_vs_b, { first: "A", second: "B" }),
  ];
  if (report.version) {
    for (const side of ["A", "B"]) {
      const versus = report.versus_version[side];
      const adjudicated = `adjudicated v${report.version.number}`;
      const section = comparison(`Annotator ${side} vs ${adjudicated} — reward ${fmt(versus.reward)}`, versus.agreement, { first: side, second: adjudicated });
      section.dataset.side = side;
      parts.push(section);
    }
  } else {
    parts.push(textEl("p", "No adjudicated version is published yet.", { class: "muted" }));
  }
  if (report.job) {
    // The task failed: this report was computed for this page and not stored.
    parts.unshift(textEl("p", derivedJobText(report.job, "The stored agreement report"), { class: "error", "data-field": "job" }));
  }
  root.replaceChildren(...parts);
  root.dataset.state = "ready";
  return report;
}
