// Which frame a <video> shows, for browsers whose requestVideoFrameCallback does not say:
// Firefox reports metadata.mediaTime as the time asked for (rounded to a microsecond), not
// the presented frame's own timestamp, so "confirmed" would be derived from the request.
//
// The truth comes from the file instead: the MP4's own sample tables (mp4_index.js) give
// every sample's bytes and presentation timestamp; WebCodecs decodes the samples around
// the frame asked for, each output carrying the timestamp of the sample it came from; the
// picture the <video> shows (drawn to a small canvas) is compared with each decoded one,
// and the sample it matches names the frame (by its timestamp, through the frame table, as
// rVFC's mediaTime does in Chromium). A picture that matches none is no frame at all (null).
//
//   const truth = new FrameTruth(clock);
//   await truth.open(video.currentSrc);    // false: unavailable (truth.unavailable says why)
//   await truth.frameShown(video, near);   // -> the frame on screen, or null
//   const picture = truth.picture(video);  // now; truth.frameOf(picture, near) later
//
// Neighbouring frames that are pixel for pixel the same cannot be told apart (nor by eye):
// the frame asked for is then taken. Pictures are compared at THUMB_WIDTH pixels wide;
// a pixel differs when its luma differs by more than PIXEL_STEP (the video element and
// WebCodecs may convert colours a little differently, never by that much).

import { readMp4Index, fetchRange } from "./mp4_index.js";

const THUMB_WIDTH = 128;
const PIXEL_STEP = 32;
const MATCH_LIMIT = 0.01; // at most 1 % of the pixels may differ from the matched frame
const REACH = 2; // samples either side of the one asked for
const CACHE = 600;

export class FrameTruth {
  constructor(clock) {
    this.clock = clock;
    this.src = null;
    this.unavailable = null; // why no truth can be had (null: it can, once opened)
    this._index = null;
    this._byPts = []; // sample indices (decode order) sorted by presentation time
    this._thumbs = new Map(); // decode index -> luma thumbnail
    this._opening = null;
  }

  // Read the sample tables of `src`; resolves false (with `unavailable`) when this browser
  // or this file cannot give the truth.
  open(src) {
    if (this.src === src && this._opening) return this._opening;
    this.src = src;
    this._thumbs.clear();
    this._opening = this._open(src);
    return this._opening;
  }

  async _open(src) {
    this.unavailable = null;
    this._index = null;
    if (typeof VideoDecoder !== "function") {
      this.unavailable = "this browser has no WebCodecs decoder here (it needs a secure context: https or localhost)";
      return false;
    }
    try {
      const index = await readMp4Index(src);
      if (!index) {
        this.unavailable = "the video is not an MP4 file with an H.264 track";
        return false;
      }
      const config = { codec: index.codec, description: index.description, optimizeForLatency: true };
      const { supported } = await VideoDecoder.isConfigSupported(config);
      if (!supported) {
        this.unavailable = `this browser cannot decode ${index.codec} with WebCodecs`;
        return false;
      }
      this._index = { ...index, config };
      this._byPts = index.samples.map((_, i) => i).sort((a, b) => index.samples[a].pts - index.samples[b].pts);
      return true;
    } catch (error) {
      this.unavailable = `the video's sample tables could not be read (${error.message})`;
      return false;
    }
  }

  // The luma of what `source` (a <video>, a VideoFrame) shows, THUMB_WIDTH pixels wide.
  picture(source) {
    const width = source.videoWidth || source.displayWidth;
    const height = source.videoHeight || source.displayHeight;
    const w = Math.min(THUMB_WIDTH, width);
    const h = Math.max(1, Math.round((w * height) / width));
    if (!this._canvas || this._canvas.width !== w || this._canvas.height !== h) {
      this._canvas = Object.assign(document.createElement("canvas"), { width: w, height: h });
      this._context = this._canvas.getContext("2d", { willReadFrequently: true });
    }
    this._context.drawImage(source, 0, 0, w, h);
    const rgba = this._context.getImageData(0, 0, w, h).data;
    const luma = new Uint8Array(w * h);
    for (let i = 0; i < luma.length; i++) luma[i] = (77 * rgba[4 * i] + 150 * rgba[4 * i + 1] + 29 * rgba[4 * i + 2]) >> 8;
    return luma;
  }

  // The frame the <video> shows now, looked for around frame `near`.
  frameShown(video, near) {
    return this.frameOf(this.picture(video), near);
  }

  // The frame `picture` is, among the samples within `reach` of frame `near` (null: none).
  async frameOf(picture, near, reach = REACH) {
    if (!this._index) return null;
    const samples = this._index.samples;
    const middle = this._nearest(this.clock.ptsOf(near));
    const candidates = this._byPts.slice(Math.max(0, middle - reach), middle + reach + 1);
    await this._decode(candidates.filter((i) => !this._thumbs.has(i)));
    let best = null;
    for (const i of candidates) {
      const thumb = this._thumbs.get(i);
      if (!thumb || thumb.length !== picture.length) continue;
      const distance = differing(picture, thumb);
      const asked = i === this._byPts[middle];
      // The frame asked for wins a tie: the pictures are the same.
      if (best === null || distance < best.distance || (asked && distance <= best.distance)) best = { i, distance };
    }
    if (best === null || best.distance > MATCH_LIMIT) return null;
    return this.clock.frameAtMediaTime(samples[best.i].pts);
  }

  _nearest(pts) {
    const order = this._byPts;
    const samples = this._index.samples;
    let lo = 0;
    let hi = order.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (samples[order[mid]].pts < pts) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0 && Math.abs(samples[order[lo - 1]].pts - pts) <= Math.abs(samples[order[lo]].pts - pts)) return lo - 1;
    return lo;
  }

  // Decode, from the sync sample before the first of `wanted` (decode order) to the last,
  // and keep a thumbnail of every output by the timestamp of its sample.
  async _decode(wanted) {
    if (wanted.length === 0) return;
    const { samples, config } = this._index;
    let first = Math.min(...wanted);
    const last = Math.max(...wanted);
    while (first > 0 && !samples[first].sync) first -= 1;
    const start = samples[first].offset;
    const end = Math.max(...samples.slice(first, last + 1).map((s) => s.offset + s.size));
    const bytes = await fetchRange(this.src, start, end);
    const byMicro = new Map();
    for (let i = first; i <= last; i++) byMicro.set(Math.round(samples[i].pts * 1e6), i);
    let failure = null;
    const decoder = new VideoDecoder({
      output: (frame) => {
        const i = byMicro.get(frame.timestamp);
        if (i !== undefined) this._keep(i, this.picture(frame));
        frame.close();
      },
      error: (error) => {
        failure = error;
      },
    });
    try {
      decoder.configure(config);
      for (let i = first; i <= last; i++) {
        const s = samples[i];
        const data = bytes.subarray(s.offset - start, s.offset - start + s.size);
        decoder.decode(new EncodedVideoChunk({ type: s.sync ? "key" : "delta", timestamp: Math.round(s.pts * 1e6), data }));
      }
      await decoder.flush();
    } finally {
      if (decoder.state !== "closed") decoder.close();
    }
    if (failure) throw failure;
  }

  _keep(i, thumb) {
    if (this._thumbs.size >= CACHE) this._thumbs.delete(this._thumbs.keys().next().value);
    this._thumbs.set(i, thumb);
  }
}

// The share of pixels whose luma differs by more than PIXEL_STEP.
function differing(a, b) {
  let count = 0;
  for (let i = 0; i < a.length; i++) if (Math.abs(a[i] - b[i]) > PIXEL_STEP) count += 1;
  return count / a.length;
}
