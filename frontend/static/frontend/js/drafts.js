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

  // Keeps a draft (or forgets it when it is empty). A full storage is not fatal: the
  // draft stays in the page.
  save(draft) {
    try {
      if (isEmptyDraft(draft)) this.storage.removeItem(this.key);
      else this.storage.setItem(this.key, JSON.stringify({ draft, saved_at: Date.now() }));
    } catch {
      // quota or privacy mode: nothing more to do
    }
  }

  load() {
    try {
      const raw = this.storage.getItem(this.key);
      const parsed = raw ? JSON.parse(raw) : null;
      return parsed && parsed.draft && !isEmptyDraft(parsed.draft) ? parsed.draft : null;
    } catch {
      return null;
    }
  }

  clear() {
    this.save(null);
  }
}
