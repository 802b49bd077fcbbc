// Sends the ledger's queued operations to the server, one at a time, with optimistic
// concurrency (If-Match: the ledger version this page last saw). No DOM.
//
// - success: the operation leaves the queue (`saved`), the version moves on;
// - network failure, no answer within SAVE_TIMEOUT_MS (the caller's send enforces it) or
//   5xx: `failed`; the same operation is retried with back-off, at once when the browser
//   comes back online, or when `retryNow()` is called;
// - 412 stale version: `conflict`; nothing more is sent until the annotator chooses
//   (re-apply on the newer version, or take the newer version) - see ledger_state.js;
// - 400 invalid: `rejected`; the event goes back to the form with the error;
// - 409 (frozen elsewhere) and other refusals: `failed` without automatic retry.
// The queue is also written to storage after every change, so a closed tab or a crash
// does not lose it: the next visit offers it again.

import { SAVE, etag, nextRequest, persistable } from "./ledger_state.js";

export const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 15000];
// A save with no answer by then counts as failed (the server could not be reached): the
// page says so within seconds, keeps the change in this browser, and retries.
export const SAVE_TIMEOUT_MS = 6000;

export class Autosave extends EventTarget {
  // send(request, ifMatch) -> Promise<{version, uid, data}>; throws ApiError-like
  // objects ({status, code, field, message}) or network errors (no status).
  constructor(store, { send, storage = null, storageKey = null, delays = RETRY_DELAYS_MS, online = globalThis }) {
    super();
    this.store = store;
    this.send = send;
    this.storage = storage;
    this.storageKey = storageKey;
    this.delays = delays;
    this.attempts = 0;
    this.timer = null;
    this.retryAt = null;
    this.running = false;
    this.blocked = null; // a refusal that automatic retries cannot fix
    store.subscribe((state) => {
      this._persist(state);
      this.kick();
    });
    if (online && online.addEventListener) online.addEventListener("online", () => this.retryNow());
  }

  static restore(storage, storageKey) {
    if (!storage || !storageKey) return null;
    try {
      const raw = storage.getItem(storageKey);
      return raw ? JSON.parse(raw) : null;
    } catch {
      return null;
    }
  }

  _persist(state) {
    if (!this.storage || !this.storageKey) return;
    if (state.orphaned && state.orphaned.length) return; // shown to the annotator; kept until dismissed
    try {
      if (state.pending.length) this.storage.setItem(this.storageKey, JSON.stringify(persistable(state)));
      else this.storage.removeItem(this.storageKey);
    } catch {
      // Storage full or disabled: the queue still lives in the page.
    }
  }

  kick() {
    if (this.running || this.timer !== null || this.blocked) return;
    if (!nextRequest(this.store.getState())) return;
    this._pump();
  }

  retryNow() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.retryAt = null;
    this.blocked = null;
    this.kick();
  }

  async _pump() {
    this.running = true;
    try {
      for (;;) {
        const state = this.store.getState();
        const request = nextRequest(state);
        if (!request) break;
        this.store.dispatch({ type: "sendStarted", id: request.op.id });
        let result;
        try {
          result = await this.send(request, etag(state));
        } catch (error) {
          this._failed(request, error);
          break;
        }
        this.attempts = 0;
        this.store.dispatch({ type: "saved", id: request.op.id, version: result.version, uid: result.uid, data: result.data });
      }
    } finally {
      this.running = false;
    }
    // Edits made while the last request was in flight.
    if (this.timer === null && !this.blocked && nextRequest(this.store.getState())) this._pump();
  }

  _failed(request, error) {
    const status = error && error.status;
    const message = (error && error.message) || "Save failed.";
    if (status === 412) {
      this.store.dispatch({ type: "conflict", id: request.op.id, message });
      this.dispatchEvent(new CustomEvent("conflict", { detail: { message } }));
      return;
    }
    if (status === 400) {
      this.store.dispatch({ type: "rejected", id: request.op.id, field: error.field, message });
      return;
    }
    if (status === 409 || status === 403 || status === 404) {
      this.blocked = message;
      this.store.dispatch({ type: "failed", id: request.op.id, message: `Not saved: ${message}` });
      return;
    }
    // No answer, or a server error: try again later.
    const delay = this.delays[Math.min(this.attempts, this.delays.length - 1)];
    this.attempts += 1;
    this.retryAt = Date.now() + delay;
    const reason = status
      ? `the server answered ${status}`
      : error && error.timeout
        ? `the server could not be reached (${error.message})`
        : "the server could not be reached";
    this.store.dispatch({ type: "failed", id: request.op.id, message: `Save failed: ${reason}.` });
    this.timer = setTimeout(() => {
      this.timer = null;
      this.retryAt = null;
      this.kick();
    }, delay);
    this.dispatchEvent(new CustomEvent("retry", { detail: { delay, attempts: this.attempts } }));
  }

  get status() {
    return this.store.getState().status;
  }
}

export { SAVE };
