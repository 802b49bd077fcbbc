// The player's rendition switches (no DOM of their own): the full-height rung (docs/media.md
// section 4.1; the "Full resolution" button) and the switch itself, which shows the same
// frame on another rendition through the player's seek queue. FramePlayer's methods of
// the same names call these.

import { loadSource } from "./media_load.js";

// Show the full rung's state on its button.
export function showFull(player, state) {
  player.fullState = state;
  const offered = !["not_needed", "unavailable"].includes(state.status);
  player.fullButton.hidden = !offered;
  if (player.rendition === "full") {
    player.fullButton.textContent = `${state.proxy_height}p proxy`;
  } else if (state.status === "queued" || state.status === "running") {
    const pct = state.progress ? ` ${Math.round(state.progress * 100)} %` : "";
    player.fullButton.textContent = `Full resolution: encoding${pct}`;
  } else {
    player.fullButton.textContent = `Full resolution (${state.height}p)`;
  }
  player.dispatchEvent(new CustomEvent("fullstate", { detail: state }));
}

// Ask for the full-height rendition and switch to it on the same frame once it exists.
// Resolves true when on it, false when it cannot be had (the reason is shown).
export async function useFullResolution(player) {
  if (typeof player.urls.full !== "string") return false;
  if (player.rendition === "full") return true;
  let state;
  try {
    state = await player.renditions.requestFull((answer) => showFull(player, answer));
    if (state === null) return false; // destroyed meanwhile
  } catch (error) {
    player._showError(`Full resolution: ${error.message}`);
    return false;
  }
  if (state.status !== "ready" || !state.url) {
    player._showError(`Full resolution: ${state.message || state.status}`);
    return false;
  }
  const switched = await player.renditions.switchOnce("full", state.url);
  showFull(player, state);
  return switched && player.rendition === "full";
}

// Back from the full rung to the proxy (or the remux, if the proxy is not made yet).
export async function useProxy(player) {
  if (player.rendition !== "full") return true;
  return player.renditions.backFromFull(() => {
    if (player.fullState) showFull(player, player.fullState);
  });
}

// Show the same frame on another rendition (the frame table is checked as the same).
export async function swapRendition(player, rendition, src) {
  while (player.seeks.busy || player.seeks.hasQueued || player._snapPromise) {
    const busy = player.seeks.inflight || player._snapPromise || new Promise((resolve) => setTimeout(resolve, 20));
    await Promise.resolve(busy).catch(() => undefined);
  }
  // A switch made while playing goes on playing, at the same rate, from the frame it
  // was on (unless a seek or a pause was asked for meanwhile).
  const playing = !player.video.paused;
  const requests = player.seeks.requests;
  const pauses = player._pauses;
  const frame = player.seeks.intended;
  const pending = playing ? { pauses, requests } : null;
  if (pending) player._pendingPlay = pending;
  try {
    await player.seeks.runNow(frame, () => swapSource(player, rendition, src, frame));
    if (playing && player.seeks.requests === requests && player._pauses === pauses && player.video.paused) await player.play().catch(() => undefined);
  } finally {
    if (pending && player._pendingPlay === pending) player._pendingPlay = null;
  }
}

async function swapSource(player, rendition, src, frame) {
  if (!player.video.paused) {
    player._snapping = true; // paused for the switch; the seek below confirms the frame
    player.video.pause();
    await player.frames.settle();
    player._playToken += 1;
  }
  player.frames.release();
  const loaded = loadSource(player.video, 30000);
  player.video.src = src;
  await loaded;
  // A new source starts at the element's default rate: put back the rate last chosen,
  // which may have been chosen while the source loaded.
  player.video.playbackRate = player.rate;
  player.renditions.playing(rendition, src);
  player.stats.switches += 1;
  player.frames.forget();
  player.frames.keepPending();
  player.dispatchEvent(new CustomEvent("rendition", { detail: { rendition, src } }));
  return player._seekExact(frame);
}
