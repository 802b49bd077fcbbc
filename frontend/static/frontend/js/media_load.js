// Loading a video source with clear words when this browser cannot play it: a browser
// without an H.264 decoder is told so at once (canPlayType before loading, the element's
// error the moment it gives up), not after waiting out the load timeout.
//
//   const loaded = loadSource(video, timeoutMs);  // before video.src is set
//   video.src = src;
//   await loaded;                                   // rejects with the reason
//   unplayable(video, src);                         // the reason now, or null

// The proxy recipe (docs/media.md section 3): H.264 High profile in MP4.
const TYPES = [
  [/\.mp4(\?|$)/i, 'video/mp4; codecs="avc1.64001f"', "H.264 video in MP4"],
  [/\.webm(\?|$)/i, 'video/webm; codecs="vp9"', "VP9 video in WebM"],
];

function kindOf(src) {
  const path = String(src).split("#")[0];
  return TYPES.find(([pattern]) => pattern.test(path)) || null;
}

function noDecoder(what) {
  return (
    `this browser cannot play ${what}: it has no decoder for it` +
    (what.startsWith("H.264") ? " (Firefox on Linux decodes H.264 with the system's FFmpeg libraries, e.g. Debian's libavcodec; Chromium has its own)" : "")
  );
}

// Why `video` cannot play `src`, known before loading (null: nothing says it cannot).
export function unplayable(video, src) {
  const kind = kindOf(src);
  if (!kind) return null;
  const [, type, what] = kind;
  return video.canPlayType(type) === "" ? noDecoder(what) : null;
}

const ERRORS = {
  1: "loading was aborted",
  2: "a network error stopped the download",
  3: "the video could not be decoded",
};

// Resolves on the source's first frame ("loadeddata"); rejects at once on the element's
// error, in words, or after `timeoutMs`.
export function loadSource(video, timeoutMs) {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      video.removeEventListener("loadeddata", onLoaded);
      video.removeEventListener("error", onError);
    };
    const onLoaded = (event) => {
      done();
      resolve(event);
    };
    const onError = () => {
      done();
      const error = video.error;
      const src = video.currentSrc || video.getAttribute("src") || "";
      const kind = kindOf(src);
      let reason;
      if (error && error.code === 4) reason = kind ? noDecoder(kind[2]) : "this browser cannot play this video's format";
      else reason = (error && ERRORS[error.code]) || "the video could not be loaded";
      reject(new Error(error && error.message ? `${reason} (${error.message})` : reason));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no loadeddata event within ${timeoutMs} ms`));
    }, timeoutMs);
    video.addEventListener("loadeddata", onLoaded);
    video.addEventListener("error", onError);
  });
}
