// The timeline's geometry: which frames are visible at which zoom, frame <-> x, lane
// packing. Pure: no DOM.

export const MIN_VISIBLE_FRAMES = 20;

export class TimelineView {
  // frameCount: frames in the video; visible: how many frames the width shows; first: leftmost frame.
  constructor(frameCount, visible = frameCount, first = 0) {
    this.frameCount = Math.max(1, frameCount);
    this.visible = Math.min(this.frameCount, Math.max(Math.min(MIN_VISIBLE_FRAMES, this.frameCount), Math.round(visible)));
    this.first = clamp(Math.round(first), 0, this.frameCount - this.visible);
  }

  get last() {
    return this.first + this.visible - 1;
  }

  // Zoom by `factor` (>1 zooms in) keeping frame `anchor` at the same place on screen.
  zoom(factor, anchor = this.first + this.visible / 2) {
    const visible = this.visible / factor;
    const ratio = (anchor - this.first) / this.visible;
    return new TimelineView(this.frameCount, visible, anchor - ratio * visible);
  }

  fit() {
    return new TimelineView(this.frameCount, this.frameCount, 0);
  }

  pan(frames) {
    return new TimelineView(this.frameCount, this.visible, this.first + frames);
  }

  // The same zoom, moved so that `frame` is visible (with a margin); unchanged if it is.
  follow(frame, margin = 0.1) {
    const pad = Math.floor(this.visible * margin);
    if (frame >= this.first + pad && frame <= this.last - pad) return this;
    return new TimelineView(this.frameCount, this.visible, frame - Math.floor(this.visible / 2));
  }

  // Frame f occupies [x(f), x(f + 1)) on a strip `width` pixels wide.
  x(frame, width) {
    return ((frame - this.first) / this.visible) * width;
  }

  frameAt(x, width) {
    return clamp(Math.floor(this.first + (x / width) * this.visible), 0, this.frameCount - 1);
  }
}

function clamp(value, low, high) {
  return Math.min(high, Math.max(low, value));
}

// Assign each interval [start, end] a row so that overlapping ones never share a row.
// items: [{start, end, ...}] -> same items with `row`; returns {items, rows}.
export function packRows(items) {
  const sorted = items.map((item, i) => ({ item, i })).sort((a, b) => a.item.start - b.item.start || a.i - b.i);
  const rowEnds = [];
  const rows = new Array(items.length);
  for (const { item, i } of sorted) {
    let row = rowEnds.findIndex((end) => end < item.start);
    if (row < 0) {
      row = rowEnds.length;
      rowEnds.push(item.end);
    } else {
      rowEnds[row] = item.end;
    }
    rows[i] = row;
  }
  return { items: items.map((item, i) => ({ ...item, row: rows[i] })), rows: Math.max(1, rowEnds.length) };
}

// Thumbnail tiles to draw: those whose frame falls in the view, at most `max` spread out.
export function visibleThumbs(meta, view, max = 40) {
  if (!meta || !Array.isArray(meta.frames)) return [];
  const inView = meta.frames.map((frame, k) => ({ frame, k })).filter((t) => t.frame >= view.first && t.frame <= view.last);
  if (inView.length <= max) return inView;
  const step = inView.length / max;
  return Array.from({ length: max }, (_, i) => inView[Math.floor(i * step)]);
}
