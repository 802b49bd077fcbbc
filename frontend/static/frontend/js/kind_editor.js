// The task-kind editor page (DOM): reads the form, shows the annotation form the schema
// describes (EventForm, as annotators get it) and keeps the scorer list to the family's.
// Rules: kind_editor_model.js.

import { EventForm } from "./event_form.js";
import { previewSchema, schemaFromForm } from "./kind_editor_model.js";
import { $, el } from "./ui.js";

const form = $("#kind-form");
const preview = $("#kind-preview");
const notes = $("#kind-preview-notes");
const scorer = $("#kind-scorer");

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
  new EventForm(preview, schema, { idPrefix: "preview" });
}

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
    if (input.type === "checkbox") input.checked = input.name.endsWith("-required");
    else if (input.tagName === "SELECT") input.selectedIndex = 0;
    else input.value = "";
  }
  last.after(row);
  $("#field-count").value = String(index + 1);
  row.querySelector("[name$='-name']").focus();
}

form.addEventListener("input", renderPreview);
form.addEventListener("change", (event) => {
  if (event.target === form.elements.family) showScorers();
  renderPreview();
});
$("#add-field").addEventListener("click", addRow);
showScorers();
renderPreview();
