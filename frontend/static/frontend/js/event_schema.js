// What a task kind's schema means for the editor. Pure: no DOM.
//
// The server (annotator/models/taskkind_schema.py) is the one authority on event rules: ranges,
// choices, start < end, grids. The editor only makes sure an event is complete and
// well-typed before it is sent; anything else the server refuses comes back as
// {code, message, field} and is shown on that field (`fieldRoot`).

export function fieldsOf(schema) {
  return schema.fields;
}

export function boundaryFields(schema) {
  const names = schema.boundary_fields || [];
  return names.length === 2 ? { start: names[0], end: names[1] } : null;
}

export function isRequired(field) {
  return field.required !== false;
}

// The form field an error's `field` refers to: "shots[2].direction" -> {name: "shots", index: 2, sub: "direction"}.
export function fieldRoot(path) {
  const match = /^([^[.]+)(?:\[(\d+)\])?(?:\.(\w+))?/.exec(String(path || ""));
  if (!match) return { name: null, index: null, sub: null };
  return { name: match[1], index: match[2] === undefined ? null : Number(match[2]), sub: match[3] || null };
}

// Choices of a token sub-field at `position` (token 0 may be narrowed).
export function tokenChoices(field, sub, position) {
  const narrowed = field.first_token_choices && field.first_token_choices[sub.name];
  return position === 0 && narrowed ? narrowed : sub.choices;
}

export function emptyToken(field, position) {
  const token = {};
  for (const sub of field.subfields) {
    const choices = tokenChoices(field, sub, position);
    token[sub.name] = choices.length === 1 ? choices[0] : "";
  }
  return token;
}

// A blank draft: every field unset (token lists and interval lists empty).
export function emptyDraft(schema) {
  const draft = {};
  for (const field of schema.fields) {
    if (field.type === "enum_set" || field.type === "token_list" || field.type === "interval_list") draft[field.name] = [];
    else draft[field.name] = null;
  }
  return draft;
}

// Draft (form values) -> event data for the API, or {errors} for incomplete fields.
// Optional empty fields are left out; nothing is range-checked here.
export function draftToEvent(schema, draft) {
  const data = {};
  const errors = {};
  for (const field of schema.fields) {
    const value = draft[field.name];
    const empty = value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0);
    if (empty) {
      if (isRequired(field)) errors[field.name] = "required";
      continue;
    }
    if (field.type === "int") {
      const number = typeof value === "number" ? value : Number(String(value).trim());
      if (!Number.isInteger(number)) errors[field.name] = "must be a whole number";
      else data[field.name] = number;
    } else if (field.type === "bool") {
      if (value === true || value === "true") data[field.name] = true;
      else if (value === false || value === "false") data[field.name] = false;
      else errors[field.name] = "choose yes or no";
    } else if (field.type === "token_list") {
      const missing = value.findIndex((token) => field.subfields.some((sub) => !token[sub.name]));
      if (missing >= 0) errors[field.name] = `token ${missing + 1} is incomplete`;
      else data[field.name] = value.map((token) => ({ ...token }));
    } else if (field.type === "interval_list") {
      const pairs = value.map((pair) => pair.map((x) => (x === "" || x === null ? NaN : Number(x))));
      const bad = pairs.findIndex((pair) => !pair.every(Number.isFinite));
      if (bad >= 0) errors[field.name] = `interval ${bad + 1} needs a start and an end`;
      else data[field.name] = pairs;
    } else if (field.type === "enum_set") {
      data[field.name] = [...value];
    } else {
      data[field.name] = value;
    }
  }
  // End before start is caught here, before the server is asked (it stays the authority).
  const bounds = boundaryFields(schema);
  if (bounds && Number.isInteger(data[bounds.start]) && Number.isInteger(data[bounds.end]) && data[bounds.end] < data[bounds.start]) {
    errors[bounds.end] = `the end (${data[bounds.end]}) is before the start (${data[bounds.start]})`;
  }
  return Object.keys(errors).length ? { errors } : { data };
}

// Event data -> draft (for editing an existing event).
export function eventToDraft(schema, data) {
  const draft = emptyDraft(schema);
  for (const field of schema.fields) {
    if (data[field.name] === undefined) continue;
    draft[field.name] = JSON.parse(JSON.stringify(data[field.name]));
  }
  return draft;
}

// Type-ahead for closed lists: exact match, else the only prefix match, else the only
// substring match; null when ambiguous or unknown. Case- and separator-insensitive.
export function matchChoice(choices, text) {
  const norm = (s) => String(s).toLowerCase().replace(/[\s_-]+/g, " ").trim();
  const wanted = norm(text);
  if (!wanted) return null;
  const exact = choices.find((c) => norm(c) === wanted);
  if (exact) return exact;
  const prefix = choices.filter((c) => norm(c).startsWith(wanted));
  if (prefix.length === 1) return prefix[0];
  const inside = choices.filter((c) => norm(c).includes(wanted));
  return inside.length === 1 ? inside[0] : null;
}

// The choices a typed text could mean, best first: prefix matches, then word initials
// (as editors' pickers do: "em" -> egg_mixture), then substrings; within each, the ones
// this ledger used most first (``usage``: choice -> count, from usageCounts), then shortest
// first (list order among equals), for the type-ahead hint and messages:
// "bage" -> ["bagel", "bagel_container"]; "fr" -> ["fridge", "freezer", "fridge_drawer"]
// (with freezer used twice already: ["freezer", "fridge", "fridge_drawer"]).
export function choiceCandidates(choices, text, limit = 8, usage = null) {
  const norm = (s) => String(s).toLowerCase().replace(/[\s_-]+/g, " ").trim();
  const wanted = norm(text);
  if (!wanted) return [];
  const used = (c) => (usage && usage[c]) || 0;
  const byLength = (list) =>
    list
      .map((c, i) => [c, i])
      .sort((a, b) => used(b[0]) - used(a[0]) || norm(a[0]).length - norm(b[0]).length || a[1] - b[1])
      .map(([c]) => c);
  const prefix = byLength(choices.filter((c) => norm(c).startsWith(wanted)));
  const acronym = wanted.length > 1 && !wanted.includes(" ") ? byLength(choices.filter((c) => !prefix.includes(c) && wordStarts(norm(c), wanted))) : [];
  const inside = byLength(choices.filter((c) => !prefix.includes(c) && !acronym.includes(c) && norm(c).includes(wanted)));
  return [...prefix, ...acronym, ...inside].slice(0, limit);
}

// Whether ``text`` is the starts of a name's words in order, from its first word: its
// initials ("mc": milk container) or longer starts ("tof": turn off, "plsp": plastic spatula).
export function wordStarts(name, text) {
  const words = String(name).split(" ");
  const from = (w, t) => {
    if (t === text.length) return true;
    if (w === words.length) return false;
    for (let n = Math.min(words[w].length, text.length - t); n >= 1; n--) {
      if (words[w].startsWith(text.slice(t, t + n)) && from(w + 1, t + n)) return true;
    }
    return false;
  };
  return text.length > 0 && from(0, 0);
}

// What a closed list's box takes as it is typed: [choice, the rest of its name] when only
// one choice fits by its start or its words' starts ("o": open, "tof": turn off, whatever
// other names hold the letters), else null. The rest is what typing on would add ("" for
// words' starts), swallowed after the box has moved on.
export function atOnce(choices, text) {
  const norm = (s) => String(s).toLowerCase().replace(/[\s_-]+/g, " ");
  const wanted = norm(text).trim();
  if (!wanted) return null;
  const byStart = (c) => norm(c).startsWith(norm(text));
  const fits = choices.filter((c) => byStart(c) || wordStarts(norm(c).trim(), wanted));
  if (fits.length !== 1) return null;
  return [fits[0], byStart(fits[0]) ? norm(fits[0]).slice(norm(text).length) : ""];
}

// What a type-ahead box takes on Enter, Tab or ",": the exact choice, else the best
// candidate (the one its hint highlights); null when nothing matches.
export function bestChoice(choices, text, usage = null) {
  return matchChoice(choices, text) || choiceCandidates(choices, text, 1, usage)[0] || null;
}

// How often each value of a field is used by these events (enum or enum set): the
// type-ahead ranks the most used first, so a noun used often takes one or two keys.
export function usageCounts(events, name) {
  const counts = {};
  for (const data of events) {
    const value = data?.[name];
    for (const v of Array.isArray(value) ? value : value == null ? [] : [value]) counts[v] = (counts[v] || 0) + 1;
  }
  return counts;
}

// The value of ``name`` in the event just before frame ``start`` on the timeline (the
// latest start before it), or null: what an empty closed-list box offers for Enter.
export function previousValue(events, bounds, start, name) {
  if (!bounds || !Number.isInteger(start)) return null;
  let best = null;
  for (const data of events) {
    const at = data?.[bounds.start];
    if (Number.isInteger(at) && at < start && (!best || at >= best[bounds.start])) best = data;
  }
  const value = best?.[name];
  return value === undefined || value === null || Array.isArray(value) ? null : value;
}

// Why a typed text is not a choice, with what it could be.
export function choiceError(choices, text) {
  const candidates = choiceCandidates(choices, text);
  if (candidates.length > 1) return `“${text}” matches several: ${candidates.join(", ")} (type more)`;
  const first = String(text).trim().slice(0, 1).toLowerCase();
  const near = choices.filter((c) => c.toLowerCase().startsWith(first)).slice(0, 8);
  return near.length ? `“${text}” is not one of the choices; did you mean ${near.join(", ")}?` : `“${text}” is not one of the choices`;
}

// One line for tables and timeline tooltips: the parts of the kind's summary
// (schema.ui.summary, from its family's adapter), else the values of its fields.
export function summarize(schema, data) {
  if (!data) return "";
  const summary = schema.ui && schema.ui.summary;
  if (summary) {
    const shown = summary.filter((part) => !part.if || isSet(data[part.if])).map((part) => fillIn(part.text, data));
    return shown.filter((text) => text !== null).join(" · ");
  }
  const bounds = boundaryFields(schema);
  const parts = [];
  for (const field of schema.fields) {
    if (bounds && (field.name === bounds.start || field.name === bounds.end)) continue;
    const value = data[field.name];
    if (value === undefined || value === null) continue;
    if (field.type === "token_list") parts.push(`${value.length} ${field.name}`);
    else if (field.type === "interval_list") parts.push(value.map(([a, b]) => `${a}–${b} s`).join(", "));
    else if (Array.isArray(value)) parts.push(value.join(", "));
    else parts.push(String(value));
  }
  return parts.join(" · ");
}

const isSet = (value) => value !== undefined && value !== null && value !== "" && value !== false;

// A summary part's text with the event's values: "{server|surname} serves" -> "Medvedev
// serves". {name}: the value ("?" when missing); |surname: a name's last word; |words:
// underscores as spaces; |count:noun: a list's length with the noun ("1 shot", "3 shots";
// the part is left out when the value is not a list).
const FILTERS = {
  surname: (value) => (value ? String(value).split(" ").slice(-1)[0] : "?"),
  words: (value) => (value === undefined || value === null ? "?" : String(value).replace(/_/g, " ")),
  count: (value, noun) => (Array.isArray(value) ? `${value.length} ${noun}${value.length === 1 ? "" : "s"}` : null),
};

function fillIn(text, data) {
  let whole = true;
  const filled = String(text).replace(/\{(\w+)(?:\|(\w+)(?::(\w+))?)?\}/g, (_, name, filter, noun) => {
    const value = filter ? (FILTERS[filter] || (() => "?"))(data[name], noun) : String(data[name] ?? "?");
    if (value === null) whole = false;
    return value ?? "";
  });
  return whole ? filled : null;
}

// Sections of a long form (schema.ui.sections, from the family's adapter): [title, field
// names]; fields not listed go last.
export function formSections(schema) {
  const sections = schema.ui && schema.ui.sections;
  if (!sections) return [[null, schema.fields.map((f) => f.name)]];
  const listed = new Set(sections.flatMap(([, names]) => names));
  const rest = schema.fields.map((f) => f.name).filter((name) => !listed.has(name));
  const known = new Set(schema.fields.map((f) => f.name));
  const out = sections.map(([title, names]) => [title, names.filter((name) => known.has(name))]).filter(([, names]) => names.length);
  return rest.length ? [...out, ["Other", rest]] : out;
}

export function formatValue(field, value) {
  if (value === undefined || value === null) return "—";
  if (field && field.type === "token_list") return value.map((t) => Object.values(t).join("/")).join(" → ");
  if (field && field.type === "interval_list") return value.map(([a, b]) => `[${a}, ${b}]`).join(" ");
  if (Array.isArray(value)) return value.join(", ");
  return String(value);
}

// A time in seconds snapped to the grid of `step` seconds (nearest point).
export function snapToGrid(seconds, step, duration) {
  if (!step) return seconds;
  const snapped = Math.round(seconds / step) * step;
  const clean = Number(snapped.toFixed(6));
  return duration !== undefined && clean > duration ? Number(duration.toFixed(6)) : clean;
}

// An interval marked at [start, end] seconds, snapped to the grid. Both ends go to the
// nearest grid point; an interval that would be empty (both ends on one point, e.g.
// 1.25 s and 2.08 s on a 2 s grid) is widened to one grid step after the start, or
// before it at the end of the video. Returns {interval: [a, b], note} (note: what moved).
export function snapInterval(start, end, step, duration) {
  if (!step) return { interval: [start, end], note: "" };
  let a = snapToGrid(start, step, duration);
  let b = snapToGrid(end, step, duration);
  let note = "";
  if (b <= a) {
    const widened = Number((a + step).toFixed(6));
    if (duration === undefined || widened <= duration + 1e-6) b = duration !== undefined ? Math.min(widened, Number(duration.toFixed(6))) : widened;
    else a = Number(Math.max(0, b - step).toFixed(6));
    if (b <= a) return { interval: null, note: `no interval of one ${step} s grid step fits here` };
    note = `both ends snapped to ${snapToGrid(start, step, duration)} s on the ${step} s grid; widened to one step`;
  }
  return { interval: [a, b], note };
}

// The consistency warnings the kind's family asks for while an event is edited
// (schema.ui.checks, from its adapter; advice, not rules): each check names a rule of
// CHECKS and gives the rule's fields and values.
export function formWarnings(schema, data) {
  const checks = (schema.ui && schema.ui.checks) || [];
  return checks.flatMap((check) => (CHECKS[check.rule] ? CHECKS[check.rule](check, data) : []));
}

export const CHECKS = {
  // How a point ended says how many tokens it has (SCORING.md section 2): a result in
  // `clean` as many as the `count` field, any other one more (the missed stroke); one in
  // `single` exactly one; the `error` field is `no_error` exactly for the clean ones.
  point_ending(check, data) {
    const warnings = [];
    const shots = Array.isArray(data[check.tokens]) ? data[check.tokens] : null;
    const rally = data[check.count];
    const result = data[check.result];
    const clean = check.clean.includes(result);
    if (shots && Number.isInteger(rally) && result) {
      const expected = clean ? rally : rally + 1;
      if (shots.length !== expected) {
        warnings.push(`a point ending in ${result} usually has ${expected} shot token(s) for ${rally} rally shot(s); this one has ${shots.length}`);
      }
      if (check.single.includes(result) && shots.length !== 1) warnings.push(`an ${result} has exactly one shot token`);
    }
    const error = data[check.error];
    if (result && error) {
      if (clean && error !== check.no_error) warnings.push(`${check.error} is "${check.no_error}" for ${result}`);
      if (!clean && error === check.no_error) warnings.push(`an error point needs a ${check.error} other than "${check.no_error}"`);
    }
    return warnings;
  },
};
