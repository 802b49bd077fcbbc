// The task-kind editor's form as a schema. Pure: no DOM.
//
// schemaFromForm(values) builds the object the page posts (annotator/entry/pages/taskkinds.py
// `schema_from_form` builds the same one on the server, which alone validates it);
// previewSchema(schema) keeps what the annotation form can already show, with a note
// for each row it leaves out. The preview never judges the schema: the server's check
// names the broken field when the kind is created.

const CHOICE_TYPES = new Set(["enum", "enum_set"]);

function intOrText(text) {
  const trimmed = String(text ?? "").trim();
  return /^-?\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
}

export function vocabulary(text) {
  return String(text ?? "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

function names(text) {
  return String(text ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
}

// values: {family, root_key, tolerance, boundary_start, boundary_end, sort_keys, assistance,
//          fields: [{name, type, required, identity, choices, min, max, frame}]}
export function schemaFromForm(values) {
  const rows = values.fields.filter((row) => String(row.name ?? "").trim() || String(row.choices ?? "").trim());
  const fields = rows.map((row) => {
    const field = { name: String(row.name ?? "").trim(), type: row.type };
    if (CHOICE_TYPES.has(row.type)) field.choices = vocabulary(row.choices);
    if (row.type === "enum_set" && String(row.min ?? "").trim()) field.min_items = intOrText(row.min);
    if (row.type === "int") {
      for (const key of ["min", "max"]) if (String(row[key] ?? "").trim()) field[key] = intOrText(row[key]);
      if (row.frame) field.frame = true;
    }
    if (!row.required) field.required = false;
    return field;
  });
  const boundaries = [values.boundary_start, values.boundary_end].map((n) => String(n ?? "").trim()).filter(Boolean);
  const schema = {
    family: values.family,
    root_key: String(values.root_key ?? "").trim(),
    fields,
    boundary_fields: boundaries,
    tolerance: intOrText(values.tolerance || "0"),
  };
  const identity = rows.filter((row) => row.identity).map((row) => String(row.name).trim());
  if (identity.length) schema.identity_fields = identity;
  if (names(values.sort_keys).length) schema.sort_keys = names(values.sort_keys);
  if (values.assistance) schema.annotator_assistance = true; // the "assistance" check box
  return schema;
}

// {schema, notes}: the fields the preview can draw (named, and with a vocabulary where
// one is needed), and a note for each field left out.
export function previewSchema(schema) {
  const notes = [];
  const seen = new Set();
  const fields = [];
  schema.fields.forEach((field, index) => {
    const label = field.name || `field ${index + 1}`;
    if (!field.name) notes.push(`${label}: needs a name`);
    else if (seen.has(field.name)) notes.push(`${label}: the name is used twice`);
    else if (CHOICE_TYPES.has(field.type) && !field.choices.length) notes.push(`${label}: needs a vocabulary (one value per line)`);
    else fields.push(field);
    seen.add(field.name);
  });
  return { schema: { ...schema, fields }, notes };
}

// The scorers the registry allows for a family ([{id, family}] as the page lists them).
export function scorersFor(scorers, family) {
  return scorers.filter((scorer) => scorer.family === family);
}
