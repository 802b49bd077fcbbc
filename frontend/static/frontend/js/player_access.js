// What the player's controls say to assistive technology, kept apart from the player's
// frame logic: names for the frame buttons and the seek slider, readouts that stay silent
// while the video plays, and one polite announcement of the frame once the picture has
// stopped (a pause, a step, a jump).
//
//   nameControls(root);                         // before mounting: names them as they appear
//   const player = await mountPlayer(root, options);
//   announceFrames(root, player);

import { el } from "./ui.js";

const NAMES = {
  back10: "Back 10 frames",
  back1: "Back 1 frame",
  fwd1: "Forward 1 frame",
  fwd10: "Forward 10 frames",
};
const SETTLE_MS = 250; // held arrow keys step many times: announce the frame they stop on

// Name the player's controls under `root` (FramePlayer's and mountNoVideo's) now and
// whenever they are drawn again: a MutationObserver's callback runs before the page is
// painted, so they are never shown unnamed.
export function nameControls(root) {
  const name = () => {
    for (const button of root.querySelectorAll(".fl-controls button[data-act]")) {
      const label = NAMES[button.dataset.act];
      if (label && button.getAttribute("aria-label") !== label) button.setAttribute("aria-label", label);
    }
    const scrub = root.querySelector("input.fl-scrub");
    if (scrub && !scrub.hasAttribute("aria-label")) scrub.setAttribute("aria-label", "Frame (seek)");
    // An <output> is a live region by default: during playback it would speak 24 times a second.
    for (const output of root.querySelectorAll(".fl-readout output:not([aria-live])")) output.setAttribute("aria-live", "off");
  };
  name();
  new MutationObserver(name).observe(root, { childList: true }); // the player is appended to root
}

// Given a player that dispatches "frame" events, announce (politely) the frame it stops
// on; nothing while it plays. Returns the announcer.
export function announceFrames(root, player) {
  const announcer = el("p", { class: "sr-only fl-announce", role: "status" });
  (root.querySelector(".fl-player") || root).append(announcer);
  let timer = null;
  player.addEventListener("frame", (event) => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      if (player.paused === false) return; // playing: the readouts are silent
      // The frame a pause snaps to or a seek lands on, once nothing is under way.
      const frame = typeof player.settled === "function" ? await player.settled() : event.detail.frame;
      if (player.paused === false || frame !== player.currentFrame) return;
      const time = player.clock ? `, ${player.clock.timecode(frame)}` : "";
      announcer.textContent = `Frame ${frame}${time}`;
    }, SETTLE_MS);
  });
  return announcer;
}
