import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import pixelmatch from 'pixelmatch';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { expect } from 'vitest';
import { decodedMailText, linksIn } from './mail-text.ts';
import type { TestDialect } from './databases.ts';
import { startSlipwayServer, type SlipwayServer } from './slipway-process.ts';
import { startTestSmtpServer, type TestSmtpServer } from './smtp-server.ts';

/**
 * What the console's browser suites share (docs/console.md, "Tests"): Debian's Chromium through playwright-core, the
 * console build, axe on a screen (WCAG 2.0/2.1 A and AA), photographs at 1280×800 and 390×844, a watch on the page's
 * errors and failed requests, and a person signed up through the built-in provider.
 */
export const CHROMIUM = process.env.SLIPWAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOTS = process.env.SLIPWAY_CONSOLE_SCREENSHOTS ?? path.join(tmpdir(), 'slipway-console-screenshots');
export const PASSWORD = 'correct horse battery staple';
const CONSOLE_INDEX = path.resolve('dist/console/index.html');
const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21aa'];
/** The committed screenshots a run is compared with (docs/console.md, "Screenshot baselines"). */
export const BASELINES = path.resolve('test/console-baselines');
/** Where a mismatch leaves the actual screenshot and the diff image. */
export const BASELINE_DIFFS = path.join(SCREENSHOTS, 'baseline-diffs');
/** At most this share of pixels may differ (at pixelmatch's threshold 0.1): anti-aliasing noise, never a moved box. */
const PIXEL_BUDGET = 0.001;
const PIXEL_THRESHOLD = 0.1;

/** Chromium, and the console built if this checkout never built it. */
export async function launchConsoleBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}: install it with \`apt-get install -y chromium fonts-dejavu-core\` (.ci/run does), or point SLIPWAY_TEST_CHROMIUM at one.`);
  }
  if (!existsSync(CONSOLE_INDEX)) {
    const built = spawnSync(process.execPath, [path.resolve('node_modules/vite/bin/vite.js'), 'build', '--config', 'console/vite.config.ts'], { encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } });
    if (built.status !== 0) throw new Error(`building the console failed: ${built.stderr}`);
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export function newConsoleContext(browser: Browser, options: { clipboard?: boolean } = {}): Promise<BrowserContext> {
  return browser.newContext({
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    reducedMotion: 'reduce',
    locale: 'en-US',
    ...(options.clipboard === true ? { permissions: ['clipboard-read', 'clipboard-write'] } : {}),
  });
}

/** Records console errors, uncaught exceptions, failed requests and 4xx/5xx answers the test did not expect. */
export function watchPage(page: Page, problems: string[], expected: (url: string, status: number) => boolean): void {
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console error on ${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught on ${page.url()}: ${error.message}`));
  page.on('requestfailed', (request) => {
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && !expected(response.url(), response.status())) problems.push(`${response.status()} for ${response.request().method()} ${response.url()}`);
  });
}

export async function expectAccessible(page: Page, what: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(AXE_TAGS).analyze();
  const violations = results.violations.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => `${node.target.join(' ')} ${node.html}`).join(', ')})`);
  expect(violations, `axe on ${what}`).toEqual([]);
}

/** The screen at both sizes (the phone first), then back at the desktop size. */
export async function photograph(page: Page, name: string): Promise<void> {
  for (const viewport of [...VIEWPORTS].reverse()) {
    await page.setViewportSize(viewport);
    // Two frames: the new size is laid out and painted. (A string: the test's types are Node's, without the DOM's.)
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${viewport.width}x${viewport.height}.png`), animations: 'disabled' });
  }
}

/**
 * The screen at both sizes compared with its committed baselines `<name>-<w>x<h>.png`. What is variable by nature
 * (times, ids, ports) carries `data-volatile` in the console and is masked; everything else must match within
 * PIXEL_BUDGET. A mismatch writes the actual screenshot and the diff next to the screenshots (BASELINE_DIFFS) and fails
 * naming them; a missing baseline fails too. `SLIPWAY_UPDATE_BASELINES=1` writes the baselines instead.
 */
/**
 * A screenshot of the page once it stopped changing: nothing says it is loading, and two screenshots in a row are
 * alike. A page's parts answer their queries in their own time (the organization switcher, an environment's cluster),
 * and a loaded machine showed a baseline half of them.
 */
async function settledScreenshot(page: Page): Promise<Buffer> {
  const take = () => page.screenshot({ animations: 'disabled', caret: 'hide', mask: [page.locator('[data-volatile]')], maskColor: '#ff00ff' });
  await expect.poll(() => page.locator('.loading').count(), { timeout: 15_000 }).toBe(0);
  let previous = await take();
  for (let look = 0; look < 40; look += 1) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    const next = await take();
    if (next.equals(previous)) return next;
    previous = next;
  }
  throw new Error('the page kept changing for 6 s: no screenshot of it can be compared');
}

export async function expectBaseline(page: Page, name: string): Promise<void> {
  const update = process.env.SLIPWAY_UPDATE_BASELINES === '1';
  const failures: string[] = [];
  for (const viewport of [...VIEWPORTS].reverse()) {
    await page.setViewportSize(viewport);
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    const file = `${name}-${viewport.width}x${viewport.height}.png`;
    const shot = await settledScreenshot(page);
    const baseline = path.join(BASELINES, file);
    if (update) {
      mkdirSync(BASELINES, { recursive: true });
      writeFileSync(baseline, shot);
      continue;
    }
    const actualPath = path.join(BASELINE_DIFFS, file.replace(/\.png$/, '-actual.png'));
    if (!existsSync(baseline)) {
      mkdirSync(BASELINE_DIFFS, { recursive: true });
      writeFileSync(actualPath, shot);
      failures.push(`${file}: no baseline (the screenshot is ${actualPath}; SLIPWAY_UPDATE_BASELINES=1 writes the baselines)`);
      continue;
    }
    const expected = PNG.sync.read(readFileSync(baseline));
    const actual = PNG.sync.read(shot);
    if (expected.width !== actual.width || expected.height !== actual.height) {
      mkdirSync(BASELINE_DIFFS, { recursive: true });
      writeFileSync(actualPath, shot);
      failures.push(`${file}: ${actual.width}×${actual.height}, the baseline is ${expected.width}×${expected.height} (actual: ${actualPath})`);
      continue;
    }
    const diff = new PNG({ width: actual.width, height: actual.height });
    const differing = pixelmatch(expected.data, actual.data, diff.data, actual.width, actual.height, { threshold: PIXEL_THRESHOLD });
    if (differing > PIXEL_BUDGET * actual.width * actual.height) {
      mkdirSync(BASELINE_DIFFS, { recursive: true });
      const diffPath = path.join(BASELINE_DIFFS, file.replace(/\.png$/, '-diff.png'));
      writeFileSync(actualPath, shot);
      writeFileSync(diffPath, PNG.sync.write(diff));
      failures.push(`${file}: ${differing} pixels differ (budget ${Math.floor(PIXEL_BUDGET * actual.width * actual.height)}); actual ${actualPath}, diff ${diffPath}`);
    }
  }
  expect(failures, `screenshot baselines of ${name}`).toEqual([]);
}

/** axe, then the photographs. */
export async function checkScreen(page: Page, name: string): Promise<void> {
  await expectAccessible(page, name);
  await photograph(page, name);
}

/** A person created by the real sign-up and its verification link. */
export async function signUp(server: SlipwayServer, smtp: TestSmtpServer, email: string, name: string): Promise<void> {
  const response = await fetch(`${server.baseUrl}/oidc/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD, name }),
  });
  expect(response.status).toBe(201);
  // The decoded text: in the raw message a quoted-printable soft line break may fall inside the link.
  const mail = await smtp.waitFor((candidate) => candidate.to.includes(email) && /\/oidc\/verify\?token=/.test(decodedMailText(candidate)));
  const [link] = linksIn(mail, /\/oidc\/verify\?token=/);
  expect((await fetch(link as string)).status).toBe(200);
}

/** Signs in through the console and the built-in provider's page; the page is then on the console. */
export async function signIn(page: Page, server: SlipwayServer, email: string): Promise<void> {
  await page.goto(`${server.baseUrl}/console/`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/console\/(organization|organizations)\//);
}

/** The bearer token the console holds for the signed-in person (for the API calls a test makes as them). */
export async function consoleToken(page: Page): Promise<string> {
  const stored = await page.evaluate(() => sessionStorage.getItem('slipway.console.session'));
  return (JSON.parse(stored as string) as { accessToken: string }).accessToken;
}

export async function callApi<T>(server: SlipwayServer, token: string, method: string, url: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${server.baseUrl}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

/** What a browser suite runs against: a real server whose mail goes to a test SMTP server, one person signed up, Chromium. */
export interface ConsoleWorld {
  server: SlipwayServer;
  smtp: TestSmtpServer;
  browser: Browser;
  close(): Promise<void>;
}

/** Starts a ConsoleWorld on `dialect` (open sign-up, `env` on top) with `person` signed up through the built-in provider. */
export async function startConsoleWorld(dialect: TestDialect, person: { email: string; name: string }, env: Record<string, string> = {}): Promise<ConsoleWorld> {
  const smtp = await startTestSmtpServer();
  let server: SlipwayServer | undefined;
  try {
    server = await startSlipwayServer(dialect, { SLIPWAY_SMTP_URL: smtp.url, SLIPWAY_MAIL_FROM: 'Slipway <slipway@example.com>', SLIPWAY_SIGNUP: 'open', ...env });
    await signUp(server, smtp, person.email, person.name);
    const browser = await launchConsoleBrowser();
    const started = server;
    return {
      server: started,
      smtp,
      browser,
      async close() {
        await browser.close();
        await started.close();
        await smtp.close();
      },
    };
  } catch (error) {
    await server?.close();
    await smtp.close();
    throw error;
  }
}

/** The API as the signed-in person calls it (their console token); anything but a 2xx fails the test, naming the call. */
export type ConsoleApi = <T>(method: string, url: string, body?: unknown) => Promise<T>;

/**
 * A first organization created on the console's onboarding page by the person signed in on `page`: its id, and the
 * API as that person calls it.
 */
export async function createFirstOrganization(page: Page, server: SlipwayServer, name: string): Promise<{ organizationId: string; made: ConsoleApi }> {
  await page.getByLabel('Organization name').fill(name);
  await page.getByRole('button', { name: 'Create organization' }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor();
  const organizationId = /\/organization\/([0-9a-f-]{36})$/.exec(page.url())?.[1];
  if (organizationId === undefined) throw new Error(`the new organization's page is not at its id: ${page.url()}`);
  const token = await consoleToken(page);
  const made: ConsoleApi = async <T>(method: string, url: string, body?: unknown): Promise<T> => {
    const answer = await callApi<T>(server, token, method, url, body);
    expect(answer.status, `${method} ${url}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer.body;
  };
  return { organizationId, made };
}

/** A LOCAL cluster of the organization (the operator allows it first), as an environment's cluster: no agent deploys on it unless the server runs one. */
export async function localCluster(server: SlipwayServer, organizationId: string, made: ConsoleApi): Promise<{ id: string }> {
  const allowed = await server.operator(['admin', 'local-clusters', 'allow', '--organization', organizationId]);
  expect(allowed.code, allowed.stderr).toBe(0);
  return made<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: 'local', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
}
