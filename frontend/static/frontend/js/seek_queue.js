// Seeks one at a time, the latest wins (no DOM): while one runs, newer requests replace
// each other, so held-down arrow keys (key repeats) and scrubbing coalesce into few real
// seeks. Every request's promise resolves with the frame the seek that served it presented.
//
//   const seeks = new SeekQueue((target) => seekExact(target), (target, error) => fallbackFrame);
//   await seeks.request(120);        // -> the frame presented
//   seeks.intended;                  // the frame the latest request aims at
//   await seeks.runNow(frame, () => swapSource());   // an operation in a seek's place
//
// `seek(target)` resolves with the frame presented; when it rejects, `onError(target,
// error)` gives the frame to resolve with instead.

export class SeekQueue {
  constructor(seek, onError) {
    this._seek = seek;
    this._onError = onError;
    this.intended = 0; // the frame the latest request aims at (a player's base for step())
    this.requests = 0; // requests made so far: an operation started earlier sees newer ones
    this.inflight = null; // the running seek's promise
    this._queued = null; // { target, waiters: [resolve, ...] }: the next seek, the latest target
  }

  get busy() {
    return this.inflight !== null;
  }

  get hasQueued() {
    return this._queued !== null;
  }

  request(target) {
    this.intended = target;
    this.requests += 1;
    return new Promise((resolve) => {
      if (this.inflight) {
        if (this._queued) {
          this._queued.target = target;
          this._queued.waiters.push(resolve);
        } else {
          this._queued = { target, waiters: [resolve] };
        }
        return;
      }
      this._run(target, [resolve]);
    });
  }

  // Run `operation` (resolving with a frame, as a seek) now, in a seek's place; the caller
  // has waited until nothing runs or waits. Resolves when it is done.
  runNow(target, operation) {
    return new Promise((resolve) => {
      this._run(target, [() => resolve(true)], operation);
    });
  }

  async _run(target, waiters, operation = () => this._seek(target)) {
    this.inflight = operation();
    let presented;
    try {
      presented = await this.inflight;
    } catch (error) {
      presented = this._onError(target, error);
    } finally {
      this.inflight = null;
    }
    for (const resolve of waiters) resolve(presented);
    if (this._queued) {
      const next = this._queued;
      this._queued = null;
      this._run(next.target, next.waiters);
    }
  }
}
