// The video samples of an MP4 file, read from its own sample tables (no DOM): where each
// sample's bytes are, its presentation time in seconds (stts + ctts, after the edit list),
// whether it is a sync sample, and the decoder configuration (avcC) for WebCodecs.
//
//   const index = await readMp4Index(url);   // null: not an MP4 with an H.264 video track
//   index.codec;          // "avc1.64001f"
//   index.description;    // the avcC box's payload (VideoDecoder's description)
//   index.samples;        // [{ offset, size, pts, sync }], in decode order
//
// frame_truth.js decodes these samples by their own timestamps.

const HEADER = 16;

async function fetchRange(url, start, end) {
  const response = await fetch(url, { headers: { Range: `bytes=${start}-${end - 1}` }, credentials: "same-origin" });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status} for bytes ${start}-${end - 1}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  // A server that ignores Range answers 200 with the whole file.
  return response.status === 206 ? bytes : bytes.subarray(start, end);
}

// The boxes inside bytes[start, end): [{ type, start (payload), end }].
function boxes(view, start, end) {
  const out = [];
  let at = start;
  while (at + 8 <= end) {
    let size = view.getUint32(at);
    const type = String.fromCharCode(view.getUint8(at + 4), view.getUint8(at + 5), view.getUint8(at + 6), view.getUint8(at + 7));
    let header = 8;
    if (size === 1) {
      size = Number(view.getBigUint64(at + 8));
      header = 16;
    } else if (size === 0) {
      size = end - at;
    }
    if (size < header) break;
    out.push({ type, start: at + header, end: Math.min(end, at + size) });
    at += size;
  }
  return out;
}

function child(view, box, type) {
  return box ? boxes(view, box.start, box.end).find((b) => b.type === type) || null : null;
}

function path(view, box, ...types) {
  for (const type of types) box = child(view, box, type);
  return box;
}

// Find the top-level moov box: read headers along the file (moov may follow mdat).
async function readMoov(url) {
  let at = 0;
  for (let i = 0; i < 64; i++) {
    const head = await fetchRange(url, at, at + HEADER).catch(() => null);
    if (!head || head.length < 8) return null;
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    let size = view.getUint32(0);
    const type = String.fromCharCode(...head.subarray(4, 8));
    if (size === 1) size = Number(view.getBigUint64(8));
    if (type === "moov") return fetchRange(url, at, at + size);
    if (size < 8) return null;
    at += size;
  }
  return null;
}

function table(view, box, fields, startAt = 8) {
  // A full box: version/flags (4), entry count (4), then entries of `fields` 32-bit words.
  const count = view.getUint32(box.start + 4);
  const rows = [];
  for (let i = 0, at = box.start + startAt; i < count; i++, at += 4 * fields) {
    const row = [];
    for (let f = 0; f < fields; f++) row.push(view.getUint32(at + 4 * f));
    rows.push(row);
  }
  return rows;
}

function videoTrack(view, moov) {
  for (const trak of boxes(view, moov.start, moov.end).filter((b) => b.type === "trak")) {
    const hdlr = path(view, trak, "mdia", "hdlr");
    if (hdlr && String.fromCharCode(...new Uint8Array(view.buffer, view.byteOffset + hdlr.start + 8, 4)) === "vide") return trak;
  }
  return null;
}

// The edit list's shift, in seconds: presentation time = composition time + shift.
function editShift(view, trak, timescale, movieScale) {
  const elst = path(view, trak, "edts", "elst");
  if (!elst) return 0;
  const version = view.getUint8(elst.start);
  const count = view.getUint32(elst.start + 4);
  let empty = 0;
  for (let i = 0, at = elst.start + 8; i < count; i++) {
    const duration = version === 1 ? Number(view.getBigUint64(at)) : view.getUint32(at);
    const mediaTime = version === 1 ? Number(view.getBigInt64(at + 8)) : view.getInt32(at + 4);
    at += version === 1 ? 20 : 12;
    if (mediaTime === -1) empty += duration / movieScale;
    else return empty - mediaTime / timescale;
  }
  return empty;
}

function sampleEntry(view, trak) {
  const stsd = path(view, trak, "mdia", "minf", "stbl", "stsd");
  if (!stsd) return null;
  const [entry] = boxes(view, stsd.start + 8, stsd.end);
  if (!entry || !["avc1", "avc3"].includes(entry.type)) return null;
  const avcC = boxes(view, entry.start + 78, entry.end).find((b) => b.type === "avcC");
  if (!avcC) return null;
  const hex = (i) => view.getUint8(avcC.start + i).toString(16).padStart(2, "0");
  return {
    codec: `${entry.type}.${hex(1)}${hex(2)}${hex(3)}`,
    description: new Uint8Array(view.buffer.slice(view.byteOffset + avcC.start, view.byteOffset + avcC.end)),
  };
}

export function parseMoov(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const [moov] = boxes(view, 0, bytes.byteLength);
  if (!moov || moov.type !== "moov") return null;
  const mvhd = child(view, moov, "mvhd");
  const movieScale = mvhd ? view.getUint32(mvhd.start + (view.getUint8(mvhd.start) === 1 ? 20 : 12)) : 1000;
  const trak = videoTrack(view, moov);
  const entry = trak && sampleEntry(view, trak);
  if (!entry) return null;
  const mdhd = path(view, trak, "mdia", "mdhd");
  const timescale = view.getUint32(mdhd.start + (view.getUint8(mdhd.start) === 1 ? 20 : 12));
  const stbl = path(view, trak, "mdia", "minf", "stbl");
  const get = (type) => child(view, stbl, type);
  const stsz = get("stsz");
  const fixed = view.getUint32(stsz.start + 4);
  const count = view.getUint32(stsz.start + 8);
  const sizes = [];
  for (let i = 0; i < count; i++) sizes.push(fixed || view.getUint32(stsz.start + 12 + 4 * i));
  const co64 = get("co64");
  const chunks = co64
    ? Array.from({ length: view.getUint32(co64.start + 4) }, (_, i) => Number(view.getBigUint64(co64.start + 8 + 8 * i)))
    : table(view, get("stco"), 1).map(([offset]) => offset);
  const stsc = table(view, get("stsc"), 3);
  const offsets = [];
  for (let c = 0, run = 0; c < chunks.length && offsets.length < count; c++) {
    while (run + 1 < stsc.length && stsc[run + 1][0] <= c + 1) run += 1;
    let at = chunks[c];
    for (let s = 0; s < stsc[run][1] && offsets.length < count; s++) {
      offsets.push(at);
      at += sizes[offsets.length - 1];
    }
  }
  const dts = [];
  let clock = 0; // each stts entry: `n` samples that each last `delta`
  for (const [n, delta] of table(view, get("stts"), 2)) {
    for (let i = 0; i < n; i++, clock += delta) dts.push(clock);
  }
  const ctts = get("ctts") ? table(view, get("ctts"), 2).flatMap(([n, offset]) => Array(n).fill(offset | 0)) : [];
  const stss = get("stss") ? new Set(table(view, get("stss"), 1).map(([n]) => n - 1)) : null;
  const shift = editShift(view, trak, timescale, movieScale);
  const samples = sizes.map((size, i) => ({
    offset: offsets[i],
    size,
    pts: ((dts[i] ?? 0) + (ctts[i] ?? 0)) / timescale + shift,
    sync: stss ? stss.has(i) : true,
  }));
  return { codec: entry.codec, description: entry.description, samples };
}

export async function readMp4Index(url) {
  const moov = await readMoov(url);
  return moov ? parseMoov(moov) : null;
}

export { fetchRange };
