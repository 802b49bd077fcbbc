// Calibration anchors of a ground-truth version and the "mark ready" action, which the
// server refuses (and says why) when an anchor is not as expected.
//
//   mountCalibration(root, { versionId })   (any page may embed it: the version page too)

import { api } from "../api.js";
import { textEl, when } from "../ui.js";
import { derivedJobText, isPending, RECHECK_MS } from "./derived_job.js";

export async function mountCalibration(root, { versionId }) {
  const body = textEl("div");
  const message = textEl("p", undefined, { class: "muted", "data-field": "ready-message" });
  const button = textEl("button", "Mark ready for grading", { type: "button", "data-action": "ready" });
  root.replaceChildren(body, button, message);

  async function reload() {
    const data = await api.get(`/api/versions/${versionId}/calibration/`);
    const parts = [];
    for (const calibration of data.calibrations) {
      parts.push(textEl("h3", `${calibration.scorer_id}: ${calibration.status}`, { "data-status": calibration.status }));
      const table = textEl("table", undefined, { class: "table anchors" });
      table.append(textEl("thead"), textEl("tbody"));
      const head = textEl("tr");
      for (const t of ["anchor", "reward", "expected", "as expected", "what it is"]) head.append(textEl("th", t));
      table.tHead.append(head);
      for (const anchor of calibration.anchors) {
        const tr = textEl("tr", undefined, { "data-anchor": anchor.name, class: anchor.ok === false ? "bad" : "" });
        tr.append(textEl("td", anchor.name.replaceAll("_", " ")), textEl("td", anchor.reward === null ? "—" : String(anchor.reward)), textEl("td", anchor.expected === null ? "" : String(anchor.expected)));
        tr.append(textEl("td", anchor.ok === null ? "" : anchor.ok ? "✓" : "✗"), textEl("td", anchor.description));
        table.tBodies[0].append(tr);
      }
      parts.push(table);
      for (const problem of calibration.problems) parts.push(textEl("p", problem, { class: "error" }));
    }
    if (!data.calibrations.length && !data.job) parts.push(textEl("p", "No anchors computed yet.", { class: "muted" }));
    if (data.job) {
      // The anchors the publication queued: still on their way (looked at again), or failed.
      const pending = isPending(data.job);
      parts.unshift(textEl("p", derivedJobText(data.job, "The calibration anchors"), { class: pending ? "muted" : "error", "data-field": "calibration-job" }));
      if (pending) setTimeout(() => reload().catch(() => undefined), RECHECK_MS);
    }
    root.dataset.job = data.job ? data.job.status : "";
    body.replaceChildren(...parts);
    if (data.ready) {
      button.hidden = true;
      message.textContent = `Ready for grading (marked by ${data.ready.marked_by}, ${when(data.ready.marked_at)}).`;
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
