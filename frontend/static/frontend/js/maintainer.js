// Maintainer pages (DOM): packet progress, the audit log, creating a packet.
// Maintainers see counts and states of both ledgers at any time; the API decides that,
// and these pages are 404 for everyone else.

import { api } from "./api.js";
import { connectPacket, renderLiveState, renderPresence } from "./live.js";
import { tusUpload } from "./tus_upload.js";
import { $, el, pageConfig, when } from "./ui.js";

window.frameledger = window.frameledger || {};

function fail(error) {
  const box = $("#load-error");
  box.hidden = false;
  box.textContent = `This page could not load: ${error.message}`;
  window.frameledger.loadError = String(error.message);
}

// ---- packet progress -------------------------------------------------------------------

export function packetProgressPage() {
  const config = pageConfig();
  const url = `/api/packets/${config.packetId}/`;

  async function refresh() {
    const [packet, versions] = await Promise.all([api.get(url), api.get(`${url}versions/`)]);
    $("#task-kind").textContent = packet.task_kind.name;
    $("#packet-sha").textContent = packet.sha256;
    $("#packet-video").textContent = `${packet.video.title} · ${packet.video.frame_count} frames at ${packet.video.frame_rate.join("/")} fps`;
    $("#packet-created").textContent = when(packet.created_at);
    $("#assign-a").textContent = packet.assignment.annotator_a;
    $("#assign-b").textContent = packet.assignment.annotator_b;
    $("#assign-adj").textContent = packet.assignment.adjudicator;
    const people = { A: packet.assignment.annotator_a, B: packet.assignment.annotator_b };
    $("#ledgers tbody").replaceChildren(
      ...["A", "B"].map((side) => {
        const ledger = packet.ledgers[side];
        return el("tr", { dataset: { side } }, [
          el("td", { text: side }),
          el("td", { text: people[side] }),
          el("td", { class: "num", text: String(ledger.events) }),
          el("td", { class: "num", text: String(ledger.version) }),
          el("td", {}, el("span", { class: `pill ${ledger.frozen ? "ok" : "saving"}`, text: ledger.frozen ? `frozen ${when(ledger.frozen_at)}` : "annotating" })),
          el("td", {}, ledger.sha256 ? el("code", { class: "sha", text: ledger.sha256 }) : "—"),
        ]);
      }),
    );
    let union = "The union is built once both ledgers are frozen.";
    if (packet.union_ready && !packet.union) union = "Both ledgers are frozen; the adjudicator has not opened the union yet.";
    if (packet.union) union = `${packet.union.items} union item(s): ${packet.union.decided} of ${packet.union.to_decide} decided.`;
    if (packet.published) union += ` Published: ${packet.published.label}.`;
    $("#union-state").textContent = union;
    $("#next-step").textContent = packet.next_step ? packet.next_step.text : "—";
    $("#versions tbody").replaceChildren(
      ...versions.map((v) =>
        el("tr", {}, [
          el("td", {}, el("a", { href: `/versions/${v.id}/`, text: v.label })),
          el("td", { text: v.source }),
          el("td", {}, el("code", { class: "sha", text: v.sha256 })),
          el("td", { text: when(v.created_at) }),
          el("td", {}, el("a", { href: `/grading/versions/${v.id}/`, text: "leaderboard" })),
        ]),
      ),
    );
    if (!versions.length) $("#versions tbody").replaceChildren(el("tr", {}, el("td", { colspan: "5", class: "muted", text: "None yet." })));
  }

  refresh()
    .then(() => {
      $("#maintainer-packet").dataset.state = "ready";
      window.frameledger.ready = true;
      setInterval(() => refresh().catch(() => undefined), 10000);
      connectPacket(config.packetId, {
        onPresence: (people) => renderPresence($("#presence"), people),
        onState: (state) => renderLiveState($("#presence"), state),
      });
    })
    .catch(fail);
}

// ---- audit log -------------------------------------------------------------------------

export function auditPage() {
  const config = pageConfig();
  api
    .get(`/api/packets/${config.packetId}/audit/`)
    .then((entries) => {
      $("#audit tbody").replaceChildren(
        ...entries.map((entry) =>
          el("tr", { dataset: { operation: entry.operation } }, [
            el("td", { text: when(entry.at) }),
            el("td", { text: entry.actor || "—" }),
            el("td", { text: entry.operation }),
            el("td", { class: "small", text: entry.object }),
            el("td", {}, Object.entries(entry.hashes || {}).map(([k, v]) => el("div", { class: "small" }, [`${k} `, el("code", { class: "sha", text: v })]))),
            el("td", {}, Object.keys(entry.details || {}).length ? el("details", {}, [el("summary", { text: Object.keys(entry.details).join(", ") }), el("pre", { class: "json", text: JSON.stringify(entry.details, null, 2) })]) : ""),
          ]),
        ),
      );
      $("#audit-page").dataset.state = "ready";
      window.frameledger.ready = true;
    })
    .catch(fail);
}

// ---- new packet ------------------------------------------------------------------------

// Follow an ingest job: the websocket relay when there is one, else polling the API.
// `onAnnotatable` is called once when the video is ready for annotation on its remux
// while the job still encodes the proxy (docs/media.md §2.4).
function followJob(jobId, onState, onAnnotatable = () => undefined) {
  return new Promise((resolve) => {
    let done = false;
    let annotatable = false;
    let poller = null;
    const finish = (state) => {
      if (done) return;
      onState(state);
      if (!annotatable && state.status !== "failed" && state.result && state.result.remux) {
        annotatable = true;
        onAnnotatable(state);
      }
      if (state.status === "done" || state.status === "failed") {
        done = true;
        clearInterval(poller);
        resolve(state);
      }
    };
    const poll = () => {
      if (poller || done) return;
      poller = setInterval(() => api.get(`/api/jobs/${jobId}/`).then(finish).catch(() => undefined), 700);
    };
    let socket;
    try {
      socket = api.socket(`/ws/jobs/${jobId}/`);
      socket.addEventListener("message", (event) => finish(JSON.parse(event.data)));
      socket.addEventListener("close", () => !done && poll());
      socket.addEventListener("error", () => poll());
    } catch {
      poll();
    }
    // A relay that never answers is no better than none.
    setTimeout(() => !done && poll(), 3000);
  });
}

// One sentence on what ingest had to do to the source's timing (empty when nothing).
// What building the table from the decoded order repaired (annotator/base/media/decoded.py).
export function repairedText(repaired) {
  const names = { restart: "restarted", repeat: "repeated the frame before", missing: "were missing" };
  const counts = Object.entries(repaired.counts || {}).map(([kind, n]) => `${n} ${n === 1 ? "frame's" : "frames'"} timestamps ${names[kind] || kind}`);
  const where = (repaired.listed || []).slice(0, 5).map((r) => `${r.frame} (${r.seconds.toFixed(3)} s)`).join(", ");
  return `the container's timestamps could not time the frames (${repaired.reason}); frames were timed in the decoder's output order${counts.length ? `: ${counts.join(", ")}` : ""}${where ? `, first at frames ${where}` : ""}`;
}

export function ingestReportText(report) {
  const parts = [];
  if (report.timestamps === "decode-order") parts.push("the container's timestamps were in decode order; frames were timed in the decoder's output order");
  if (report.timestamps === "decoded" && report.repaired) parts.push(repairedText(report.repaired));
  if (report.dropped_count > 0) {
    const listed = report.dropped.slice(0, 10).map((d) => `${d.source_index} (${d.seconds.toFixed(3)} s)`).join(", ");
    const more = report.dropped_count > 10 ? ` and ${report.dropped_count - 10} more` : "";
    parts.push(`${report.dropped_count} of ${report.source_frame_count} source frames no decoder can produce were dropped: ${listed}${more}`);
  }
  return parts.length ? `Ingest report: ${parts.join("; ")}.` : "";
}

// The ingest's milestones as fractions of its job (annotator/actions/ingest_steps.py).
const P_HASHED = 0.05;
const P_PROBED = 0.08;
const P_PROXY = 0.88;
const MB = 1e6;

// Each server-side step of an upload, with the figures the server reported.
function setStep(name, state, text) {
  const item = $(`#ingest-steps [data-step="${name}"]`);
  if (!item) return;
  item.dataset.state = state;
  if (text !== undefined) item.querySelector(".detail").textContent = text;
}

export function stepsFromJob(state, steps = {}) {
  const message = state.message || "";
  if (message.startsWith("Hashed:")) steps.hashed = message.replace(/^Hashed: /, "").replace(/ Probing\.$/, "");
  if (message.startsWith("Probed:")) steps.probed = message.replace(/^Probed: /, "").replace(/\. (Encoding|Remuxing).*$/, "");
  const progress = state.progress || 0;
  return { ...steps, progress, proxyPercent: Math.max(0, Math.min(100, Math.round((100 * (progress - P_PROBED)) / (P_PROXY - P_PROBED)))) };
}

function showSteps(state, seen) {
  const steps = stepsFromJob(state, seen);
  Object.assign(seen, steps);
  const failed = state.status === "failed";
  if (seen.hashed) setStep("hashed", "done", seen.hashed);
  else if (!failed) setStep("hashed", "active", "reading the stored file…");
  if (seen.progress >= P_HASHED && seen.probed) setStep("probed", "done", seen.probed);
  const remux = state.result && state.result.remux;
  if (remux) {
    setStep("remux", "done", `SHA-256 ${remux.sha256.slice(0, 16)}…`);
    setStep("annotatable", "done", `at ${new Date(remux.annotatable_at).toLocaleTimeString()}`);
  }
  if (state.status === "done") {
    if (!remux) setStep("remux", "skipped", `none: the proxy came first${state.result && state.result.remux_refused ? ` (${state.result.remux_refused})` : ""}`);
    setStep("annotatable", "done", remux ? undefined : "on the proxy");
    setStep("proxy", "done", "100 %");
  } else if (failed) {
    setStep("proxy", "failed", state.message || "failed");
  } else if (seen.probed) {
    setStep("proxy", "active", `${seen.proxyPercent} %`);
  }
}

// Steps the page did not see happen (a fast ingest) are filled from the video itself.
function stepsFromVideo(video) {
  const done = (name) => $(`#ingest-steps [data-step="${name}"]`).dataset.state === "done";
  if (!done("hashed") && video.sha256) setStep("hashed", "done", `SHA-256 ${video.sha256.slice(0, 16)}… of ${video.size_bytes.toLocaleString("en")} bytes`);
  if (!done("probed") && video.frame_count) {
    const rate = video.frame_rate[1] === 1 ? `${video.frame_rate[0]}` : video.frame_rate.join("/");
    setStep("probed", "done", `${video.frame_count.toLocaleString("en")} frames, ${video.codec} ${video.width}x${video.height}, ${rate} fps`);
  }
}

export function newPacketPage() {
  let videoId = null;
  const option = (value, text) => el("option", { value, text });

  function showIngest(state) {
    const percent = Math.round(100 * (state.progress || 0));
    $("#ingest-bar").style.width = `${percent}%`;
    $("#ingest-percent").textContent = `${percent}%`;
    $("#ingest-message").textContent = `${state.status}: ${state.message || ""}`;
    $("#step-ingest").dataset.status = state.status;
    window.frameledger.ingestStates = [...(window.frameledger.ingestStates || []), { status: state.status, progress: state.progress }];
  }

  function videoReady(video) {
    videoId = video.id;
    if ($("#ingest-steps [data-step=stored]").dataset.state === "done") stepsFromVideo(video);
    const proxyNote = video.proxy_ready === false ? " (on its remux; the seek-friendly proxy is being encoded, players switch to it when it is ready)" : "";
    $("#ingest-video").textContent = `Video ${video.id} “${video.title}” is ready: ${video.frame_count} frames at ${video.frame_rate.join("/")} fps${proxyNote}.`;
    $("#ingest-report").textContent = ingestReportText(video.ingest_report || {});
    $("#step-packet").setAttribute("aria-disabled", "false");
    if (!$("#packet-title-input").value) $("#packet-title-input").value = video.title;
  }

  async function load() {
    const [kinds, users, videos] = await Promise.all([api.get("/api/task-kinds/"), api.get("/api/users/"), api.get("/api/videos/")]);
    // No default kind: a packet's kind is chosen for its video (a tennis match is not a
    // kitchen action ledger).
    $("#task-kind-select").replaceChildren(option("", "— choose the kind this video's events are —"), ...kinds.map((k) => option(k.slug, k.name)));
    $("#kind-hint").textContent = "No kind is chosen for you: pick the one whose events this video shows.";
    // A kind shows the fields of the packet parameters it asks for (schema.ui.asks): the
    // two players of the break-point ledger, the moment grid's step.
    const asks = (slug) => ((kinds.find((k) => k.slug === slug) || { schema: {} }).schema.ui || { asks: [] }).asks;
    const showPlayers = () => {
      $("#players-field").hidden = !asks($("#task-kind-select").value).includes("players");
      $("#grid-field").hidden = !asks($("#task-kind-select").value).includes("grid");
    };
    $("#task-kind-select").addEventListener("change", showPlayers);
    showPlayers();
    for (const id of ["#annotator-a", "#annotator-b", "#adjudicator"]) {
      $(id).replaceChildren(option("", "—"), ...users.map((u) => option(u.username, u.name ? `${u.name} (${u.username})` : u.username)));
    }
    $("#existing-video").append(...videos.filter((v) => v.status === "ready").map((v) => option(String(v.id), `${v.title} (${v.frame_count} frames)`)));
  }

  $("#existing-video").addEventListener("change", async () => {
    const id = $("#existing-video").value;
    if (!id) return;
    const video = await api.get(`/api/videos/${id}/`);
    showIngest({ status: "done", progress: 1, message: "Already ingested." });
    $("#step-ingest").setAttribute("aria-disabled", "false");
    videoReady(video);
  });

  $("#upload-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("#upload-error").textContent = "";
    const file = $("#video-file").files[0];
    const title = $("#video-title").value.trim();
    if (!title || !file) {
      $("#upload-error").textContent = !title ? "A title is required." : "Choose a video file.";
      return;
    }
    $("#upload").disabled = true;
    $("#step-ingest").setAttribute("aria-disabled", "false");
    let answerVideo = null;
    $("#delete-upload").hidden = true;
    for (const item of document.querySelectorAll("#ingest-steps li")) setStep(item.dataset.step, "pending", "");
    const seen = {};
    const show = (state) => {
      showIngest(state);
      showSteps(state, seen);
      if (seen.probed && state.status === "running") {
        // Not the job's overall fraction (8 % while already annotatable): the step it is at.
        const early = state.result && state.result.remux ? "annotatable · " : "";
        $("#ingest-percent").textContent = `${early}proxy ${seen.proxyPercent}%`;
      }
    };
    try {
      setStep("stored", "active", "");
      const answer = await tusUpload(file, {
        title,
        pieceBytes: (window.frameledger && window.frameledger.uploadPieceBytes) || undefined,
        onProgress: ({ sent, total, resumed }) => {
          const percent = Math.round((100 * sent) / total);
          $("#ingest-bar").style.width = `${percent}%`;
          $("#ingest-percent").textContent = `${percent}%`;
          const again = resumed ? `, resumed ${resumed}×` : "";
          $("#ingest-message").textContent = `uploading: ${percent}% (${(sent / MB).toFixed(1)} of ${(total / MB).toFixed(1)} MB${again})`;
          setStep("stored", "active", `${(sent / MB).toFixed(1)} of ${(total / MB).toFixed(1)} MB`);
        },
        onRetry: ({ offset }) => ($("#ingest-message").textContent = `connection lost at ${(offset / MB).toFixed(1)} MB; resuming…`),
      });
      const rate = answer.seconds > 0 ? ` (${(file.size / MB / answer.seconds).toFixed(1)} MB/s)` : "";
      const again = answer.resumed ? `, resumed ${answer.resumed}×` : "";
      setStep("stored", "done", `${(file.size / MB).toFixed(1)} MB in ${answer.seconds.toFixed(1)} s${rate}${again}`);
      answerVideo = answer.video;
      show(answer.job);
      let early = false;
      const final = await followJob(answer.job.id, show, async () => {
        early = true;
        videoReady(await api.get(`/api/videos/${answer.video.id}/`));
      });
      if (final.status !== "done" && early) {
        // The video stays ready on its remux (docs/media.md §2.4).
        $("#upload-error").textContent = `The proxy could not be made (${final.message}); annotation works on the remux.`;
        return;
      }
      if (final.status !== "done") throw new Error(final.message || "the ingest failed");
      videoReady(await api.get(`/api/videos/${answer.video.id}/`));
    } catch (error) {
      $("#upload-error").textContent = error.message;
      $("#upload").disabled = false;
      if (answerVideo) offerDelete(answerVideo);
    }
  });

  // A failed upload can be deleted at once: the original and the video row go (audited).
  function offerDelete(video) {
    const button = $("#delete-upload");
    button.hidden = false;
    button.onclick = async () => {
      button.disabled = true;
      try {
        await api.request("DELETE", `/api/videos/${video.id}/`);
        $("#ingest-message").textContent = `Video ${video.id} and its files were deleted.`;
        button.hidden = true;
      } catch (error) {
        $("#upload-error").textContent = error.message;
      } finally {
        button.disabled = false;
      }
    };
  }

  $("#packet-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const error = $("#packet-error");
    error.textContent = "";
    const people = ["#annotator-a", "#annotator-b", "#adjudicator"].map((id) => $(id).value);
    if (people.some((p) => !p)) {
      error.textContent = "Choose annotator A, annotator B and the adjudicator.";
      return;
    }
    if (new Set(people).size !== 3) {
      error.textContent = "Annotator A, annotator B and the adjudicator must be three different people.";
      return;
    }
    if (!$("#task-kind-select").value) {
      error.textContent = "Choose the task kind of this packet.";
      return;
    }
    const players = ["#player-1", "#player-2"].map((id) => $(id).value.trim());
    const parameters = !$("#players-field").hidden && players.some(Boolean) ? { players } : {};
    const step = $("#grid-step").value.trim();
    if (!$("#grid-field").hidden && step) parameters.grid = { step: Number(step) };
    try {
      const { data } = await api.request("POST", "/api/packets/", {
        body: {
          title: $("#packet-title-input").value,
          video: videoId,
          task_kind: $("#task-kind-select").value,
          annotator_a: people[0],
          annotator_b: people[1],
          adjudicator: people[2],
          instructions: $("#instructions-input").value,
          parameters,
        },
      });
      window.location.assign(`/packets/${data.id}/`);
    } catch (failure) {
      error.textContent = failure.message;
    }
  });

  load()
    .then(() => {
      $("#new-packet").dataset.state = "ready";
      window.frameledger.ready = true;
    })
    .catch(fail);
}
