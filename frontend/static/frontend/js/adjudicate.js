// The adjudication view (DOM): the union of both frozen ledgers on one timeline (A and
// B lanes, the final lane), the items table, a decision for each item, progress and
// publishing. Maintainers may follow it read-only. Pure helpers: union_view.js.
//
// main() waits for the union, builds one context `adj` (the schema, the items, the
// selected position, the player, the timeline, the final value's form) and hands it to
// mount functions, each wiring one part of the page; a part calls another's functions
// through `adj` (adj.select(…), adj.renderDetail()), looked up when called. The table,
// tiers and timeline are in adjudicate_views.js, the decision panel in
// adjudicate_detail.js, recording decisions in adjudicate_decisions.js, the keydown
// listener in adjudicate_keys.js.

import { api } from "./api.js";
import { EventForm } from "./event_form.js";
import { boundaryFields } from "./event_schema.js";
import { connectPacket, renderLiveState, renderPresence } from "./live.js";
import { mountPlayer } from "./player.js";
import { announceFrames, nameControls } from "./player_access.js";
import { mountNoVideo } from "./player_still.js";
import { mountDeciding, mountSettling } from "./adjudicate_decisions.js";
import { mountDetail } from "./adjudicate_detail.js";
import { isDecisionKey, mountAdjudicateKeys } from "./adjudicate_keys.js";
import { mountTable, mountTiers, mountTimeline } from "./adjudicate_views.js";
import { KeyGate } from "./key_gate.js";
import { KeyScope, afterDialogs } from "./key_scope.js";
import { mountMomentSearch, mountSearchWhileWaiting, withInterval } from "./moment_search.js";
import { mountPublishDialog } from "./publish_dialog.js";
import { ADJUDICATE_SHORTCUTS } from "./shortcuts.js";
import { Timeline } from "./timeline.js";
import { $, boot, el, isField, pageConfig, shortcutSheet } from "./ui.js";
import { deltaText, itemSpan, needsDecision, nextUndecided, tierOf } from "./union_view.js";

const config = pageConfig();
const packetUrl = `/api/packets/${config.packetId}/`;
const canDecide = config.role === "adjudicator";

window.frameledger = window.frameledger || {};

// Keys typed while the page loads, or while a decision is being recorded, wait here and
// run in order once the page (or the next item) is ready: a key never acts on an item
// that is about to change under it.
const gate = new KeyGate({
  onChange({ held, reason, count }) {
    const box = document.querySelector("#key-wait");
    if (!box) return;
    box.hidden = !held;
    box.textContent = held ? `${reason === "loading" ? "The page is still loading" : reason}${count ? `: ${count} key(s) typed wait for it` : "…"}` : "";
  },
  // A decision key pressed while no item it could mean is on screen: refused, and said.
  refuse: isDecisionKey,
  onRefused(key, reason) {
    const box = document.querySelector("#key-refused");
    if (!box) return;
    const name = key.ctrlKey ? "Ctrl+Enter" : key.key;
    const when = !reason || reason === "loading" ? "while the page was loading" : `while ${reason[0].toLowerCase()}${reason.slice(1)} (the next item was not on screen yet)`;
    box.hidden = false;
    box.textContent = `“${name}” was not used: it was pressed ${when}. A decision key acts only on the item on screen: press it again to decide the one shown now.`;
  },
  onLost({ dropped }) {
    const box = document.querySelector("#key-refused");
    if (!box) return;
    box.hidden = false;
    box.textContent = `A key typed as the page opened came before it could take keys${dropped ? `, so none of the ${dropped} typed after it was used` : ""}: type them again.`;
  },
});
window.frameledger.keyGate = gate;

async function loadUnion(packet) {
  if (!packet.union_ready) return null;
  let union;
  if (!packet.union && canDecide) union = (await api.request("POST", `${packetUrl}union/`)).data;
  else {
    try {
      union = await api.get(`${packetUrl}union/`);
    } catch (error) {
      if (error.status === 404) return null;
      throw error;
    }
  }
  return allPages(union);
}

// The union comes a page of items at a time (each page verified on the server through the
// blocks it serves): the rest is read page after page, with the count shown meanwhile.
async function allPages(union) {
  const items = [...union.items];
  for (let next = union.next; next; ) {
    const box = $("#waiting");
    box.hidden = false;
    box.textContent = `Loading the union's items: ${items.length.toLocaleString("en")} of ${union.count.toLocaleString("en")}…`;
    const url = new URL(next, location.href); // the path only: the page's own origin and scheme
    const page = await api.get(url.pathname + url.search);
    items.push(...page.items);
    next = page.next;
  }
  return { ...union, items, next: null };
}

function showWaiting(packet) {
  const box = $("#waiting");
  box.hidden = false;
  const state = (side) => (packet.ledgers && packet.ledgers[side] && packet.ledgers[side].frozen ? "frozen" : "not frozen yet");
  box.textContent = packet.union_ready
    ? "Both ledgers are frozen; the union has not been built yet (the adjudicator builds it by opening this page)."
    : `Waiting for both ledgers to freeze (A: ${state("A")}, B: ${state("B")}). Adjudication opens here once both are frozen; this page checks again every few seconds.`;
}

async function waitForUnion() {
  let packet = await api.get(packetUrl);
  $("#task-kind").textContent = packet.task_kind.name;
  let union = await loadUnion(packet);
  // Search depends on the video's features only: the adjudicator has it before the union.
  if (!union && config.search) await mountSearchWhileWaiting($("#moment-search"), { packetId: config.packetId });
  while (!union) {
    showWaiting(packet);
    $("#adjudication").dataset.state = "waiting";
    window.frameledger.ready = true;
    gate.drop();
    gate.release();
    await new Promise((resolve) => setTimeout(resolve, 5000));
    packet = await api.get(packetUrl);
    union = await loadUnion(packet);
  }
  $("#waiting").hidden = true;
  $("#adjudication").dataset.state = "loading";
  if (!gate.held) gate.hold("loading");
  return { packet, union };
}

async function main() {
  const { packet, union } = await waitForUnion();
  const schema = packet.task_kind.schema;
  const adj = {
    packet,
    schema,
    gate,
    canDecide,
    packetUrl,
    bounds: boundaryFields(schema),
    fieldsByName: Object.fromEntries(schema.fields.map((f) => [f.name, f])),
    items: union.items,
    selected: null, // position
    playUntil: null,
    tierFilter: "all",
    keyScope: new KeyScope({ home: $("#adjudication"), user: config.username }),
  };
  $("#hash-a").textContent = union.ledger_a_sha256;
  $("#hash-b").textContent = union.ledger_b_sha256;
  $("#scorer").textContent = union.scorer_id;
  await mountViews(adj);
  mountTable(adj);
  mountTiers(adj);
  mountTimeline(adj);
  mountDetail(adj);
  mountSelection(adj);
  mountDeciding(adj);
  mountSettling(adj);
  mountPublishing(adj);
  mountWiring(adj);
  mountKeys(adj);
  mountLive(adj);
  if (config.search) await mountSearch(adj);
  adj.render();
  await adj.showVersions();
  $("#adjudication").dataset.state = "ready";
  const first = nextUndecided(adj.items, -1);
  if (first !== null) adj.select(first, { play: false });
  adj.focusHome(); // the items list, with its focus ring: arrows choose, Enter plays
  window.frameledger.union = () => adj.items;
  window.frameledger.ready = true;
  gate.release();
}

// ---- player, timeline, the final value's form -------------------------------------------
async function mountViews(adj) {
  const { packet, schema } = adj;
  let player = null;
  // No video by design (an annotation-only import; the page says so and what to do): the
  // controls are drawn disabled and nothing is loaded, so the keys that play or step do
  // nothing. Any other video that does not load gets the load error.
  nameControls($("#player"));
  if (config.annotationOnly) {
    mountNoVideo($("#player"), { frameCount: packet.video.frame_count || 1, reason: "This packet has no video (annotation-only)." });
  } else {
    try {
      player = await mountPlayer($("#player"), { urls: config.media, keyboard: false });
    } catch (error) {
      $("#player-error").hidden = false;
      $("#player-error").textContent = `The video could not be loaded: ${error.message}`;
    }
  }
  if (player) announceFrames($("#player"), player);
  window.frameledger.player = player;
  const thumbs = config.annotationOnly ? null : await api.get(config.media.thumbsMeta).catch(() => null);
  const frameCount = (player && player.frameCount) || packet.video.frame_count || 1;
  adj.player = player;
  adj.timeline = new Timeline($("#timeline"), { frameCount, thumbs });
  const frameOfTime = (t) => (player && player.clock ? player.clock.frameAtTime(t) : Math.round((t * packet.video.frame_rate[0]) / packet.video.frame_rate[1]));
  adj.span = (value) => itemSpan(schema, value, frameOfTime);
  adj.editForm = canDecide ? new EventForm($("#edit-form"), schema, { idPrefix: "fin" }) : null;
  // Within the tolerance the deltas are green (a match for the scorer), never red.
  adj.deltaNodes = (item) => {
    const within = tierOf(adj.schema, item) === "within_tolerance";
    return Object.entries(item.boundary_deltas || {}).map(([name, delta]) => el("div", { class: `delta ${!delta ? "" : within ? "within" : "nonzero"}`, text: deltaText(name, delta) }));
  };
}

// ---- selection and playback ---------------------------------------------------------------
function mountSelection(adj) {
  const { player, timeline } = adj;
  adj.render = () => {
    adj.renderTable();
    adj.renderTimeline();
    adj.renderProgress();
    adj.renderTiers();
  };

  adj.playItem = async (item) => {
    if (!player) return;
    const frames = adj.span(item.a_value) || adj.span(item.b_value);
    if (!frames) return;
    const start = Math.min(...[item.a_value, item.b_value].filter(Boolean).map((v) => (adj.span(v) || frames).start));
    const end = Math.max(...[item.a_value, item.b_value].filter(Boolean).map((v) => (adj.span(v) || frames).end));
    timeline.reveal(start, end);
    player.setRate(0.5);
    adj.playUntil = null;
    await player.seekToFrame(start);
    adj.playUntil = end;
    await player.play().catch(() => undefined);
  };

  adj.played = new Set(); // items shown to the adjudicator (selected and played)
  adj.select = (position, { play = true } = {}) => {
    const item = adj.items.find((it) => it.position === position);
    if (!item) return;
    adj.selected = position;
    if (play) adj.played.add(position);
    if (adj.shownIndex.has(position)) adj.tableRows.reveal(adj.shownIndex.get(position));
    adj.markChosen();
    timeline.setSelected(String(position));
    adj.renderDetail();
    $("#live-notice").textContent = "";
    if (play) adj.playItem(item);
  };

  adj.move = (step) => {
    const { items } = adj;
    if (!items.length) return;
    const index = items.findIndex((it) => it.position === adj.selected);
    const next = index < 0 ? 0 : Math.min(items.length - 1, Math.max(0, index + step));
    adj.select(items[next].position);
  };

  adj.replace = (updated) => {
    adj.items = adj.items.map((it) => (it.position === updated.position ? updated : it));
    adj.renderRow(updated);
    adj.renderTimeline({ finalOnly: true });
    adj.renderProgress();
    adj.renderTiers();
    if (adj.selected === updated.position && !adj.keepForm) adj.renderDetail();
  };
}

// ---- publishing ------------------------------------------------------------------------------
function mountPublishing(adj) {
  let renderProgress = null; // the table's own (set below), without the publish check
  // unchanged: publishing again changed nothing, the server answered the existing version.
  function showPublished(version, unchanged = false) {
    adj.publishedLabel = version.label;
    adj.unpublishedChanges = false;
    const box = $("#published");
    box.hidden = false;
    box.replaceChildren(
      unchanged
        ? `Nothing changed since ${version.label}; no new version · SHA-256 `
        : `Published ${version.label} · SHA-256 `,
      el("code", { class: "sha", text: version.sha256 }),
      " · ",
      el("a", { id: "version-link", href: `/versions/${version.id}/`, text: "open the version page" }),
    );
    if (renderProgress) renderProgress(); // the header's next step, at once (not after a reload)
  }

  // Publishing asks first: the dialog shows what will be published (publish_dialog.js).
  // Said once the server has published (the banner is also filled when the page loads).
  const onPublished = (version, unchanged = false) => {
    showPublished(version, unchanged);
    $("#version-link").focus(); // published: the focus on its next step, the version page
    $("#announce").textContent = unchanged ? `Nothing changed since ${version.label}; no new version was published.` : `Published ${version.label}.`;
  };
  const publishing = mountPublishDialog({ packetUrl, schema: adj.schema, canPublish: canDecide, onPublished });
  adj.publish = () => publishing.open();
  renderProgress = adj.renderProgress;
  adj.renderProgress = () => {
    renderProgress();
    publishing.checkSoon(); // a decision may make (or undo) unpublished changes
  };

  adj.showVersions = async () => {
    try {
      const versions = await api.get(`${packetUrl}versions/`);
      const adjudicated = versions.filter((v) => v.tier === "adjudicated");
      if (adjudicated.length) showPublished(adjudicated[adjudicated.length - 1]);
      adj.renderProgress();
    } catch {
      // The versions list is a convenience here.
    }
    await publishing.check();
  };
}

// ---- buttons and the form's Enter ----------------------------------------------------------
function mountWiring(adj) {
  if (canDecide) {
    $("#decide").addEventListener("click", () => adj.decide());
    adj.editForm.addEventListener("commit", () => adj.decide()); // Enter in the final value's fields
    for (const input of document.querySelectorAll("#decision-form input[name=action]")) input.addEventListener("change", () => adj.showEditor());
    $("#publish").addEventListener("click", () => adj.publish());
    for (const button of document.querySelectorAll("#tolerance-bulk button[data-rule]")) button.addEventListener("click", () => adj.settleAll(button.dataset.rule));
  }
  $("#help-open").addEventListener("click", () => $("#help-dialog").showModal());
  shortcutSheet($("#help-dialog"), ADJUDICATE_SHORTCUTS, undefined, { setting: adj.keyScope.settingControl() });
  afterDialogs(() => adj.focusHome());
}

// ---- the keys: command name -> what it does (the key table is in shortcuts.js) --------------
function mountKeys(adj) {
  const { player, timeline } = adj;
  const choose = (action) => {
    const input = document.querySelector(`#decision-form input[name=action][value="${action}"]`);
    if (!input || input.disabled || !canDecide) return;
    input.checked = true;
    adj.showEditor();
  };
  // u: the selected item first, if it still needs a decision and has not been played.
  const nextUndecidedItem = () => {
    const current = adj.items.find((it) => it.position === adj.selected);
    if (current && needsDecision(current) && !current.decision && !adj.played.has(current.position)) {
      adj.select(current.position);
      return;
    }
    const next = nextUndecided(adj.items, adj.selected === null ? -1 : adj.selected);
    if (next !== null) adj.select(next);
  };
  const commands = {
    "step-1": () => player && player.step(-1),
    "step+1": () => player && player.step(1),
    "step-10": () => player && player.step(-10),
    "step+10": () => player && player.step(10),
    play: () => player && player.togglePlay(),
    "replay-half": () => adj.selected !== null && adj.playItem(adj.items.find((it) => it.position === adj.selected)),
    "prev-item": () => adj.move(-1),
    "next-item": () => adj.move(1),
    "next-undecided": nextUndecidedItem,
    "settle-a": () => adj.settleWithinTolerance("a"),
    "settle-b": () => adj.settleWithinTolerance("b"),
    "settle-mean": () => adj.settleWithinTolerance("mean"),
    "edit-fields": () => {
      if (!canDecide || adj.selected === null) return;
      choose("edit");
      adj.editForm.focusFirst();
    },
    take_a: () => choose("take_a"),
    take_b: () => choose("take_b"),
    edit: () => choose("edit"),
    drop: () => choose("drop"),
    unknown: () => choose("unknown"),
    rationale: () => {
      if (!canDecide) return;
      // Selected as a whole: what is typed replaces it (the audit log keeps the old one).
      $("#rationale").focus();
      $("#rationale").select();
    },
    decide: () => adj.decide(),
    "use-candidate": () => adj.search && adj.search.useHighlighted(),
    "zoom-in": () => timeline.zoomIn(),
    "zoom-out": () => timeline.zoomOut(),
    "zoom-fit": () => timeline.fit(),
    escape: () => isField(document.activeElement) && adj.focusHome(),
    help: () => $("#help-dialog").showModal(),
  };
  mountAdjudicateKeys({ commands, scope: adj.keyScope });
}

// ---- moment search: a result becomes an interval of the final value (edit) ------------------
async function mountSearch(adj) {
  const field = adj.schema.fields.find((f) => f.type === "interval_list");
  if (!field) return;
  const frameOfTime = (t) => (adj.player && adj.player.clock ? adj.player.clock.frameAtTime(t) : Math.round((t * adj.packet.video.frame_rate[0]) / adj.packet.video.frame_rate[1]));
  const notice = (text) => ($("#live-notice").textContent = text);
  adj.search = await mountMomentSearch($("#moment-search"), {
    packetId: config.packetId,
    timeline: adj.timeline,
    player: adj.player,
    setNotice: notice,
    // The final value's last interval when editing, else the selected item's (A, then B).
    example() {
      const item = adj.items.find((it) => it.position === adj.selected);
      const editing = canDecide && adj.chosenAction() === "edit" ? adj.editForm.draft : null;
      for (const value of [editing, item && item.a_value, item && item.b_value]) {
        const list = ((value && value[field.name]) || []).filter(([a, b]) => a !== "" && b !== "");
        if (list.length) return [frameOfTime(list[list.length - 1][0]), frameOfTime(list[list.length - 1][1])];
      }
      return "Select an item with an interval first, then Find similar.";
    },
    onUse(hit) {
      if (!canDecide) {
        notice("Read-only: only the packet's adjudicator edits the final value.");
        return;
      }
      if (adj.selected === null) {
        notice("Select an item first: the result becomes an interval of its final value.");
        return;
      }
      const input = document.querySelector('#decision-form input[name=action][value="edit"]');
      if (!input.checked) {
        input.checked = true;
        adj.showEditor();
      }
      const draft = adj.editForm.draft;
      adj.editForm.setDraft({ ...draft, [field.name]: withInterval(draft[field.name], hit) });
      notice(`Edit: interval ${hit.start}–${hit.end} s (search result ${hit.rank}) added to the final value.`);
    },
  });
}

// ---- presence and the other adjudicator's decisions, live ----------------------------------------
function mountLive(adj) {
  connectPacket(config.packetId, {
    onPresence: (people) => renderPresence($("#presence"), people),
    onState: (state) => renderLiveState($("#presence"), state),
    onItem(item) {
      const before = adj.items.find((it) => it.position === item.position);
      // What is being written on the selected item stays in the form (recording it later
      // asks, since it names the decision the form was drawn from).
      adj.keepForm = item.position === adj.selected && adj.formDirty();
      adj.replace(item);
      adj.keepForm = false;
      const by = item.decision && item.decision.decided_by;
      if (item.position === adj.selected && by && by !== config.username && JSON.stringify(before) !== JSON.stringify(item)) {
        $("#live-notice").textContent = `${by} just decided this item (${item.decision.action.replace("_", " ")}).`;
      }
    },
  });
}

boot(main);
