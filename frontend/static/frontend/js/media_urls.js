// The media URLs of a packet's or a video's player (no DOM): the proxy, its renditions,
// the frame table and single frames; a packet's also the on-demand full-resolution rung.
//
//   const urls = packetMediaUrls(17);   // { proxy: "/media/packets/17/proxy.mp4", ..., full }

function mediaUrls(base) {
  return {
    proxy: `${base}/proxy.mp4`,
    renditions: `${base}/renditions.json`,
    frames: `${base}/frames.json`,
    framePng: `${base}/frames/{n}.png`,
  };
}

export function packetMediaUrls(packetId) {
  return {
    ...mediaUrls(`/media/packets/${encodeURIComponent(packetId)}`),
    full: `/api/packets/${encodeURIComponent(packetId)}/renditions/full/`,
  };
}

export function videoMediaUrls(videoId) {
  return mediaUrls(`/media/videos/${encodeURIComponent(videoId)}`);
}
