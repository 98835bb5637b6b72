import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect, vi } from 'vitest';
import { compiled } from '../compiled.js';
import { createTestDatabase, freePort, pgliteDataDir, serverUrl, waitFor } from '../helpers.js';

// The staff console in a real browser against the real service, for every browser test file: the service as a child
// process on a fresh database (PGlite in a temporary DATA_DIR, or a database on DATABASE_URL), Debian's Chromium
// driven by playwright-core, axe-core evaluated through the DevTools protocol, and the same ways to find things on a
// page.

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((path) => path && existsSync(path));
export const REQUIRED = !!process.env.E2E_REQUIRED && process.env.E2E_REQUIRED !== '0';
/** Browser tests run unless there is no Chromium and nobody asked for them (E2E_REQUIRED=1). */
export const SKIP_BROWSER = !CHROMIUM && !REQUIRED;

export type Console = {
  base: string;
  page: Page;
  context: BrowserContext;
  browser: Browser;
  dataDir: string;
  /** Everything the service wrote to stdout and stderr. */
  log: () => string;
  /** Every 5xx the browser saw (there must be none). */
  serverErrors: string[];
  /** Every 403 the browser saw. */
  forbidden: string[];
  /** The browser's last answers (status, method, address), newest last: what a failed step is told with. */
  recent: string[];
  close: () => Promise<void>;
};

/** Builds the console if its sources changed (console/scripts/build.mjs: one build at a time, the others wait for it). */
function buildConsole(): Promise<void> {
  return new Promise((resolve, reject) => {
    const build = spawn(process.execPath, [join(ROOT, 'console', 'scripts', 'build.mjs'), '--if-changed'], { cwd: ROOT, stdio: 'inherit' });
    build.once('error', reject);
    build.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`the console build failed (${signal ?? `exit code ${code}`})`))));
  });
}

// The console is built as a browser file loads, before its hooks and steps: loading has no deadline, a hook has the
// hook timeout. On a fresh clone (no console/dist) the build takes one to two minutes beside busy cores, and made in
// the first file's beforeAll it used up that hook's 180 s (and the hook of the file waiting for it in the other
// worker) before the service had even started. Built once per worker; later files find it made.
if (CHROMIUM) await buildConsole();

/** Starts the service with an administrator (the console was built as this file loaded), opens Chromium on it. */
export async function startConsole(admin: { email: string; password: string }, env: Record<string, string> = {}): Promise<Console> {
  if (!CHROMIUM) throw new Error('E2E_REQUIRED is set but no Chromium was found (apt-get install -y chromium, or set CHROMIUM_PATH)');

  const dataDir = mkdtempSync(join(tmpdir(), 'pms-e2e-'));
  // Chromium starts while the service does: neither waits for the other.
  const launched = launchBrowser();
  launched.catch(() => undefined);
  let database: { close: () => Promise<void> } | undefined;
  let service: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();
  let serviceLog = '';
  const close = async () => {
    // The browser and the service stop side by side; then the database and the data directory go.
    await Promise.all([
      launched.then((browser) => browser.close(), () => undefined),
      (async () => {
        if (service && service.exitCode === null && service.signalCode === null) service.kill('SIGTERM');
        await exited;
      })(),
    ]).catch(() => undefined);
    await database?.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    let databaseUrl = '';
    if (serverUrl) {
      const created = await createTestDatabase();
      database = created;
      databaseUrl = created.url!;
    } else {
      await pgliteDataDir(join(dataDir, 'pglite'));
    }
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const started: ChildProcess = spawn(process.execPath, await compiled('main.ts'), {
      cwd: ROOT,
      env: {
        ...process.env, NODE_ENV: 'test', PORT: String(port), HOST: '127.0.0.1', BASE_URL: base, DATA_DIR: dataDir, DATABASE_URL: databaseUrl,
        REDIS_URL: '', SMTP_URL: '', ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password, AUTH_SECRET: 'e2e-console-secret-0123456789-abcdefghij',
        BCRYPT_COST: '4', AUTH_RATE_LIMIT: '1000', READ_RATE_LIMIT: '100000', WRITE_RATE_LIMIT: '100000', LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    service = started;
    exited = new Promise((resolve) => started.once('exit', resolve));
    started.stdout!.on('data', (chunk) => (serviceLog += chunk));
    started.stderr!.on('data', (chunk) => (serviceLog += chunk));

    // Until it answers or exits; the deadline only stops a hung service before the hook's own (180 s) would leave it
    // running. Beside busy cores a start took over 60 s (`npm run test:stress` with a second suite running).
    await waitFor(async () => {
      if (started.exitCode !== null) throw new Error(`service exited: ${serviceLog}`);
      return fetch(`${base}/api/health`).then((r) => r.ok, () => false);
    }, 150_000, 'the service to start');

    const browser = await launched;
    // As someone who asked their system for less motion: the console then shows dialogs, menus and messages at once
    // (console/src/theme.ts), so no step waits for an animation, nor does the browser draw one (a third of the console
    // file's time). console.test.ts checks both settings.
    const context = await browser.newContext({ viewport: { width: 1200, height: 760 }, acceptDownloads: true, locale: 'en-GB', timezoneId: 'UTC', reducedMotion: 'reduce' });
    // Generous: a browser step waits for the slowest of two shared cores.
    // A hang detector, not a speed bound: beside busy cores a list can take half a minute to show (`npm run test:stress`).
    context.setDefaultTimeout(90_000);
    const page = await context.newPage();
    trackRequests(page);
    const serverErrors: string[] = [];
    const forbidden: string[] = [];
    const recent: string[] = [];
    page.on('pageerror', (error) => console.error('page error:', error.message));
    page.on('response', (response) => {
      const line = `${response.status()} ${response.request().method()} ${response.url()}`;
      if (response.status() >= 500) serverErrors.push(line);
      if (response.status() === 403) forbidden.push(line);
      if (recent.push(line) > 20) recent.shift();
    });
    return { base, page, context, browser, dataDir, log: () => serviceLog, serverErrors, forbidden, recent, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * A browser file's steps build on each other: after the first failure the rest are skipped, not run into their 90 s
 * deadlines one by one (a signed-out page failed 19 steps in 23 minutes, and CI's log kept only the last ones). The
 * failure is told in full on stderr: the page's address, what it shows, a screenshot, and the service's last lines.
 */
export function stepsInOrder(app: () => Console | undefined) {
  let failed = '';
  beforeEach(({ task, skip, onTestFailed }) => {
    if (failed) skip(`an earlier step failed: "${failed}"`);
    onTestFailed(async () => {
      failed ||= task.name;
      const { page, log, recent } = app() ?? {};
      if (!page || !log || !recent) return;
      const path = join(tmpdir(), `pms-e2e-failure-${task.name.slice(0, 40).replace(/\W+/g, '-')}.png`);
      const shown = await page.evaluate(() => document.body?.innerText ?? '').catch((error: Error) => `(unreadable: ${error.message})`);
      await page.screenshot({ path }).catch(() => undefined);
      console.error([
        `step failed: "${task.name}"`,
        `page: ${page.url()} (screenshot: ${path})`,
        `it shows: ${shown.replace(/\s+/g, ' ').slice(0, 1_000)}`,
        `requests in flight: ${requestsInFlight(page).join(', ') || 'none'}`,
        `the browser's last answers:\n${recent.join('\n')}`,
        `the service's last lines:\n${log().split('\n').slice(-30).join('\n')}`,
      ].join('\n'));
    });
  });
}

async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Requests each page has asked for and not yet had answered (or seen fail): when each was asked, in order. */
const inFlight = new WeakMap<Page, Map<Request, { at: number; order: number }>>();

/**
 * Follows the page's requests in flight from now on (startConsole does it for its page). A new document ends whatever
 * the one it replaces had asked for: those are let go when it loads, even if the browser never reports their end (a
 * request left counted would hold every later `quiet` until its deadline).
 */
export function trackRequests(page: Page) {
  const pending = new Map<Request, { at: number; order: number }>();
  inFlight.set(page, pending);
  let asked = 0;
  let documentAsked = 0;
  const finished = (request: Request) => pending.delete(request);
  page.on('request', (request) => {
    // The live stream (GET /api/live) stays open for as long as the page does: it is never "in flight" to wait for.
    if (request.resourceType() === 'eventsource') return;
    pending.set(request, { at: Date.now(), order: ++asked });
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) documentAsked = asked;
  });
  page.on('requestfinished', finished);
  page.on('requestfailed', finished);
  page.on('domcontentloaded', () => {
    for (const [request, { order }] of pending) if (order < documentAsked) pending.delete(request);
  });
}

/** The page's requests in flight, each with its age. */
export function requestsInFlight(page: Page): string[] {
  return [...(inFlight.get(page) ?? [])].map(([request, { at }]) => `${request.method()} ${request.url()} (${request.resourceType()}, asked ${((Date.now() - at) / 1000).toFixed(1)} s ago)`);
}

/**
 * Until the page asks for nothing and nothing on it moves: no request in flight, then settled, and still none (an
 * answer's rendering may ask for more, e.g. the names behind a list's references). Playwright's 'networkidle' waits
 * out half a second of silence after each load, and once reached, holds for the rest of the page's life. When it
 * waits in vain, it says for which requests.
 */
export async function quiet(page: Page) {
  const pending = inFlight.get(page);
  if (!pending) throw new Error('quiet(page) needs trackRequests(page) when the page was opened');
  for (;;) {
    await vi.waitFor(() => expect(requestsInFlight(page), 'requests in flight').toEqual([]), { timeout: 90_000, interval: 10 });
    await settled(page);
    if (pending.size === 0) return;
  }
}

/**
 * Until nothing on the page moves: no transition or animation running (a dialog, menu or notification sliding in, a
 * ripple fading), so that axe measures colours and sizes as they are shown. Endless animations (a spinner, a focus
 * ripple's pulse) are left out. Two frames first: whatever the last change of the page started has begun by then.
 */
export async function settled(page: Page) {
  await page.waitForFunction(() => new Promise<boolean>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)))));
  await page.waitForFunction(() => document.getAnimations().every((animation) => animation.playState !== 'running' || animation.effect?.getComputedTiming().endTime === Infinity), undefined, { polling: 'raf' });
}

const axeSource = () => readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** axe-core on the page as it is: no serious or critical violation. */
export async function expectAccessible(page: Page, name: string) {
  await quiet(page);
  // Evaluated through the DevTools protocol: the page's content security policy (no inline scripts) stays in force.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource());
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')).join(' | ')}`);
  });
  expect(violations, `axe on ${name}`).toEqual([]);
}

// The documents' screenshots are rewritten with UPDATE_SCREENSHOTS=1 (or when missing); otherwise none is taken, so that
// `npm test` leaves the work tree clean and spends no time on pictures nobody looks at (a test asserts nothing on them).
const DOC_SHOTS = join(ROOT, 'docs', 'screenshots');

/** A screenshot of the page for the documents (docs/screenshots/<name>.png with UPDATE_SCREENSHOTS=1, or when missing). */
export async function shot(page: Page, name: string) {
  if (process.env.UPDATE_SCREENSHOTS !== '1' && existsSync(join(DOC_SHOTS, `${name}.png`))) return;
  mkdirSync(DOC_SHOTS, { recursive: true });
  await page.screenshot({ path: join(DOC_SHOTS, `${name}.png`) });
}

/** No horizontal scrolling of the page itself (a wide table scrolls in its own region). */
export async function expectNoOverflow(page: Page, name: string) {
  const { overflow, culprits } = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    // The innermost elements that reach past the right edge (none of their children does): what to fix.
    const past = (el: Element) => el.getBoundingClientRect().right > width + 1;
    const culprits = [...document.querySelectorAll('body *')]
      .filter((el) => past(el) && ![...el.children].some(past))
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].slice(0, 3).join('.')} (${Math.round(el.getBoundingClientRect().right)} px)`);
    return { overflow: document.documentElement.scrollWidth - width, culprits };
  });
  expect(overflow, `horizontal overflow on ${name}: ${culprits.join(', ')}`).toBeLessThanOrEqual(0);
}

/** An input by its label as a person reads it (a required field's label ends in an asterisk). */
export const field = (page: Page, label: string) => page.getByLabel(new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*\\*?$`));

/** An entry of the navigation menu. */
export const menuItem = (page: Page, name: string) => page.getByRole('menuitem', { name, exact: true });

export const heading = (page: Page, name: string | RegExp) => page.getByRole('heading', { name }).first();

/**
 * A screen opened from the navigation menu, once it is drawn (its title): the screen before stays a moment after the
 * click, and a button of the same name on it took a click meant for the next (seen: Import CSV on the subscribers'
 * empty page, then gone with it, while the leads list was drawn).
 */
export async function openScreen(page: Page, name: string) {
  await menuItem(page, name).click();
  await heading(page, new RegExp(`^${name}$`)).waitFor();
}

/** A MUI select: open it by its label, pick the option; retried as a whole (a list re-mounting its filters closes it). */
export async function choose(page: Page, label: string, option: string) {
  await vi.waitFor(async () => {
    if (await page.getByRole('listbox').count()) await page.keyboard.press('Escape');
    await page.getByRole('combobox', { name: label }).click({ timeout: 5_000 });
    await page.getByRole('option', { name: option, exact: true }).click({ timeout: 5_000 });
  }, { timeout: 45_000, interval: 250 });
}

/** A multi-value select of a list's filters: each option picked (the menu may close as the list reloads). */
export async function chooseMany(page: Page, label: string, options: string[]) {
  for (const option of options) {
    await vi.waitFor(async () => {
      if (!(await page.getByRole('listbox').count())) await page.getByRole('combobox', { name: label }).click({ timeout: 5_000 });
      const item = page.getByRole('option', { name: option, exact: true });
      if ((await item.getAttribute('aria-selected', { timeout: 5_000 })) === 'true') return;
      await item.click({ timeout: 5_000 });
      // A click toggles: wait for its own re-render before looking again, or a second click on a still unselected
      // looking option would take the choice back.
      await vi.waitFor(async () => expect(await item.getAttribute('aria-selected', { timeout: 5_000 })).toBe('true'), { timeout: 15_000, interval: 100 });
    }, { timeout: 45_000, interval: 250 });
  }
  await page.keyboard.press('Escape');
  await page.getByRole('listbox').waitFor({ state: 'detached' });
}

export async function signIn(page: Page, base: string, email: string, password: string) {
  await page.goto(`${base}/login`);
  await field(page, 'Email').fill(email);
  await field(page, 'Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Polled for as long as a step on two shared cores may take. */
export const poll = <T>(read: () => Promise<T> | T, message?: string) => expect.poll(read, { timeout: 30_000, message });

/**
 * A browser file's console: the service and Chromium started before its steps (signed out), closed after them, the
 * steps run in order (./harness.ts `stepsInOrder`); `api` calls the API with the browser's session cookie and answers
 * its JSON (the call must succeed).
 */
export function consoleForSteps(admin: { email: string; password: string }, env: Record<string, string> = {}) {
  const held: { app?: Console } = {};
  beforeAll(async () => {
    held.app = await startConsole(admin, env);
  }, 180_000);
  afterAll(() => held.app?.close(), 180_000);
  stepsInOrder(() => held.app);
  const app = () => held.app!;
  return {
    app,
    async api(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, data?: object): Promise<any> {
      const response = await app().page.request.fetch(`${app().base}${path}`, { method, data });
      expect(response.ok(), `${method} ${path}: ${response.status()} ${await response.text()}`).toBe(true);
      return response.status() === 204 ? undefined : response.json();
    },
  };
}

/**
 * axe on the screen as it is, then loaded again at 375 px, as a phone opens it (no sideways scrolling; a menu open
 * beside the screen would otherwise become a drawer over it), then back at 1200 px; `reloadAfter`: loaded again there
 * too (charts sized for the narrow page draw again at the wide one).
 */
export async function accessibleAtBothWidths(page: Page, name: string, ready: () => Promise<unknown>, options: { reloadAfter?: boolean } = {}) {
  await ready();
  await expectAccessible(page, name);
  await page.setViewportSize({ width: 375, height: 740 });
  await page.reload();
  await ready();
  await quiet(page);
  await expectNoOverflow(page, `${name} at 375 px`);
  await expectAccessible(page, `${name} at 375 px`);
  await page.setViewportSize({ width: 1200, height: 760 });
  if (options.reloadAfter) {
    await page.reload();
    await ready();
  }
}
