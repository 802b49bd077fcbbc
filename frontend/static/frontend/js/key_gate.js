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
// is inserted as text, Backspace deletes, Tab moves to the next field. A replayed key
// that holds the gate again (it started a decision) leaves the rest waiting for the next
// release. `drop()` forgets the waiting keys and returns how many there were.

const FOCUSABLE = "input:not(:disabled), select:not(:disabled), textarea:not(:disabled), button:not(:disabled)";

function isTextBox(node) {
  return node instanceof HTMLTextAreaElement || (node instanceof HTMLInputElement && !["checkbox", "radio", "button", "submit", "range"].includes(node.type));
}

export class KeyGate {
  constructor({ onChange = () => {}, held = "loading" } = {}) {
    this.reason = held;
    this.keys = [];
    this.onChange = onChange;
    this.replaying = false;
    window.addEventListener("keydown", (event) => this._take(event), true);
    window.addEventListener("keypress", (event) => this.reason && event.isTrusted && event.preventDefault(), true);
  }

  get held() {
    return this.reason !== null;
  }

  _take(event) {
    // Held, or keys still waiting to be replayed (a key typed now goes after them).
    if ((!this.reason && !this.keys.length) || !event.isTrusted) return;
    if (["Shift", "Control", "Alt", "Meta", "CapsLock"].includes(event.key)) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    const { key, code, ctrlKey, shiftKey, altKey, metaKey } = event;
    this.keys.push({ key, code, ctrlKey, shiftKey, altKey, metaKey });
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
    if (!isTextBox(box) && !(box instanceof HTMLSelectElement)) return;
    if (key.key.length === 1 && !key.ctrlKey && !key.metaKey && !key.altKey && isTextBox(box)) document.execCommand("insertText", false, key.key);
    else if (key.key === "Backspace" && isTextBox(box)) document.execCommand("delete");
    else if (key.key === "Tab") {
      const scope = box.form || document;
      const all = [...scope.querySelectorAll(FOCUSABLE)].filter((n) => n.offsetParent !== null);
      const next = all[all.indexOf(box) + (key.shiftKey ? -1 : 1)];
      if (next) next.focus();
    }
  }
}
