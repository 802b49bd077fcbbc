// The leaderboard of one (ground-truth version, scorer): sortable by any column, with
// CSV / JSON downloads and links to each submission's diagnostics. The API serves it a
// page at a time (ranked over every row); "Show more rows" under the table, or scrolling
// it into view, appends the next page.
//
//   mountLeaderboard(root, { versionId, scorerId })  -> { reload(), sortBy(column), more() }

import { api } from "../api.js";
import { when } from "../ui.js";
import { derivedJobText, isPending, RECHECK_MS } from "./derived_job.js";

// Column and metric names as people read them (the API and the CSV keep the scorer's keys).
const LABELS = {
  rank: "#",
  kind: "row",
  scored_at: "scored",
  n_predicted: "predicted",
  identity_matches_in_quality_alignment: "identity matches",
  exact_event_matches_ordered: "exact, in order",
  hierarchical_precision: "hier. precision",
  hierarchical_recall: "hier. recall",
  false_identity_events: "false identities",
  duplicate_identity_events: "duplicate identities",
  invalid_predicted_actions: "invalid predictions",
  verb_and_boundary_matches: "verb + boundary matches",
  mean_iou: "mean IoU",
  raw_quality: "raw quality",
};

// Pure: "r1_at_0.5" -> "R1 @ 0.5", "false_identity_events" -> "false identity events".
export function columnLabel(key) {
  if (LABELS[key]) return LABELS[key];
  const recall = /^r(\d+)_at_(.+)$/.exec(key);
  if (recall) return `R${recall[1]} @ ${recall[2]}`;
  return key.replaceAll("_", " ");
}

// Not shown as columns: hashes and ids (in the CSV and JSON), and the row kind (the row's
// colour and the label's tooltip say it), so that the metrics fit 1280 px.
const HIDDEN = ["sha256", "run", "result", "submission", "kind"];

// Pure: the date and time as on every page ("1 Dec 2026, 16:43 UTC"); the ISO value is the tooltip.
export function shortWhen(iso) {
  return when(iso);
}

function cell(text, attrs = {}) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "–" : String(text);
  for (const [k, v] of Object.entries(attrs)) td.setAttribute(k, v);
  return td;
}

function number(value) {
  return typeof value === "number" && !Number.isInteger(value) ? String(Math.round(value * 1e6) / 1e6) : value;
}

export function mountLeaderboard(root, { versionId, scorerId = "" }) {
  let sort = "-reward";
  let ranked = [];
  let references = [];
  let current = null; // the first page's body (columns, count, version) and the next page's URL
  let loading = null;
  const table = root.querySelector("table");
  const status = root.querySelector("[data-field=status]");
  const moreButton = document.createElement("button");
  moreButton.type = "button";
  moreButton.dataset.action = "more-rows";
  moreButton.hidden = true;
  moreButton.addEventListener("click", () => more());
  table.closest(".lb-scroll").after(moreButton);
  // Scrolling to the end of the table asks for the next page too.
  if ("IntersectionObserver" in window) {
    new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !moreButton.hidden) more();
    }).observe(moreButton);
  }

  function query() {
    const params = new URLSearchParams({ sort });
    if (scorerId) params.set("scorer", scorerId);
    return params.toString();
  }

  async function reload() {
    let board;
    try {
      board = await api.get(`/api/versions/${versionId}/leaderboard/?${query()}`);
    } catch (error) {
      status.textContent = error.message;
      return null;
    }
    current = board;
    ranked = board.rows;
    references = board.references || [];
    const scorerQuery = scorerId ? `?scorer=${encodeURIComponent(scorerId)}` : "";
    root.querySelector("[data-link=csv]").href = `/api/versions/${versionId}/leaderboard.csv${scorerQuery}`;
    root.querySelector("[data-link=json]").href = `/api/versions/${versionId}/leaderboard.json${scorerQuery}`;
    const head = document.createElement("tr");
    for (const column of board.columns.filter((c) => !HIDDEN.includes(c))) {
      const th = document.createElement("th");
      th.dataset.column = column;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "link";
      const arrow = sort === column ? " ▲" : sort === `-${column}` ? " ▼" : "";
      button.textContent = columnLabel(column) + arrow;
      button.title = column;
      button.dataset.column = column;
      button.addEventListener("click", () => sortBy(sort === `-${column}` ? column : `-${column}`));
      th.append(button);
      head.append(th);
    }
    table.tHead.replaceChildren(head);
    draw();
    // The reference rows are the version's anchors: say when they are still on their way,
    // and look again until they are there.
    if (board.calibration_job) status.textContent += ` · ${derivedJobText(board.calibration_job, "reference anchors")}`;
    if (isPending(board.calibration_job)) setTimeout(() => reload(), RECHECK_MS);
    return board;
  }

  // The ranked rows loaded so far, then the reference rows; the status and the control.
  function draw() {
    const columns = current.columns.filter((c) => !HIDDEN.includes(c));
    table.tBodies[0].replaceChildren(...[...ranked, ...references].map((row) => rowElement(row, columns)));
    const left = current.count - ranked.length;
    moreButton.hidden = !current.next;
    moreButton.textContent = `Show more rows (${left} not shown)`;
    status.textContent = `${ranked.length} of ${current.count} row(s), ${references.length} reference row(s) · ${current.scorer_id} · ${current.version.tier} v${current.version.number}`;
  }

  // The next page, appended (one request at a time).
  function more() {
    if (!current || !current.next) return Promise.resolve(null);
    if (loading) return loading;
    const board = current;
    loading = api
      .get(board.next)
      .then((page) => {
        if (current !== board) return null; // sorted again meanwhile
        ranked = [...ranked, ...page.rows];
        current = { ...board, next: page.next };
        draw();
        return page;
      })
      .catch((error) => {
        status.textContent = error.message;
        return null;
      })
      .finally(() => {
        loading = null;
      });
    return loading;
  }

  function rowElement(row, columns) {
    const tr = document.createElement("tr");
    tr.className = `lb-${row.kind}`;
    tr.dataset.label = row.label;
    for (const column of columns) {
      if (column === "scored_at") {
        // The date over the time ("1 Dec 2026," / "19:29 UTC"): two short lines, one format.
        const td = cell(null, { class: "lb-when", title: row.scored_at || "" });
        if (row.scored_at) {
          const [day, time] = shortWhen(row.scored_at).split(", ");
          td.replaceChildren(`${day},`, document.createElement("br"), time);
        }
        tr.append(td);
      } else if (column === "label") {
        // The label, and under it the link to the row's diagnostics (no extra column to clip).
        const td = cell(row.label, { class: "lb-label", title: `${row.kind}: ${row.label}` });
        if (row.result) {
          const a = document.createElement("a");
          a.href = `/grading/scores/${row.result}/`;
          a.className = "lb-diagnostics";
          a.textContent = "diagnostics";
          td.append(document.createElement("br"), a);
        }
        tr.append(td);
      } else if (column === "reason") tr.append(cell(row.reason, { class: "lb-reason", title: row.reason || "" }));
      else tr.append(cell(number(row[column]), typeof row[column] === "number" ? { class: "num" } : {}));
    }
    return tr;
  }

  function sortBy(column) {
    sort = column;
    return reload();
  }

  return { reload, sortBy, more };
}
