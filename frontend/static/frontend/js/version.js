// A ground-truth version (DOM): number, tier, SHA-256, manifest, changelog against the
// previous version, the export files and the zip download.

import { api } from "./api.js";
import { formatValue } from "./event_schema.js";
import { $, boot, copyButton, el, pageConfig, when } from "./ui.js";

const config = pageConfig();
window.frameledger = window.frameledger || {};

const MANIFEST_KEYS = [
  ["ground_truth_sha256", "ground truth SHA-256"],
  ["packet_sha256", "packet SHA-256"],
  ["ledger_a_sha256", "ledger A SHA-256"],
  ["ledger_b_sha256", "ledger B SHA-256"],
  ["adjudication_log_sha256", "adjudication log SHA-256"],
  ["schema_sha256", "schema SHA-256"],
  ["scorer_id", "scorer"],
  ["task_kind", "task kind"],
  ["events", "events"],
];

function renderChangelog(changelog) {
  const box = $("#changelog");
  if (!changelog || !changelog.previous) {
    $("#changelog-against").textContent = "(first version)";
    box.replaceChildren(el("p", { text: `First version of this packet's ground truth: ${changelog ? changelog.added : 0} event(s).` }));
    return;
  }
  const prev = changelog.previous;
  $("#changelog-against").textContent = `against ${prev.tier} v${prev.number} (${prev.sha256.slice(0, 12)}…)`;
  const stats = el("div", { class: "stats" }, [
    ["added", changelog.added],
    ["removed", changelog.removed],
    ["changed", changelog.changed.length],
    ["kept", changelog.kept],
  ].map(([label, n]) => el("div", { class: "stat", dataset: { change: label } }, [el("span", { class: "muted small", text: label }), el("b", { text: String(n) })])));
  const lists = [];
  for (const [label, events] of [["Added", changelog.added_events], ["Removed", changelog.removed_events]]) {
    if (events && events.length) lists.push(el("h3", { text: label }), el("pre", { class: "json", text: events.map((e) => JSON.stringify(e)).join("\n") }));
  }
  if (changelog.changed.length) {
    lists.push(el("h3", { text: "Changed" }), el("ul", {}, changelog.changed.map((c) => el("li", { text: `${JSON.stringify(c.identity)}: ${c.fields.join(", ")}` }))));
  }
  box.replaceChildren(stats, ...lists);
}

function renderEvents(schema, events) {
  const fields = schema.fields.filter((f) => events.some((e) => e[f.name] !== undefined));
  $("#version-events-table thead").replaceChildren(el("tr", {}, [el("th", { text: "#" }), ...fields.map((f) => el("th", { text: f.name.replace(/_/g, " ") }))]));
  $("#version-events-table tbody").replaceChildren(
    ...events.map((event, i) => el("tr", {}, [el("td", { text: String(i + 1) }), ...fields.map((f) => el("td", { text: formatValue(f, event[f.name]) }))])),
  );
}

async function renderFiles(exportUrl) {
  const body = $("#export-files tbody");
  try {
    const manifest = await api.get(`${exportUrl}?file=manifest.json`);
    const files = { ...manifest.files, "manifest.json": null };
    body.replaceChildren(
      ...Object.entries(files).map(([name, info]) =>
        el("tr", { dataset: { file: name } }, [
          el("td", {}, el("a", { href: `${exportUrl}?file=${encodeURIComponent(name)}`, download: name, text: name })),
          el("td", { class: "num", text: info ? String(info.bytes) : "" }),
          el("td", {}, info ? el("code", { class: "sha", text: info.sha256 }) : el("span", { class: "muted", text: "lists the others" })),
        ]),
      ),
    );
  } catch (error) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: "3", class: "error", text: `The export could not be listed: ${error.message}` })));
  }
}

async function main() {
  const version = await api.get(`/api/versions/${config.versionId}/`);
  const packet = await api.get(`/api/packets/${version.packet}/`);
  document.title = `${packet.title} · ${version.label} · FrameLedger`;
  $("#version-title").textContent = `${packet.title} — ${version.label}`;
  $("#version-packet").replaceChildren(el("a", { href: `/packets/${packet.id}/`, text: `packet ${packet.id}` }), ` · ${packet.task_kind.name}`);
  $("#version-number").textContent = version.label;
  $("#version-tier").textContent = version.tier;
  $("#version-events").textContent = String(version.events.length);
  $("#version-unresolved").textContent = String((version.manifest.unresolved || []).length);
  $("#version-sha").textContent = version.sha256;
  $("#version-sha").after(" ", copyButton(version.sha256));
  $("#version-created").textContent = when(version.created_at);
  $("#version-source").textContent = version.source;
  const zip = $("#download-zip");
  zip.href = version.export_url;
  $("#manifest").replaceChildren(
    ...MANIFEST_KEYS.filter(([key]) => version.manifest[key] !== undefined).flatMap(([key, label]) => [
      el("dt", { text: label }),
      el("dd", {}, /sha256$/.test(key) ? el("code", { class: "sha", text: version.manifest[key] }) : String(version.manifest[key])),
    ]),
  );
  $("#manifest-json").textContent = JSON.stringify(version.manifest, null, 2);
  renderChangelog(version.changelog);
  renderEvents(packet.task_kind.schema, version.events);
  await renderFiles(version.export_url);
  $("#version-page").dataset.state = "ready";
  window.frameledger.ready = true;
}

boot(main);
