// Frame <-> time for one video, from the server's per-frame table. Pure: no DOM.
//
// The table (GET .../frames.json) lists every frame's presentation timestamp (pts, in
// seconds, presentation order) of the proxy the browser plays. Frame N is shown from
// pts[N] until pts[N+1]. Rules:
//
// - seekTime(N): the MIDPOINT of pts[N] and pts[N+1]. Seeking to pts[N] itself (or to
//   N / fps) lands on the previous frame about a third of the time, because the media
//   pipeline rounds times to microseconds; half a frame of margin absorbs any rounding.
// - frameAtMediaTime(t): the frame whose pts is NEAREST t. requestVideoFrameCallback's
//   metadata.mediaTime is the presented frame's own pts (rounded to a microsecond).
// - frameAtTime(t): the frame a playhead at t shows: the last pts <= t.
//
// The rational rate (fpsNum / fpsDen, e.g. 30000/1001) is used only for timecodes and
// as a fallback; never Math.floor(29.97).

export class FrameClockError extends Error {}

export class FrameClock {
  constructor({ fps_num: fpsNum, fps_den: fpsDen, pts, keyframes = [], frame_count: frameCount, end }) {
    if (!Array.isArray(pts) || pts.length === 0) throw new FrameClockError("the frame table has no frames");
    if (frameCount !== undefined && frameCount !== pts.length) {
      throw new FrameClockError(`frame_count ${frameCount} does not match ${pts.length} timestamps`);
    }
    for (let i = 1; i < pts.length; i++) {
      if (!(pts[i] > pts[i - 1])) throw new FrameClockError(`timestamps are not increasing at frame ${i}`);
    }
    if (!(fpsNum > 0 && fpsDen > 0)) throw new FrameClockError("the frame rate must be a positive fraction");
    this.fpsNum = fpsNum;
    this.fpsDen = fpsDen;
    this.pts = pts;
    this.keyframes = keyframes;
    this.frameCount = pts.length;
    // Where the last frame stops: the table's end, else one nominal frame after it.
    const nominal = fpsDen / fpsNum;
    const lastGap = pts.length > 1 ? pts[pts.length - 1] - pts[pts.length - 2] : nominal;
    this.end = end !== undefined && end > pts[pts.length - 1] ? end : pts[pts.length - 1] + lastGap;
  }

  // From frames.json as served: version 2 (compact) or version 1 (pts listed).
  static fromTable(table) {
    return new FrameClock(expandTable(table));
  }

  clamp(n) {
    if (!Number.isFinite(n)) throw new FrameClockError(`frame ${n} is not a number`);
    return Math.min(this.frameCount - 1, Math.max(0, Math.round(n)));
  }

  ptsOf(n) {
    return this.pts[this.clamp(n)];
  }

  // Seconds frame n stays on screen.
  durationOf(n) {
    n = this.clamp(n);
    return (n + 1 < this.frameCount ? this.pts[n + 1] : this.end) - this.pts[n];
  }

  // The time to seek to for frame n: midway between its pts and the next frame's.
  seekTime(n) {
    n = this.clamp(n);
    const next = n + 1 < this.frameCount ? this.pts[n + 1] : this.end;
    return (this.pts[n] + next) / 2;
  }

  // Index of the last frame whose pts <= t (-1 before the first frame).
  _lastAtOrBefore(t) {
    let lo = 0;
    let hi = this.frameCount - 1;
    if (t < this.pts[0]) return -1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.pts[mid] <= t) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  // The frame a playhead at t shows (the last pts <= t), clamped to the video.
  frameAtTime(t) {
    return Math.max(0, this._lastAtOrBefore(t));
  }

  // The frame whose pts is nearest t: what rVFC metadata.mediaTime names.
  frameAtMediaTime(t) {
    const i = this._lastAtOrBefore(t);
    if (i < 0) return 0;
    if (i + 1 >= this.frameCount) return i;
    return t - this.pts[i] <= this.pts[i + 1] - t ? i : i + 1;
  }

  // Nominal frame duration in seconds (rational rate).
  get frameDuration() {
    return this.fpsDen / this.fpsNum;
  }

  // The rate as a person reads it: the exact fraction for a constant rate ("24",
  // "30000/1001 (29.970)"); for a variable one, the range of the frame rates that at least
  // 1 % of the frames have ("variable, 30–60"; a rare dropped frame does not widen it), or
  // "variable, about 30" where that range is one rate.
  get fpsLabel() {
    if (this._fpsLabel === undefined) this._fpsLabel = this._rateLabel();
    return this._fpsLabel;
  }

  _rateLabel() {
    const counts = new Map(); // frame duration in microseconds -> frames
    for (let n = 0; n < this.frameCount; n++) {
      const micros = Math.round(this.durationOf(n) * 1e6);
      counts.set(micros, (counts.get(micros) || 0) + 1);
    }
    if (counts.size <= 1) {
      if (this.fpsDen === 1) return `${this.fpsNum}`;
      return `${this.fpsNum}/${this.fpsDen} (${(this.fpsNum / this.fpsDen).toFixed(3)})`;
    }
    const floor = Math.max(1, Math.ceil(this.frameCount / 100));
    const common = [...counts].filter(([micros, n]) => n >= floor && micros > 0).map(([micros]) => micros);
    const durations = common.length ? common : [...counts.keys()].filter((micros) => micros > 0);
    const lo = formatRate(1e6 / Math.max(...durations));
    const hi = formatRate(1e6 / Math.min(...durations));
    return lo === hi ? `variable, about ${lo}` : `variable, ${lo}\u2013${hi}`;
  }

  // "HH:MM:SS.mmm" of frame n's pts (media time, as the table gives it).
  timecode(n) {
    return formatSeconds(this.ptsOf(n));
  }
}

// A rate for people: whole when within 0.01 of a whole number (30, not 29.9999), else two
// decimals (29.97).
export function formatRate(rate) {
  const whole = Math.round(rate);
  return Math.abs(rate - whole) < 0.01 ? String(whole) : rate.toFixed(2);
}

// Values from a first one and [delta, count] runs of differences (frames.json version 2).
export function decodeRuns(start, runs) {
  const out = [start];
  let now = start;
  for (const [delta, count] of runs) {
    for (let k = 0; k < count; k++) {
      now += delta;
      out.push(now);
    }
  }
  return out;
}

// frames.json version 2 -> the long form FrameClock takes (pts in seconds). Each pts is
// ticks * num / den: an exact integer product (well below 2^53) divided once, so the
// double is the one nearest the exact rational -- the same the server computes.
export function expandTable(table) {
  if (table.version !== 2) return table;
  const [num, den] = table.time_base;
  const ticks = decodeRuns(table.pts_start, table.pts_deltas);
  if (ticks.length !== table.frame_count) {
    throw new FrameClockError(`frame_count ${table.frame_count} does not match ${ticks.length} timestamps`);
  }
  const keyframes = table.keyframes_start === null ? [] : decodeRuns(table.keyframes_start, table.keyframes_deltas);
  return {
    fps_num: table.fps_num,
    fps_den: table.fps_den,
    frame_count: table.frame_count,
    end: (table.end_ticks * num) / den,
    pts: ticks.map((t) => (t * num) / den),
    pts_ticks: ticks,
    keyframes,
  };
}

export function formatSeconds(seconds) {
  const totalMs = Math.round(seconds * 1000);
  const ms = totalMs % 1000;
  const totalS = (totalMs - ms) / 1000;
  const s = totalS % 60;
  const m = ((totalS - s) / 60) % 60;
  const h = Math.floor(totalS / 3600);
  const pad = (v, w = 2) => String(v).padStart(w, "0");
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms, 3)}`;
}
