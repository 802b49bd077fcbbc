// The event form's controls for the list-like field types (DOM, part of event_form.js):
// the closed-list type-ahead box, the set of chips, the shot-token editor and the rows of
// intervals. Each takes the EventForm it belongs to and works on its draft through the
// form's own _draft, _set and render, as the form's methods do.

import { atOnce, bestChoice, choiceCandidates, choiceError, emptyToken, tokenChoices } from "./event_schema.js";
import { el } from "./ui.js";

export function select(name, choices, value, { blank = "—", label } = {}) {
  const node = el("select", { name, "aria-label": label || name });
  node.append(el("option", { value: "", text: blank }));
  for (const choice of choices) node.append(el("option", { value: choice, text: choice.replace(/_/g, " ") }));
  node.value = value ?? "";
  return node;
}

// ---- enum: type-ahead box --------------------------------------------------------

export function enumInput(form, field, value) {
  const listId = `${form.idPrefix}-${field.name}-choices`;
  const input = el("input", { name: field.name, list: listId, placeholder: "type to choose", dataset: { enum: field.name }, disabled: form.readOnly });
  input.value = value ?? "";
  const datalist = el("datalist", { id: listId });
  for (const choice of field.choices) datalist.append(el("option", { value: choice }));
  input.addEventListener("change", () => {
    if (!input.value.trim()) {
      form._set(field.name, null);
      return;
    }
    const choice = bestChoice(field.choices, input.value, form.usage(field.name));
    if (choice) {
      input.value = choice;
      form._set(field.name, choice);
    } else {
      form._draft[field.name] = null;
      form.markError(field.name, choiceError(field.choices, input.value));
    }
  });
  const hint = typeaheadHint(form, input, field);
  // Empty: the line under the box names the previous event's value Enter takes.
  const offer = () => {
    const offered = !input.value.trim() && !form._draft[field.name] ? form.offered(field.name) : null;
    if (offered) hint.textContent = `Enter: ${offered.replace(/_/g, " ")}, as the event before (or type to choose)`;
    else if (!input.value.trim()) hint.textContent = "";
  };
  input.addEventListener("focus", offer);
  input.addEventListener("input", offer);
  // Typed as far as only one choice fits (by its start, or by its words' starts: "tof"
  // turn off): taken at once, and on to the next field. The rest of its name and an
  // Enter or Tab typed out of habit right after (the keys that take a choice in this box)
  // are swallowed, so they never land in the next field (see EventForm._swallowKey).
  input.addEventListener("input", (event) => {
    if (!event.isTrusted || form.readOnly) return;
    const [choice, rest] = atOnce(field.choices, input.value) || [];
    if (!choice) return;
    input.value = choice;
    form._set(field.name, choice);
    form.focusNext(field.name);
    // Only in the box the focus moved to (a key anywhere else ends it).
    form._swallow = { rest, keys: ["Enter", "Tab"], at: Date.now(), box: document.activeElement };
  });
  input.addEventListener("keydown", (event) => {
    // Tab takes the highlighted candidate (then moves on as usual).
    if (event.key === "Tab" && !event.shiftKey && input.value.trim() && input.value !== (form._draft[field.name] ?? "")) input.dispatchEvent(new Event("change"));
  });
  return el("div", { class: "typeahead" }, [input, datalist, hint]);
}

// ---- enum set: type-ahead + chips ------------------------------------------------

export function enumSet(form, field, values, disabled) {
  const listId = `${form.idPrefix}-${field.name}-choices`;
  const chips = el("span", { class: "chips" });
  for (const v of values) {
    const remove = el("button", { type: "button", class: "chip-x", "aria-label": `remove ${v}`, text: "×", disabled, tabindex: "-1" });
    remove.addEventListener("click", () => {
      form._set(field.name, values.filter((x) => x !== v));
      form.render();
    });
    chips.append(el("span", { class: "chip", dataset: { value: v } }, [v, remove]));
  }
  const input = el("input", { name: field.name, list: listId, placeholder: "type, Enter to add", dataset: { typeahead: field.name }, disabled });
  const datalist = el("datalist", { id: listId });
  for (const choice of field.choices) if (!values.includes(choice)) datalist.append(el("option", { value: choice }));
  const hint = typeaheadHint(form, input, field, { several: true });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Backspace" && !input.value && values.length) {
      event.preventDefault();
      form._set(field.name, values.slice(0, -1));
      form.render();
    } else if ((event.key === "," || (event.key === "Tab" && !event.shiftKey)) && input.value.trim()) {
      // "," or Tab: take the highlighted candidate and stay here for the next one.
      event.preventDefault();
      event.stopPropagation();
      addFromTypeahead(form, input);
    }
  });
  return el("div", { class: "typeahead" }, [chips, input, datalist, hint]);
}

// The line under a type-ahead box: what Enter takes, and the other candidates.
function typeaheadHint(form, input, field, { several = false } = {}) {
  const hint = el("div", { class: "typeahead-hint", "aria-live": "polite" });
  input.addEventListener("input", () => {
    // What is typed now is judged on this line: an error about the text before it goes.
    if (input.closest(".field")?.classList.contains("has-error")) form._clearFieldError(field.name);
    const text = input.value.trim();
    const [best, ...rest] = text ? choiceCandidates(field.choices, text, 8, form.usage(field.name)) : [];
    hint.classList.toggle("no-match", Boolean(text) && !best);
    if (!text) hint.textContent = "";
    else if (!best) hint.textContent = choiceError(field.choices, text);
    else {
      const keys = several ? "Enter: add and save · , or Tab: add, then the next" : "Enter or Tab";
      hint.textContent = `${best.replace(/_/g, " ")} (${keys})${rest.length ? ` · also ${rest.map((c) => c.replace(/_/g, " ")).join(", ")}` : ""}`;
    }
  });
  return hint;
}

export function addFromTypeahead(form, input) {
  const name = input.dataset.typeahead;
  const field = form.schema.fields.find((f) => f.name === name);
  const choice = bestChoice(field.choices, input.value, form.usage(name));
  if (!choice) {
    form.markError(name, choiceError(field.choices, input.value));
    return false;
  }
  const values = form._draft[name] || [];
  input.value = "";
  if (!values.includes(choice)) form._set(name, [...values, choice]);
  form.render();
  return true;
}

// ---- token list: the shot-token editor -------------------------------------------

export function tokenList(form, field, tokens, disabled) {
  const list = el("ol", { class: "token-list" });
  tokens.forEach((token, position) => {
    const row = el("li", { class: "token-row", dataset: { index: String(position) } });
    for (const sub of field.subfields) {
      const control = select(sub.name, tokenChoices(field, sub, position), token[sub.name], { label: `${field.name} ${position + 1} ${sub.name}` });
      control.disabled = disabled;
      control.addEventListener("change", () => {
        const next = form._draft[field.name].map((t) => ({ ...t }));
        next[position][sub.name] = control.value;
        form._set(field.name, next);
      });
      control.addEventListener("keydown", (event) => tokenKey(form, event, field, position));
      row.append(control);
    }
    const remove = el("button", { type: "button", class: "token-x", "aria-label": `remove token ${position + 1}`, text: "×", disabled, tabindex: "-1" });
    remove.addEventListener("click", () => tokenEdit(form, field, position, "remove"));
    row.append(remove);
    list.append(row);
  });
  const add = el("button", { type: "button", class: "token-add", text: "+ token (Alt+Enter)", disabled, tabindex: "-1" });
  add.addEventListener("click", () => tokenEdit(form, field, tokens.length - 1, "insert"));
  return el("div", { class: "tokens" }, [list, add]);
}

function tokenKey(form, event, field, position) {
  if (!event.altKey) return;
  const action = { Enter: "insert", Backspace: "remove", ArrowUp: "up", ArrowDown: "down" }[event.key];
  if (!action) return;
  event.preventDefault();
  event.stopPropagation();
  tokenEdit(form, field, position, action);
}

export function tokenEdit(form, field, position, action) {
  const tokens = (form._draft[field.name] || []).map((t) => ({ ...t }));
  let focus = position;
  if (action === "insert") {
    tokens.splice(position + 1, 0, emptyToken(field, position + 1));
    focus = position + 1;
  } else if (action === "remove") {
    tokens.splice(position, 1);
    focus = Math.min(position, tokens.length - 1);
  } else {
    const other = action === "up" ? position - 1 : position + 1;
    if (other < 0 || other >= tokens.length) return;
    [tokens[position], tokens[other]] = [tokens[other], tokens[position]];
    focus = other;
  }
  // Token 0 is narrowed (the serve): keep values that are still allowed there.
  tokens.forEach((token, i) => {
    const fixed = emptyToken(field, i); // a sub-field with one allowed value takes it
    for (const sub of field.subfields) {
      if (token[sub.name] && !tokenChoices(field, sub, i).includes(token[sub.name])) token[sub.name] = "";
      if (fixed[sub.name]) token[sub.name] = fixed[sub.name];
    }
  });
  form._set(field.name, tokens);
  form.render();
  const row = form.form.querySelectorAll(`[data-field="${CSS.escape(field.name)}"] .token-row`)[focus];
  (row?.querySelector("select:not(:disabled)") || form.form.querySelector(`[data-field="${CSS.escape(field.name)}"] .token-add`))?.focus();
}

// ---- interval list ----------------------------------------------------------------

export function intervalList(form, field, intervals, disabled) {
  const list = el("ol", { class: "interval-list" });
  intervals.forEach((pair, position) => {
    const row = el("li", { class: "interval-row", dataset: { index: String(position) } });
    ["start", "end"].forEach((side, k) => {
      const input = el("input", { type: "number", step: field.grid_step || "any", min: "0", name: `${field.name}-${side}`, "aria-label": `${field.name} ${position + 1} ${side} (s)`, disabled });
      input.value = pair[k] ?? "";
      input.addEventListener("change", () => {
        const next = form._draft[field.name].map((p) => [...p]);
        next[position][k] = input.value === "" ? "" : Number(input.value);
        form._set(field.name, next);
      });
      row.append(el("label", { class: "inline-label" }, [`${side} `, input, " s"]));
    });
    const remove = el("button", { type: "button", "aria-label": `remove interval ${position + 1}`, text: "×", disabled, tabindex: "-1" });
    remove.addEventListener("click", () => {
      const next = form._draft[field.name].filter((_, i) => i !== position);
      form._set(field.name, next);
      form.render();
    });
    row.append(remove);
    list.append(row);
  });
  const add = el("button", { type: "button", class: "interval-add", text: "+ interval", disabled, tabindex: "-1" });
  add.addEventListener("click", () => {
    form._set(field.name, [...(form._draft[field.name] || []), ["", ""]]);
    form.render();
  });
  return el("div", { class: "intervals" }, [list, add]);
}
