// Firefox ESR (Debian's /usr/bin/firefox-esr) for the Python browser tests, driven by
// npm puppeteer-core over WebDriver BiDi (no geckodriver, no browser download).
//
// One JSON request a line on stdin, one JSON answer a line on stdout:
//   {"id": 1, "op": "newPage"}                                   -> {"id": 1, "value": "p1"}
//   {"id": 2, "op": "goto", "page": "p1", "url": "..."}
//   {"id": 3, "op": "evaluate", "page": "p1", "expression": "...", "arg": ...}
//   {"id": 4, "op": "key", "page": "p1", "action": "press", "key": "ArrowRight"}
// An error answers {"id": n, "error": "message"}. tests/browser/firefox.py is the Python side.

import { createInterface } from "node:readline";
import puppeteer from "puppeteer-core";

const EXECUTABLE = process.argv[2] || "/usr/bin/firefox-esr";
const PREFS = JSON.parse(process.argv[3] || "{}"); // extra Firefox preferences (a test's)

const browser = await puppeteer.launch({
  browser: "firefox",
  executablePath: EXECUTABLE,
  headless: true,
  protocol: "webDriverBiDi",
  extraPrefsFirefox: {
    "media.autoplay.default": 0,
    "media.autoplay.blocking_policy": 0,
    "browser.shell.checkDefaultBrowser": false,
    "datareporting.policy.dataSubmissionEnabled": false,
    ...PREFS,
  },
});
const pages = new Map();
const uncaught = new Map(); // page id -> the messages of its uncaught errors
let nextPage = 1;

// A function's source is called with `arg` (as Playwright's page.evaluate does); any
// other source is evaluated as an expression. Built as one expression, so the page's
// Content-Security-Policy (no eval) does not stand in the way.
function expressionOf(source, arg) {
  const text = source.trim();
  const isFunction = /^(async\s+)?(function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)/.test(text);
  return isFunction ? `(${text})(${JSON.stringify(arg === undefined ? null : arg)})` : text;
}

async function evaluate(page, source, arg) {
  return page.evaluate(expressionOf(source, arg));
}

async function waitFor(page, source, arg, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  // Truthiness is taken in the page: a value that does not serialise (a player) counts too.
  const test = `(async () => Boolean(await (${expressionOf(source, arg)})))()`;
  for (;;) {
    if (await page.evaluate(test)) return true;
    if (Date.now() > deadline) throw new Error(`waiting for ${source.slice(0, 120)}: not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const KEYS = { Space: " " };

async function handle(request) {
  const page = pages.get(request.page);
  if (request.page !== undefined && !page) throw new Error(`no page ${request.page}`);
  switch (request.op) {
    case "newPage": {
      // Each page in a context of its own (its own cookies), as Playwright's new_context().
      const context = await browser.createBrowserContext();
      const created = await context.newPage();
      const id = `p${nextPage++}`;
      pages.set(id, created);
      created.on("console", (message) => {
        if (message.type() === "error") process.stderr.write(`[firefox console] ${message.text()}\n`);
      });
      created.on("pageerror", (error) => {
        process.stderr.write(`[firefox page error] ${error.message}\n`);
        uncaught.get(id).push(String(error.message));
      });
      uncaught.set(id, []);
      return id;
    }
    case "setCookie":
      // {name, value, url}: for the url's host and every path on it.
      await page.browserContext().setCookie(
        ...request.cookies.map(({ name, value, url }) => ({ name, value, domain: new URL(url).hostname, path: "/" })),
      );
      return null;
    case "addInitScript":
      await page.evaluateOnNewDocument(request.source);
      return null;
    case "goto":
      await page.goto(request.url, { waitUntil: "load" });
      return null;
    case "uncaught":
      return uncaught.get(request.page);
    case "url":
      return page.url();
    case "evaluate":
      return evaluate(page, request.expression, request.arg);
    case "waitForFunction":
      return waitFor(page, request.expression, request.arg, request.timeout ?? 30000);
    case "key": {
      const key = KEYS[request.key] ?? request.key;
      if (request.action === "down") await page.keyboard.down(key);
      else if (request.action === "up") await page.keyboard.up(key);
      else if (request.action === "insertText") await page.keyboard.sendCharacter(request.key);
      else await page.keyboard.press(key);
      return null;
    }
    case "closePage":
      pages.delete(request.page);
      await page.browserContext().close();
      return null;
    case "version":
      return browser.version();
    default:
      throw new Error(`unknown op ${request.op}`);
  }
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const request = JSON.parse(line);
  let answer;
  try {
    const value = await handle(request);
    answer = { id: request.id, value: value === undefined ? null : value };
  } catch (error) {
    answer = { id: request.id, error: String(error && error.message ? error.message : error) };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
await browser.close();
