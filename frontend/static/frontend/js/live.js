// The packet's live channel (websocket /ws/packets/<id>/): presence and adjudication
// updates, reconnecting with back-off. What a viewer receives is decided by the server
// (annotator/reads/realtime.py): an annotator is only ever told about their own other tabs.
//
//   const live = connectPacket(12, { onPresence(people), onItem(item), onState(state) });
//   live.close();

import { api } from "./api.js";

const DELAYS_MS = [1000, 2000, 5000, 10000, 30000];

export function connectPacket(packetId, { onPresence = () => {}, onItem = () => {}, onState = () => {}, onMessage = () => {} } = {}) {
  let socket = null;
  let attempts = 0;
  let closed = false;
  let timer = null;

  function open() {
    try {
      socket = api.socket(`/ws/packets/${encodeURIComponent(packetId)}/`);
    } catch {
      schedule();
      return;
    }
    socket.addEventListener("open", () => {
      attempts = 0;
      onState("live");
    });
    socket.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (message.type === "presence") onPresence(message.people || []);
      else if (message.type === "union_item") onItem(message.item);
      onMessage(message);
    });
    socket.addEventListener("close", (event) => {
      socket = null;
      if (closed) return;
      if (event.code === 4404) {
        onState("refused");
        return;
      }
      onState("offline");
      schedule();
    });
  }

  function schedule() {
    if (closed) return;
    const delay = DELAYS_MS[Math.min(attempts, DELAYS_MS.length - 1)];
    attempts += 1;
    timer = setTimeout(open, delay);
  }

  open();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      if (socket) socket.close();
    },
    get connected() {
      return Boolean(socket && socket.readyState === WebSocket.OPEN);
    },
  };
}

// Render presence chips into `box`: [{username, role, tabs, you}] from the server.
export function renderPresence(box, people) {
  box.replaceChildren();
  for (const person of people) {
    const chip = document.createElement("span");
    chip.className = `presence-chip role-${person.role}`;
    chip.dataset.username = person.username;
    chip.textContent = person.you ? `you${person.tabs > 1 ? ` (${person.tabs} tabs)` : ""}` : `${person.username} · ${person.role.replace("_", " ")}`;
    box.append(chip);
  }
}

// Show the live channel's state on the presence box: `data-live` ("live", "offline",
// "refused") for styling and tests, and while offline a chip saying so, since who is
// here cannot be known then. The next presence message replaces the chips.
export function renderLiveState(box, state) {
  box.dataset.live = state;
  if (state === "live") return;
  const chip = document.createElement("span");
  chip.className = "presence-chip live-offline";
  chip.textContent = state === "refused" ? "live updates unavailable" : "live updates lost · reconnecting";
  box.replaceChildren(chip);
}
