// Per-submission diagnostics drawn over the video timeline, beside the frame-exact player.
//
//   import { mountDiagnostics } from ".../grading/diagnostics.js";
//   const page = await mountDiagnostics(root, { scoreId, urls });   // urls: the player's media urls
//   page.player          -> the FramePlayer (seekToFrame, currentFrame, ...)
//   page.select(itemId)  -> shows the item's details and seeks the player to its first frame
//
// On the score's page, mountDiagnosticsPage(root, config) mounts it and sets
// window.frameledger.player (the player's automation API) and .diagnostics; when it
// cannot load, the page says why (and .loadError holds the message).
//
// Clicking any item (timeline bar or table row) seeks the player to the item's start frame.

import { api } from "../api.js";
import { mountPlayer } from "../player.js";
import { announceFrames, nameControls } from "../player_access.js";
import { FrameWindow, STATUS_LABELS, seekFrame, statusCounts, timelineModel } from "./timeline_data.js";
import { el } from "../ui.js";
import { columnLabel } from "./leaderboard.js";

const SVG = "http://www.w3.org/2000/svg";
const ROW_HEIGHT = 14;
const LANE_GAP = 26;
const LABEL_WIDTH = 110;

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  return node;
}

function fmt(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number" && !Number.isInteger(value)) return String(Math.round(value * 1e6) / 1e6);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function signed(value) {
  return value > 0 ? `+${value}` : String(value);
}

export async function mountDiagnosticsPage(root, config) {
  window.frameledger = window.frameledger || {};
  try {
    const page = await mountDiagnostics(root, config);
    window.frameledger.player = page.player; // the player's automation API
    window.frameledger.diagnostics = page;
  } catch (error) {
    const box = document.getElementById("diag-load-error");
    box.textContent = `The diagnostics could not be loaded: ${error.message}`;
    box.hidden = false;
    window.frameledger.loadError = String(error.message);
    root.dataset.state = "error";
  }
}

export async function mountDiagnostics(root, { scoreId, urls }) {
  const diagnostics = await api.get(`/api/scores/${scoreId}/diagnostics/`);
  const model = timelineModel(diagnostics);
  const byId = new Map(model.items.map((item) => [item.id, item]));
  const pairsByItem = new Map();
  for (const link of model.links) {
    pairsByItem.set(link.ref, link);
    pairsByItem.set(link.pred, link);
  }

  root.querySelector("[data-field=reward]").textContent = fmt(diagnostics.reward);
  root.querySelector("[data-field=reason]").textContent = diagnostics.reason;
  root.querySelector("[data-field=scorer]").textContent = diagnostics.scorer_id;
  root.querySelector("[data-field=label]").textContent = diagnostics.submission.label;
  renderSummary(root.querySelector("#diag-summary"), diagnostics, model);

  nameControls(root.querySelector("#player"));
  const player = await mountPlayer(root.querySelector("#player"), { urls });
  announceFrames(root.querySelector("#player"), player);
  const strip = root.querySelector("#diag-timeline");
  const detail = root.querySelector("#diag-detail");
  let view = new FrameWindow(model.frameCount);
  let selected = null;

  function draw() {
    strip.replaceChildren(drawTimeline(model, view, strip.clientWidth || 900, selected, player.currentFrame));
  }

  async function select(id, { seek = true } = {}) {
    const item = byId.get(id);
    if (!item) return null;
    selected = id;
    renderDetail(detail, item, pairsByItem.get(id), byId);
    for (const row of root.querySelectorAll("tr.selected")) row.classList.remove("selected");
    const row = root.querySelector(`tr[data-item="${id}"]`);
    if (row) row.classList.add("selected");
    const frame = seekFrame(item);
    if (frame !== null && (frame < view.first || frame >= view.first + view.visible)) view = view.centre(frame);
    draw();
    if (seek && frame !== null) {
      const shown = await player.seekToFrame(frame);
      root.dataset.seekedFrame = String(shown);
      return shown;
    }
    return null;
  }

  strip.addEventListener("click", (event) => {
    const target = event.target.closest("[data-item]");
    if (target) select(target.dataset.item);
  });
  strip.addEventListener(
    "wheel",
    (event) => {
      event.preventDefault();
      const rect = strip.getBoundingClientRect();
      const anchor = view.frameAt(event.clientX - rect.left - LABEL_WIDTH, rect.width - LABEL_WIDTH);
      view = view.zoom(event.deltaY < 0 ? 1.5 : 1 / 1.5, anchor);
      draw();
    },
    { passive: false },
  );
  root.querySelector("#diag-zoom-in").addEventListener("click", () => { view = view.zoom(2, player.currentFrame); draw(); });
  root.querySelector("#diag-zoom-out").addEventListener("click", () => { view = view.zoom(0.5, player.currentFrame); draw(); });
  root.querySelector("#diag-zoom-fit").addEventListener("click", () => { view = new FrameWindow(model.frameCount); draw(); });
  player.addEventListener("frame", () => {
    const cursor = strip.querySelector(".diag-cursor");
    if (cursor) {
      const width = (strip.clientWidth || 900) - LABEL_WIDTH;
      const x = LABEL_WIDTH + view.x(player.currentFrame, width);
      cursor.setAttribute("x1", x);
      cursor.setAttribute("x2", x);
    }
  });
  window.addEventListener("resize", draw);

  renderTables(root.querySelector("#diag-tables"), model, select);
  draw();
  root.dataset.state = "ready";
  return { player, model, diagnostics, select };
}

function drawTimeline(model, view, width, selected, currentFrame) {
  const strip = width - LABEL_WIDTH;
  const laneTop = {};
  let y = 18;
  for (const lane of model.lanes) {
    laneTop[lane.key] = y;
    y += lane.rows * ROW_HEIGHT + LANE_GAP;
  }
  const root = svg("svg", { width, height: y, class: "diag-svg", role: "img", "aria-label": "diagnostics timeline" });
  root.append(svg("text", { x: LABEL_WIDTH, y: 12, class: "diag-axis" }));
  root.lastChild.textContent = `frames ${view.first}–${view.first + view.visible - 1} of ${model.frameCount}`;
  for (const lane of model.lanes) {
    const label = svg("text", { x: 4, y: laneTop[lane.key] + 11, class: "diag-lane" });
    label.textContent = lane.title;
    root.append(label);
  }
  const position = new Map();
  for (const item of model.items) {
    if (!Number.isInteger(item.start) || item.row === undefined) continue;
    if (model.unplaced.includes(item)) continue;
    const last = item.end + 1;
    if (last < view.first || item.start >= view.first + view.visible) continue;
    const x0 = LABEL_WIDTH + Math.max(0, view.x(item.start, strip));
    const x1 = LABEL_WIDTH + Math.min(strip, view.x(last, strip));
    const top = laneTop[item.lane] + item.row * ROW_HEIGHT;
    position.set(item.id, { x: (x0 + x1) / 2, top, bottom: top + ROW_HEIGHT - 3 });
    const rect = svg("rect", {
      x: x0,
      y: top,
      width: Math.max(3, x1 - x0),
      height: ROW_HEIGHT - 3,
      class: `diag-item diag-${item.status}${item.id === selected ? " diag-selected" : ""}`,
      "data-item": item.id,
      "data-lane": item.lane,
      "data-index": item.index,
      "data-status": item.status,
      "data-start": item.start,
    });
    const title = svg("title");
    title.textContent = `${item.label} · ${STATUS_LABELS[item.status] || item.status} · frames ${item.start}–${item.end}${item.note ? ` · ${item.note}` : ""}`;
    rect.append(title);
    root.append(rect);
  }
  for (const link of model.links) {
    const a = position.get(link.ref);
    const b = position.get(link.pred);
    if (!a || !b) continue;
    root.insertBefore(
      svg("line", { x1: a.x, y1: a.bottom, x2: b.x, y2: b.top, class: `diag-link diag-link-${link.kind}` }),
      root.firstChild,
    );
  }
  const x = LABEL_WIDTH + view.x(currentFrame || 0, strip);
  root.append(svg("line", { x1: x, x2: x, y1: 14, y2: y, class: "diag-cursor" }));
  return root;
}

function renderSummary(box, diagnostics, model) {
  const rows = Object.entries(diagnostics.summary || {}).filter(([, v]) => typeof v !== "object" || v === null);
  const counts = statusCounts(model);
  box.replaceChildren(
    el("dl", { class: "diag-kv" }, rows.flatMap(([k, v]) => [el("dt", { text: columnLabel(k), title: k }), el("dd", { text: fmt(v) })])),
    el("p", { class: "muted", text: Object.entries(counts).map(([k, v]) => `${k.replace(":", " ").replaceAll("_", " ")}: ${v}`).join(" · ") }),
  );
  if (diagnostics.file_rejection) box.append(el("p", { class: "error", text: diagnostics.file_rejection }));
  if (model.unplaced.length) {
    box.append(el("p", { class: "muted", text: `${model.unplaced.length} item(s) carry no frames and are listed below the timeline only.` }));
  }
}

function renderDetail(box, item, link, byId) {
  const parts = [
    el("h3", { text: `${item.lane === "reference" ? "Ground truth" : "Submission"} #${item.index + 1}: ${item.label}` }),
    el("p", { text: `${STATUS_LABELS[item.status] || item.status}${item.note ? ` — ${item.note}` : ""}` }),
  ];
  if (Number.isInteger(item.start)) {
    parts.push(el("p", { class: "muted", text: `frames ${item.start}–${item.end}${item.placedBy === "reference" ? " (placed at its reference)" : ""}` }));
  }
  if (link) {
    const other = byId.get(item.lane === "reference" ? link.pred : link.ref);
    const pair = link.pair;
    const what = link.kind === "matched" ? "Paired by the scorer with" : `Nearest (${link.kind}):`;
    parts.push(el("p", { text: `${what} ${other.lane === "reference" ? "ground truth" : "submission"} #${other.index + 1} (${other.label})` }));
    if (pair.start_delta !== undefined && pair.start_delta !== null) {
      parts.push(el("p", { text: `boundary deltas (submission − ground truth): start ${signed(pair.start_delta)}, end ${signed(pair.end_delta)} frames` }));
    }
    if (pair.iou !== undefined) parts.push(el("p", { text: `IoU ${fmt(pair.iou)}` }));
    if (pair.differing_fields && pair.differing_fields.length) parts.push(el("p", { text: `differs in ${pair.differing_fields.join(", ")}` }));
    if (pair.field_differences) parts.push(fieldTable(pair));
    if (pair.shot_alignment) parts.push(shotTable(pair));
  }
  parts.push(el("details", {}, [el("summary", { text: "event (JSON)" }), el("pre", { class: "diag-json", text: JSON.stringify(item.event, null, 2) })]));
  box.replaceChildren(...parts);
  box.dataset.item = item.id;
}

function fieldTable(pair) {
  const head = el("p", {
    text: `credit ${pair.event_credit} = min(summary ${pair.summary_accuracy}, shots ${pair.shot_accuracy}: ${pair.shot_atoms}/${pair.shot_denominator} atoms) — bottleneck: ${pair.bottleneck}`,
  });
  if (!pair.field_differences.length) return el("div", {}, [head, el("p", { class: "muted", text: "all nine summary fields correct" })]);
  const rows = pair.field_differences.map((d) => el("tr", {}, [el("td", { text: d.field }), el("td", { text: fmt(d.predicted) }), el("td", { text: fmt(d.reference) })]));
  return el("div", {}, [
    head,
    el("table", { class: "table diag-fields" }, [
      el("thead", {}, [el("tr", {}, ["summary field", "submission", "ground truth"].map((t) => el("th", { text: t })))]),
      el("tbody", {}, rows),
    ]),
  ]);
}

function shotTable(pair) {
  const token = (t) => (t ? `${fmt(t.stroke)} → ${fmt(t.direction)}` : "—");
  const rows = pair.shot_alignment.map((step) =>
    el("tr", { class: step.atoms === 2 ? "diag-ok" : step.atoms === 1 ? "diag-half" : "diag-miss" }, [
      el("td", { text: step.pred === null ? "" : `#${step.pred}` }),
      el("td", { text: token(step.pred_token) }),
      el("td", { text: step.ref === null ? "" : `#${step.ref}` }),
      el("td", { text: token(step.ref_token) }),
      el("td", { text: String(step.atoms) }),
    ]),
  );
  return el("table", { class: "table diag-shots" }, [
    el("thead", {}, [el("tr", {}, ["", "submission shot", "", "ground-truth shot", "atoms"].map((t) => el("th", { text: t })))]),
    el("tbody", {}, rows),
  ]);
}

function renderTables(box, model, select) {
  const sections = [];
  for (const lane of model.lanes) {
    const items = model.items.filter((item) => item.lane === lane.key);
    const rows = items.map((item) =>
      el("tr", { "data-item": item.id, class: `diag-row diag-${item.status}` }, [
        el("td", { text: String(item.index + 1) }),
        el("td", { text: item.label }),
        el("td", { text: Number.isInteger(item.start) ? `${item.start}–${item.end}` : "–" }),
        el("td", { text: STATUS_LABELS[item.status] || item.status }),
        el("td", { text: item.note }),
      ]),
    );
    const table = el("table", { class: "table diag-list" }, [
      el("thead", {}, [el("tr", {}, ["#", "event", "frames", "status", "why"].map((t) => el("th", { text: t })))]),
      el("tbody", {}, rows),
    ]);
    table.addEventListener("click", (event) => {
      const row = event.target.closest("tr[data-item]");
      if (row) select(row.dataset.item);
    });
    sections.push(el("h3", { text: `${lane.title} (${items.length})` }), table);
  }
  box.replaceChildren(...sections);
}
