// Maintainer pages (DOM): packet progress, the audit log, creating a packet.
// Maintainers see counts and states of both ledgers at any time; the API decides that,
// and these pages are 404 for everyone else.

import { api } from "./api.js";
import { connectPacket, renderLiveState, renderPresence } from "./live.js";
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
export function ingestReportText(report) {
  const parts = [];
  if (report.timestamps === "decode-order") parts.push("the container's timestamps were in decode order; frames were timed in the decoder's output order");
  if (report.dropped_count > 0) {
    const listed = report.dropped.slice(0, 10).map((d) => `${d.source_index} (${d.seconds.toFixed(3)} s)`).join(", ");
    const more = report.dropped_count > 10 ? ` and ${report.dropped_count - 10} more` : "";
    parts.push(`${report.dropped_count} of ${report.source_frame_count} source frames no decoder can produce were dropped: ${listed}${more}`);
  }
  return parts.length ? `Ingest report: ${parts.join("; ")}.` : "";
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
    const proxyNote = video.proxy_ready === false ? " (on its remux; the seek-friendly proxy is being encoded, players switch to it when it is ready)" : "";
    $("#ingest-video").textContent = `Video ${video.id} “${video.title}” is ready: ${video.frame_count} frames at ${video.frame_rate.join("/")} fps${proxyNote}.`;
    $("#ingest-report").textContent = ingestReportText(video.ingest_report || {});
    $("#step-packet").setAttribute("aria-disabled", "false");
    if (!$("#packet-title-input").value) $("#packet-title-input").value = video.title;
  }

  async function load() {
    const [kinds, users, videos] = await Promise.all([api.get("/api/task-kinds/"), api.get("/api/users/"), api.get("/api/videos/")]);
    $("#task-kind-select").replaceChildren(...kinds.map((k) => option(k.slug, k.name)));
    // Kinds whose family takes the two players (the break-point ledger) ask for them.
    const family = (slug) => (kinds.find((k) => k.slug === slug) || { schema: {} }).schema.family;
    const showPlayers = () => {
      $("#players-field").hidden = family($("#task-kind-select").value) !== "break_points";
      $("#grid-field").hidden = family($("#task-kind-select").value) !== "moments"; // the moment grid's step
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
    const data = new FormData();
    data.append("title", title);
    data.append("file", file);
    $("#upload").disabled = true;
    $("#step-ingest").setAttribute("aria-disabled", "false");
    let answerVideo = null;
    $("#delete-upload").hidden = true;
    try {
      const answer = await api.upload("/api/videos/", data, {
        onProgress: (f) => ($("#ingest-message").textContent = `uploading: ${Math.round(100 * f)}%`),
      });
      answerVideo = answer.video;
      showIngest(answer.job);
      let early = false;
      const final = await followJob(answer.job.id, showIngest, async () => {
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
