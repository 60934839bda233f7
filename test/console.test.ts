import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConsole } from '../src/http/console.ts';
import { createHttpServer } from '../src/http/server.ts';
import { linksIn } from './support/mail-text.ts';
import { startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';
import { startTestSmtpServer, type TestSmtpServer } from './support/smtp-server.ts';

/**
 * The web console in a real browser (docs/console.md, "Tests"): Debian's Chromium driven by playwright-core against
 * the real `slipway server` (built-in identity provider, mail through a real SMTP server), on the console the
 * production build wrote to dist/console. A new person signs up, signs in through the real OIDC flow (authorization
 * code + PKCE), creates their first organization, creates, renames and deletes a project, comes back after their
 * session expired, and signs out. axe checks every screen and open dialog (WCAG 2.0/2.1 A and AA: zero violations);
 * each screen is photographed at 1280×800 and 390×844 into SCREENSHOTS (look at them when the look changes).
 */
const CHROMIUM = process.env.SLIPWAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SCREENSHOTS = process.env.SLIPWAY_CONSOLE_SCREENSHOTS ?? path.join(tmpdir(), 'slipway-console-screenshots');
const CONSOLE_INDEX = path.resolve('dist/console/index.html');
const PASSWORD = 'correct horse battery staple';
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21aa'];

/** The browser's performance entries read in the page (the test's own types are Node's, without the DOM's). */
interface BrowserPerformance {
  getEntriesByType(type: 'resource' | 'navigation'): { name: string; encodedBodySize?: number; domContentLoadedEventEnd?: number }[];
}

describe('web console (real browser, real server)', () => {
  let smtp: TestSmtpServer;
  let server: SlipwayServer;
  let browser: Browser;
  const email = `console-${process.pid}@example.com`;
  /** What the pages logged as errors, and requests that failed or were refused (none is expected). */
  const problems: string[] = [];
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`Chromium is not installed at ${CHROMIUM}: install it with \`apt-get install -y chromium fonts-dejavu-core\` (.ci/run does), or point SLIPWAY_TEST_CHROMIUM at one.`);
    }
    // `npm install` / `npm run build` build the console; a checkout that skipped it builds the console alone here.
    if (!existsSync(CONSOLE_INDEX)) {
      const built = spawnSync(process.execPath, [path.resolve('node_modules/vite/bin/vite.js'), 'build', '--config', 'console/vite.config.ts'], { encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } });
      if (built.status !== 0) throw new Error(`building the console failed: ${built.stderr}`);
    }
    mkdirSync(SCREENSHOTS, { recursive: true });
    smtp = await startTestSmtpServer();
    server = await startSlipwayServer('sqlite', { SLIPWAY_SMTP_URL: smtp.url, SLIPWAY_MAIL_FROM: 'Slipway <slipway@example.com>', SLIPWAY_SIGNUP: 'open' });
    // A new person, through the real sign-up: the account, then the link mailed to verify the address.
    const signUp = await fetch(`${server.baseUrl}/oidc/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD, name: 'Robin Console' }),
    });
    expect(signUp.status).toBe(201);
    const mail = await smtp.waitFor((candidate) => candidate.to.includes(email));
    const [link] = linksIn(mail, /\/oidc\/verify\?token=/);
    expect((await fetch(link as string)).status).toBe(200);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
  }, 60_000);

  function watch(page: Page, expected: (url: string, status: number) => boolean = () => false): void {
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console error on ${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`uncaught on ${page.url()}: ${error.message}`));
    page.on('requestfailed', (request) => {
      // A navigation the page itself left (the sign-in redirect) aborts what was still loading; that is not a failure.
      if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400 && !expected(response.url(), response.status())) problems.push(`${response.status()} for ${response.request().method()} ${response.url()}`);
    });
  }

  /** axe on what the page shows now (a dialog included): no violation of WCAG 2.0/2.1 A and AA. */
  async function expectAccessible(page: Page, what: string): Promise<void> {
    const results = await new AxeBuilder({ page }).withTags(AXE_TAGS).analyze();
    const violations = results.violations.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => `${node.target.join(' ')} ${node.html}`).join(', ')})`);
    expect(violations, `axe on ${what}`).toEqual([]);
  }

  /** The screen at both sizes; the page is put back to the desktop size afterwards. */
  async function photograph(page: Page, name: string): Promise<void> {
    for (const viewport of [...VIEWPORTS].reverse()) {
      await page.setViewportSize({ width: viewport.width, height: viewport.height });
      await page.waitForTimeout(50);
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${viewport.width}x${viewport.height}.png`), animations: 'disabled', fullPage: false });
    }
  }

  async function check(page: Page, name: string): Promise<void> {
    await expectAccessible(page, name);
    await photograph(page, name);
  }

  it('signs in through the OIDC flow, onboards an organization, manages projects, survives an expiry and signs out', { timeout: 180_000 }, async () => {
    const context: BrowserContext = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, reducedMotion: 'reduce', locale: 'en-US' });
    const page = await context.newPage();
    // Refusals the flow provokes on purpose: a wrong password (401), a project name already taken (409), an
    // organization that is not theirs.
    watch(
      page,
      (url, status) =>
        (status === 401 && url.includes('/oidc/interaction/')) || (status === 409 && url.endsWith('/project')) || ((status === 403 || status === 404) && /\/organization\/0{8}-/.test(url)),
    );
    try {
      // A browser at the root is sent to the console, and from there to its sign-in page.
      await page.goto(`${server.baseUrl}/`);
      await expect.poll(() => new URL(page.url()).pathname).toBe('/console/sign-in');
      await page.getByRole('heading', { name: 'Sign in to Slipway' }).waitFor();
      // What the first visit downloads: the scripts' bytes as sent (gzip).
      timings.initialScriptGzipBytes = await page.evaluate(() =>
        (performance as unknown as BrowserPerformance).getEntriesByType('resource').filter((entry) => entry.name.endsWith('.js')).reduce((sum, entry) => sum + (entry.encodedBodySize ?? 0), 0),
      );
      expect(timings.initialScriptGzipBytes).toBeLessThan(200_000);
      await check(page, '01-sign-in');

      // The built-in provider's page: labelled fields, the same look.
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('E-mail').waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/oidc\/interaction\//);
      await expect.poll(() => page.textContent('body')).toContain('The Slipway console asks you to sign in.');
      await check(page, '02-provider-sign-in');
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Wrong e-mail or password.' }).waitFor();
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();

      // A person without an organization lands on the page that creates their first (a page, not a modal).
      const onboarding = page.getByRole('heading', { name: 'Create your first organization' });
      await onboarding.waitFor();
      expect(new URL(page.url()).pathname).toBe('/console/organizations/new');
      const stored = await page.evaluate(() => sessionStorage.getItem('slipway.console.session'));
      expect(JSON.parse(stored as string)).toMatchObject({ email });
      await check(page, '03-first-organization');
      await page.getByLabel('Organization name').fill('Acme Robotics');
      await page.getByRole('button', { name: 'Create organization' }).click();

      // The landing page names the organization; the main navigation is a landmark with links named after pages.
      await page.getByRole('heading', { level: 1, name: 'Acme Robotics' }).waitFor();
      const organizationId = /\/console\/organization\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;
      expect(organizationId).toBeDefined();
      const nav = page.getByRole('navigation', { name: 'Main' });
      await expect.poll(() => nav.getByRole('link', { name: 'Projects' }).count()).toBe(1);
      await page.getByRole('heading', { name: 'No projects yet' }).waitFor();
      await check(page, '04-organization-empty');

      // Create a project (the dialog checked as it opens), then one whose name is taken: the API's message, in the dialog.
      await page.getByRole('button', { name: 'New project' }).click();
      const dialog = page.getByRole('dialog', { name: 'New project' });
      await dialog.waitFor();
      await check(page, '05-new-project-dialog');
      await dialog.getByLabel('Name').fill('storefront');
      await dialog.getByLabel('Description (optional)').fill('The shop and its workers');
      await dialog.getByRole('button', { name: 'Create project' }).click();
      await dialog.waitFor({ state: 'detached' });
      const projects = page.getByRole('list', { name: 'Projects' });
      await projects.getByRole('heading', { name: 'storefront' }).waitFor();
      await expect.poll(() => projects.getByRole('listitem').first().textContent()).toContain('0 environments');

      await page.getByRole('button', { name: 'New project' }).click();
      await dialog.getByLabel('Name').fill('storefront');
      await dialog.getByRole('button', { name: 'Create project' }).click();
      await dialog.getByRole('alert').filter({ hasText: 'a project named "storefront" already exists in this organization' }).waitFor();
      await check(page, '06-new-project-error');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await check(page, '07-organization-projects');

      // Rename.
      await page.getByRole('button', { name: 'Rename storefront' }).click();
      const rename = page.getByRole('dialog', { name: 'Rename storefront' });
      await rename.waitFor();
      await check(page, '08-rename-dialog');
      await rename.getByLabel('New name').fill('storefront-web');
      await rename.getByRole('button', { name: 'Rename' }).click();
      await rename.waitFor({ state: 'detached' });
      await projects.getByRole('heading', { name: 'storefront-web' }).waitFor();

      // Delete, confirmed by typing the name: the button stays disabled until it matches.
      await page.getByRole('button', { name: 'Delete storefront-web' }).click();
      const remove = page.getByRole('dialog', { name: 'Delete storefront-web' });
      await remove.waitFor();
      const confirm = remove.getByRole('button', { name: 'Delete project' });
      expect(await confirm.isDisabled()).toBe(true);
      await remove.getByLabel('Type storefront-web to confirm').fill('storefront');
      expect(await confirm.isDisabled()).toBe(true);
      await check(page, '09-delete-dialog');
      await remove.getByLabel('Type storefront-web to confirm').fill('storefront-web');
      await confirm.click();
      await remove.waitFor({ state: 'detached' });
      await page.getByRole('heading', { name: 'No projects yet' }).waitFor();

      // By keyboard alone: Enter opens the dialog, focus is in its first field, Enter submits.
      await page.getByRole('button', { name: 'New project' }).focus();
      await page.keyboard.press('Enter');
      await dialog.waitFor();
      expect(await dialog.getByLabel('Name').evaluate((input) => input === input.ownerDocument.activeElement)).toBe(true);
      await page.keyboard.type('made-by-keyboard');
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached' });
      await projects.getByRole('heading', { name: 'made-by-keyboard' }).waitFor();

      // The organization switcher lists theirs and offers a new one.
      await page.getByRole('button', { name: /^Organization: Acme Robotics/ }).click();
      const menu = page.getByRole('menu');
      await menu.waitFor();
      expect(await menu.getByRole('menuitem').allTextContents()).toEqual(['✓Acme Robotics', '+New organization']);
      await check(page, '10-organization-switcher');

      // A second organization from the switcher, then back to the first through it.
      await menu.getByRole('menuitem', { name: 'New organization' }).click();
      await page.getByRole('heading', { level: 1, name: 'New organization' }).waitFor();
      await page.getByLabel('Organization name').fill('Beta Labs');
      await page.getByRole('button', { name: 'Create organization' }).click();
      await page.getByRole('heading', { level: 1, name: 'Beta Labs' }).waitFor();
      await page.getByRole('button', { name: /^Organization: Beta Labs/ }).click();
      await menu.getByRole('menuitem', { name: 'Acme Robotics' }).click();
      await page.getByRole('heading', { level: 1, name: 'Acme Robotics' }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/console/organization/${organizationId}`);

      // An organization that is not theirs: the API's refusal, shown on the page.
      await page.goto(`${server.baseUrl}/console/organization/00000000-0000-7000-8000-000000000000`);
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).toMatch(/not allowed|not found|no organization/i);
      await check(page, '11-organization-refused');
      // The refusal offers the way back to the caller's own organizations.
      await page.getByRole('link', { name: 'Back to your organizations' }).click();
      await page.getByRole('heading', { level: 1, name: 'Acme Robotics' }).waitFor();

      // The signed-in landing page shows the organization's heading (how fast: `npm run bench:console`).
      await page.goto(`${server.baseUrl}/console/`);
      await page.getByRole('heading', { level: 1, name: 'Acme Robotics' }).waitFor();

      // The session ends (its token expires) while a deep page is open: back to sign-in, then to the same page.
      await page.evaluate(() => {
        const key = 'slipway.console.session';
        const session = JSON.parse(sessionStorage.getItem(key) as string) as { expiresAt: number };
        sessionStorage.setItem(key, JSON.stringify({ ...session, expiresAt: Date.now() + 1500 }));
      });
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Acme Robotics' }).waitFor();
      await page.getByText('Your session has ended. Sign in again to continue where you were.').waitFor({ timeout: 10_000 });
      expect(new URL(page.url()).searchParams.get('redirect')).toBe(`/console/organization/${organizationId}`);
      await check(page, '11-session-ended');
      await page.getByRole('button', { name: 'Sign in' }).click();
      // The provider still knows the person: no password asked, straight back to the page they were on.
      await page.getByRole('heading', { level: 1, name: 'Acme Robotics' }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/console/organization/${organizationId}`);

      // Sign out: here and at the provider (its confirmation page), then the console's sign-in page again.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Yes, sign me out' }).click();
      await page.getByRole('heading', { name: 'Sign in to Slipway' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/console/sign-in');
      expect(await page.evaluate(() => sessionStorage.getItem('slipway.console.session'))).toBeNull();
      // Signing in again asks for the password: the provider's session ended too.
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('Password').waitFor();

      expect(problems).toEqual([]);
    } finally {
      await context.close();
      console.info(`console screenshots in ${SCREENSHOTS}; timings ${JSON.stringify(timings)}`);
    }
  });

  it('serves the console beside the API: deep links, cache headers, JSON for API clients', async () => {
    const deep = await fetch(`${server.baseUrl}/console/organization/x/projects`, { headers: { accept: 'text/html' } });
    expect(deep.status).toBe(200);
    expect(deep.headers.get('cache-control')).toBe('no-cache');
    expect(deep.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await deep.text();
    expect(html).toContain('"clientId":"slipway-console"');
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1] as string;
    const asset = await fetch(`${server.baseUrl}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);

    const root = await fetch(`${server.baseUrl}/`, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console/');
    const api = await fetch(`${server.baseUrl}/`, { headers: { accept: 'application/json' } });
    expect(api.status).toBe(404);
    expect(((await api.json()) as { message: string }).message).toBe('no operation at GET /');
    // Pages, not operations: none of them is in the API description.
    const document = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).filter((apiPath) => apiPath === '/' || apiPath.startsWith('/console'))).toEqual([]);
    const missing = await fetch(`${server.baseUrl}/console/assets/missing.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

describe('web console in a checkout that has not built it', () => {
  it('says how to build it, as a page to browsers and as the error body to other clients; the API is untouched', async () => {
    const app = createHttpServer({ logLevel: 'silent' });
    await registerConsole(app, { issuer: undefined, root: path.join(tmpdir(), `slipway-no-console-${process.pid}`) });
    app.get('/ips', { config: { access: { public: true } } }, async () => ({ results: [] }));
    try {
      const page = await app.inject({ method: 'GET', url: '/console/organization/x', headers: { accept: 'text/html' } });
      expect(page.statusCode).toBe(404);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('The console is not built');
      expect(page.body).toContain('npm run build');
      const script = await app.inject({ method: 'GET', url: '/console/assets/index.js' });
      expect(script.statusCode).toBe(404);
      expect(script.json<{ message: string }>().message).toContain('npm run build');
      expect((await app.inject({ method: 'GET', url: '/ips' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
