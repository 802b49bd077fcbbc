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

async function request(method, url, { body, headers = {} } = {}) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json", ...headers } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  if (method !== "GET") init.headers["X-CSRFToken"] = csrfToken();
  const response = await fetch(url, init);
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(response.status, data);
  return { data, etag: response.headers.get("ETag") };
}

export const api = {
  async get(url) { return (await request("GET", url)).data; },
  request,
  socket(path) {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    return new WebSocket(`${scheme}://${location.host}${path}`);
  },
};
