// The new event being written (the draft) as state: kept in the page and in local
// storage per ledger, so a reload or a crash gives it back. Pure apart from the
// storage object it is handed (localStorage, or a stand-in in tests).

export function isEmptyDraft(draft) {
  return Object.values(draft || {}).every((value) => value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0));
}

export class DraftKeeper {
  constructor(storage, key) {
    this.storage = storage;
    this.key = key;
  }

  // Keeps a draft (or forgets it when it is empty), with `typed`: text typed into one of
  // its boxes that the draft has not taken in yet ({name, value}, e.g. a half-typed noun).
  // A full storage is not fatal: the draft stays in the page.
  save(draft, typed = null) {
    try {
      if (isEmptyDraft(draft) && !(typed && typed.value)) this.storage.removeItem(this.key);
      else this.storage.setItem(this.key, JSON.stringify({ draft: draft || {}, typed: typed && typed.value ? typed : null, saved_at: Date.now() }));
    } catch {
      // quota or privacy mode: nothing more to do
    }
  }

  _record() {
    try {
      const raw = this.storage.getItem(this.key);
      return raw ? JSON.parse(raw) : null;
    } catch {
      return null;
    }
  }

  load() {
    const parsed = this._record();
    return parsed && parsed.draft && !isEmptyDraft(parsed.draft) ? parsed.draft : null;
  }

  // The half-typed text kept with the draft, or null.
  loadTyped() {
    const parsed = this._record();
    return parsed && parsed.typed && parsed.typed.name && parsed.typed.value ? parsed.typed : null;
  }

  clear() {
    this.save(null);
  }
}

// Where the player was, per ledger: a reload goes back there.
export class FrameKeeper {
  constructor(storage, key) {
    this.storage = storage;
    this.key = key;
  }

  save(frame) {
    try {
      this.storage.setItem(this.key, String(frame));
    } catch {
      // as above
    }
  }

  load() {
    try {
      const value = Number(this.storage.getItem(this.key));
      return Number.isInteger(value) && value > 0 ? value : null;
    } catch {
      return null;
    }
  }
}
