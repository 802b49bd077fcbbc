// A zoomable timeline over the whole video (DOM): thumbnails, lanes of events, the
// playhead. Geometry: timeline_model.js.
//
//   const tl = new Timeline(root, { frameCount, thumbs });   // thumbs: thumbs.json meta or null
//   tl.setLanes([{ id: "own", label: "Your events", items: [{ key, start, end, label, className }] }]);
//   tl.setLane({ id, label, items, pinned: true });            // one lane; pinned: kept by setLanes
//   tl.setPlayhead(frame); tl.setSelected(key); tl.zoomIn(); tl.zoomOut(); tl.fit();
//   tl.addEventListener("seek", (e) => e.detail.frame);     // click on empty timeline
//   tl.addEventListener("select", (e) => e.detail.key);     // click on an event
// Ctrl+wheel zooms around the pointer; the wheel pans when zoomed in.

import { TimelineView, packRows, visibleThumbs } from "./timeline_model.js";
import { el } from "./ui.js";

const ROW_HEIGHT = 18;
const THUMB_HEIGHT = 40;

function packLane(lane) {
  const items = lane.items.filter((it) => Number.isInteger(it.start));
  return { ...lane, packed: packRows(items.map((it) => ({ ...it, end: Number.isInteger(it.end) ? it.end : it.start }))) };
}

export class Timeline extends EventTarget {
  constructor(root, { frameCount, thumbs = null }) {
    super();
    this.root = root;
    this.view = new TimelineView(frameCount);
    this.thumbs = thumbs;
    this.lanes = [];
    this.playhead = 0;
    this.selected = null;
    this.element = el("div", { class: "tl" });
    this.toolbar = el("div", { class: "tl-toolbar" });
    this.range = el("span", { class: "tl-range" });
    for (const [act, text, title] of [["zoom-out", "−", "Zoom out (-)"], ["zoom-in", "+", "Zoom in (+)"], ["fit", "Fit", "Whole video (0)"]]) {
      const button = el("button", { class: "tl-zoom", type: "button", "data-act": act, title, text });
      button.addEventListener("click", () => (act === "fit" ? this.fit() : act === "zoom-in" ? this.zoomIn() : this.zoomOut()));
      this.toolbar.append(button);
    }
    this.toolbar.append(this.range);
    this.strip = el("div", { class: "tl-strip" });
    this.ruler = el("div", { class: "tl-ruler" });
    this.thumbRow = el("div", { class: "tl-thumbs" });
    this.laneBox = el("div", { class: "tl-lanes" });
    this.head = el("div", { class: "tl-playhead" });
    this.strip.append(this.ruler, this.thumbRow, this.laneBox, this.head);
    this.element.append(this.toolbar, this.strip);
    root.append(this.element);
    this.strip.addEventListener("click", (event) => this._onClick(event));
    this.strip.addEventListener("wheel", (event) => this._onWheel(event), { passive: false });
    new ResizeObserver(() => this.render()).observe(this.strip);
    this.render();
  }

  // Lanes are packed into rows once per change (not on every zoom, pan or playhead move).
  // A lane set with `pinned: true` (the search results) stays below the page's own lanes
  // when they are replaced.
  setLanes(lanes) {
    const pinned = this.lanes.filter((l) => l.pinned && !lanes.some((n) => n.id === l.id));
    this.lanes = [...lanes.map(packLane), ...pinned];
    this.render();
  }

  // One lane changed (same id): only it is packed again.
  setLane(lane) {
    const packed = packLane(lane);
    this.lanes = this.lanes.some((l) => l.id === lane.id) ? this.lanes.map((l) => (l.id === lane.id ? packed : l)) : [...this.lanes, packed];
    this.render();
  }

  setPlayhead(frame) {
    this.playhead = frame;
    const followed = this.view.follow(frame);
    if (followed !== this.view) {
      this.view = followed;
      this.render();
    } else {
      this._placeHead();
    }
  }

  setSelected(key) {
    this.selected = key;
    let shown = false;
    for (const node of this.laneBox.querySelectorAll(".tl-item")) {
      const on = node.dataset.key === String(key);
      node.classList.toggle("selected", on);
      shown = shown || on;
    }
    // A selected item merged into its neighbours (whole-video zoom) gets drawn on its own.
    if (!shown && key !== null && key !== undefined) {
      for (const lane of this.lanes) lane.nodeKey = null;
      this.render();
    }
  }

  // Show frames [start, end] (with some room around them).
  reveal(start, end) {
    const span = Math.max(end - start + 1, 20);
    const visible = Math.min(this.view.frameCount, span * 3);
    this.view = new TimelineView(this.view.frameCount, visible, start - span);
    this.render();
  }

  zoomIn() {
    this.view = this.view.zoom(2, this.playhead);
    this.render();
  }

  zoomOut() {
    this.view = this.view.zoom(0.5, this.playhead);
    this.render();
  }

  fit() {
    this.view = this.view.fit();
    this.render();
  }

  _pct(frame) {
    return `${((frame - this.view.first) / this.view.visible) * 100}%`;
  }

  _placeHead() {
    const inView = this.playhead >= this.view.first && this.playhead <= this.view.last;
    this.head.hidden = !inView;
    this.head.style.left = this._pct(this.playhead);
    this.head.style.width = `max(2px, ${100 / this.view.visible}%)`;
  }

  render() {
    const view = this.view;
    this.range.textContent = `frames ${view.first}–${view.last} of ${view.frameCount}`;
    this._renderRuler();
    this._renderThumbs();
    this.laneBox.replaceChildren();
    // Only what is on screen is drawn; items narrower than a pixel that would sit on the
    // pixel already drawn in their row are merged into it (whole-video zoom of 2,000 events).
    const width = this.strip.clientWidth || 1000;
    const pxPerFrame = width / view.visible;
    for (const lane of this.lanes) {
      // A lane drawn for this view and width is reused as it is (a decision on the
      // adjudication page redraws the final lane only).
      const key = `${view.first}:${view.visible}:${width}`;
      if (lane.node && lane.nodeKey === key) {
        this.laneBox.append(lane.node);
        continue;
      }
      const packed = lane.packed;
      // For assistive technology a lane is a list named by its label, each bar an item named
      // by its title (what, which frames, which state), not by colour.
      const laneNode = el("div", { class: `tl-lane ${lane.className || ""}`, "data-lane": lane.id, role: "list", "aria-label": `Timeline lane ${lane.label}` });
      laneNode.style.height = `${packed.rows * ROW_HEIGHT + 4}px`;
      laneNode.append(el("span", { class: "tl-lane-label", text: lane.label, "aria-hidden": "true" }));
      const drawnTo = new Map(); // row -> the right edge drawn so far, in px
      for (const item of packed.items) {
        if (item.end < view.first || item.start > view.last) continue;
        const selected = String(item.key) === String(this.selected);
        const left = (item.start - view.first) * pxPerFrame;
        const right = Math.max(left + 3, (item.end - view.first + 1) * pxPerFrame);
        if (!selected && left < (drawnTo.get(item.row) ?? -Infinity) + 1 && right <= drawnTo.get(item.row) + 3) continue;
        drawnTo.set(item.row, Math.max(right, drawnTo.get(item.row) ?? -Infinity));
        const name = item.title || item.label || "";
        const node = el("div", { class: `tl-item ${item.className || ""}`, "data-key": String(item.key), title: name, role: "listitem", "aria-label": name });
        node.style.left = this._pct(item.start);
        node.style.width = `max(3px, ${((item.end - item.start + 1) / view.visible) * 100}%)`;
        node.style.top = `${item.row * ROW_HEIGHT + 2}px`;
        if (right - left > 24) node.textContent = item.label || "";
        if (selected) node.classList.add("selected");
        laneNode.append(node);
      }
      lane.node = laneNode;
      lane.nodeKey = key;
      this.laneBox.append(laneNode);
    }
    this._placeHead();
  }

  _renderRuler() {
    this.ruler.replaceChildren();
    const view = this.view;
    const target = Math.max(1, view.visible / 8);
    const magnitude = 10 ** Math.floor(Math.log10(target));
    const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= target) || magnitude * 10;
    for (let frame = Math.ceil(view.first / step) * step; frame <= view.last; frame += step) {
      const tick = el("span", { class: "tl-tick", text: String(frame) });
      tick.style.left = this._pct(frame);
      this.ruler.append(tick);
    }
  }

  _renderThumbs() {
    this.thumbRow.replaceChildren();
    const meta = this.thumbs;
    if (!meta || !meta.sprite) {
      this.thumbRow.hidden = true;
      return;
    }
    this.thumbRow.hidden = false;
    const scale = THUMB_HEIGHT / meta.tile_height;
    const width = meta.tile_width * scale;
    for (const { frame, k } of visibleThumbs(meta, this.view)) {
      const tile = el("div", { class: "tl-thumb", title: `frame ${frame}` });
      tile.style.left = this._pct(frame);
      tile.style.width = `${width}px`;
      tile.style.height = `${THUMB_HEIGHT}px`;
      tile.style.backgroundImage = `url("${meta.sprite}")`;
      tile.style.backgroundSize = `${meta.columns * width}px ${meta.rows * THUMB_HEIGHT}px`;
      tile.style.backgroundPosition = `${-(k % meta.columns) * width}px ${-Math.floor(k / meta.columns) * THUMB_HEIGHT}px`;
      this.thumbRow.append(tile);
    }
  }

  _onClick(event) {
    const item = event.target.closest(".tl-item");
    if (item) {
      this.dispatchEvent(new CustomEvent("select", { detail: { key: item.dataset.key, lane: item.closest(".tl-lane")?.dataset.lane } }));
      return;
    }
    const box = this.strip.getBoundingClientRect();
    const frame = this.view.frameAt(event.clientX - box.left, box.width);
    this.dispatchEvent(new CustomEvent("seek", { detail: { frame } }));
  }

  _onWheel(event) {
    const box = this.strip.getBoundingClientRect();
    if (event.ctrlKey) {
      event.preventDefault();
      const anchor = this.view.frameAt(event.clientX - box.left, box.width);
      this.view = this.view.zoom(event.deltaY < 0 ? 1.25 : 0.8, anchor);
      this.render();
    } else if (this.view.visible < this.view.frameCount) {
      event.preventDefault();
      const delta = Math.abs(event.deltaX) > Math.abs(event.deltaY) ? event.deltaX : event.deltaY;
      this.view = this.view.pan(Math.round((delta / box.width) * this.view.visible));
      this.render();
    }
  }
}
