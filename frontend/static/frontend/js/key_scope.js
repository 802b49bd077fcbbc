// Where the page's shortcuts may act, and the setting that turns the single-character ones
// off (WCAG 2.1.4), shared by the workspace and the adjudication page (DOM).
//
//   const scope = new KeyScope({ home: $("#workspace"), user: config.username });
//   scope.standardKey(event)      // true: the focused control owns this key (Space on a button)
//   scope.allows(event)           // false: the page's shortcut must not run for this key
//   scope.settingControl()        // the checkbox the `?` sheet shows
//   afterDialogs(() => focusHome());  // a dialog closed onto nothing visible: focus goes home
//
// Standard keys first: Space and Enter press a focused button, link, summary or check box;
// arrows, Home, End, PageUp and PageDown act on a focused radio button, select, slider, text
// box or list (role listbox / grid, which handle their own keys) and never on the player.
// Shortcuts second: a single-character key (a letter, digit, punctuation or symbol, with no
// Ctrl, Alt or Meta) is a shortcut only where the page owns the focus — its home element
// or something inside it that is not a form control or a link — never on the top bar, and
// only while the person has not turned such shortcuts off. The setting is kept per user in
// this browser (localStorage `frameledger:single-key-shortcuts:<user>`, "off" or absent).

import { el, isField } from "./ui.js";

const PRESSABLE = "button, a[href], summary, [role=button], [role=link], input[type=checkbox], input[type=radio], input[type=button], input[type=submit], input[type=reset]";
const NAVIGATION_KEYS = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown"]);
// Widgets that move their own choice with the arrows (the items list is one).
const ARROW_OWNERS = "[role=listbox], [role=grid], [role=radiogroup], [role=slider], [role=tablist], [role=menu]";

// A key that types a character: a letter, digit, punctuation or symbol, no Ctrl/Alt/Meta.
// Space is not one (it plays and pauses where the page owns the focus, as media players do).
export function isSingleCharacter(event) {
  return event.key.length === 1 && event.key !== " " && !event.ctrlKey && !event.altKey && !event.metaKey;
}

export function storageKey(user) {
  return `frameledger:single-key-shortcuts:${user || ""}`;
}

export class KeyScope {
  constructor({ home, user, storage = globalThis.localStorage }) {
    this.home = home;
    this.key = storageKey(user);
    this.storage = storage;
  }

  get singleKeysOn() {
    try {
      return this.storage.getItem(this.key) !== "off";
    } catch {
      return true;
    }
  }

  set singleKeysOn(on) {
    try {
      if (on) this.storage.removeItem(this.key);
      else this.storage.setItem(this.key, "off");
    } catch {
      // Storage refused (private mode): the choice holds for this page only.
    }
  }

  // The focused element handles this key itself: the page leaves it alone.
  standardKey(event) {
    const target = event.target;
    if (!(target instanceof Element) || event.ctrlKey || event.altKey || event.metaKey) return false;
    if ((event.key === " " || event.key === "Enter") && target.closest(PRESSABLE)) return true;
    if (NAVIGATION_KEYS.has(event.key) && (isField(target) || target.closest(ARROW_OWNERS))) return true;
    return false;
  }

  // The page owns the focus: its home element or inside it, outside form controls and links.
  ownsFocus(target) {
    if (!target || target === document.body || target === document.documentElement) return true;
    if (!(target instanceof Element) || !this.home.contains(target)) return false;
    return !this.inField(target);
  }

  // A form control or a link inside the page: only the shortcuts safe in a field run there.
  inField(target) {
    return target instanceof Element && (isField(target) || Boolean(target.closest("a[href]")));
  }

  // Whether a page shortcut may run for this keydown (the key tables decide which one; in a
  // field, commandFor's inField keeps only Ctrl+Enter, Esc and Ctrl+S).
  allows(event) {
    const target = event.target;
    if (this.standardKey(event)) return false;
    const inPage = !(target instanceof Element) || target === document.body || target === document.documentElement || this.home.contains(target);
    if (!inPage) return false; // the top bar, a dialog: never the page's shortcuts
    if (isSingleCharacter(event)) return this.singleKeysOn && this.ownsFocus(target);
    return true;
  }

  // The `?` sheet's control for the setting.
  settingControl() {
    const box = el("input", { type: "checkbox", id: "single-key-shortcuts" });
    box.checked = this.singleKeysOn;
    box.addEventListener("change", () => (this.singleKeysOn = box.checked));
    return el("p", { class: "shortcut-setting" }, [
      el("label", { for: "single-key-shortcuts" }, [box, " Single-character shortcuts (letters, digits, symbols such as ? [ ]) on this page"]),
      el("span", { class: "small muted", text: " Off: those keys do nothing here (kept for you in this browser); Space, Enter, Esc, the arrows and Ctrl shortcuts still work, and this sheet opens with its button." }),
    ]);
  }
}

// Visible: drawn with a size (not hidden, not display: none, not inside a closed dialog).
export function isVisible(node) {
  return Boolean(node && node.isConnected && node.getClientRects().length && !node.closest("[hidden], dialog:not([open])"));
}

// After any dialog closes, the focus must be on something visible: the browser puts it back
// where it was before the dialog opened, which may be gone or hidden by then (the Freeze…
// button once frozen); then `fallback()` places it.
export function afterDialogs(fallback) {
  for (const dialog of document.querySelectorAll("dialog")) {
    dialog.addEventListener("close", () => {
      setTimeout(() => {
        const active = document.activeElement;
        if (!active || active === document.body || !isVisible(active)) fallback();
      }, 0);
    });
  }
}
