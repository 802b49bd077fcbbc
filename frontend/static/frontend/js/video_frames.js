// Which frame a <video> presents, read from requestVideoFrameCallback metadata.mediaTime
// (the frame's own pts) and mapped to an index by the frame table -- never from currentTime.
//
//   const frames = new VideoFrames(video, stats);   // stats.seeks counts real seeks
//   frames.clock = clock;                           // a FrameClock, once the table is loaded
//   frames.keepPending();                           // once the source has loaded
//   const shown = await frames.presentAt(time);     // -> the frame presented, or null
//   frames.presented;                               // the frame last presented

export const SEEK_TIMEOUT_MS = 3000;

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
      this.presented = this.clock.frameAtMediaTime(metadata.mediaTime);
      this.keepalive = this._stopped ? null : video.requestVideoFrameCallback(tick);
    };
    this.keepalive = video.requestVideoFrameCallback(tick);
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
    if (typeof video.requestVideoFrameCallback !== "function") {
      // Without rVFC the presented frame cannot be confirmed; trust currentTime.
      this.stats.seeks += 1;
      const seeked = once(video, "seeked", SEEK_TIMEOUT_MS).then(
        () => this.clock.frameAtTime(video.currentTime),
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
      handle = video.requestVideoFrameCallback((_now, metadata) => {
        clearTimeout(timer);
        this._shown = this.clock.frameAtMediaTime(metadata.mediaTime);
        this._shownAt = time;
        resolve(this._shown);
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
