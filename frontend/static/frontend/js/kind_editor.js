// The task-kind editor page (DOM): reads the form, shows the annotation form the schema
// describes (EventForm, as annotators get it) and keeps the scorer list to the family's.
// Rules: kind_editor_model.js.
//
// Saving asks the server's dry run first (POST /task-kinds/check/: the validator the save
// runs, answering 200 with what it would refuse), so a refused save stays on the page as
// it is (no reload, no rows added, no failed request in the console): the one input the
// refusal names is outlined, and while a refusal is shown every edit asks again, so the
// outline and the banner go away once the form is fixed. Only a form the dry run accepts
// is submitted.

import { EventForm } from "./event_form.js";
import { previewSchema, schemaFromForm } from "./kind_editor_model.js";
import { $, el } from "./ui.js";

const form = $("#kind-form");
const preview = $("#kind-preview");
const notes = $("#kind-preview-notes");
const scorer = $("#kind-scorer");
// What each family's form shows differently (its adapter's ui: sections), by family.
const familyUi = JSON.parse($("#family-ui").textContent);

function rowValues(row) {
  const get = (suffix) => row.querySelector(`[name$="-${suffix}"]`);
  return {
    name: get("name").value,
    type: get("type").value,
    required: get("required").checked,
    identity: get("identity").checked,
    choices: get("choices").value,
    min: get("min").value,
    max: get("max").value,
    frame: get("frame").checked,
  };
}

function formValues() {
  const value = (name) => form.elements[name].value;
  return {
    family: value("family"),
    root_key: value("root_key"),
    tolerance: value("tolerance"),
    boundary_start: value("boundary_start"),
    boundary_end: value("boundary_end"),
    sort_keys: value("sort_keys"),
    assistance: form.elements.assistance.checked,
    fields: [...form.querySelectorAll(".field-row")].map(rowValues),
  };
}

function showScorers() {
  const family = form.elements.family.value;
  for (const option of scorer.options) option.hidden = option.dataset.family !== family;
  if (scorer.selectedOptions[0]?.hidden) {
    const first = [...scorer.options].find((option) => !option.hidden);
    scorer.value = first ? first.value : "";
  }
}

function renderPreview() {
  const { schema, notes: problems } = previewSchema(schemaFromForm(formValues()));
  notes.textContent = problems.length ? `Not shown: ${problems.join("; ")}.` : "";
  preview.replaceChildren();
  if (!schema.fields.length) {
    preview.append(el("p", { class: "muted", text: "Name a field to see it here." }));
    return;
  }
  new EventForm(preview, { ...schema, ui: familyUi[schema.family] }, { idPrefix: "preview" });
}

// ---- refusals ------------------------------------------------------------------------
const banner = $("#kind-error");
const KIND_INPUTS = {
  slug: ["#kind-slug"],
  name: ["#kind-name"],
  family: ["#kind-family"],
  scorer_id: ["#kind-scorer"],
  root_key: ["#kind-root-key"],
  tolerance: ["#kind-tolerance"],
  boundary_fields: ["#kind-boundary-start", "#kind-boundary-end"],
  sort_keys: ["#kind-sort-keys"],
};

function inputsFor(part, row) {
  if (row !== null && row !== undefined) {
    const tr = form.querySelector(`.field-row[data-index="${row}"]`);
    if (!tr) return [];
    const suffix = part === "min_items" ? "min" : part;
    return [tr.querySelector(`[name$="-${suffix}"]`) || tr.querySelector("[name$='-name']")];
  }
  return (KIND_INPUTS[part] || []).map((selector) => $(selector));
}

function clearMarks() {
  for (const marked of form.querySelectorAll(".invalid")) {
    marked.classList.remove("invalid");
    marked.removeAttribute("aria-invalid");
    marked.removeAttribute("aria-describedby");
  }
}

function showRefusal(result) {
  clearMarks();
  if (!result || result.ok) {
    banner.hidden = true;
    banner.textContent = "";
    banner.dataset.field = "";
    return;
  }
  banner.textContent = result.error;
  banner.dataset.field = result.field || "";
  banner.hidden = false;
  for (const input of inputsFor(result.part, result.row)) {
    if (!input) continue;
    input.classList.add("invalid");
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", "kind-error"); // the banner names the field and why
    const tr = input.closest(".field-row");
    if (tr) tr.classList.add("invalid");
  }
}

async function check() {
  const response = await fetch(form.dataset.checkUrl, { method: "POST", body: new FormData(form), credentials: "same-origin" });
  if (!response.ok) return null; // the page's own POST will answer
  return response.json();
}

let recheck = null;
function recheckSoon() {
  if (banner.hidden) return;
  clearTimeout(recheck);
  recheck = setTimeout(async () => {
    try {
      showRefusal(await check());
    } catch {
      /* offline: the save says so */
    }
  }, 250);
}

let accepted = false;
form.addEventListener("submit", async (event) => {
  if (accepted) return;
  event.preventDefault();
  let result = null;
  try {
    result = await check();
  } catch {
    result = null;
  }
  if (result && !result.ok) {
    showRefusal(result);
    const first = form.querySelector("[aria-invalid=true]");
    if (first) first.focus();
    banner.scrollIntoView({ block: "nearest" });
    return;
  }
  accepted = true;
  HTMLFormElement.prototype.submit.call(form);
});

function addRow() {
  const rows = form.querySelectorAll(".field-row");
  const last = rows[rows.length - 1];
  const index = rows.length;
  const row = last.cloneNode(true);
  row.dataset.index = String(index);
  row.classList.remove("invalid");
  row.querySelector("td.num").textContent = String(index + 1);
  for (const input of row.querySelectorAll("[name]")) {
    input.name = input.name.replace(/^field-\d+-/, `field-${index}-`);
    input.setAttribute("aria-label", input.getAttribute("aria-label").replace(/^field \d+/, `field ${index + 1}`));
    input.classList.remove("invalid");
    input.removeAttribute("aria-invalid");
    input.removeAttribute("aria-describedby");
    if (input.type === "checkbox") input.checked = input.name.endsWith("-required");
    else if (input.tagName === "SELECT") input.selectedIndex = 0;
    else input.value = "";
  }
  last.after(row);
  $("#field-count").value = String(index + 1);
  row.querySelector("[name$='-name']").focus();
}

form.addEventListener("input", () => {
  renderPreview();
  recheckSoon();
});
form.addEventListener("change", (event) => {
  if (event.target === form.elements.family) showScorers();
  renderPreview();
  recheckSoon();
});
$("#add-field").addEventListener("click", addRow);
showScorers();
renderPreview();
