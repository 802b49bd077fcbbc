// A table body that holds only the rows in view of its scrolling box (DOM). Rows have one
// fixed height (CSS: .virtual tbody tr); the table sits in a box as tall as the whole
// list, moved down to the first row shown, so the scroll bar is that of the whole list
// and the body holds data rows only. Cost follows what is on screen.
//
//   const rows = new VirtualRows(scrollBox, tbody, { rowHeight: 28 });
//   rows.setRows(list, (item, index) => tr);   // the list changed (same list: repaint)
//   rows.update(index);                        // one item changed: rebuild its row if shown
//   rows.reveal(index);                        // scroll so that row is in view

export class VirtualRows {
  constructor(scrollBox, tbody, { rowHeight = 28, overscan = 8 } = {}) {
    this.box = scrollBox;
    this.body = tbody;
    this.table = tbody.closest("table");
    this.rowHeight = rowHeight;
    this.overscan = overscan;
    this.sizer = document.createElement("div");
    this.sizer.className = "virtual-sizer";
    this.table.replaceWith(this.sizer);
    this.sizer.append(this.table);
    this.table.classList.add("virtual");
    this.list = [];
    this.build = null;
    this.shown = new Map(); // index -> tr
    this.window = [0, 0];
    this._scheduled = false;
    this.box.addEventListener("scroll", () => this._schedule(), { passive: true });
    new ResizeObserver(() => this._schedule()).observe(this.box);
  }

  setRows(list, build) {
    this.list = list;
    this.build = build;
    this.render(true);
  }

  update(index) {
    const old = this.shown.get(index);
    if (!old) return;
    const row = this.build(this.list[index], index);
    old.replaceWith(row);
    this.shown.set(index, row);
  }

  reveal(index) {
    if (index < 0 || index >= this.list.length) return;
    const top = index * this.rowHeight;
    const head = this.table.tHead ? this.table.tHead.offsetHeight : 0;
    const view = this.box.clientHeight - head;
    if (top < this.box.scrollTop) this.box.scrollTop = top;
    else if (top + this.rowHeight > this.box.scrollTop + view) this.box.scrollTop = top + this.rowHeight - view;
    this.render(false);
  }

  rowOf(index) {
    return this.shown.get(index) || null;
  }

  _schedule() {
    if (this._scheduled) return;
    this._scheduled = true;
    requestAnimationFrame(() => {
      this._scheduled = false;
      this.render(false);
    });
  }

  _range() {
    const height = this.box.clientHeight || 600;
    const first = Math.max(0, Math.floor(this.box.scrollTop / this.rowHeight) - this.overscan);
    const last = Math.min(this.list.length, Math.ceil((this.box.scrollTop + height) / this.rowHeight) + this.overscan);
    return [first, last];
  }

  render(force) {
    if (!this.build) return;
    const [first, last] = this._range();
    if (!force && first === this.window[0] && last === this.window[1]) return;
    this.window = [first, last];
    const head = this.table.tHead ? this.table.tHead.offsetHeight : 0;
    this.sizer.style.height = `${this.list.length * this.rowHeight + head}px`;
    this.table.style.top = `${first * this.rowHeight}px`;
    const keep = force ? new Map() : this.shown;
    const shown = new Map();
    const nodes = [];
    for (let i = first; i < last; i++) {
      const row = keep.get(i) || this.build(this.list[i], i);
      shown.set(i, row);
      nodes.push(row);
    }
    this.shown = shown;
    this.body.replaceChildren(...nodes);
  }
}
