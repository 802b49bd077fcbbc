// Calibration anchors of a ground-truth version and the "mark ready" action, which the
// server refuses (and says why) when an anchor is not as expected.
//
//   mountCalibration(root, { versionId })   (any page may embed it: the version page too)

import { api } from "../api.js";

function el(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

export async function mountCalibration(root, { versionId }) {
  const body = el("div");
  const message = el("p", undefined, { class: "muted", "data-field": "ready-message" });
  const button = el("button", "Mark ready for grading", { type: "button", "data-action": "ready" });
  root.replaceChildren(body, button, message);

  async function reload() {
    const data = await api.get(`/api/versions/${versionId}/calibration/`);
    const parts = [];
    for (const calibration of data.calibrations) {
      parts.push(el("h3", `${calibration.scorer_id}: ${calibration.status}`, { "data-status": calibration.status }));
      const table = el("table", undefined, { class: "table anchors" });
      table.append(el("thead"), el("tbody"));
      const head = el("tr");
      for (const t of ["anchor", "reward", "expected", "", "what it is"]) head.append(el("th", t));
      table.tHead.append(head);
      for (const anchor of calibration.anchors) {
        const tr = el("tr", undefined, { "data-anchor": anchor.name, class: anchor.ok === false ? "bad" : "" });
        tr.append(el("td", anchor.name), el("td", anchor.reward === null ? "—" : String(anchor.reward)), el("td", anchor.expected === null ? "" : String(anchor.expected)));
        tr.append(el("td", anchor.ok === null ? "" : anchor.ok ? "✓" : "✗"), el("td", anchor.description));
        table.tBodies[0].append(tr);
      }
      parts.push(table);
      for (const problem of calibration.problems) parts.push(el("p", problem, { class: "error" }));
    }
    if (!data.calibrations.length) parts.push(el("p", "No anchors computed yet.", { class: "muted" }));
    body.replaceChildren(...parts);
    if (data.ready) {
      button.hidden = true;
      message.textContent = `Ready for grading (marked by ${data.ready.marked_by} at ${data.ready.marked_at}).`;
    }
    return data;
  }

  button.addEventListener("click", async () => {
    try {
      await api.request("POST", `/api/versions/${versionId}/ready/`);
      await reload();
    } catch (error) {
      message.textContent = error.message;
      message.className = "error";
    }
  });
  await reload();
  return { reload };
}
