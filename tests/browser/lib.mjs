// The harness every console scenario shares: Debian's chromium driven by
// playwright-core, fenced to 127.0.0.1, with every Content-Security-Policy
// violation, page error and console error recorded, and a small line protocol
// with the Rust test that started the script (tests/console/browser.rs).
//
// Protocol, on stdout (anything else on stdout is ignored by the Rust side):
//   @@ask {"what": "...", ...}   the script needs the test to do something
//                                (flip a receiver, mint a portal link); it
//                                waits for one JSON line on stdin, the answer.
//   @@result {...}               the last line: what happened (see `run`).
// Inputs come in environment variables (FENIX_URL, FENIX_ADMIN_TOKEN, ...).

import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The flags the console tests run chromium with (docs/console.md, CONTRACT). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-quic',
  '--no-first-run',
  '--disable-sync',
  '--disable-dev-shm-usage',
  // No DNS at all: every name but the loopback address fails to resolve, so
  // nothing the browser does on its own can leave the machine.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

/** A required environment variable. */
export function env(name) {
  const v = process.env[name];
  if (v === undefined || v === '') throw new Error(`missing environment variable ${name}`);
  return v;
}

/** Waits until `check()` is truthy (polling), or throws `what` after `ms`. */
export async function until(what, check, ms = 15000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `[data-testid="id"]` */
export const tid = (id) => `[data-testid="${id}"]`;

let lines;
/** Asks the Rust test to do `what` and waits for its answer (a JSON value). */
export async function ask(what, data = {}) {
  if (!lines) {
    lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  }
  process.stdout.write(`@@ask ${JSON.stringify({ what, ...data })}\n`);
  const { value, done } = await lines.next();
  if (done) throw new Error(`the test closed stdin instead of answering ${what}`);
  return JSON.parse(value);
}

/**
 * Runs one scenario: `body(t)` gets a harness `t` with
 *   t.page(opts)            a new page in a new, isolated context (own cookies)
 *   t.shot(page, name)      a screenshot into $SCREENSHOT_DIR/<name>.png
 *   t.fact(key, value)      something the Rust test asserts on
 *   t.step(name)            where the scenario is (reported on failure)
 * and prints `@@result {ok, error, step, facts, screenshots, csp, pageErrors,
 * consoleErrors, failedLoads, offLoopback}`. The Rust side fails the test on
 * any CSP violation, page error, console error or off-loopback request.
 */
export async function run(body) {
  const result = {
    ok: false,
    step: 'launch',
    facts: {},
    screenshots: [],
    csp: [],
    pageErrors: [],
    consoleErrors: [],
    failedLoads: [],
    offLoopback: [],
  };
  const shots = process.env.SCREENSHOT_DIR || '';
  if (shots) mkdirSync(shots, { recursive: true });
  const timer = setTimeout(() => {
    result.error = `scenario did not finish within 150 s (at step ${result.step})`;
    process.stdout.write(`@@result ${JSON.stringify(result)}\n`);
    process.exit(2);
  }, 150_000);
  // A fresh profile in a temporary directory is what launch() makes; it is
  // removed when the browser closes.
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: 60_000,
  });
  const contexts = [];
  const expected = [];
  const t = {
    browser,
    facts: result.facts,
    step(name) {
      result.step = name;
    },
    fact(key, value) {
      result.facts[key] = value;
    },
    /**
     * Errors the scenario provokes on purpose (e.g. a frame the CSP refuses):
     * console errors and CSP reports matching `pattern` are kept apart, in
     * `expected`, instead of failing the test.
     */
    expect(pattern) {
      expected.push(pattern);
    },
    async context(opts = {}) {
      const context = await browser.newContext({
        viewport: { width: 1280, height: 800 },
        serviceWorkers: 'block',
        ...opts,
      });
      contexts.push(context);
      // Pages of a local server answer in milliseconds: a selector that is not
      // there after 20 s (on a busy CI machine) will not come.
      context.setDefaultTimeout(20_000);
      // Only ever 127.0.0.1: anything else is refused and reported.
      await context.route(
        (url) => !(url.protocol === 'data:' || url.protocol === 'blob:' || url.hostname === '127.0.0.1'),
        (route) => {
          result.offLoopback.push(route.request().url());
          return route.abort('blockedbyclient');
        },
      );
      // Reported through a binding (not kept in the page), so a navigation
      // does not lose what happened before it.
      await context.exposeBinding('__fenixReportCsp', (_source, v) => {
        result.csp.push(v);
      });
      await context.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (e) => {
          window.__fenixReportCsp({
            directive: e.violatedDirective,
            blocked: e.blockedURI,
            sample: e.sample,
            source: `${e.sourceFile}:${e.lineNumber}`,
            page: location.pathname,
          });
        });
      });
      context.on('page', (page) => watch(page, result));
      return context;
    },
    async page(opts = {}) {
      const context = await t.context(opts);
      return context.newPage();
    },
    async shot(page, name) {
      if (!shots) return;
      const path = join(shots, `${name}.png`);
      // At most 1280×800, so the copies in docs/console/ stay small.
      const { width, height } = page.viewportSize();
      await page.screenshot({ path, clip: { x: 0, y: 0, width: Math.min(width, 1280), height: Math.min(height, 800) } });
      result.screenshots.push(path);
    },
  };
  try {
    await body(t);
    result.ok = true;
    result.step = 'done';
  } catch (e) {
    // eslint-disable-next-line no-control-regex
    const plain = (v) => `${v}`.replace(/\u001b\[[0-9;]*m/g, '');
    result.error = plain(e && e.message ? e.message : e);
    result.stack = e && e.stack ? plain(e.stack).split('\n').slice(0, 8).join('\n') : undefined;
    try {
      const pages = contexts.flatMap((c) => c.pages());
      const last = pages[pages.length - 1];
      if (last) {
        result.failedAt = last.url().replace(/#.*/, '#…');
        result.failedPageText = (await last.locator('body').innerText({ timeout: 2000 })).slice(0, 2000);
        if (shots) {
          const path = join(shots, `FAILED-${process.env.SCENARIO || 'scenario'}.png`);
          await last.screenshot({ path });
          result.screenshots.push(path);
        }
      }
    } catch {
      // the page is gone; the error above says why
    }
  }
  clearTimeout(timer);
  result.expected = [];
  for (const list of ['csp', 'consoleErrors']) {
    result[list] = result[list].filter((v) => {
      const text = typeof v === 'string' ? v : JSON.stringify(v);
      if (!expected.some((p) => p.test(text))) return true;
      result.expected.push(text);
      return false;
    });
  }
  await browser.close().catch(() => {});
  process.stdout.write(`@@result ${JSON.stringify(result)}\n`);
  process.exit(0);
}

/** Records what goes wrong on a page. */
function watch(page, result) {
  page.on('pageerror', (e) => result.pageErrors.push(`${page.url().replace(/#.*/, '#…')}: ${e.message}`));
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    // Chromium logs every non-2xx fetch answer as an error; those are the
    // API answering 401/404/410 as the page expects, and are reported apart.
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(text)) {
      result.failedLoads.push(`${msg.location().url}: ${text}`);
      return;
    }
    result.consoleErrors.push(`${page.url().replace(/#.*/, '#…')}: ${text}`);
  });
  page.on('requestfailed', (req) => {
    const f = req.failure();
    if (f && f.errorText !== 'net::ERR_ABORTED') result.failedLoads.push(`${req.url()}: ${f.errorText}`);
  });
}

/** Logs the operator in with an admin token, through the form, with the mouse. */
export async function loginOperator(page, base, token) {
  await page.goto(`${base}/console`);
  await page.locator(tid('login-token')).fill(token);
  await page.locator(tid('login-submit')).click();
  await page.locator(tid('nav-apps')).waitFor();
}

/** The JSON body of a same-origin API call made from inside the page (with its cookie). */
export async function apiFromPage(page, method, path, body) {
  return page.evaluate(
    async ({ method, path, body }) => {
      const s = await fetch('/console/api/session', { credentials: 'same-origin' });
      const csrf = s.ok ? (await s.json()).csrf_token : '';
      const r = await fetch(path, {
        method,
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', 'x-fenix-csrf': csrf },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      let json = null;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
      return { status: r.status, body: json };
    },
    { method, path, body },
  );
}
