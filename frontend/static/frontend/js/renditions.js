// Which rendition of a video a player shows (no DOM). With `urls.renditions` (the
// server's renditions.json) it is the proxy when that exists, else the remux; while on the
// remux it polls every `pollMs` and, when the proxy appears, switches to it (check() does
// one poll now). A switch is made only onto the same frame table (checked), one at a time,
// and never started during playback (it waits for the next poll while paused).
//
// The ladder's on-demand rung (docs/media.md §4.1): requestFull() asks the server for the
// video at its own height (urls.full, packet media only) and waits while it is encoded;
// backFromFull() switches back to the proxy (or the remux).
//
//   const renditions = new Renditions(urls, { pollMs, clock, paused, swap, showError });
//   const [rendition, src] = await renditions.pick();
//   renditions.playing(rendition, src);   // the player says what it now shows
//
// The player provides clock() (its FrameClock), paused(), swap(rendition, src) (loads
// the source and shows the same frame on it) and showError(message).

import { FrameClock } from "./frame_clock.js";
import { api } from "./api.js";

// Do two frame tables (as FrameClock) time every frame identically?
function sameTiming(a, b) {
  if (a.frameCount !== b.frameCount) return false;
  for (let i = 0; i < a.frameCount; i++) {
    if (a.ptsOf(i) !== b.ptsOf(i) || a.durationOf(i) !== b.durationOf(i)) return false;
  }
  return true;
}

export class Renditions {
  constructor(urls, { pollMs, clock, paused, swap, showError }) {
    this.urls = urls;
    this.pollMs = pollMs;
    this._player = { clock, paused, swap, showError };
    // The rendition playing ("proxy", "remux" or "full") and its URL.
    this.current = null;
    this.src = null;
    this.switching = null; // the switch under way (a promise), or null
    this._pollTimer = null;
    this._stopped = false;
  }

  playing(rendition, src) {
    this.current = rendition;
    this.src = src;
  }

  async fetch() {
    const response = await fetch(this.urls.renditions, { credentials: "same-origin", cache: "no-store" });
    if (!response.ok) throw new Error(`renditions: HTTP ${response.status}`);
    return (await response.json()).renditions;
  }

  // ["proxy"|"remux", url]: the proxy when it exists, else the remux.
  async pick() {
    // `renditions` is the URL of renditions.json (the API's `media.renditions_json`).
    if (typeof this.urls.renditions !== "string") return ["proxy", this.urls.proxy];
    const found = await this.fetch();
    if (found.proxy) return ["proxy", found.proxy];
    if (found.remux) return ["remux", found.remux];
    throw new Error("the video has no playable rendition yet");
  }

  schedulePoll() {
    if (this._stopped || this.current !== "remux" || typeof this.urls.renditions !== "string") return;
    clearTimeout(this._pollTimer);
    this._pollTimer = setTimeout(() => {
      this.check().catch(() => undefined).finally(() => this.schedulePoll());
    }, this.pollMs);
  }

  // Poll once: if the proxy exists now, switch to it. Resolves true once on the proxy.
  async check() {
    if (this.current === "proxy") return true;
    if (this.current === "full") return false; // chosen by the user: stays until backFromFull()
    if (this.switching) return this.switching;
    // Never during playback: the switch waits for a pause (the next poll after it).
    if (!this._player.paused()) return false;
    const found = await this.fetch();
    if (!found.proxy || this.current === "proxy") return this.current === "proxy";
    if (!this.switching) {
      this.switching = this._switchTo("proxy", found.proxy).finally(() => {
        this.switching = null;
      });
    }
    return this.switching;
  }

  // One switch at a time: wait for one under way (a poll's), then make this one.
  async switchOnce(rendition, src) {
    while (this.switching) await this.switching.catch(() => undefined);
    if (this.current === rendition && this.src === src) return true;
    this.switching = this._switchTo(rendition, src).finally(() => {
      this.switching = null;
    });
    return this.switching;
  }

  // Switch to another rendition of the same frames: false (the reason shown) when its
  // frame table differs.
  async _switchTo(rendition, src) {
    const response = await fetch(this.urls.frames, { credentials: "same-origin" });
    if (!response.ok) throw new Error(`frame table: HTTP ${response.status}`);
    if (!sameTiming(this._player.clock(), FrameClock.fromTable(await response.json()))) {
      this._player.showError(`The ${rendition} has a different frame table; staying on the ${this.current}.`);
      return false;
    }
    await this._player.swap(rendition, src);
    return true;
  }

  // The full rung's state (GET urls.full).
  fullState() {
    return api.get(this.urls.full);
  }

  // Ask for the full-height rendition and wait while it is encoded; onState(state) gets
  // every answer. Resolves with the last state, or null when stopped meanwhile.
  async requestFull(onState) {
    let state = (await api.request("POST", this.urls.full)).data;
    onState(state);
    while (state.status === "queued" || state.status === "running") {
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
      if (this._stopped) return null;
      state = await api.get(this.urls.full);
      onState(state);
    }
    return state;
  }

  // Back from the full rung to the proxy (or the remux, if the proxy is not made yet);
  // afterSwitch() runs once switched, before the poll for the proxy resumes.
  async backFromFull(afterSwitch) {
    const found = await this.fetch();
    const [rendition, src] = found.proxy ? ["proxy", found.proxy] : ["remux", found.remux];
    const switched = await this.switchOnce(rendition, src);
    afterSwitch();
    if (rendition === "remux") this.schedulePoll();
    return switched;
  }

  stop() {
    this._stopped = true;
    clearTimeout(this._pollTimer);
  }
}
