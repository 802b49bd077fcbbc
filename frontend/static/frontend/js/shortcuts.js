// Keyboard shortcuts as data: key combination -> command. Pure: no DOM.
// `comboOf(event)` names a keydown the way the tables below do ("Shift+ArrowRight",
// "Ctrl+z", "?"); pages look the command up and run it.

export const WORKSPACE_SHORTCUTS = [
  { keys: ["ArrowLeft", "ArrowRight"], command: ["step-1", "step+1"], help: "step one frame back / forward" },
  { keys: ["Shift+ArrowLeft", "Shift+ArrowRight"], command: ["step-10", "step+10"], help: "step ten frames back / forward" },
  { keys: ["Alt+ArrowLeft", "Alt+ArrowRight"], command: ["step-second-back", "step-second-forward"], help: "step one second back / forward" },
  { keys: ["{", "}"], command: ["prev-boundary", "next-boundary"], help: "previous / next event boundary (any start or end)" },
  { keys: ["PageUp", "PageDown"], command: ["prev-keyframe", "next-keyframe"], help: "previous / next keyframe of the video" },
  { keys: ["Home", "End"], command: ["first-frame", "last-frame"], help: "first / last frame" },
  { keys: ["g"], command: ["go-to-frame"], help: "go to a frame: type it, Enter (the keys come back to the page); or type the digits first: 1290 Enter" },
  { keys: ["Space"], command: ["play"], help: "play / pause at the chosen rate (on a focused button Space presses the button)" },
  { keys: ["j", "k", "l"], command: ["shuttle-back", "shuttle-stop", "shuttle-forward"], help: "shuttle: pause and back one second / pause / play, faster on each press" },
  { keys: ["h"], command: ["play-half"], help: "play at 0.5× / pause and back to the rate before" },
  { keys: ["i"], command: ["set-start"], help: "set the start at the current frame (1200i: at frame 1200; 34I: 34 frames after the current one)" },
  { keys: ["o"], command: ["set-end"], help: "set the end at the current frame (1260o: at frame 1260; 32O: 32 frames after the start)" },
  { keys: ["Enter", "Ctrl+Enter"], command: ["commit", "commit"], help: "add the new event (or save the selected one)" },
  { keys: ["e"], command: ["edit-fields"], help: "go to the event's fields (Esc comes back)" },
  { keys: ["[", "]"], command: ["prev-event", "next-event"], help: "previous / next event (seeks to its start)" },
  { keys: ["b"], command: ["toggle-boundary"], help: "switch the selected boundary (start ↔ end)" },
  { keys: [",", "."], command: ["nudge-1", "nudge+1"], help: "nudge the selected boundary by one frame" },
  { keys: ["<", ">"], command: ["nudge-10", "nudge+10"], help: "nudge the selected boundary by ten frames" },
  { keys: ["Escape"], command: ["deselect"], help: "leave a field / back to the new event / clear the new event's draft (Ctrl+Z brings it back)" },
  { keys: ["Delete"], command: ["delete"], help: "delete the selected event" },
  { keys: ["Ctrl+z"], command: ["undo"], help: "undo" },
  { keys: ["Ctrl+Shift+z", "Ctrl+y"], command: ["redo", "redo"], help: "redo" },
  { keys: ["+", "-", "0"], command: ["zoom-in", "zoom-out", "zoom-fit"], help: "zoom the timeline in / out / to the whole video" },
  { keys: ["c"], command: ["use-candidate"], help: "moment search: the highlighted result becomes an interval of the event (where search is offered)" },
  { keys: ["Ctrl+s"], command: ["save-now"], help: "retry saving now" },
  { keys: ["?"], command: ["help"], help: "this sheet" },
];

// Keys in the event form's type-ahead boxes (for the sheet only: the boxes handle them).
export const FORM_KEYS = [
  { keys: ["a–z"], help: "type-ahead: the highlighted candidate is shown under the box; the values this ledger used most come first (fr: freezer once used)" },
  { keys: ["mc", "tof"], help: "a name by its words' starts: mc milk container, ps plastic spatula, tof turn off" },
  { keys: ["o", "tof"], help: "a verb (closed list) is taken as soon as only one fits by its start or words' starts, and the focus moves on" },
  { keys: ["d", "y", "2"], help: "a select takes a key at once when only one value starts with it (d Daniil Medvedev, y yes, a AD; not 40: 4 then Tab), a one-digit box its digit (a set's 2), and the focus moves on" },
  { keys: ["Enter", "Tab"], help: "take the highlighted candidate and move on; in the nouns: Enter takes it and saves the event" },
  { keys: ["Enter"], help: "an empty verb box: take the verb of the event before this one's start, named under the box (nothing named: nothing taken)" },
  { keys: [",", "Tab"], help: "nouns: take the highlighted one as a chip and type the next" },
  { keys: ["Backspace"], help: "nouns, in an empty box: remove the last chip" },
];

export const ADJUDICATE_SHORTCUTS = [
  { keys: ["ArrowLeft", "ArrowRight"], command: ["step-1", "step+1"], help: "step one frame back / forward" },
  { keys: ["Shift+ArrowLeft", "Shift+ArrowRight"], command: ["step-10", "step+10"], help: "step ten frames back / forward" },
  { keys: ["Space"], command: ["play"], help: "play / pause (on a focused button Space presses the button)" },
  { keys: ["ArrowUp", "ArrowDown"], command: ["item-up", "item-down"], help: "in the items list: the item before / after (Home / End: the first / last; Enter plays it)" },
  { keys: ["h"], command: ["replay-half"], help: "play the selected item at 0.5×" },
  { keys: ["[", "]"], command: ["prev-item", "next-item"], help: "previous / next item (seeks and plays it at 0.5×)" },
  { keys: ["u"], command: ["next-undecided"], help: "next item still needing a decision (the selected one first if not played yet)" },
  { keys: ["1", "2", "3", "4", "5"], command: ["take_a", "take_b", "edit", "drop", "unknown"], help: "choose take A / take B / edit / drop / unknown" },
  { keys: ["a", "b", "m"], command: ["settle-a", "settle-b", "settle-mean"], help: "within tolerance: decide at once for A / B / the rounded mean of the boundaries" },
  { keys: ["e"], command: ["edit-fields"], help: "edit: into the final value's fields" },
  { keys: ["r"], command: ["rationale"], help: "write the rationale (selected: typing replaces it)" },
  { keys: ["Ctrl+Enter"], command: ["decide"], help: "record the decision" },
  { keys: ["+", "-", "0"], command: ["zoom-in", "zoom-out", "zoom-fit"], help: "zoom the timeline in / out / to the whole video" },
  { keys: ["c"], command: ["use-candidate"], help: "moment search: edit, with the highlighted result added as an interval of the final value" },
  { keys: ["Escape"], command: ["escape"], help: "leave a field" },
  { keys: ["?"], command: ["help"], help: "this sheet" },
];

// Keys that only change what the next key means (Shift, Caps Lock, AltGr, a dead accent, an
// input method composing): they never act alone, so they never end or cancel anything a key
// before them began (a typed frame prefix "34", a choice being typed).
export const MODIFIER_KEYS = new Set([
  "Shift", "Control", "Alt", "AltGraph", "Meta", "OS", "Super", "Hyper", "Fn", "FnLock",
  "CapsLock", "NumLock", "ScrollLock", "Symbol", "SymbolLock", "Dead", "Compose", "Process", "Unidentified",
]);

export function isModifierKey(event) {
  return MODIFIER_KEYS.has(event.key) || event.isComposing === true;
}

const NAMES = { " ": "Space", Esc: "Escape", Del: "Delete" };

export function comboOf(event) {
  let key = NAMES[event.key] || event.key;
  const ctrl = event.ctrlKey || event.metaKey;
  if (key.length === 1 && ctrl) key = key.toLowerCase();
  else if (key.length === 1 && /[A-Z]/.test(key) && event.shiftKey) key = key.toLowerCase();
  const parts = [];
  if (ctrl) parts.push("Ctrl");
  if (event.altKey) parts.push("Alt");
  // Shift is part of the name for named keys and with Ctrl; for printable keys it is
  // already in the character ("?" is Shift+/).
  if (event.shiftKey && (key.length > 1 || ctrl)) parts.push("Shift");
  parts.push(key);
  return parts.join("+");
}

export function keymap(table) {
  const map = new Map();
  for (const row of table) row.keys.forEach((key, i) => map.set(key, row.command[i]));
  return map;
}

// Shortcuts that still work while the focus is in a form field.
export const FIELD_SAFE = new Set(["Ctrl+Enter", "Escape", "Ctrl+s"]);

export function commandFor(map, event, { inField = false } = {}) {
  const combo = comboOf(event);
  if (inField && !FIELD_SAFE.has(combo)) return null;
  return map.get(combo) || null;
}
