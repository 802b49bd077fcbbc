// The adjudication page's views of the union (DOM, part of adjudicate.js): the items
// table (only the rows in view exist; a decision replaces only its own row), the tier
// filter and the progress line, and the timeline's lanes (A and B never change; a
// decision rebuilds only the final lane). Each mount function takes the page's context
// `adj` and adds its render functions to it.

import { formatValue, summarize } from "./event_schema.js";
import { VirtualRows } from "./virtual_rows.js";
import { $, el } from "./ui.js";
import { TIER_LABELS, deltaText, needsDecision, openInTier, progress, tierOf } from "./union_view.js";

// ---- the items table: only the rows in view exist; a decision replaces only its own row ----
export function mountTable(adj) {
  const { schema, bounds } = adj;
  function valueCell(item, side) {
    const value = side === "a" ? item.a_value : item.b_value;
    if (!value) return el("td", { class: "absent", text: "—" });
    const frames = adj.span(value);
    const parts = [];
    const words = [];
    if (frames && bounds) {
      parts.push(el("span", { class: "frames", text: `${frames.start}–${frames.end}` }), " ");
      words.push(`${frames.start}–${frames.end}`);
    }
    // The fields in dispute first, so a narrow cell still shows them (the whole value is
    // the cell's tooltip); in a list, the values in dispute first too ("skillet" before
    // "egg_mixture" when only skillet differs).
    const other = item.a_value && item.b_value ? (side === "a" ? item.b_value : item.a_value) : null;
    const fields = schema.fields.filter((f) => !(bounds && (f.name === bounds.start || f.name === bounds.end)) && value[f.name] !== undefined);
    const differs = (f) => item.differing_fields.includes(f.name);
    for (const field of [...fields.filter(differs), ...fields.filter((f) => !differs(f))]) {
      let shown = value[field.name];
      if (Array.isArray(shown) && other && Array.isArray(other[field.name]) && differs(field)) {
        const theirs = new Set(other[field.name].map(String));
        shown = [...shown.filter((v) => !theirs.has(String(v))), ...shown.filter((v) => theirs.has(String(v)))];
      }
      const text = formatValue(field, shown);
      parts.push(el("span", { class: differs(field) ? "differs" : "", title: field.name, text }), " ");
      words.push(text);
    }
    return el("td", { class: "value", title: words.join(" ") }, parts);
  }

  function decisionText(item) {
    if (!item.decision) return needsDecision(item) ? "to decide" : "agreed";
    return `${item.decision.action.replace("_", " ")} · ${item.decision.decided_by}`;
  }

  // In the table: "start" for start_frame; the deltas in one line ("Δ start +2 · end −1").
  const shortName = (name) => name.replace(/_frame$/, "").replace(/_/g, " ");
  const compactDeltas = (item) => {
    const entries = Object.entries(item.boundary_deltas || {});
    if (!entries.length) return "";
    const within = tierOf(schema, item) === "within_tolerance"; // deltas in green, not red
    return [
      "Δ ",
      ...entries.flatMap(([name, delta], i) => [
        i ? " · " : "",
        el("span", { class: `delta ${!delta ? "" : within ? "within" : "nonzero"}`, text: `${shortName(name)} ${delta > 0 ? "+" : delta < 0 ? "−" : "±"}${Math.abs(delta)}` }),
      ]),
    ];
  };

  adj.tableRows = new VirtualRows($("#items-scroll"), $("#items-table tbody"), { rowHeight: 28 });
  adj.shownItems = [];
  adj.shownIndex = new Map(); // position -> index in shownItems
  function itemRow(item) {
    const tier = tierOf(schema, item);
    const row = el("tr", { dataset: { position: String(item.position), status: item.status, tier }, class: item.position === adj.selected ? "selected" : "" }, [
      el("td", { class: "num", text: String(item.position + 1) }),
      // One badge, shown whole: within the tolerance is its own (green) state, never a red
      // "conflicting"; the other tiers are the status itself (conflict: "conflicting",
      // one-sided: "a only" / "b only"), so a second badge would only repeat it.
      el("td", {}, tier === "within_tolerance"
        ? el("span", { class: "status within", text: TIER_LABELS[tier] })
        : el("span", { class: `status ${item.status}`, text: item.status.replace("_", " ") })),
      valueCell(item, "a"),
      valueCell(item, "b"),
      el("td", { class: "differing", text: item.differing_fields.map(shortName).join(", "), title: item.differing_fields.join(", ") }),
      el("td", { title: Object.entries(item.boundary_deltas || {}).map(([n, d]) => deltaText(n, d)).join(", ") }, compactDeltas(item)),
      el("td", { class: item.decision ? "decided" : needsDecision(item) ? "undecided" : "" }, decisionText(item)),
    ]);
    row.addEventListener("click", () => adj.select(item.position));
    return row;
  }

  adj.renderTable = () => {
    adj.shownItems = adj.tierFilter === "all" ? adj.items : adj.items.filter((it) => tierOf(schema, it) === adj.tierFilter);
    adj.shownIndex = new Map(adj.shownItems.map((it, i) => [it.position, i]));
    adj.tableRows.setRows(adj.shownItems, itemRow);
  };

  adj.renderRow = (item) => {
    const index = adj.shownIndex.get(item.position);
    if (index === undefined) return;
    adj.shownItems[index] = item;
    adj.tableRows.update(index);
  };
}

// The tiers: a filter over the table, and the bulk rule for within-tolerance items.
export function mountTiers(adj) {
  const { schema } = adj;
  adj.renderTiers = () => {
    const counts = {};
    for (const item of adj.items) {
      const tier = tierOf(schema, item);
      counts[tier] = (counts[tier] || 0) + 1;
    }
    for (const option of $("#tier-filter").options) {
      const n = option.value === "all" ? adj.items.length : counts[option.value] || 0;
      option.textContent = `${option.value === "all" ? "all tiers" : TIER_LABELS[option.value]} (${n})`;
    }
    const open = openInTier(schema, adj.items, "within_tolerance").length;
    $("#tolerance-bulk").hidden = !adj.canDecide || !open;
    $("#tolerance-open").textContent = `${open} undecided item(s) have the same labels and boundaries within the scorer's tolerance of ${schema.tolerance || 0} frames.`;
  };
  adj.renderProgress = () => {
    const p = progress(adj.items);
    $("#progress-text").textContent = `${p.decided} of ${p.needed} decided · ${p.agreed} agreed · ${adj.items.length} items`;
    $("#progress-bar").style.width = `${p.needed ? (100 * p.decided) / p.needed : 100}%`;
    const publish = $("#publish");
    publish.hidden = !adj.canDecide;
    publish.disabled = p.decided < p.needed;
    publish.title = p.decided < p.needed ? `${p.needed - p.decided} item(s) still need a decision` : "Publish the adjudicated ground truth";
    // The next step and who holds it: only the packet's adjudicator decides and publishes.
    const who = adj.canDecide ? "you" : (adj.packet.assignment && adj.packet.assignment.adjudicator) || "the adjudicator";
    let step = `${who}: publish the ground truth (only the adjudicator can)`;
    if (p.decided < p.needed) step = `${who}: decide ${p.needed - p.decided} of ${p.needed} item(s), then publish`;
    else if (adj.publishedLabel && !adj.unpublishedChanges) step = `nothing: ${adj.publishedLabel} is published (${who === "you" ? "you publish" : `${who} publishes`} again after a changed decision)`;
    $("#next-step").textContent = step;
  };
  $("#tier-filter").addEventListener("change", () => {
    adj.tierFilter = $("#tier-filter").value;
    adj.renderTable();
  });
}

// ---- the timeline: lanes A and B never change; a decision rebuilds only the final lane ----
export function mountTimeline(adj) {
  const { schema, timeline, player } = adj;
  function timelineLane(id, label, className, pick) {
    return {
      id,
      label,
      className,
      items: adj.items
        .map((item) => {
          const value = pick(item);
          const frames = value && adj.span(value);
          if (!frames) return null;
          // Within the tolerance: a green underline, never the red "conflicting" one.
          const state = tierOf(schema, item) === "within_tolerance" ? "within" : item.status;
          const label = summarize(schema, value);
          const said = state === "within" ? "within tolerance" : item.status.replace("_", " ");
          const title = `${label} · frames ${frames.start}–${frames.end} · ${said}`;
          return { key: String(item.position), start: frames.start, end: frames.end, label, title, className: `st-${state}` };
        })
        .filter(Boolean),
    };
  }
  const finalLane = () => timelineLane("final", "final", "lane-final", (item) => (item.decision ? item.decision.final_value : item.status === "agreed" ? item.a_value : null));

  adj.renderTimeline = ({ finalOnly = false } = {}) => {
    if (finalOnly) timeline.setLane(finalLane());
    else timeline.setLanes([timelineLane("a", "A", "lane-a", (item) => item.a_value), timelineLane("b", "B", "lane-b", (item) => item.b_value), finalLane()]);
    timeline.setSelected(adj.selected === null ? null : String(adj.selected));
  };
  if (player) {
    player.addEventListener("frame", (e) => {
      timeline.setPlayhead(e.detail.frame);
      if (adj.playUntil !== null && !player.paused && e.detail.frame >= adj.playUntil) {
        adj.playUntil = null;
        player.pause();
      }
    });
  }
  timeline.addEventListener("seek", (e) => player && player.seekToFrame(e.detail.frame));
  timeline.addEventListener("select", (e) => e.detail.lane !== "search" && adj.select(Number(e.detail.key)));
}
