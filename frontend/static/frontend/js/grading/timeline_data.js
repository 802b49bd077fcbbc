// Diagnostics timeline: which item goes where. Pure (no DOM), so it is testable alone.
//
//   const model = timelineModel(diagnostics);       // from GET /api/scores/<id>/diagnostics/
//   model.lanes     -> [{ key: "reference", title, rows }, { key: "predictions", ... }]
//   model.items     -> [{ id, lane, index, row, start, end, status, label, note, placedBy }]
//   model.unplaced  -> items without frames (e.g. break points that never say where they are)
//   model.links     -> [{ ref: itemId, pred: itemId, kind: "matched" | near-miss tier }]
//   const view = new FrameWindow(frameCount).zoom(4, frame);  view.x(frame, width)

export const STATUS_LABELS = {
  matched: "matched",
  missed: "missed (false negative)",
  false_positive: "false positive",
  invalid: "invalid entry",
};

export function itemId(lane, index) {
  return `${lane}-${index}`;
}

function isFrame(value) {
  return Number.isInteger(value) && value >= 0;
}

// Rows so that overlapping intervals of one lane never share a row.
export function packRows(items) {
  const order = items.map((item, i) => i).sort((a, b) => items[a].start - items[b].start || a - b);
  const rowEnds = [];
  for (const i of order) {
    const item = items[i];
    let row = rowEnds.findIndex((end) => end < item.start);
    if (row < 0) {
      row = rowEnds.length;
      rowEnds.push(item.end);
    } else {
      rowEnds[row] = item.end;
    }
    item.row = row;
  }
  return rowEnds.length;
}

export function timelineModel(diagnostics) {
  const frameCount = (diagnostics.video && diagnostics.video.frame_count) || 1;
  const lanes = [
    { key: "reference", title: "ground truth", source: diagnostics.reference || [] },
    { key: "predictions", title: "submission", source: diagnostics.predictions || [] },
  ];
  const items = [];
  const unplaced = [];
  for (const lane of lanes) {
    const placed = [];
    for (const entry of lane.source) {
      const item = {
        id: itemId(lane.key, entry.index),
        lane: lane.key,
        index: entry.index,
        start: entry.start_frame,
        end: entry.end_frame,
        status: entry.status,
        label: entry.label,
        note: entry.note || "",
        placedBy: entry.placed_by || null,
        event: entry.event,
        row: 0,
      };
      if (isFrame(item.start) && isFrame(item.end) && item.end >= item.start && item.start < frameCount) {
        placed.push(item);
      } else {
        unplaced.push(item);
      }
      items.push(item);
    }
    lane.rows = Math.max(1, packRows(placed));
    delete lane.source;
  }
  const links = (diagnostics.matched || []).map((pair) => ({
    ref: itemId("reference", pair.ref_index),
    pred: itemId("predictions", pair.pred_index),
    kind: "matched",
    pair,
  }));
  for (const near of diagnostics.near_misses || []) {
    links.push({ ref: itemId("reference", near.ref_index), pred: itemId("predictions", near.pred_index), kind: near.tier, pair: near });
  }
  return { frameCount, lanes, items, unplaced, links };
}

// The frame an item's click seeks to: its first frame.
export function seekFrame(item) {
  return isFrame(item.start) ? item.start : null;
}

// Counts per lane and status (the legend).
export function statusCounts(model) {
  const counts = {};
  for (const item of model.items) {
    const key = `${item.lane}:${item.status}`;
    counts[key] = (counts[key] || 0) + 1;
  }
  return counts;
}

// Which frames the strip shows: [first, first + visible).
export class FrameWindow {
  constructor(frameCount, visible = frameCount, first = 0) {
    this.frameCount = Math.max(1, frameCount);
    this.visible = Math.min(this.frameCount, Math.max(Math.min(24, this.frameCount), Math.round(visible)));
    this.first = Math.min(this.frameCount - this.visible, Math.max(0, Math.round(first)));
  }

  zoom(factor, anchor = this.first + this.visible / 2) {
    const visible = this.visible / factor;
    const ratio = (anchor - this.first) / this.visible;
    return new FrameWindow(this.frameCount, visible, anchor - ratio * visible);
  }

  centre(frame) {
    return new FrameWindow(this.frameCount, this.visible, frame - this.visible / 2);
  }

  x(frame, width) {
    return ((frame - this.first) / this.visible) * width;
  }

  frameAt(x, width) {
    return Math.min(this.frameCount - 1, Math.max(0, Math.floor(this.first + (x / width) * this.visible)));
  }
}
