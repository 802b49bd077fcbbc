// The one wrapper around fetch (and websockets) that every page uses.
function csrfToken() {
  const match = document.cookie.match(/(?:^|; )csrftoken=([^;]*)/);
  return match ? decodeURIComponent(match[1]) : "";
}

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code || "error";
    this.field = error.field || null;
  }
}

// No answer within `timeoutMs` (when given) is a network failure like any other: a page
// waiting on a server that cannot answer (its database gone, its pool empty) says so within
// seconds instead of spinning. The request may still have been done: callers that retry
// carry a version (If-Match) so that nothing is done twice.
export class Timeout extends TypeError {
  constructor(ms) {
    super(`the server did not answer within ${Math.round(ms / 1000)} s`);
    this.timeout = true;
  }
}

async function request(method, url, { body, headers = {}, timeoutMs = null } = {}) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json", ...headers } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  if (method !== "GET") init.headers["X-CSRFToken"] = csrfToken();
  const controller = timeoutMs ? new AbortController() : null;
  const timer = controller ? setTimeout(() => controller.abort(), timeoutMs) : null;
  if (controller) init.signal = controller.signal;
  let response;
  let text;
  try {
    response = await fetch(url, init);
    text = await response.text();
  } catch (error) {
    if (controller && controller.signal.aborted) throw new Timeout(timeoutMs);
    throw error;
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON (a proxy's error page): keep the status, drop the body.
    if (response.ok) throw new ApiError(response.status, null);
  }
  if (!response.ok) throw new ApiError(response.status, data);
  // next: the URL of the next window of a windowed list (its Link header's rel="next").
  const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("Link") || "");
  return { data, etag: response.headers.get("ETag"), status: response.status, next: next ? next[1] : null };
}

// Multipart upload (e.g. a video) with progress: onProgress(fraction) as bytes go out.
function upload(url, formData, { onProgress } = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.setRequestHeader("X-CSRFToken", csrfToken());
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (event) => event.lengthComputable && onProgress && onProgress(event.loaded / event.total);
    xhr.onerror = () => reject(new TypeError("the upload could not reach the server"));
    xhr.onload = () => {
      let data = null;
      try {
        data = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        data = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(data);
      else reject(new ApiError(xhr.status, data));
    };
    xhr.send(formData);
  });
}

export const api = {
  async get(url) { return (await request("GET", url)).data; },
  request,
  upload,
  socket(path) {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    return new WebSocket(`${scheme}://${location.host}${path}`);
  },
};
