// A resumable upload over the tus protocol 1.0.0 (core + creation), against
// /api/uploads/ (annotator/entry/api/uploads.py). The file goes in pieces of `pieceBytes`;
// a piece whose connection drops is sent again from the offset the server reports
// (HEAD), after a pause that grows to 10 s, for as long as the page stays open. The
// upload's URL is kept in localStorage under the file's name, size and date, so the same
// file chosen again after a reload resumes too.
import { ApiError } from "./api.js";

const TUS = "1.0.0";
const PIECE_BYTES = 8 * 1024 * 1024;

function csrfToken() {
  const match = document.cookie.match(/(?:^|; )csrftoken=([^;]*)/);
  return match ? decodeURIComponent(match[1]) : "";
}

function b64(text) {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

function storageKey(file) {
  return `frameledger.tus:${file.name}:${file.size}:${file.lastModified}`;
}

// One XMLHttpRequest; resolves with the xhr whatever its status, rejects on a network error.
function send(method, url, { headers = {}, body = null, onProgress } = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    xhr.setRequestHeader("Tus-Resumable", TUS);
    xhr.setRequestHeader("X-CSRFToken", csrfToken());
    xhr.setRequestHeader("Accept", "application/json");
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    if (onProgress) xhr.upload.onprogress = (event) => onProgress(event.loaded);
    xhr.onerror = () => reject(new TypeError("the connection to the server was lost"));
    xhr.ontimeout = xhr.onerror;
    xhr.onload = () => resolve(xhr);
    xhr.send(body);
  });
}

function failure(xhr) {
  let data = null;
  try {
    data = xhr.responseText ? JSON.parse(xhr.responseText) : null;
  } catch {
    data = null;
  }
  return new ApiError(xhr.status, data);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Upload `file`; resolves with {video, job} (the API's views) once the server has it all.
// onProgress({sent, total, resumed, seconds}) as bytes go out; onRetry({offset, attempt, error}).
export async function tusUpload(file, { title, pieceBytes = PIECE_BYTES, onProgress = () => {}, onRetry = () => {} } = {}) {
  const started = performance.now();
  let url = localStorage.getItem(storageKey(file));
  let offset = 0;
  let resumed = 0;
  if (url) {
    const head = await send("HEAD", url).catch(() => null);
    if (head && head.status === 200 && Number(head.getResponseHeader("Upload-Length")) === file.size) {
      offset = Number(head.getResponseHeader("Upload-Offset"));
      resumed += offset > 0 ? 1 : 0;
    } else {
      url = null;
    }
  }
  if (!url) {
    const created = await send("POST", "/api/uploads/", {
      headers: { "Upload-Length": String(file.size), "Upload-Metadata": `filename ${b64(file.name)},title ${b64(title)}` },
    });
    if (created.status !== 201) throw failure(created);
    url = created.getResponseHeader("Location");
    localStorage.setItem(storageKey(file), url);
  }
  const report = (sent) => onProgress({ sent, total: file.size, resumed, seconds: (performance.now() - started) / 1000 });
  report(offset);
  let attempt = 0;
  let last = null;
  while (offset < file.size) {
    const piece = file.slice(offset, Math.min(file.size, offset + pieceBytes));
    try {
      last = await send("PATCH", url, {
        headers: { "Content-Type": "application/offset+octet-stream", "Upload-Offset": String(offset) },
        body: piece,
        onProgress: (loaded) => report(offset + loaded),
      });
    } catch (error) {
      attempt += 1;
      onRetry({ offset, attempt, error });
      await sleep(Math.min(10000, 500 * 2 ** Math.min(attempt, 5)));
      const head = await send("HEAD", url).catch(() => null);
      if (head && head.status === 200) {
        offset = Number(head.getResponseHeader("Upload-Offset"));
        resumed += 1;
      }
      continue;
    }
    if (last.status === 409) {
      // Not at the server's offset (a piece it stored although the answer was lost): ask.
      const head = await send("HEAD", url);
      if (head.status !== 200) throw failure(head);
      offset = Number(head.getResponseHeader("Upload-Offset"));
      if (offset >= file.size) break;
      continue;
    }
    if (last.status !== 204) throw failure(last);
    attempt = 0;
    offset = Number(last.getResponseHeader("Upload-Offset"));
    report(offset);
  }
  localStorage.removeItem(storageKey(file));
  const state = await send("GET", url);
  if (state.status !== 200) throw failure(state);
  const answer = JSON.parse(state.responseText);
  return { video: answer.video, job: answer.job, seconds: (performance.now() - started) / 1000, resumed };
}
