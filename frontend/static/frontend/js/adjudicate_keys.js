// The adjudication page's keys (DOM): one keydown listener mapping keys to the page's
// commands (shortcuts.js). Space after clicking a button plays / pauses instead of pressing
// the button again; Space on a decision radio button still chooses it.
//
//   mountAdjudicateKeys({ commands, focusHome });

import { ADJUDICATE_SHORTCUTS, commandFor, keymap } from "./shortcuts.js";
import { anyDialogOpen, isField } from "./ui.js";

const KEYS = keymap(ADJUDICATE_SHORTCUTS);

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
