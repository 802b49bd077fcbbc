// The grading page of a packet: upload submissions (one file, several labelled files,
// or a zip), start a scoring run pinned to a version, follow its progress live (the
// run's Job row, polled), and reach each version's leaderboard.

import { api } from "../api.js";
import { textEl } from "../ui.js";

const POLL_MS = 1000;

export async function mountGrading(root, { packetId, scorers }) {
  const versionsBody = root.querySelector("#grading-versions tbody");
  const runsBody = root.querySelector("#grading-runs tbody");
  const submissionsBody = root.querySelector("#grading-submissions tbody");
  const form = root.querySelector("#grading-upload");
  const uploadMessage = root.querySelector("[data-field=upload-message]");
  const runMessage = root.querySelector("[data-field=run-message]");
  const following = new Set();

  async function loadVersions() {
    const versions = await api.get(`/api/packets/${packetId}/versions/`);
    versionsBody.replaceChildren(
      ...versions.map((v) => {
        const tr = textEl("tr");
        const link = textEl("a", v.label, { href: `/grading/versions/${v.id}/` });
        const td = textEl("td");
        td.append(link);
        const select = textEl("select", undefined, { "data-version": v.id, "aria-label": `Scorer for ${v.label}` });
        for (const scorer of scorers) select.append(textEl("option", scorer, { value: scorer }));
        const start = textEl("button", "Score all submissions", { type: "button", "data-start": v.id });
        start.addEventListener("click", () => startRun({ version: v.id, scorer_id: select.value }));
        const actions = textEl("td");
        actions.append(select, " ", start);
        tr.append(td, textEl("td", v.sha256 ? v.sha256.slice(0, 12) : ""), actions);
        return tr;
      }),
    );
  }

  async function loadSubmissions() {
    const rows = await api.get(`/api/packets/${packetId}/submissions/`);
    submissionsBody.replaceChildren(
      ...rows.map((s) =>
        (() => {
          const tr = textEl("tr");
          tr.append(textEl("td", String(s.id)), textEl("td", s.label), textEl("td", s.original_name), textEl("td", String(s.size_bytes)),
            textEl("td", s.sha256.slice(0, 16)), textEl("td", s.rejected_reason || (s.kept ? "kept" : "")));
          return tr;
        })(),
      ),
    );
  }

  function runRow(run) {
    const tr = textEl("tr", undefined, { "data-run": run.id });
    const bar = textEl("progress", undefined, { max: "1", value: String(run.job.progress) });
    const board = textEl("a", `${run.version.tier} v${run.version.number}`, { href: `/grading/versions/${run.version.id}/?scorer=${encodeURIComponent(run.scorer_id)}` });
    const versionCell = textEl("td");
    versionCell.append(board);
    const progressCell = textEl("td");
    progressCell.append(bar, " ", textEl("span", `${run.job.status}: ${run.job.message}`, { "data-field": "job" }));
    tr.append(textEl("td", String(run.id)), versionCell, textEl("td", run.scorer_id), progressCell);
    return tr;
  }

  async function loadRuns() {
    const runs = await api.get(`/api/packets/${packetId}/scoring-runs/`);
    runsBody.replaceChildren(...runs.map(runRow));
    for (const run of runs) if (!["done", "failed"].includes(run.job.status)) follow(run.id);
  }

  async function follow(runId) {
    if (following.has(runId)) return;
    following.add(runId);
    try {
      for (;;) {
        const run = await api.get(`/api/scoring-runs/${runId}/`);
        const old = runsBody.querySelector(`tr[data-run="${runId}"]`);
        const row = runRow(run);
        if (old) old.replaceWith(row);
        else runsBody.prepend(row);
        if (["done", "failed"].includes(run.job.status)) break;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    } finally {
      following.delete(runId);
    }
  }

  async function startRun(body) {
    runMessage.textContent = "";
    try {
      const { data } = await api.request("POST", `/api/packets/${packetId}/scoring-runs/`, { body });
      follow(data.id);
    } catch (error) {
      runMessage.textContent = error.message;
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData();
    const labels = form.elements.labels.value.split("\n").map((l) => l.trim()).filter(Boolean);
    for (const file of form.elements.files.files) {
      if (file.name.toLowerCase().endsWith(".zip")) data.append("archive", file);
      else data.append("files", file);
    }
    const plain = [...form.elements.files.files].filter((f) => !f.name.toLowerCase().endsWith(".zip"));
    if (labels.length) {
      if (labels.length !== plain.length) {
        uploadMessage.textContent = `${labels.length} label(s) for ${plain.length} file(s)`;
        return;
      }
      for (const label of labels) data.append("labels", label);
    }
    if (form.elements.include.value) data.append("include", form.elements.include.value);
    try {
      const result = await api.upload(`/api/packets/${packetId}/submissions/`, data, {
        onProgress: (f) => (uploadMessage.textContent = `uploading… ${Math.round(f * 100)}%`),
      });
      uploadMessage.textContent = `${result.submissions.length} submission(s) stored (batch ${result.batch.slice(0, 8)})`;
      form.reset();
      await loadSubmissions();
    } catch (error) {
      uploadMessage.textContent = error.message;
    }
  });

  await Promise.all([loadVersions(), loadSubmissions(), loadRuns()]);
  root.dataset.state = "ready";
}
