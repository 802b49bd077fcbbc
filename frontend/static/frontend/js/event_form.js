// The event form, generated from a task kind's schema (DOM). Rules: event_schema.js.
//
//   const form = new EventForm(root, schema, { onChange, onCommit });
//   form.setDraft(draft); form.draft; form.showErrors({field: message}); form.setReadOnly(true);
//
// Field types: enum -> <select> (a key that only one value starts with takes it and moves
// on: "d" Daniil Medvedev; else type to jump), or a type-ahead box for longer
// lists (Enter or Tab takes the highlighted candidate and moves on); enum_set -> type-ahead
// with chips ("," or Tab takes the highlighted candidate and stays for the next one, Enter
// takes it and saves the event, Backspace on an empty box removes the last); int -> number box
// (a one-digit range takes its digit at once and moves on: a set's "2");
// bool -> yes / no; string -> text; token_list -> the shot-token editor (rows of
// sub-field selects; Alt+Enter adds a token after this one, Alt+Backspace removes it,
// Alt+Up / Alt+Down move it); interval_list -> rows of start / end seconds.
// The highlighted candidate of a type-ahead is the exact choice, else a prefix match, then
// word initials ("em": egg mixture), then substrings, the ones this ledger used most
// first, then the shortest (choiceCandidates, with the usage option),
// shown under the box as it is typed. "change" is reported after every edit; "commit" when Enter is pressed in a
// field (or Ctrl+Enter anywhere), after a type-ahead box's text has been taken.
// The controls of the list-like types (type-ahead, chips, tokens, intervals):
// event_form_controls.js.

import { addFromTypeahead, enumInput, enumSet, intervalList, select, tokenEdit, tokenList } from "./event_form_controls.js";
import { emptyDraft, fieldRoot, formSections, isRequired } from "./event_schema.js";
import { isModifierKey } from "./shortcuts.js";
import { el } from "./ui.js";

// Closed lists this short are a <select> (arrow keys); longer ones a type-ahead box.
const SELECT_MAX_CHOICES = 6;

// What a key can take at once in a select or a one-digit number box: [option value, its
// text as typed (lower case), the draft's value]; null for other controls.
function keyValues(field, control) {
  if (control instanceof HTMLSelectElement && field.type === "bool") return [["true", "yes", true], ["false", "no", false]];
  if (control instanceof HTMLSelectElement) return field.choices.map((c) => [c, c.replace(/_/g, " ").toLowerCase(), c]);
  if (field.type === "int" && !field.frame && Number.isInteger(field.min) && field.min >= 0 && Number.isInteger(field.max) && field.max <= 9) {
    const digits = [];
    for (let n = field.min; n <= field.max; n++) digits.push([String(n), String(n), n]);
    return digits;
  }
  return null;
}

export class EventForm extends EventTarget {
  constructor(root, schema, { idPrefix = "ev", usage = null, previous = null } = {}) {
    super();
    this.root = root;
    this.schema = schema;
    this.idPrefix = idPrefix;
    // usage(name) -> {choice: count}: how often this ledger used each value (the
    // type-ahead ranks the most used first); none: list order.
    this.usage = usage || (() => null);
    // previous(name) -> the value the event before this one has: an empty closed-list box
    // shows it under the box, and Enter there takes it; none: nothing offered.
    this.previous = previous || (() => null);
    this.readOnly = false;
    this._draft = emptyDraft(schema);
    this.form = el("form", { class: "event-form", novalidate: true, autocomplete: "off" });
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.commit();
    });
    this.form.addEventListener("keydown", (event) => this._swallowKey(event), true);
    this.form.addEventListener("keydown", (event) => this._onKey(event));
    this.root.append(this.form);
    this.render();
  }

  // After a choice taken at once: the rest of its name, then one of the keys that would have
  // taken it (swallow.keys), are eaten; any other key ends this and is handled as usual.
  _swallowKey(event) {
    const swallow = this._swallow;
    if (!swallow) return;
    // The box is known by its id: a mark landing meanwhile re-renders the form, and the
    // box the focus moved to is then a new element with the same id.
    const sameBox = swallow.box.id ? event.target.id === swallow.box.id : event.target === swallow.box;
    if (Date.now() - swallow.at > 2000 || !sameBox) {
      this._swallow = null; // only straight after the choice was taken
      return;
    }
    const key = event.key.length === 1 ? event.key.toLowerCase().replace(/[_-]/, " ") : event.key;
    if (isModifierKey(event)) return;
    if (swallow.rest && key === swallow.rest[0] && !event.ctrlKey && !event.altKey && !event.metaKey) {
      swallow.rest = swallow.rest.slice(1);
    } else if (swallow.keys.includes(event.key) && !event.ctrlKey && !event.altKey && !event.shiftKey) {
      this._swallow = null;
    } else {
      this._swallow = null;
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
  }

  // Enter commits, except in buttons and text areas, and on a type-ahead holding text,
  // where it adds the typed choice.
  _onKey(event) {
    // Alt+Enter outside a token row: a token at the end of the list (token rows handle
    // their own Alt+Enter: a token after this one).
    if (event.key === "Enter" && event.altKey && !event.target.closest(".token-row")) {
      const field = this.schema.fields.find((f) => f.type === "token_list");
      if (field && !this.readOnly) {
        event.preventDefault();
        event.stopPropagation();
        tokenEdit(this, field, (this._draft[field.name] || []).length - 1, "insert");
      }
      return;
    }
    if (event.key !== "Enter" || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target instanceof HTMLButtonElement || target instanceof HTMLTextAreaElement) return;
    event.preventDefault();
    event.stopPropagation();
    if (target instanceof HTMLInputElement && target.dataset.typeahead !== undefined) {
      this.commit(); // takes the typed candidate first
      return;
    }
    // An empty closed-list box offering the previous event's value (shown under it): Enter
    // takes that value and moves on.
    if (target instanceof HTMLInputElement && target.dataset.enum !== undefined && !target.value.trim() && !this._draft[target.dataset.enum]) {
      const offered = this.offered(target.dataset.enum);
      if (offered) {
        target.value = offered;
        this._set(target.dataset.enum, offered);
        this.focusNext(target.dataset.enum);
        return;
      }
    }
    // A closed-list box holding text it has not taken yet: complete it and move on.
    if (target instanceof HTMLInputElement && target.dataset.enum !== undefined && target.value.trim() && target.value !== (this._draft[target.dataset.enum] ?? "")) {
      target.dispatchEvent(new Event("change"));
      if (this._draft[target.dataset.enum]) this.focusNext(target.dataset.enum);
      return;
    }
    if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement) target.dispatchEvent(new Event("change"));
    this.commit();
  }

  // The previous event's value an empty closed-list box offers for Enter, or null.
  offered(name) {
    const field = this.schema.fields.find((f) => f.name === name);
    const value = this.readOnly || !field ? null : this.previous(name);
    return value && field.choices?.includes(value) ? value : null;
  }

  get draft() {
    return JSON.parse(JSON.stringify(this._draft));
  }

  // keepTyped: text being typed into the focused box survives (a boundary set while
  // typing a label); false when another event's draft replaces this one (a value typed
  // into the last event's end box must not survive into the next one).
  setDraft(draft, { keepTyped = true } = {}) {
    this._draft = { ...emptyDraft(this.schema), ...JSON.parse(JSON.stringify(draft)) };
    this.render({ keepTyped });
  }

  // Focus the first control of the field after `name` (the commit button after the last).
  focusNext(name) {
    const boxes = [...this.form.querySelectorAll("[data-field]")];
    const at = boxes.findIndex((box) => box.dataset.field === name);
    for (const box of boxes.slice(at + 1)) {
      const control = box.querySelector("select:not(:disabled), input:not(:disabled), textarea:not(:disabled)");
      if (control) {
        control.focus();
        return;
      }
    }
    this.form.querySelector("button.commit")?.focus();
  }

  setValue(name, value) {
    this._draft[name] = value;
    this.render();
    this._changed(name);
  }

  setReadOnly(readOnly) {
    this.readOnly = readOnly;
    this.render();
  }

  // The first label field still empty (not a frame box), e.g. the verb once both
  // boundaries are marked; false when every one is filled.
  focusFirstEmpty() {
    for (const field of this.schema.fields) {
      if (field.frame || field.type === "interval_list") continue;
      const value = this._draft[field.name];
      if (value !== null && value !== undefined && value !== "" && !(Array.isArray(value) && !value.length)) continue;
      const control = this.form.querySelector(`[data-field="${CSS.escape(field.name)}"] :is(select, input, textarea):not(:disabled)`);
      if (control) {
        control.focus();
        return true;
      }
    }
    return false;
  }

  // The first field, its text selected: what is typed replaces it ("e", then "close" over
  // "open" gives "close", never "openclose").
  focusFirst() {
    const first = this.form.querySelector("[data-field] select, [data-field] input:not([data-frame]), [data-field] textarea") || this.form.querySelector("select, input, textarea");
    if (!first) return;
    first.focus();
    if (first instanceof HTMLTextAreaElement || (first instanceof HTMLInputElement && typeof first.select === "function" && first.type !== "checkbox" && first.type !== "radio")) first.select();
  }

  // errors: {fieldPath: message}; paths like "shots[2].direction" mark that token row.
  showErrors(errors) {
    this.clearErrors();
    for (const [path, message] of Object.entries(errors || {})) this.markError(path, message);
  }

  // A field in error is marked for assistive technology too: its controls are
  // aria-invalid and described by the message under them, and one alert names every
  // field in error with its message ("end frame: before the start (900)").
  markError(path, message) {
    const { name, index } = fieldRoot(path);
    const box = this.form.querySelector(`[data-field="${CSS.escape(name || "")}"]`);
    const target = box || this.form;
    target.classList.add("has-error");
    const out = target.querySelector(":scope > .field-error") || target.appendChild(el("div", { class: "field-error" }));
    out.textContent = path === name || !box ? message : `${path}: ${message}`;
    // The line under a type-ahead box said the same ("“xq” is not one of the choices"): the
    // error is shown once, under the field.
    const hint = box?.querySelector(".typeahead-hint.no-match");
    if (hint) {
      hint.textContent = "";
      hint.classList.remove("no-match");
    }
    if (box) for (const control of box.querySelectorAll("select, input, textarea")) control.setAttribute("aria-invalid", "true");
    if (box && index !== null) box.querySelectorAll(".token-row, .interval-row")[index]?.classList.add("has-error");
    this._announceErrors();
  }

  clearErrors() {
    for (const node of this.form.querySelectorAll(".has-error")) node.classList.remove("has-error");
    for (const node of this.form.querySelectorAll(".field-error")) node.textContent = "";
    for (const node of this.form.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
    const summary = this.form.querySelector(":scope > .form-error-summary");
    if (summary) summary.textContent = "";
  }

  _announceErrors() {
    const summary = this.form.querySelector(":scope > .form-error-summary");
    if (!summary) return;
    const parts = [];
    for (const out of this.form.querySelectorAll(".field-error")) {
      if (!out.textContent) continue;
      const label = out.parentNode.querySelector(":scope > .field-label");
      parts.push(label ? `${label.textContent.replace(/ \(optional\)$/, "")}: ${out.textContent}` : out.textContent);
    }
    summary.textContent = parts.length ? `Not saved. ${parts.join("; ")}.` : "";
  }

  _changed(name) {
    this.dispatchEvent(new CustomEvent("change", { detail: { field: name, draft: this.draft } }));
  }

  commit() {
    if (this.readOnly) return;
    const pending = [...this.form.querySelectorAll("input[data-typeahead]")].find((input) => input.value.trim());
    if (pending && !addFromTypeahead(this, pending)) return;
    this.dispatchEvent(new CustomEvent("commit", { detail: { draft: this.draft } }));
  }

  // ---- rendering -----------------------------------------------------------------------

  render({ keepTyped = true } = {}) {
    const focused = document.activeElement && this.form.contains(document.activeElement) ? this._focusPath(document.activeElement) : null;
    if (focused && !keepTyped) focused.value = null;
    // A focused box taken out of the page fires "change" with what it held: that value
    // belongs to the draft being replaced (the stale end frame of issue 17), not this one.
    const leaving = document.activeElement && this.form.contains(document.activeElement) ? document.activeElement : null;
    if (leaving) leaving.addEventListener("change", (event) => event.stopImmediatePropagation(), { capture: true });
    this.form.replaceChildren();
    const byName = Object.fromEntries(this.schema.fields.map((f) => [f.name, f]));
    for (const [title, names] of formSections(this.schema)) {
      if (title === null) {
        for (const name of names) this.form.append(this._field(byName[name]));
        continue;
      }
      const section = el("fieldset", { class: "form-section", dataset: { section: title } }, [el("legend", { text: title })]);
      for (const name of names) section.append(this._field(byName[name]));
      this.form.append(section);
    }
    this.form.append(el("button", { type: "submit", class: "primary commit", text: "Add / save event (Enter)", disabled: this.readOnly }));
    this.form.append(el("p", { class: "form-error-summary sr-only", role: "alert" }));
    if (focused) this._restoreFocus(focused);
  }

  _focusPath(node) {
    const box = node.closest("[data-field]");
    const row = node.closest(".token-row, .interval-row");
    const typing = node instanceof HTMLInputElement || node instanceof HTMLTextAreaElement;
    return {
      field: box?.dataset.field,
      row: row ? [...row.parentNode.children].indexOf(row) : null,
      name: node.getAttribute("name"),
      // Text being typed that no "change" has taken in yet survives a re-render.
      value: typing ? node.value : null,
      caret: typing && node.type !== "number" ? node.selectionStart : null,
    };
  }

  _restoreFocus(path) {
    const box = this.form.querySelector(`[data-field="${CSS.escape(path.field || "")}"]`);
    if (!box) return;
    let scope = box;
    if (path.row !== null) scope = box.querySelectorAll(".token-row, .interval-row")[path.row] || box;
    const target = (path.name && scope.querySelector(`[name="${CSS.escape(path.name)}"]`)) || scope.querySelector("select, input, textarea, button");
    if (!target) return;
    if (path.value !== null && target.matches("input, textarea") && target.value !== path.value) {
      target.value = path.value;
      if (target.matches("[data-typeahead], [data-enum]")) target.dispatchEvent(new Event("input"));
      // Text put back by script in a plain box fires no "change" when the box is left
      // (Tab, a click), so the draft would never take it in: fire it on leaving, while the
      // box is still on the page. (Type-ahead boxes take their text on their own keys.)
      else target.addEventListener("blur", () => target.isConnected && target.dispatchEvent(new Event("change")), { once: true });
    }
    target.focus();
    if (path.caret !== null && target.setSelectionRange) target.setSelectionRange(path.caret, path.caret);
  }

  _field(field) {
    const required = isRequired(field);
    const id = `${this.idPrefix}-${field.name}`;
    const label = el("label", { for: id, class: "field-label", text: (field.label || field.name.replace(/_/g, " ")) + (required ? "" : " (optional)") });
    const box = el("div", { class: `field field-${field.type}`, dataset: { field: field.name, type: field.type } }, [label]);
    const value = this._draft[field.name];
    const disabled = this.readOnly;
    let control;
    if (field.type === "enum" && field.choices.length <= SELECT_MAX_CHOICES) {
      control = select(field.name, field.choices, value, { label: field.name });
      control.addEventListener("change", () => this._set(field.name, control.value || null));
    } else if (field.type === "enum") {
      control = enumInput(this, field, value);
    } else if (field.type === "bool") {
      control = el("select", { name: field.name, "aria-label": field.name });
      for (const [v, text] of [["", "—"], ["true", "yes"], ["false", "no"]]) control.append(el("option", { value: v, text }));
      control.value = value === true ? "true" : value === false ? "false" : "";
      control.addEventListener("change", () => this._set(field.name, control.value === "" ? null : control.value === "true"));
    } else if (field.type === "int") {
      control = el("input", { name: field.name, type: "number", step: "1", min: field.frame ? 0 : field.min, max: field.max, inputmode: "numeric", dataset: field.frame ? { frame: "1" } : {} });
      control.value = value ?? "";
      control.addEventListener("change", () => this._set(field.name, control.value === "" ? null : Number(control.value)));
    } else if (field.type === "string") {
      const long = (field.max_length || 2000) > 200;
      control = el(long ? "textarea" : "input", { name: field.name, rows: long ? 2 : undefined, maxlength: field.max_length });
      control.value = value ?? "";
      control.addEventListener("change", () => this._set(field.name, control.value === "" ? null : control.value));
      if (long) control.addEventListener("keydown", (e) => e.key === "Enter" && !e.shiftKey && !e.ctrlKey && (e.preventDefault(), control.dispatchEvent(new Event("change")), this.commit()));
    } else if (field.type === "enum_set") {
      control = enumSet(this, field, value || [], disabled);
    } else if (field.type === "token_list") {
      control = tokenList(this, field, value || [], disabled);
    } else {
      control = intervalList(this, field, value || [], disabled);
    }
    const keys = keyValues(field, control);
    if (keys) this._keyAtOnce(control, field, keys);
    if (control.matches("select, input, textarea")) {
      control.id = id;
      control.disabled = disabled;
    } else {
      control.querySelector("select, input, textarea")?.setAttribute("id", id);
    }
    const error = el("div", { class: "field-error", id: `${id}-error` });
    for (const node of control.matches("select, input, textarea") ? [control] : control.querySelectorAll("select, input, textarea")) {
      node.setAttribute("aria-describedby", [node.getAttribute("aria-describedby"), error.id].filter(Boolean).join(" "));
    }
    box.append(control, error);
    return box;
  }

  // A select or a one-digit number box takes a key at once when it is a whole value, or the
  // start of a named value only one name has ("4": games 4, "d": Daniil Medvedev, "y": yes,
  // "w": wide), shows it, and moves on; one Tab typed out of habit straight after is swallowed
  // (see _swallowKey). An Enter straight after is not: a select takes a key without Enter, so
  // an Enter there is the annotator's "save", and it saves (or names what is missing) from the
  // box the focus moved to. Values of several characters starting with a digit ("40" of the
  // points) are not taken at once: "4" then "0" may be 40 or 4 and 0, so those keep their Tab.
  _keyAtOnce(control, field, keys) {
    control.addEventListener("keydown", (event) => {
      if (this.readOnly || event.ctrlKey || event.altKey || event.metaKey || event.key.length !== 1) return;
      const key = event.key.toLowerCase();
      const fits = keys.filter(([, text]) => text.startsWith(key));
      if (fits.length !== 1 || (/\d/.test(key) && fits[0][1] !== key)) return;
      event.preventDefault();
      event.stopPropagation();
      const [value, , taken] = fits[0];
      control.value = value;
      this._set(field.name, taken);
      this.focusNext(field.name);
      this._swallow = { rest: "", keys: ["Tab"], at: Date.now(), box: document.activeElement };
    });
  }

  _set(name, value) {
    this._draft[name] = value;
    this._clearFieldError(name);
    this._changed(name);
  }

  _clearFieldError(name) {
    const box = this.form.querySelector(`[data-field="${CSS.escape(name)}"]`);
    if (!box) return;
    box.classList.remove("has-error");
    const out = box.querySelector(":scope > .field-error");
    if (out) out.textContent = "";
    for (const node of box.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
    if (!this.form.querySelector(".has-error")) this.clearErrors();
  }
}

export { isRequired };
