// Small DOM helpers shared by the pages.

export function $(selector, root = document) {
  return root.querySelector(selector);
}

export function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of [].concat(children)) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

// el() with the text as second argument: textEl("td", "3", { class: "num" }).
export function textEl(tag, text, attrs = {}) {
  return el(tag, { ...attrs, text });
}

export function pageConfig() {
  return JSON.parse(document.getElementById("page-config").textContent);
}

export function showError(box, error) {
  box.hidden = false;
  box.textContent = error && error.message ? error.message : String(error);
}

// The shortcut sheet: a <dialog> listing a shortcuts table (shortcuts.js).
// `setting`: an element shown above the table (the on/off switch of key_scope.js).
export function shortcutSheet(dialog, table, title = "Keyboard shortcuts", { formKeys = null, setting = null } = {}) {
  const keyName = (key) => key.replace("Arrow", "").replace("Ctrl+", "Ctrl + ").replace("Shift+", "Shift + ");
  const toRows = (list) =>
    list.map((row) => el("tr", {}, [el("td", {}, row.keys.map((k) => el("kbd", { text: keyName(k) }))), el("td", { text: row.help })]));
  const rows = toRows(table);
  // The form's keys, under their own heading (the boxes handle them, not the page).
  if (formKeys) rows.push(el("tr", {}, [el("th", { colspan: "2", text: "In the event form" })]), ...toRows(formKeys));
  // The heading takes the focus when the sheet opens (autofocus), so it opens at its top,
  // not scrolled down to the Close button.
  dialog.replaceChildren(
    el("h2", { text: title, tabindex: "-1", autofocus: true }),
    ...(setting ? [setting] : []),
    el("table", { class: "table shortcuts" }, [el("tbody", {}, rows)]),
    el("form", { method: "dialog" }, [el("button", { type: "submit", text: "Close (Esc)" })]),
  );
}

export function anyDialogOpen() {
  return Boolean(document.querySelector("dialog[open]"));
}

export function isField(target) {
  return Boolean(target && target.matches && target.matches("input, select, textarea, [contenteditable]"));
}

export function shortSha(sha) {
  return sha ? `${sha.slice(0, 12)}…` : "—";
}

// One date format on every page, as the server's templates write it ("j M Y, H:i T"):
// "1 Dec 2026, 16:43 UTC". The server's zone is UTC (deploy/settings.py TIME_ZONE).
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const two = (n) => String(n).padStart(2, "0");
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}, ${two(date.getUTCHours())}:${two(date.getUTCMinutes())} UTC`;
}

// Copy-to-clipboard button for a value (hashes).
export function copyButton(value, label = "copy") {
  const button = el("button", { type: "button", class: "copy", text: label });
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(value);
      button.textContent = "copied";
    } catch {
      button.textContent = "select and copy";
    }
  });
  return button;
}

// Runs a page's main(); a failure is shown in #load-error (and kept for tests) instead of
// leaving a half-drawn page.
export function boot(main) {
  main().catch((error) => {
    const box = $("#load-error");
    box.hidden = false;
    box.textContent = `This page could not load: ${error.message}`;
    window.frameledger.loadError = String(error.message);
  });
}
