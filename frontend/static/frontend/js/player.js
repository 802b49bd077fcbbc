// A frame-accurate video player component (DOM). Pure time <-> frame maths: frame_clock.js.
//
//   import { mountPlayer } from ".../player.js";
//   const player = await mountPlayer(element, { packetId: 12 });        // packet media
//   const player = await mountPlayer(element, { urls: { proxy, frames } }); // any media
//   await player.seekToFrame(1234);   // -> Promise of the frame actually presented
//   await player.step(-10);           // -> Promise of the frame presented
//   player.currentFrame; player.frameCount; player.clock; await player.pause();
//   player.confirmed; player.unconfirmedReason;  // is the picture the frame currentFrame says?
//   player.addEventListener("frame", (e) => e.detail.frame);
//
// How a seek is made exact:
// 1. the target time is the midpoint of pts[N] and pts[N+1] from the server's table;
// 2. the presented frame is read from requestVideoFrameCallback metadata.mediaTime
//    (the frame's own pts), mapped to an index by the table -- never from currentTime;
//    where mediaTime is the time asked for (Firefox), from the picture, matched against
//    WebCodecs decodes of the file's own samples (frame_truth.js), or the check says it
//    is unavailable -- never "confirmed" from the request;
// 3. if it is not N, the seek is tried once more; then the player shows an error, and
//    `confirmed` is false (with `unconfirmedReason`) until a seek lands exactly or playback
//    presents frames again: what reads the frame for a mark refuses meanwhile (a neighbour
//    on screen is not the frame asked for either).
// Seeks are serialised, latest wins (seek_queue.js): held-down arrow keys (key repeats)
// and scrubbing coalesce into few real seeks. The presented frame is read by
// video_frames.js. After a pause (by the user or at the end), the player snaps to the
// frame that was on screen when pause() was called (the keydown), and during playback the
// readout never names a frame before its picture is up.
//
// Renditions (renditions.js): with `urls.renditions` (the server's renditions.json) the
// player plays the proxy when it exists, else the remux, and while on the remux it polls
// every `pollMs`; when the proxy appears it switches to it (checkRenditions() does one
// poll now): the same frame stays on screen, confirmed by rVFC, on the same frame table
// (checked). It never starts a switch during playback (the switch waits for the next poll
// while paused); playback started while a switch is under way goes on after it, at the
// same rate, and `paused` reads false meanwhile (what was asked for, not the element's
// pause for the switch).
//
// The ladder's on-demand rung (docs/media.md §4.1): on a packet, the "Full resolution"
// button (useFullResolution()) asks the server for the video at its own height (the
// proxy is capped at 720 lines), waits while it is encoded, and switches to it the same
// way, on the same frame; pressed again ("720p proxy", useProxy()) it switches back.

import { FrameClock } from "./frame_clock.js";
import { api } from "./api.js";
import { packetMediaUrls } from "./media_urls.js";
import { Renditions } from "./renditions.js";
import { SeekQueue } from "./seek_queue.js";
import { loadSource, unplayable } from "./media_load.js";
import { showFull, swapRendition, useFullResolution, useProxy } from "./player_switch.js";
import { el } from "./ui.js";
import { VideoFrames, once } from "./video_frames.js";

export const RATES = [0.25, 0.5, 1, 1.5, 2];
const POLL_MS = 5000;

export class FramePlayer extends EventTarget {
  constructor(root, { packetId = null, urls = null, keyboard = true, seekMode = "midpoint", pollMs = POLL_MS } = {}) {
    super();
    if (!urls && packetId === null) throw new Error("FramePlayer needs a packetId or urls");
    this.root = root;
    this.urls = urls || packetMediaUrls(packetId);
    // "midpoint" (the rule) or "pts" (seek to pts[N] itself; for tests that prove the rule matters).
    this.seekMode = seekMode;
    this.clock = null;
    this.table = null;
    this.lastError = null;
    // Why the picture on screen is not known to be frame `currentFrame` (null: it is).
    this._unconfirmed = null;
    // Counters for tests and benchmarks: real seeks issued to the <video>, and retries.
    this.stats = { seeks: 0, retries: 0, errors: 0, switches: 0 };
    this._current = 0;
    this._snapping = false;
    this._snapPromise = null;
    this._lastPlayed = null;
    this._playToken = 0;
    this._pauses = 0; // pause() calls, so that a switch does not resume what was paused meanwhile
    this._atPause = null; // what was on screen when pause() was called (VideoFrames.captureNow)
    this._pausing = null; // a pause() waiting for its "pause" event (and so its snap)
    // Playback asked for and not started yet (play() waiting for a seek, a switch that will
    // resume): { pauses, requests } at the time; a pause() (or, for a switch, a seek) since
    // cancels it.
    this._pendingPlay = null;
    this.seeks = new SeekQueue(
      (target) => this._seekExact(target),
      (target, error) => {
        this._showError(`Seek to frame ${target} failed: ${error.message}`);
        return this._current;
      },
    );
    this.renditions = new Renditions(this.urls, {
      pollMs,
      clock: () => this.clock,
      paused: () => this.paused,
      swap: (rendition, src) => this._swap(rendition, src),
      showError: (message) => this._showError(message),
    });
    this._build(keyboard);
    this.frames = new VideoFrames(this.video, this.stats);
    // The frame on screen at a keydown, taken first thing in its dispatch (capture phase on
    // the window) and good for that dispatch only: a pause the key asks for settles there.
    this._keydownShot = null;
    this._onAnyKeydown = () => {
      if (this.video.paused || !this.clock) return;
      this._keydownShot = this.frames.captureNow(this._lastPlayed ?? this._current);
      setTimeout(() => (this._keydownShot = null), 0);
    };
    window.addEventListener("keydown", this._onAnyKeydown, { capture: true });
  }

  get currentFrame() {
    return this._current;
  }

  get frameCount() {
    return this.clock ? this.clock.frameCount : 0;
  }

  // Paused as the person asked: while playback they asked for waits to start (behind a
  // seek, or across a rendition switch that pauses the element for a moment), the player
  // counts as playing, so a key read then (Space, h) acts on what was asked for.
  get paused() {
    return this.video.paused && !this._playIsPending();
  }

  _playIsPending() {
    const pending = this._pendingPlay;
    if (!pending || pending.pauses !== this._pauses) return false;
    return pending.requests === null || pending.requests === this.seeks.requests;
  }

  get seeking() {
    return this.seeks.busy;
  }

  // The rendition playing ("proxy", "remux" or "full") and its URL.
  get rendition() {
    return this.renditions.current;
  }

  get src() {
    return this.renditions.src;
  }

  get presentedFrame() {
    return this.frames.presented;
  }

  // False when the last seek could not confirm its frame on screen: the picture may be
  // another frame (a frozen one, a neighbour), so nothing may be marked from it.
  get confirmed() {
    return this._unconfirmed === null;
  }

  get unconfirmedReason() {
    return this._unconfirmed;
  }

  _build(keyboard) {
    this.video = el("video", { class: "fl-video", preload: "auto", playsinline: "", muted: "" });
    this.video.muted = true;
    this.video.disablePictureInPicture = true;
    const button = (act, label, title) => el("button", { type: "button", "data-act": act, title, text: label });
    this.playButton = button("play", "Play", "Play / pause (Space)");
    this.rateSelect = el("select", { class: "fl-rate", "aria-label": "Playback rate" });
    for (const rate of RATES) {
      const option = el("option", { value: String(rate), text: `${rate}\u00d7` });
      if (rate === 1) option.selected = true;
      this.rateSelect.append(option);
    }
    this.frameInput = el("input", { class: "fl-goto", type: "number", min: "0", step: "1", "aria-label": "Go to frame" });
    this.frameOut = el("output", { class: "fl-frame", text: "-" });
    this.countOut = el("span", { class: "fl-count", text: "-" });
    this.timeOut = el("output", { class: "fl-timecode", text: "--:--:--.---" });
    this.fpsOut = el("span", { class: "fl-fps" });
    this.scrub = el("input", { class: "fl-scrub", type: "range", min: "0", max: "0", step: "1", value: "0" });
    this.errorBox = el("div", { class: "fl-error", role: "alert" });
    this.errorBox.hidden = true;
    const readout = el("div", { class: "fl-readout" }, [
      "Frame ", this.frameOut, " / ", this.countOut, " \u00b7 ", this.timeOut, " \u00b7 ", this.fpsOut,
    ]);
    const controls = el("div", { class: "fl-controls" }, [
      button("back10", "\u221210", "Back 10 frames (Shift+Left)"),
      button("back1", "\u22121", "Back 1 frame (Left)"),
      this.playButton,
      button("fwd1", "+1", "Forward 1 frame (Right)"),
      button("fwd10", "+10", "Forward 10 frames (Shift+Right)"),
      el("label", {}, ["Rate ", this.rateSelect]),
      el("label", {}, ["Go to ", this.frameInput]),
    ]);
    // The full-height rung, for packet media only (urls.full: its API URL); shown once the
    // server says the video has one to offer.
    this.fullButton = button("full", "Full resolution", "Show the video at its own height (same frame)");
    this.fullButton.hidden = true;
    if (typeof this.urls.full === "string") controls.append(this.fullButton);
    this.element = el("div", { class: "fl-player", tabindex: "0" }, [
      el("div", { class: "fl-stage" }, [this.video]),
      readout,
      this.scrub,
      controls,
      this.errorBox,
    ]);
    this.root.append(this.element);

    controls.addEventListener("click", (event) => {
      const act = event.target.closest("button")?.dataset.act;
      const steps = { back10: -10, back1: -1, fwd1: 1, fwd10: 10 };
      if (act in steps) this.step(steps[act]);
      else if (act === "play") this.togglePlay();
      else if (act === "full") (this.rendition === "full" ? this.useProxy() : this.useFullResolution()).catch(() => undefined);
    });
    this.rateSelect.addEventListener("change", () => this.setRate(Number(this.rateSelect.value)));
    this.frameInput.addEventListener("change", () => this.seekToFrame(Number(this.frameInput.value)));
    this.scrub.addEventListener("input", () => this.seekToFrame(Number(this.scrub.value)));
    this.video.addEventListener("play", () => this._onPlay());
    this.video.addEventListener("pause", () => this._onPause());
    if (keyboard) this.element.addEventListener("keydown", (event) => this._onKey(event));
  }

  async load() {
    this.table = await api.get(this.urls.frames).catch((error) => {
      throw new Error(`frame table: ${error.message}`);
    });
    this.clock = FrameClock.fromTable(this.table);
    this.frames.clock = this.clock;
    this.countOut.textContent = String(this.clock.frameCount);
    this.fpsOut.textContent = `${this.clock.fpsLabel} fps`;
    this.scrub.max = String(this.clock.frameCount - 1);
    this.frameInput.max = String(this.clock.frameCount - 1);
    const [rendition, src] = await this.renditions.pick();
    const refused = unplayable(this.video, src);
    if (refused) throw new Error(refused);
    const loaded = loadSource(this.video, 30000);
    this.renditions.playing(rendition, src);
    this.video.src = src;
    await loaded;
    this.frames.keepPending();
    await this.seekToFrame(0);
    if (rendition === "remux") this.renditions.schedulePoll();
    if (typeof this.urls.full === "string") {
      this.renditions.fullState().then((state) => this._showFull(state)).catch(() => undefined);
    }
    return this;
  }

  // --- renditions (player_switch.js) ----------------------------------------------------

  _showFull(state) {
    showFull(this, state);
  }

  useFullResolution() {
    return useFullResolution(this);
  }

  useProxy() {
    return useProxy(this);
  }

  // Poll once: if the proxy exists now, switch to it. Resolves true once on the proxy.
  checkRenditions() {
    return this.renditions.check();
  }

  _swap(rendition, src) {
    return swapRendition(this, rendition, src);
  }

  // --- seeking -----------------------------------------------------------------------

  seekToFrame(n) {
    if (!this.clock) return Promise.reject(new Error("the player is not loaded"));
    return this.seeks.request(this.clock.clamp(Number(n)));
  }

  step(k) {
    if (!this.clock) return Promise.reject(new Error("the player is not loaded"));
    const base = this.seeks.busy || !this.video.paused ? this.seeks.intended : this._current;
    return this.seekToFrame(base + Math.trunc(Number(k)));
  }

  async _seekExact(target) {
    if (!this.video.paused) {
      this._snapping = true; // this pause is ours; no snap needed
      this.video.pause();
      await this.frames.settle();
      this._playToken += 1;
    }
    let presented = null;
    for (let attempt = 0; attempt < 2 && presented !== target; attempt++) {
      if (attempt > 0) this.stats.retries += 1;
      presented = await this.frames.presentAt(this._seekTimeFor(target, attempt));
    }
    this._snapping = false;
    const unavailable = this.frames.checkUnavailable;
    if (unavailable) {
      // Nothing can tell which frame is on screen: say so, and confirm nothing.
      this.stats.errors += 1;
      this._showError(`The frame check is unavailable in this browser: ${unavailable}.`);
      this._unconfirmed = `the frame check is unavailable: ${unavailable}`;
    } else if (presented === target) {
      this._clearError();
      this._unconfirmed = null;
    } else {
      this.stats.errors += 1;
      const shown = presented === null ? "no frame was confirmed" : `frame ${presented} is shown`;
      this._showError(`Could not show frame ${target} exactly: ${shown}.`);
      // Not the frame asked for: whatever is on screen, a mark would not be what was meant.
      this._unconfirmed = `frame ${target} was asked for and ${shown}`;
      if (presented === null) presented = this.clock.frameAtTime(this.video.currentTime);
    }
    if (!this.seeks.hasQueued) this.seeks.intended = presented;
    this._setCurrent(presented);
    return presented;
  }

  // The midpoint rule; the retry aims a quarter frame in instead, a different time, so
  // the browser really seeks again. seekMode "pts" (tests only) always aims at pts[N].
  _seekTimeFor(target, attempt) {
    if (this.seekMode === "pts") return this.clock.ptsOf(target);
    if (attempt === 0) return this.clock.seekTime(target);
    return this.clock.ptsOf(target) + this.clock.durationOf(target) / 4;
  }

  // --- playback ----------------------------------------------------------------------

  // Play once what is under way has landed: a seek, a switch's new source, or the snap
  // after a pause (a seek of its own, which would pause the element again). A pause()
  // asked for meanwhile wins.
  async play() {
    const pending = { pauses: this._pauses, requests: null };
    this._pendingPlay = pending;
    try {
      for (let busy = this._underWay(); busy; busy = this._underWay()) {
        await busy;
        if (pending.pauses !== this._pauses) return;
      }
      // Interrupted by our own pause for a seek or a switch (which resumes, if it should).
      await this.video.play().catch((error) => {
        if (error.name !== "AbortError") throw error;
      });
    } finally {
      if (this._pendingPlay === pending) this._pendingPlay = null;
    }
  }

  // What would still move the frame: a seek (a switch runs as one), a pause() waiting for
  // its "pause" event, or the snap after it; null when nothing is under way.
  _underWay() {
    const busy = this.seeks.inflight || this._pausing || this._snapPromise;
    return busy ? Promise.resolve(busy).catch(() => undefined) : null;
  }

  // Resolves with the current frame once nothing is under way (a mark read right after a
  // pause is the frame the pause snaps to).
  async settled() {
    for (let busy = this._underWay(); busy; busy = this._underWay()) await busy;
    return this._current;
  }

  // Pause and snap to the displayed frame; resolves with that frame.
  async pause() {
    this._pauses += 1;
    if (!this.video.paused) {
      // The frame on screen now, at the keydown, is the one the pause settles on.
      const frame = this._keydownShot || this.frames.captureNow(this._lastPlayed ?? this._current);
      this._atPause = { frame, requests: this.seeks.requests };
      // Until the "pause" event starts the snap (_onPause), play() waits on this.
      const paused = once(this.video, "pause", 2000).catch(() => undefined);
      this._pausing = paused;
      this.video.pause();
      await paused;
      if (this._pausing === paused) this._pausing = null;
    }
    return this._snapPromise || this._current;
  }

  togglePlay() {
    return this.paused ? this.play() : this.pause();
  }

  // The rate last chosen (setRate), which the element plays at once its source has loaded.
  get rate() {
    return Number(this.rateSelect.value);
  }

  setRate(rate) {
    if (!RATES.includes(rate)) throw new Error(`rate ${rate} is not one of ${RATES.join(", ")}`);
    this.video.playbackRate = rate;
    this.rateSelect.value = String(rate);
  }

  _onPlay() {
    this.playButton.textContent = "Pause";
    this._lastPlayed = null;
    this.frames.forget();
    this._clearError();
    const video = this.video;
    if (typeof video.requestVideoFrameCallback !== "function") return;
    const token = ++this._playToken;
    // Where rVFC reports the request (Firefox), a callback can name a frame before its
    // picture is up (the first frames after play): the readout shows the frame the callback
    // before named, which is on screen, so it never runs ahead of the picture.
    let claimed = this._current;
    const onFrame = (_now, metadata) => {
      if (token !== this._playToken) return;
      const named = this.clock.frameAtMediaTime(metadata.mediaTime);
      this._lastPlayed = this.frames.reportsRequest ? Math.min(claimed, named) : named;
      claimed = named;
      if (!this.frames.checkUnavailable) this._unconfirmed = null; // a frame presented
      if (video.paused) return; // the last frame presented before the pause is recorded
      this.seeks.intended = this._lastPlayed;
      this._setCurrent(this._lastPlayed);
      video.requestVideoFrameCallback(onFrame);
    };
    video.requestVideoFrameCallback(onFrame);
  }

  _onPause() {
    this.playButton.textContent = "Play";
    if (this._snapping) return; // paused by a seek, which confirms its own frame
    this._snapPromise = this._snap().finally(() => {
      this._snapPromise = null;
    });
  }

  // Snap to the displayed frame: the one on screen when pause() was called (the keydown;
  // VideoFrames.captureNow), else the last one rVFC reported while playing, or the last
  // frame of the video when playback ended there.
  async _snap() {
    const requests = this.seeks.requests;
    await this.frames.settle();
    this._playToken += 1; // stop the playback loop before the snap's seek presents a frame
    if (this.seeks.requests !== requests) return this._current; // a newer seek request wins
    // Played into the end: the last frame, which the browser may not have presented yet
    // (at 2x it can reach the end with the one before it on screen).
    const atPause = this._atPause;
    this._atPause = null;
    if (atPause && this.seeks.requests !== atPause.requests) return this._current; // a seek asked for since pause() wins
    let shown = this._lastPlayed ?? this.clock.frameAtTime(this.video.currentTime);
    if (this.video.ended) shown = this.frameCount - 1;
    else if (atPause) shown = await atPause.frame();
    if (this.seeks.requests !== requests) return this._current;
    return this.seekToFrame(shown);
  }

  // --- display -----------------------------------------------------------------------

  _setCurrent(frame) {
    this._current = frame;
    this.frameOut.textContent = String(frame);
    this.timeOut.textContent = this.clock.timecode(frame);
    if (document.activeElement !== this.scrub) this.scrub.value = String(frame);
    this.dispatchEvent(new CustomEvent("frame", { detail: { frame, time: this.clock.ptsOf(frame) } }));
  }

  _showError(message) {
    this.lastError = message;
    this.errorBox.textContent = message;
    this.errorBox.hidden = false;
  }

  _clearError() {
    this.lastError = null;
    this.errorBox.hidden = true;
    this.errorBox.textContent = "";
  }

  _onKey(event) {
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
    if ((event.key === " " || event.key === "Enter") && event.target.closest("button")) return; // presses the button
    const big = event.shiftKey ? 10 : 1;
    if (event.key === "ArrowRight") this.step(big);
    else if (event.key === "ArrowLeft") this.step(-big);
    else if (event.key === " ") this.togglePlay();
    else if (event.key === "Home") this.seekToFrame(0);
    else if (event.key === "End") this.seekToFrame(this.frameCount - 1);
    else return;
    event.preventDefault();
  }

  destroy() {
    window.removeEventListener("keydown", this._onAnyKeydown, { capture: true });
    this.renditions.stop();
    this.frames.stop();
    this.video.pause();
    this.video.removeAttribute("src");
    this.video.load();
    this.element.remove();
  }
}

// Create a player inside `root` and load its media; resolves when frame 0 is shown.
export async function mountPlayer(root, options) {
  const player = new FramePlayer(root, options);
  await player.load();
  return player;
}
