// The workspace's keys (DOM): one keydown listener that maps keys to the page's commands
// (shortcuts.js), keeps the commands that read the frame in key order, takes a typed frame
// prefix ("1290o") and the player's Go-to box. Which keys it may take at all is the
// KeyScope's (key_scope.js): never Space or Enter on a focused button, never an arrow on a
// focused control or list, single characters only where the page owns the focus.
//
//   const { inKeyOrder } = mountWorkspaceKeys({ commands, player, seek, focusHome, setNotice, scope, onEndKey });
//
// inKeyOrder(step) runs `step` after every command queued before it: the form's Enter goes
// through it, so an event saved with Enter right after "1290o" holds the end marked there
// even when the seek is still under way.
//
// onEndKey(startQueued) runs at the keydown of "o" itself, before the queued command: the
// page moves the focus on to the labels at once, so letters typed straight after it are
// never taken as shortcuts while the seeks settle.

import { FramePrefix } from "./navigation.js";
import { WORKSPACE_SHORTCUTS, commandFor, isModifierKey, keymap } from "./shortcuts.js";
import { anyDialogOpen } from "./ui.js";

const KEYS = keymap(WORKSPACE_SHORTCUTS);

export function mountWorkspaceKeys({ commands, player, seek, focusHome, setNotice, scope, onEndKey = () => {}, frameNow = async () => player.currentFrame, startFrame = () => null }) {
  // Commands that read the frame or the selection run one after another, in key order
  // (each waits for the seeks before it); moving and focusing run at once, so held keys
  // coalesce and typing after "e" lands in the field.
  const ORDERED = new Set([
    "set-start", "set-end", "commit", "prev-event", "next-event", "toggle-boundary",
    "nudge-1", "nudge+1", "nudge-10", "nudge+10", "delete", "undo", "redo",
    "prev-boundary", "next-boundary", "prev-keyframe", "next-keyframe",
  ]);
  let startsQueued = 0;
  const queue = (step) => {
    chain = chain.then(step).catch((error) => setNotice(error && error.message ? error.message : String(error), "bad"));
  };
  const queueMark = (command, seekFirst) => {
    if (command === "set-end") onEndKey(startsQueued > 0);
    if (command !== "set-start") return queue(() => seekFirst().then(() => commands[command]()));
    startsQueued += 1;
    queue(() => seekFirst().then(() => commands[command]()).finally(() => (startsQueued -= 1)));
  };
  const run = (command) => {
    if (command === "set-start" || command === "set-end") queueMark(command, () => Promise.resolve());
    else if (ORDERED.has(command)) queue(() => commands[command]());
    else commands[command]();
  };
  // Digits typed on the page are a frame number for the next key: Enter or g goes
  // there, i / o mark that frame ("1290o": the end at frame 1290).
  const prefix = new FramePrefix();
  function prefixKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return false;
    if (prefix.feed(event.key)) {
      setNotice(`Frame ${prefix.digits}… (Enter or g: go there · i / o: mark it there · Esc: cancel)`);
      return true;
    }
    if (!prefix.active) return false;
    if (event.key === "Backspace") {
      prefix.backspace();
      setNotice(prefix.active ? `Frame ${prefix.digits}…` : "");
      return true;
    }
    const frame = prefix.take();
    setNotice("");
    if (event.key === "Escape") return true;
    const last = (player.frameCount || 1) - 1;
    if (event.key === "Enter" || event.key === "g") {
      goTo(frame);
      return true;
    }
    // Relative marks: "34I" starts 34 frames after the playhead; "32O" ends 32 frames after
    // the start (a duration). In key order, like the absolute ones.
    if (event.key === "I" || event.key === "O") {
      const which = event.key === "I" ? "start" : "end";
      queueMark(which === "start" ? "set-start" : "set-end", async () => {
        const from = which === "start" ? await frameNow() : startFrame();
        if (!Number.isInteger(from)) throw new Error("Mark the start first: O counts the frames after it.");
        const target = from + frame;
        if (target > last) throw new Error(`Frame ${target} (${from} + ${frame}) is past the last frame (${last}): no ${which} marked.`);
        return seek(player.seekToFrame(target));
      });
      return true;
    }
    if (event.key === "i" || event.key === "o") {
      // Past the video's last frame: nothing is marked, and the page says so.
      if (frame > last) {
        setNotice(`Frame ${frame} is past the last frame (${last}): no ${event.key === "i" ? "start" : "end"} marked.`, "bad");
        return true;
      }
      // In key order: "150i170o" marks 150 then 170, whatever the seeks' timing.
      queueMark(event.key === "i" ? "set-start" : "set-end", () => seek(player.seekToFrame(frame)));
      return true;
    }
    return false;
  }
  // A typed frame past the end goes to the last frame, and says so.
  function goTo(frame) {
    const last = (player.frameCount || 1) - 1;
    if (frame > last) setNotice(`Frame ${frame} is past the last frame: went to the last frame, ${last}.`, "bad");
    seek(player.seekToFrame(Math.min(frame, last)));
  }
  let chain = Promise.resolve();
  document.addEventListener("keydown", (event) => {
    // Shift before the I of "34I", Caps Lock, AltGr, a dead accent: part of the next key,
    // never a key of their own (the prefix typed so far stays).
    if (isModifierKey(event) || anyDialogOpen()) return;
    const target = event.target;
    // Standard keys first (key_scope.js): Space and Enter press a focused button, arrows
    // move a focused radio button, select, slider or list; shortcuts only where the page
    // owns the focus, single characters only while they are on.
    if (!scope.allows(event)) return;
    if (target instanceof HTMLInputElement && target.matches(".fl-goto") && event.key === "Enter") {
      event.preventDefault();
      if (target.value !== "") goTo(Number(target.value));
      focusHome();
      return;
    }
    const inField = scope.inField(target);
    if (!inField && prefixKey(event)) {
      event.preventDefault();
      return;
    }
    const command = commandFor(KEYS, event, { inField });
    if (!command || !commands[command]) return;
    event.preventDefault();
    run(command);
  });
  return { inKeyOrder: queue };
}
