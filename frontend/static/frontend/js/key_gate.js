// Keys held back while a page cannot take them yet, then replayed in order (DOM).
//
//   const gate = new KeyGate({ onChange });   // holds from the start: the page is loading
//   gate.release();                           // replays what was typed, then lets keys through
//   gate.hold("saving the decision");         // holds again (a decision in flight)
//
// While held, every key typed is taken before any other listener (capture phase on the
// window) and kept; `onChange({ held, reason, count })` lets the page show that it is not
// ready and how many keys wait. On release the keys are replayed one by one as keydown
// events on the element that has the focus at that moment, so the page's own listeners
// run them as if typed now; a printable key that nothing took (a letter into a text box)
// is inserted as text, Backspace deletes, Tab moves to the next field (Shift+Tab back),
// Space or Enter on a button presses it, an arrow in a radio group moves the choice (the
// standard keys do what they do when typed later, issue 43). A replayed key
// that holds the gate again (it started a decision) leaves the rest waiting for the next
// release. `drop()` forgets the waiting keys and returns how many there were.
//
// The keys typed before this module ran were kept by the page's first script
// (_early_keys.html, window.__flEarlyKeys): the gate takes them over, first in line. If a
// key reached the page before even that script ran (its keyup came without its keydown),
// the first release uses none of the keys typed while the page opened and calls
// `onLost({ lost, dropped })`: a sequence that lost its beginning never runs. The keys of
// the same burst typed after the page is ready are refused too (until a pause of a second),
// each one calling onLost again with the count so far.
//
// `refuse(key)` (optional) names a key the gate must not keep for later (a decision key
// typed while another decision is recorded: it would act on an item not yet on screen);
// such a key is used nowhere and `onRefused(key, reason)` tells the page.

import { isModifierKey } from "./shortcuts.js";

// A pause this long ends a burst of typing (see _refuseRestOfBurst).
const PAUSE_MS = 1000;

const FOCUSABLE = "input:not(:disabled), select:not(:disabled), textarea:not(:disabled), button:not(:disabled), a[href], [tabindex]:not([tabindex='-1'])";

function isTextBox(node) {
  return node instanceof HTMLTextAreaElement || (node instanceof HTMLInputElement && !["checkbox", "radio", "button", "submit", "range"].includes(node.type));
}

export class KeyGate {
  constructor({ onChange = () => {}, onLost = () => {}, refuse = () => false, onRefused = () => {}, held = "loading" } = {}) {
    this.reason = held;
    this.keys = [];
    this.onChange = onChange;
    this.onLost = onLost;
    this.refuse = refuse;
    this.onRefused = onRefused;
    this.replaying = false;
    window.addEventListener("keydown", (event) => this._take(event), true);
    window.addEventListener("keypress", (event) => this.reason && event.isTrusted && event.preventDefault(), true);
    this.lastKeyAt = -Infinity; // event.timeStamp of the last key typed
    this.lostBurst = null;
    this.early = window.__flEarlyKeys || null;
    this.earlyLastAt = this.early ? this.early.last : -Infinity;
    if (this.early) {
      this.early.stopKeys();
      for (const key of this.early.keys) this._keep(key);
      this.early.keys = [];
    }
  }

  get held() {
    return this.reason !== null;
  }

  _take(event) {
    if (!event.isTrusted || isModifierKey(event)) return; // a modifier: kept as the next key's shiftKey / altKey
    if (this._refuseRestOfBurst(event)) return;
    this.lastKeyAt = event.timeStamp;
    // Held, or keys still waiting to be replayed (a key typed now goes after them).
    if (!this.reason && !this.keys.length) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    const { key, code, ctrlKey, shiftKey, altKey, metaKey } = event;
    if (this.early) this.early.down.add(code || key); // its keyup is not a lost key's
    this._keep({ key, code, ctrlKey, shiftKey, altKey, metaKey });
  }

  // After a lost key, the rest of that burst (keys less than PAUSE_MS apart) is refused
  // too, even once the page is ready: it goes on a sequence whose beginning is gone.
  _refuseRestOfBurst(event) {
    const burst = this.lostBurst;
    if (!burst) return false;
    if (event.timeStamp - burst.last >= PAUSE_MS) {
      this.lostBurst = null;
      return false;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
    burst.last = event.timeStamp;
    burst.dropped += 1;
    this.onLost({ lost: burst.lost, dropped: burst.dropped });
    return true;
  }

  _keep(key) {
    if (this.refuse(key)) this.onRefused(key, this.reason);
    else this.keys.push(key);
    this._changed();
  }

  _changed() {
    this.onChange({ held: this.held, reason: this.reason, count: this.keys.length });
  }

  hold(reason) {
    this.reason = reason;
    this._changed();
  }

  drop() {
    const count = this.keys.length;
    this.keys = [];
    this._changed();
    return count;
  }

  // Replays the waiting keys (each after the page has handled the one before: a
  // microtask turn and a frame), unless one of them holds the gate again.
  async release() {
    this.reason = null;
    if (this.early) {
      const { lost } = this.early;
      this.early.stopWatch();
      this.early = null;
      if (lost) {
        this.lostBurst = { lost, dropped: this.drop(), last: Math.max(this.lastKeyAt, this.earlyLastAt) };
        this.onLost(this.lostBurst);
      }
    }
    this._changed();
    while (this.keys.length && !this.reason) {
      const key = this.keys.shift();
      this._replay(key);
      await new Promise((resolve) => setTimeout(resolve, 0));
      this._changed();
    }
  }

  _replay(key) {
    const target = document.activeElement && document.activeElement !== document.documentElement ? document.activeElement : document.body;
    const event = new KeyboardEvent("keydown", { ...key, bubbles: true, cancelable: true, composed: true });
    this.replaying = true;
    const handled = !target.dispatchEvent(event);
    this.replaying = false;
    if (handled) return;
    // What the browser itself would have done with the key.
    const box = document.activeElement;
    if (!box || box === document.body) return;
    const plain = !key.ctrlKey && !key.metaKey && !key.altKey;
    if (plain && pressed(box, key.key)) box.click(); // Space / Enter on a button presses it
    else if (plain && box instanceof HTMLInputElement && box.type === "radio" && ARROWS[key.key]) moveRadio(box, ARROWS[key.key]);
    else if (key.key === "Tab" && plain) moveFocus(box, key.shiftKey ? -1 : 1);
    else if (!isTextBox(box)) return;
    else if (key.key.length === 1 && plain) document.execCommand("insertText", false, key.key);
    else if (key.key === "Backspace") document.execCommand("delete");
  }
}

// Space presses a button, link, check box or radio button; Enter a button or link.
function pressed(box, name) {
  if (name === " ") return box.matches("button, a[href], summary, input[type=checkbox], input[type=radio], input[type=button], input[type=submit]");
  return name === "Enter" && box.matches("button, a[href], summary, input[type=button], input[type=submit]");
}

const ARROWS = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 };

// An arrow in a radio group: the next (or previous) one, wrapping, is checked and focused.
function moveRadio(box, step) {
  const scope = box.form || document;
  const group = [...scope.querySelectorAll(`input[type=radio][name="${CSS.escape(box.name)}"]`)].filter((n) => !n.disabled);
  const next = group[(group.indexOf(box) + step + group.length) % group.length];
  if (!next || next === box) return;
  next.focus();
  next.checked = true;
  next.dispatchEvent(new Event("input", { bubbles: true }));
  next.dispatchEvent(new Event("change", { bubbles: true }));
}

// Tab: the next (Shift+Tab: the previous) control shown, in the box's form, or on the page
// (one stop per radio group: its checked button, else its first).
function moveFocus(box, step) {
  const scope = box.form || document;
  const stops = [...scope.querySelectorAll(FOCUSABLE)].filter((n) => n.getClientRects().length && !n.closest("[hidden], dialog:not([open])"));
  const all = stops.filter((n) => {
    if (!(n instanceof HTMLInputElement) || n.type !== "radio" || n === box) return true;
    const group = stops.filter((m) => m instanceof HTMLInputElement && m.type === "radio" && m.name === n.name);
    return n.checked || (!group.some((m) => m.checked) && group[0] === n && !group.includes(box));
  });
  const at = all.indexOf(box);
  const next = at < 0 ? null : all[at + step];
  if (next) next.focus();
}
