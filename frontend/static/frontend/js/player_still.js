// The player's stand-ins where there is no video to play (no DOM of its own beyond the
// disabled controls): stillPlayer() keeps a frame that moves only when told to, so marks
// and saving still work; mountNoVideo() shows the controls of a packet without a video by
// design.
//
//   const player = mountNoVideo(root, { frameCount: 120, reason: "This packet has no video." });
//   await player.seekToFrame(10);   // -> 10; a "frame" event, as FramePlayer's

import { el } from "./ui.js";

// A stand-in when there is no video to play: the frame it is "on" moves only when told to
// (a typed frame), so marks and saving still work; it plays nothing. `noVideo`: true where
// the packet has no video by design (mountNoVideo), false where the video failed to load.
export function stillPlayer(frameCount, { noVideo = false } = {}) {
  let current = 0;
  const target = new EventTarget();
  // (Object.assign would copy the getter's value once: define it on the object.)
  Object.defineProperty(target, "currentFrame", { get: () => current });
  return Object.assign(target, {
    frameCount,
    clock: null,
    noVideo,
    async seekToFrame(n) { current = Math.max(0, Math.min(frameCount - 1, Math.round(n))); target.dispatchEvent(new CustomEvent("frame", { detail: { frame: current } })); return current; },
    step(k) { return this.seekToFrame(current + k); },
    togglePlay() {},
    setRate() {},
    pause() { return current; },
  });
}

// The player of a packet without a video by design (an annotation-only import): the
// controls are there but disabled, titled with `reason`, and nothing is loaded. Returns a
// stillPlayer (noVideo: true); the page refuses the keys that would play or step.
export function mountNoVideo(root, { frameCount, reason = "This packet has no video." }) {
  const button = (act, label) => el("button", { type: "button", "data-act": act, title: reason, text: label, disabled: "" });
  const rate = el("select", { class: "fl-rate", "aria-label": "Playback rate", title: reason, disabled: "" }, [el("option", { text: "1\u00d7" })]);
  const goTo = el("input", { class: "fl-goto", type: "number", "aria-label": "Go to frame", title: reason, disabled: "" });
  const element = el("div", { class: "fl-player fl-no-video", "data-state": "no-video" }, [
    el("div", { class: "fl-readout" }, [`No video \u00b7 ${frameCount} frames (the imported duration)`]),
    el("div", { class: "fl-controls" }, [
      button("back10", "\u221210"),
      button("back1", "\u22121"),
      button("play", "Play"),
      button("fwd1", "+1"),
      button("fwd10", "+10"),
      el("label", {}, ["Rate ", rate]),
      el("label", {}, ["Go to ", goTo]),
    ]),
  ]);
  root.append(element);
  return Object.assign(stillPlayer(frameCount, { noVideo: true }), { element });
}
