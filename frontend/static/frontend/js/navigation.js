// Where the seeking keys go. Pure: no DOM.
//
//   boundaryTarget(frames, frame, direction)  next / previous event boundary (start or end)
//   keyframeTarget(keyframes, frame, direction)  next / previous keyframe of the frame table
//   secondStep(clock)  frames in one second of video, for Alt+arrow steps
//   FramePrefix  digits typed before a command: "1290o" sets the end at frame 1290

function nearest(sortedUnique, frame, direction) {
  if (direction > 0) {
    for (const f of sortedUnique) if (f > frame) return f;
  } else {
    for (let i = sortedUnique.length - 1; i >= 0; i--) if (sortedUnique[i] < frame) return sortedUnique[i];
  }
  return null;
}

// frames: the start and end frames of every event (any order, duplicates allowed).
export function boundaryTarget(frames, frame, direction) {
  const list = [...new Set(frames.filter(Number.isInteger))].sort((a, b) => a - b);
  return nearest(list, frame, direction);
}

export function keyframeTarget(keyframes, frame, direction) {
  return nearest(keyframes || [], frame, direction);
}

export function secondStep(clock, fallbackRate = 30) {
  const rate = clock && clock.fpsNum && clock.fpsDen ? clock.fpsNum / clock.fpsDen : fallbackRate;
  return Math.max(1, Math.round(rate));
}

// A frame number typed as a prefix (digits while the focus is on the page, not a field).
export class FramePrefix {
  constructor() {
    this.digits = "";
  }

  // Takes a key; true if it was a digit that belongs to the prefix. A leading 0 is not
  // taken (0 keeps its own meaning: zoom to the whole video).
  feed(key) {
    if (!/^[0-9]$/.test(key) || (key === "0" && !this.digits)) return false;
    if (this.digits.length >= 7) return true;
    this.digits += key;
    return true;
  }

  backspace() {
    this.digits = this.digits.slice(0, -1);
  }

  get active() {
    return this.digits.length > 0;
  }

  // The frame typed (null if none); clears the prefix.
  take() {
    const value = this.digits ? Number(this.digits) : null;
    this.digits = "";
    return value;
  }
}
