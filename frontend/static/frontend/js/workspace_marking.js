// The workspace's marking and moving (DOM wiring, part of workspace.js): i / o on frames
// or on a moment's interval, nudges, [ / ] between events, and the seeking and playing
// commands (h, J / K / L, boundary and keyframe jumps, g). Each mount function takes the
// page's context `ws` and adds its functions to it.

import { snapInterval, snapToGrid } from "./event_schema.js";
import { events, orderedEvents } from "./ledger_state.js";
import { boundaryTarget, keyframeTarget, secondStep } from "./navigation.js";
import { RATES } from "./player.js";
import { $ } from "./ui.js";

// i / o, nudges, [ / ].
export function mountMarking(ws) {
  const { store, form, bounds, intervalField, player } = ws;
  // At the keydown of "o" (before the queued marks run): a new event whose start is marked,
  // or about to be, moves on to its first empty label (the verb) at once, so letters typed
  // straight after "o" land there instead of being taken as shortcuts.
  ws.labelsEarly = false;
  ws.endKeyPressed = (startQueued) => {
    ws.labelsEarly =
      Boolean(bounds) && ws.draftKey === null && !ws.readOnly() && (startQueued || Number.isInteger(form.draft[bounds.start])) && form.focusFirstEmpty();
  };
  ws.setBoundary = async (which) => {
    const early = which === "end" && ws.labelsEarly;
    if (which === "end") ws.labelsEarly = false;
    const frame = await ws.frameNow();
    if (bounds) {
      ws.boundary = which;
      const data = ws.changeEvent((d) => ({ ...d, [bounds[which]]: frame }));
      // A new event with both ends marked, in order: on to its first empty label (the verb).
      const inOrder = which === "end" && ws.draftKey === null && data && Number.isInteger(data[bounds.start]) && data[bounds.start] <= frame;
      if (inOrder && !early) form.focusFirstEmpty();
      // The end is before the start: the keys go back to the page, unless something was typed.
      const typing = document.activeElement;
      if (early && !inOrder && form.form.contains(typing) && !typing.value) ws.focusHome();
      ws.flagReversed(data);
    } else if (intervalField) {
      ws.markInterval(which, ws.timeOfFrame(frame));
    }
    ws.showDraftTitle();
  };

  // Marked the wrong way round: said at once, with the end box flagged (Enter would refuse it).
  ws.flagReversed = (data) => {
    if (!data || !Number.isInteger(data[bounds.start]) || !Number.isInteger(data[bounds.end])) return;
    if (data[bounds.end] >= data[bounds.start]) return; // (a re-render cleared any old flag)
    form.markError(bounds.end, `before the start (${data[bounds.start]})`);
    ws.setNotice(`The end (${data[bounds.end]}) is before the start (${data[bounds.start]}): mark the start (i) or the end (o) again.`, "bad");
  };

  ws.nudge = (k) => {
    if (!bounds) return;
    const name = bounds[ws.boundary];
    let clamped = false;
    const data = ws.changeEvent((d) => {
      if (!Number.isInteger(d[name])) return null;
      clamped = ws.clampFrame(d[name] + k) !== d[name] + k;
      return { ...d, [name]: ws.clampFrame(d[name] + k) };
    });
    if (clamped) ws.setNotice(`The ${ws.boundary} is at the ${k < 0 ? "first" : "last"} frame (${data[name]}): it goes no further.`, "bad");
    else if (data) ws.flagReversed(data);
    if (data) ws.seek(player.seekToFrame(data[name]));
  };

  ws.jump = async (direction) => {
    const frame = await ws.frameNow();
    const list = orderedEvents(store.getState(), bounds && bounds.start).filter((e) => ws.startFrameOf(e.data) !== null);
    if (!list.length) return;
    let index;
    const at = list.findIndex((e) => e.key === ws.draftKey);
    if (at >= 0) index = at + direction;
    else {
      index = direction > 0 ? list.findIndex((e) => ws.startFrameOf(e.data) > frame) : list.map((e) => ws.startFrameOf(e.data) < frame).lastIndexOf(true);
    }
    if (index < 0 || index >= list.length) return;
    ws.select(list[index].key);
  };
}

// i / o on a moment query: the time marked is kept exactly (marks) and the interval is
// the snapped one, shown with the grid; never an empty interval.
export function mountIntervals(ws) {
  const { intervalField } = ws;
  const marks = { start: null, end: null };
  ws.markInterval = (which, t) => {
    const step = intervalField.grid_step;
    const duration = ws.packet.video.duration || undefined;
    marks[which] = t;
    let note = "";
    ws.changeEvent((data) => {
      const list = (data[intervalField.name] || []).map((p) => [...p]);
      let last = list[list.length - 1];
      if (which === "start" && (!last || (last[0] !== "" && last[1] !== ""))) {
        list.push(["", ""]);
        last = list[list.length - 1];
        marks.end = null;
      } else if (!last) {
        list.push(["", ""]);
        last = list[0];
      }
      const start = which === "start" ? t : marks.start ?? (last[0] === "" ? null : last[0]);
      const end = which === "end" ? t : marks.end ?? (last[1] === "" ? null : last[1]);
      if (start !== null && end !== null && end > start - 1e-9) {
        const snapped = snapInterval(start, end, step, duration);
        note = snapped.note;
        if (!snapped.interval) return null;
        [last[0], last[1]] = snapped.interval;
      } else {
        last[which === "start" ? 0 : 1] = snapToGrid(t, step, duration);
        if (start !== null && end !== null) note = "the end is before the start";
      }
      return { ...data, [intervalField.name]: list };
    });
    // "→" only when the mark was moved to the grid; a mark on a grid point says so.
    const snapped = snapToGrid(t, step, duration);
    const shown = !step ? `${which} ${Number(t.toFixed(3))} s` : Math.abs(snapped - t) < 1e-6 ? `${which} ${snapped} s (on the ${step} s grid)` : `${which} ${t.toFixed(2)} s → ${snapped} s, snapped to the ${step} s grid`;
    ws.setNotice(note ? `${shown}; ${note}.` : `${shown}.`, note.startsWith("no ") || note.startsWith("the end") ? "bad" : "");
  };
}

// ---- seeking and playing keys -----------------------------------------------------------
export function mountSeeking(ws) {
  const { player, store } = ws;
  // h: play at 0.5x, and back to the rate before on the next h (or when pausing with h).
  let rateBeforeHalf = null;
  ws.playHalf = async () => {
    if (!player.play) return;
    if (!player.paused) {
      if (rateBeforeHalf !== null) player.setRate(rateBeforeHalf);
      rateBeforeHalf = null;
      await player.pause();
      return;
    }
    // Half speed stopped another way (Space, K) leaves the rate at 0.5: the rate to go back
    // to is still the one before the first h.
    const rate = player.rate ?? 1;
    if (rateBeforeHalf === null || rate !== 0.5) rateBeforeHalf = rate;
    player.setRate(0.5);
    await player.play();
  };

  // J / K / L: L plays forward, faster on each press (1x, 1.5x, 2x); K pauses; J pauses and
  // steps back one second per press (a browser's <video> cannot play backwards).
  ws.shuttle = async (direction) => {
    if (!player.play) return;
    if (direction === 0) return ws.seek(player.pause());
    if (direction < 0) {
      await player.pause();
      return ws.seek(player.step(-secondStep(player.clock)));
    }
    const rate = player.rate ?? 1;
    if (player.paused) {
      if (rate < 1) player.setRate(1);
      return player.play();
    }
    const faster = RATES.find((r) => r > rate);
    if (faster) player.setRate(faster);
  };

  const eventBoundaries = () => events(store.getState()).flatMap((event) => [ws.startFrameOf(event.data), ws.endFrameOf(event.data)]);
  ws.boundaryTargetNow = async (direction) => boundaryTarget(eventBoundaries(), await ws.frameNow(), direction);
  ws.keyframeTargetNow = async (direction) => keyframeTarget(player.clock ? player.clock.keyframes : [], await ws.frameNow(), direction);
  ws.jumpTo = async (target) => {
    const frame = await target;
    if (frame === null || frame === undefined) {
      ws.setNotice("Nothing further that way.");
      return;
    }
    await ws.seek(player.seekToFrame(frame));
  };

  // g: the player's "Go to" box; Enter there seeks and gives the keys back to the page.
  ws.goToBox = () => {
    const box = $("#player .fl-goto");
    if (!box) return;
    box.value = "";
    box.focus();
  };
}
