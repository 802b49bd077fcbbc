// The adjudication page's keys (DOM): one keydown listener mapping keys to the page's
// commands (shortcuts.js). Space after clicking a button plays / pauses instead of pressing
// the button again; Space on a decision radio button still chooses it.
//
//   mountAdjudicateKeys({ commands, focusHome });

import { ADJUDICATE_SHORTCUTS, commandFor, keymap } from "./shortcuts.js";
import { anyDialogOpen, isField } from "./ui.js";

const KEYS = keymap(ADJUDICATE_SHORTCUTS);

// The keys that record a decision at once (a / b / m, Ctrl+Enter). Such a key acts on the
// item on screen when it is pressed: typed while the page loads or while a decision is
// being recorded (the next item not painted yet), it is refused, never kept for later
// (adjudicate.js gives the key gate this test).
const DECISION_COMMANDS = new Set(["settle-a", "settle-b", "settle-mean", "decide"]);

export function isDecisionKey(key) {
  return DECISION_COMMANDS.has(commandFor(KEYS, key));
}

export function mountAdjudicateKeys({ commands, focusHome }) {
  document.addEventListener("keydown", (event) => {
    if (anyDialogOpen()) return;
    const target = event.target;
    const radio = target instanceof HTMLInputElement && target.type === "radio";
    if (event.key === " " && !event.ctrlKey && !event.altKey && target instanceof HTMLButtonElement) {
      event.preventDefault();
      focusHome();
      commands.play();
      return;
    }
    if (target instanceof HTMLButtonElement && event.key === "Enter") return;
    if (radio && event.key === " ") return;
    const command = commandFor(KEYS, event, { inField: isField(target) && !radio });
    if (!command || !commands[command]) return;
    event.preventDefault();
    commands[command]();
  });
}
