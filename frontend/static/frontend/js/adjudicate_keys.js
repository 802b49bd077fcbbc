// The adjudication page's keys (DOM): one keydown listener mapping keys to the page's
// commands (shortcuts.js), for the keys the KeyScope lets through (key_scope.js): Space and
// Enter on a focused button press it, arrows on the decision's radio buttons or the items
// list move the choice there, single characters act only where the page owns the focus.
//
//   mountAdjudicateKeys({ commands, scope });

import { ADJUDICATE_SHORTCUTS, commandFor, keymap } from "./shortcuts.js";
import { anyDialogOpen } from "./ui.js";

const KEYS = keymap(ADJUDICATE_SHORTCUTS);

// The keys that record a decision at once (a / b / m, Ctrl+Enter). Such a key acts on the
// item on screen when it is pressed: typed while the page loads or while a decision is
// being recorded (the next item not painted yet), it is refused, never kept for later
// (adjudicate.js gives the key gate this test).
const DECISION_COMMANDS = new Set(["settle-a", "settle-b", "settle-mean", "decide"]);

export function isDecisionKey(key) {
  return DECISION_COMMANDS.has(commandFor(KEYS, key));
}

export function mountAdjudicateKeys({ commands, scope }) {
  document.addEventListener("keydown", (event) => {
    if (anyDialogOpen()) return;
    // Standard keys first (key_scope.js): Space and Enter press a focused button, arrows
    // move the decision's radio buttons, the tier select or the items list, never the
    // player; single characters only where the page owns the focus, while they are on.
    if (!scope.allows(event)) return;
    const command = commandFor(KEYS, event, { inField: scope.inField(event.target) });
    if (!command || !commands[command]) return;
    event.preventDefault();
    commands[command]();
  });
}
