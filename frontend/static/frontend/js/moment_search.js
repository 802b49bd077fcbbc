// Moment search (DOM): a search box and "Find similar" over the packet's video, the best
// intervals as a lane on the timeline and a list. A click (list or lane) highlights a
// result and seeks the player to its start; `c` (the page's key table) turns the
// highlighted result into the draft's interval through `onUse`.
//
//   const search = await mountMomentSearch(root, { packetId, timeline, player, example, onUse, setNotice });
//   search.useHighlighted();   // the `c` key
//
//   mountIndexCard(root, { videoId });   // the maintainers' card: the index's status, Rebuild
//
//   mountSearchWhileWaiting(root, { packetId });   // the adjudicator's panel before the union
//                                                  // exists: a list, no timeline, no player
//
// `example()` returns the interval to find similar ones to, [startFrame, endFrame], or a
// string saying why there is none. The API (/api/packets/<id>/search/) says which
// searches the packet supports and why; the panel shows that sentence as it is.
// Results come from the video's features only (docs/retrieval.md).

import { api } from "./api.js";
import { el, when } from "./ui.js";

const LANE = "search";

function seconds(value) {
  return `${Number(value).toFixed(Number.isInteger(value) ? 0 : 1)} s`;
}

export async function mountMomentSearch(root, { packetId, timeline = null, player = null, example, onUse, setNotice = () => {}, note = "Click a result to see it; c turns the highlighted one into the draft's interval.", byExample = true }) {
  const url = `/api/packets/${packetId}/search/`;
  let results = [];
  let highlighted = null; // rank

  const input = el("input", { type: "search", id: "search-text", placeholder: "Describe a moment…", "aria-label": "Describe a moment", list: "search-texts", autocomplete: "off" });
  const texts = el("datalist", { id: "search-texts" });
  const searchButton = el("button", { type: "submit", id: "search-run", text: "Search" });
  const similarButton = el("button", { type: "button", id: "search-similar", text: "Find similar", title: "Intervals that look like the selected one" });
  const kInput = el("input", { type: "number", id: "search-k", min: "1", max: "50", value: "10", "aria-label": "How many results" });
  const form = el("form", { class: "ms-form", role: "search" }, [input, texts, searchButton, similarButton, el("label", { class: "small muted" }, ["top ", kInput])]);
  const reason = el("p", { class: "ms-reason small", id: "search-reason", role: "status" });
  const remedy = el("p", { class: "ms-remedy small", id: "search-remedy", hidden: true });
  const status = el("p", { class: "ms-status small", id: "search-status", "aria-live": "polite" });
  const list = el("ol", { class: "ms-results", id: "search-results", "aria-label": "Search results" });
  root.replaceChildren(el("h2", { text: "Find moments" }), form, reason, remedy, status, list, el("p", { class: "small muted", id: "search-note", text: note }));
  root.hidden = false;

  function renderLane() {
    if (!timeline) return;
    const items = results.map((r) => ({
      key: `search-${r.rank}`,
      start: r.start_frame,
      end: Math.max(r.start_frame, r.end_frame - 1),
      label: `#${r.rank}`,
      title: `#${r.rank}: ${seconds(r.start)}–${seconds(r.end)}`,
      className: `ms-hit${r.rank === highlighted ? " ms-highlighted" : ""}`,
    }));
    timeline.setLane({ id: LANE, label: "search", className: "lane-search", items, pinned: true });
  }

  function renderList() {
    list.replaceChildren(
      ...results.map((r) => {
        const button = el("button", { type: "button", class: "ms-result", dataset: { rank: String(r.rank) }, "aria-pressed": String(r.rank === highlighted) }, [
          el("span", { class: "ms-rank", text: `${r.rank}.` }),
          el("span", { class: "ms-span", text: `${seconds(r.start)}–${seconds(r.end)}` }),
          el("span", { class: "ms-frames muted small", text: `frames ${r.start_frame}–${r.end_frame}` }),
          el("span", { class: "ms-score muted small", text: `score ${r.score.toFixed(3)}` }),
        ]);
        button.addEventListener("click", () => highlight(r.rank, { seek: true }));
        return el("li", { class: r.rank === highlighted ? "highlighted" : "" }, [button]);
      }),
    );
  }

  function highlight(rank, { seek = false } = {}) {
    highlighted = rank;
    renderList();
    renderLane();
    const hit = results.find((r) => r.rank === rank);
    if (hit && seek && player && timeline) {
      timeline.reveal(hit.start_frame, hit.end_frame);
      player.seekToFrame(hit.start_frame);
    }
  }

  async function run(body, what) {
    status.textContent = `Searching ${what}…`;
    status.classList.remove("bad");
    try {
      const { data } = await api.request("POST", url, { body: { ...body, k: Number(kInput.value) || 10 } });
      results = data.results;
      highlighted = results.length ? results[0].rank : null;
      status.textContent = results.length ? `${results.length} interval(s) ${what}, best first (grid ${JSON.stringify(data.grid)}).` : `Nothing found ${what}.`;
      renderList();
      renderLane();
      if (results.length) highlight(results[0].rank, { seek: true });
    } catch (error) {
      status.textContent = error.message || String(error);
      status.classList.add("bad");
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) {
      status.textContent = "Type a description first.";
      return;
    }
    run({ text }, `for “${text}”`);
  });
  similarButton.addEventListener("click", () => {
    const span = example();
    if (typeof span === "string") {
      status.textContent = span;
      status.classList.add("bad");
      return;
    }
    run({ example: span }, `like frames ${span[0]}–${span[1]}`);
  });
  if (timeline) {
    timeline.addEventListener("select", (event) => {
      if (event.detail.lane !== LANE) return;
      highlight(Number(String(event.detail.key).replace("search-", "")), { seek: true });
    });
  }

  // Which searches this packet supports, and why; what cannot run is disabled (and the
  // panel says so), whatever else the page offers.
  try {
    const info = await api.get(url);
    reason.textContent = info.reason;
    remedy.textContent = info.remedy || "";
    remedy.hidden = !info.remedy;
    searchButton.disabled = input.disabled = !info.text;
    similarButton.disabled = !info.example || !byExample;
    if (!byExample) similarButton.title = example();
    kInput.disabled = !info.text && !info.example;
    if (!info.text) input.placeholder = "Text search is not available here";
    root.dataset.searchable = String(Boolean(info.text || info.example));
    texts.replaceChildren(...(info.texts || []).map((t) => el("option", { value: t })));
  } catch (error) {
    reason.textContent = error.message || String(error);
    input.disabled = searchButton.disabled = similarButton.disabled = kInput.disabled = true;
    root.dataset.searchable = "false";
  }

  return {
    useHighlighted() {
      const hit = results.find((r) => r.rank === highlighted);
      if (!hit) {
        setNotice("No search result is highlighted: search first, then click a result.", "bad");
        return;
      }
      onUse(hit);
    },
    get results() {
      return results;
    },
  };
}

// Before both ledgers freeze the adjudicator has no union, timeline or player yet; results
// depend on the video's features only, so text search can run: the list shows them.
export function mountSearchWhileWaiting(root, { packetId }) {
  return mountMomentSearch(root, {
    packetId,
    example: () => "Find similar starts from an interval of the union, which opens once both ledgers are frozen; search by text works now.",
    onUse: () => {},
    byExample: false,
    note: "The union opens once both ledgers are frozen; then a result can become an interval of the final value.",
  });
}

// The draft's intervals with a search result added (an unfinished last row is replaced,
// a repeat is not added twice). Pure.
export function withInterval(list, hit) {
  const rows = (list || []).map((pair) => [...pair]);
  const last = rows[rows.length - 1];
  if (last && (last[0] === "" || last[1] === "")) rows.pop();
  if (!rows.some(([a, b]) => a === hit.start && b === hit.end)) rows.push([hit.start, hit.end]);
  return rows;
}

// The maintainers' card on the packet page: the video's search index (status, source,
// size, when built, error), a Rebuild button and the upload of CLIP features (the way
// forward for a video with nothing to search with, e.g. an imported annotation-only one);
// it looks again while a build is queued.
export const FEATURE_LAYOUTS =
  "CLIP frame features: an .npz with the key features, or an .npy, holding L × D floats (one row per clip, moment_detr layout), with the clip length in seconds; optionally text features in the same space: an .npz with texts and embeddings (N × D).";

export async function mountIndexCard(root, { videoId }) {
  const url = `/api/videos/${videoId}/search-index/`;
  const rebuild = el("button", { type: "button", id: "search-index-rebuild", text: "Rebuild index" });
  const details = el("dl", { class: "kv", id: "search-index-details" });
  const message = el("p", { class: "small", "aria-live": "polite", id: "search-index-message" });
  const forward = el("p", { class: "banner warn small", id: "search-index-forward", hidden: true });
  const file = el("input", { type: "file", id: "features-file", accept: ".npz,.npy", "aria-label": "CLIP features (.npz or .npy)" });
  const clip = el("input", { type: "number", id: "features-clip-length", min: "0.01", max: "60", step: "any", value: "2", "aria-label": "seconds per feature row" });
  const text = el("input", { type: "file", id: "features-text-file", accept: ".npz", "aria-label": "text features (.npz, optional)" });
  const send = el("button", { type: "submit", id: "features-upload", text: "Upload features" });
  const uploadForm = el("form", { class: "form-grid", id: "features-form" }, [
    el("label", {}, ["CLIP features (.npz or .npy)", file]),
    el("label", {}, ["Seconds per row", clip]),
    el("label", {}, ["Text features (.npz, optional)", text]),
    el("div", {}, [send]),
  ]);
  root.replaceChildren(
    el("h2", { text: "Moment-search index" }),
    forward,
    details,
    rebuild,
    el("h3", { text: "Upload CLIP features" }),
    el("p", { class: "small muted", id: "features-layouts", text: FEATURE_LAYOUTS }),
    uploadForm,
    message,
  );
  root.hidden = false;
  let timer = null;
  uploadForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!file.files[0]) {
      message.textContent = "Choose a features file (.npz or .npy) first.";
      return;
    }
    const data = new FormData();
    data.append("features", file.files[0]);
    data.append("clip_length", clip.value);
    if (text.files[0]) data.append("text_features", text.files[0]);
    send.disabled = true;
    message.textContent = "Uploading…";
    try {
      const body = await api.upload(url, data);
      message.textContent = "Features stored; the index is being built, and the version's anchors are computed again.";
      show(body.index);
    } catch (error) {
      message.textContent = error.message || String(error);
    } finally {
      send.disabled = false;
    }
  });
  function show(index) {
    const nothing = index.status === "unavailable" || index.status === "missing" || index.status === "failed";
    forward.hidden = !nothing;
    forward.textContent = nothing ? "Nothing can be searched on this video yet: upload its CLIP features below (the index is then built, and the zero-shot calibration anchor of its versions is computed)." : "";
    const rows = [
      ["status", index.status],
      ["source", index.source || "—"],
      ["clips", index.clips ? `${index.clips} × ${index.dim} (${index.clip_length} s each)` : "—"],
      ["made by", index.encoder || "—"],
      ["built", index.built_at ? `${when(index.built_at)} (${index.build_seconds} s)` : "—"],
    ];
    if (index.error) rows.push(["error", index.error]);
    details.replaceChildren(...rows.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: String(v), dataset: { field: k } })]));
    clearTimeout(timer);
    if (index.status === "pending" || index.status === "building") timer = setTimeout(load, 2000);
  }
  async function load() {
    try {
      show((await api.get(url)).index);
    } catch (error) {
      message.textContent = error.message || String(error);
    }
  }
  rebuild.addEventListener("click", async () => {
    rebuild.disabled = true;
    try {
      const { data } = await api.request("POST", url, { body: {} });
      message.textContent = "Rebuild queued.";
      show(data.index);
      await load();
    } catch (error) {
      message.textContent = error.message || String(error);
    } finally {
      rebuild.disabled = false;
    }
  });
  await load();
}
