// The leaderboard of one (ground-truth version, scorer): sortable by any column, with
// CSV / JSON downloads and links to each submission's diagnostics.
//
//   mountLeaderboard(root, { versionId, scorerId })  -> { reload(), sortBy(column) }

import { api } from "../api.js";

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
  const table = root.querySelector("table");
  const status = root.querySelector("[data-field=status]");

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
    const scorerQuery = scorerId ? `?scorer=${encodeURIComponent(scorerId)}` : "";
    root.querySelector("[data-link=csv]").href = `/api/versions/${versionId}/leaderboard.csv${scorerQuery}`;
    root.querySelector("[data-link=json]").href = `/api/versions/${versionId}/leaderboard.json${scorerQuery}`;
    const head = document.createElement("tr");
    for (const column of board.columns.filter((c) => !["sha256", "run", "result", "submission"].includes(c))) {
      const th = document.createElement("th");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "link";
      const arrow = sort === column ? " ▲" : sort === `-${column}` ? " ▼" : "";
      button.textContent = column.replaceAll("_", " ") + arrow;
      button.dataset.column = column;
      button.addEventListener("click", () => sortBy(sort === `-${column}` ? column : `-${column}`));
      th.append(button);
      head.append(th);
    }
    head.append(document.createElement("th"));
    const rows = [...board.rows, ...(board.references || [])].map((row) => {
      const tr = document.createElement("tr");
      tr.className = `lb-${row.kind}`;
      tr.dataset.label = row.label;
      for (const column of board.columns.filter((c) => !["sha256", "run", "result", "submission"].includes(c))) {
        tr.append(cell(number(row[column]), column === "reason" ? { class: "lb-reason", title: row.reason || "" } : {}));
      }
      const links = document.createElement("td");
      if (row.result) {
        const a = document.createElement("a");
        a.href = `/grading/scores/${row.result}/`;
        a.textContent = "diagnostics";
        links.append(a);
      }
      tr.append(links);
      return tr;
    });
    table.tHead.replaceChildren(head);
    table.tBodies[0].replaceChildren(...rows);
    status.textContent = `${board.rows.length} row(s), ${(board.references || []).length} reference row(s) · ${board.scorer_id} · version ${board.version.tier} v${board.version.number}`;
    return board;
  }

  function sortBy(column) {
    sort = column;
    return reload();
  }

  return { reload, sortBy };
}
