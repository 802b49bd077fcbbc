// Publishing from the adjudication page (DOM): a confirmation that shows what will be
// published before the publish call (GET /api/packets/<id>/publish/ answers the same
// computation the POST stores), and the "unpublished changes" banner when the decisions
// differ from the latest published version. The text is built by the pure
// `previewLines` below.

import { api } from "./api.js";
import { summarize } from "./event_schema.js";
import { $, el } from "./ui.js";

export const DECISION_NAMES = {
  agreed: "agreed (no decision needed)",
  take_a: "take A",
  take_b: "take B",
  edit: "edited",
  drop: "dropped",
  unknown: "unknown (unresolved)",
};

// Pure: the confirmation's sentences for a preview answer.
export function previewLines(preview) {
  const lines = [];
  if (!preview.publishable) lines.push(`${preview.undecided} item(s) still need a decision; publishing is refused until then.`);
  if (preview.unchanged) {
    lines.push(`Nothing changed since ${preview.previous.label}: publishing again returns that version, no new one is made.`);
  } else {
    lines.push(`This publishes ${preview.label} with ${preview.events} event(s) from ${preview.items} union item(s).`);
  }
  if (preview.unresolved) lines.push(`${preview.unresolved} item(s) are decided as unknown and are listed as unresolved in the manifest.`);
  const log = preview.changelog;
  if (!preview.unchanged) {
    lines.push(
      log.previous
        ? `Against ${preview.previous.label}: ${log.added} added, ${log.removed} removed, ${log.changed.length} changed, ${log.kept} kept.`
        : "First adjudicated version of this packet.",
    );
  }
  return lines;
}

function eventList(title, schema, events) {
  if (!events || !events.length) return [];
  return [el("h3", { text: title }), el("ul", { class: "small" }, events.map((e) => el("li", { text: summarize(schema, e) })))];
}

// Fill the dialog from a preview answer.
export function renderPreview(dialog, preview, schema) {
  const counts = el(
    "table",
    { class: "table compact", id: "publish-counts" },
    el(
      "tbody",
      {},
      Object.entries(preview.decisions).map(([kind, n]) =>
        el("tr", { dataset: { decision: kind } }, [el("td", { text: DECISION_NAMES[kind] || kind }), el("td", { class: "num", text: String(n) })]),
      ),
    ),
  );
  const log = preview.changelog;
  const changed = (log.changed || []).map((c) => `${Object.values(c.identity).join(" · ")}: ${c.fields.join(", ")}`);
  $("#publish-summary", dialog).replaceChildren(
    ...previewLines(preview).map((line) => el("p", { text: line })),
    el("h3", { text: "Items by decision" }),
    counts,
    ...(preview.unchanged ? [] : eventList("Added", schema, log.added_events)),
    ...(preview.unchanged ? [] : eventList("Removed", schema, log.removed_events)),
    ...(changed.length && !preview.unchanged ? [el("h3", { text: "Changed" }), el("ul", { class: "small" }, changed.map((t) => el("li", { text: t })))] : []),
  );
  $("#publish-dialog-title", dialog).textContent = preview.unchanged ? `Nothing new to publish (${preview.previous.label})` : `Publish ${preview.label}?`;
  $("#publish-confirm", dialog).disabled = !preview.publishable;
  $("#publish-confirm", dialog).textContent = preview.unchanged ? "Publish anyway (returns the same version)" : `Publish ${preview.label}`;
}

// Wire the dialog and the banner. `onPublished(version, unchanged)` shows the result.
export function mountPublishDialog({ packetUrl, schema, canPublish, onPublished }) {
  const dialog = $("#publish-dialog");
  const banner = $("#unpublished");
  let timer = null;

  const preview = () => api.get(`${packetUrl}publish/`);

  async function open() {
    $("#publish-error").textContent = "";
    try {
      renderPreview(dialog, await preview(), schema);
      dialog.showModal();
      $("#publish-confirm", dialog).focus();
    } catch (error) {
      $("#publish-error").textContent = error.message;
    }
  }

  async function confirm() {
    $("#publish-confirm", dialog).disabled = true;
    try {
      const { data, status } = await api.request("POST", `${packetUrl}publish/`);
      dialog.close();
      onPublished(data, status === 200);
      await check();
    } catch (error) {
      $("#publish-dialog-error", dialog).textContent = error.message;
    } finally {
      $("#publish-confirm", dialog).disabled = false;
    }
  }

  // The banner: decisions differ from the latest published version.
  async function check() {
    try {
      const answer = await preview();
      banner.hidden = !answer.unpublished_changes;
      if (answer.unpublished_changes) {
        banner.textContent = `Unpublished changes: the decisions differ from the published ${answer.previous.label} (${answer.changelog.added} added, ${answer.changelog.removed} removed, ${answer.changelog.changed.length} changed).${canPublish ? " Publish to make them a new version." : ""}`;
      }
    } catch {
      banner.hidden = true; // no union yet, or not visible: nothing to compare
    }
  }

  $("#publish-cancel", dialog).addEventListener("click", () => dialog.close());
  $("#publish-confirm", dialog).addEventListener("click", confirm);
  return {
    open,
    check,
    // Debounced: a run of decisions asks once.
    checkSoon() {
      clearTimeout(timer);
      timer = setTimeout(check, 400);
    },
  };
}
