// Which frame a <video> presents, read from requestVideoFrameCallback metadata.mediaTime
// (the frame's own pts) and mapped to an index by the frame table -- never from currentTime.
//
//   const frames = new VideoFrames(video, stats);   // stats.seeks counts real seeks
//   frames.clock = clock;                           // a FrameClock, once the table is loaded
//   frames.keepPending();                           // once the source has loaded
//   const shown = await frames.presentAt(time);     // -> the frame presented, or null
//   frames.presented;                               // the frame last presented
//   frames.reportsRequest;                          // true: rVFC names the time asked for
//   frames.checkUnavailable;                        // why the last frame is unverified
//
// Where rVFC's mediaTime is the time asked for rather than the frame's own pts (Firefox),
// the first seek tells (it aims between two frames' pts) and from then on the frame shown
// is read from the picture by frame_truth.js; where that cannot be had either, the frame
// is the one the time asked for names and `checkUnavailable` says why it is not checked.

import { FrameTruth } from "./frame_truth.js";

export const SEEK_TIMEOUT_MS = 3000;
const MICROSECOND = 2e-6; // rVFC rounds media time to a microsecond

export function once(target, type, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      target.removeEventListener(type, onEvent);
      reject(new Error(`no ${type} event within ${timeoutMs} ms`));
    }, timeoutMs);
    function onEvent(event) {
      clearTimeout(timer);
      resolve(event);
    }
    target.addEventListener(type, onEvent, { once: true });
  });
}

export class VideoFrames {
  constructor(video, stats) {
    this.video = video;
    this.stats = stats;
    this.clock = null;
    this.presented = null; // the frame rVFC last reported presented
    this.keepalive = null; // the always-pending rVFC handle (see keepPending)
    this._shown = null; // the frame rVFC last confirmed for the current (paused) position
    this._shownAt = null; // ... and the time that seek aimed at
    this._stopped = false;
    this.reportsRequest = null; // unknown until a seek aimed between two frames reports back
    this.checkUnavailable = null;
    this.truth = null;
  }

  // From a seek's rVFC: does this browser report the presented frame's pts or the time
  // asked for? Decided by a seek that aimed between two frames' pts (the midpoint rule).
  _learn(mediaTime, time) {
    if (this.reportsRequest !== null) return;
    const aimed = this.clock.frameAtMediaTime(time);
    if (Math.abs(time - this.clock.ptsOf(aimed)) <= MICROSECOND) return; // aimed at a pts: no answer
    const named = this.clock.frameAtMediaTime(mediaTime);
    if (Math.abs(mediaTime - this.clock.ptsOf(named)) <= MICROSECOND) this.reportsRequest = false;
    else if (Math.abs(mediaTime - time) <= MICROSECOND) this.reportsRequest = true;
  }

  // The frame the picture shows, where rVFC does not say (null: it matches no frame);
  // where that cannot be known, `fallback` with checkUnavailable set.
  async readPicture(near, fallback = near) {
    if (!this.truth || this.truth.clock !== this.clock) this.truth = new FrameTruth(this.clock);
    const source = this.video.currentSrc;
    if (!(await this.truth.open(source))) {
      this.checkUnavailable = this.truth.unavailable;
      return fallback;
    }
    const picture = this.truth.picture(this.video);
    try {
      return await this.truth.frameOf(picture, near);
    } catch (error) {
      this.checkUnavailable = `the frame could not be decoded to check it (${error.message})`;
      return fallback;
    }
  }

  // One requestVideoFrameCallback is always pending, for the player's whole life. Without
  // one, headless Chromium can leave the previous picture on the element for up to a
  // second after back-to-back seeks, although the seek's own rVFC reported the right
  // frame; with one, the compositor presents every new frame, so "confirmed" means "on
  // screen". It also records the frame last presented (`presented`).
  keepPending() {
    const video = this.video;
    if (typeof video.requestVideoFrameCallback !== "function" || this.keepalive !== null) return;
    const tick = (_now, metadata) => {
      if (!this.reportsRequest) this.presented = this.clock.frameAtMediaTime(metadata.mediaTime);
      this.keepalive = this._stopped ? null : video.requestVideoFrameCallback(tick);
    };
    this.keepalive = video.requestVideoFrameCallback(tick);
  }

  // What is on screen at this instant (a keydown that pauses), named later, once the
  // element has paused: returns () => Promise of the frame. `claimed`: the frame rVFC named
  // last. Chromium names the element's current frame by its own timestamp (a VideoFrame
  // made from it); where rVFC reports the request (Firefox), the picture is kept and
  // matched against the decoded frames around `claimed`.
  captureNow(claimed) {
    if (this.reportsRequest) {
      if (!this.truth || this.truth._index === null || this.truth.src !== this.video.currentSrc) return async () => claimed;
      const picture = this.truth.picture(this.video);
      // Near the frame named last; a loaded machine can lag its callbacks well behind the
      // picture, so then a wider look, mostly ahead.
      const look = (near, reach) => this.truth.frameOf(picture, this.clock.clamp(near), reach).catch(() => null);
      return async () => (await look(claimed, 4)) ?? (await look(claimed + 8, 24)) ?? claimed;
    }
    try {
      const frame = new VideoFrame(this.video);
      const time = frame.timestamp / 1e6;
      frame.close();
      const named = this.clock.frameAtMediaTime(time);
      // A frame's own pts, near the one rVFC named last (a browser whose VideoFrame has no
      // real timestamp names neither).
      if (Math.abs(time - this.clock.ptsOf(named)) <= MICROSECOND && Math.abs(named - claimed) <= 12) return async () => named;
    } catch {
      // no WebCodecs here (an insecure context): the frame rVFC named last
    }
    return async () => claimed;
  }

  // Cancel the pending callback (before the source changes, or for good with stop()).
  release() {
    if (this.keepalive !== null) this.video.cancelVideoFrameCallback(this.keepalive);
    this.keepalive = null;
  }

  stop() {
    this._stopped = true;
    this.release();
  }

  // The confirmed frame no longer holds (playback, a new source).
  forget() {
    this._shown = null;
    this._shownAt = null;
  }

  // Seek to `time`; resolve with the frame the compositor presented (rVFC mediaTime).
  presentAt(time) {
    const video = this.video;
    // Seeking again to the time of the last confirmed seek presents no new frame (so no
    // rVFC callback would come): the frame confirmed for that time is still on screen.
    if (video.paused && this._shown !== null && time === this._shownAt) return Promise.resolve(this._shown);
    this.forget();
    this.checkUnavailable = null;
    if (typeof video.requestVideoFrameCallback !== "function") {
      // Without rVFC nothing names the frame presented: read it from the picture.
      this.stats.seeks += 1;
      const seeked = once(video, "seeked", SEEK_TIMEOUT_MS).then(
        () => this.readPicture(this.clock.frameAtTime(time)),
        () => null,
      );
      video.currentTime = time;
      return seeked;
    }
    return new Promise((resolve) => {
      let handle = null;
      const timer = setTimeout(() => {
        video.cancelVideoFrameCallback(handle);
        resolve(null);
      }, SEEK_TIMEOUT_MS);
      // The first frame presented after currentTime is set is the seek's frame: when
      // paused, nothing else is presented (see settle for the moment after playback).
      handle = video.requestVideoFrameCallback(async (_now, metadata) => {
        clearTimeout(timer);
        this._learn(metadata.mediaTime, time);
        let shown = this.clock.frameAtMediaTime(metadata.mediaTime);
        // The time asked for names no frame: read the picture (never "confirmed" from the request).
        if (this.reportsRequest) shown = await this.readPicture(this.clock.frameAtTime(time));
        if (this.reportsRequest && !this.checkUnavailable) this.presented = shown;
        this._shown = this.checkUnavailable ? null : shown;
        this._shownAt = time;
        resolve(shown);
      });
      this.stats.seeks += 1;
      video.currentTime = time;
    });
  }

  // After pausing playback, let frames already on their way to the screen be presented
  // (their rVFC callbacks run before the next animation frames) so none is mistaken for
  // the frame of the seek that follows.
  settle() {
    return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  }
}
