import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DIALECTS } from './support/databases.ts';
import { startGitServer, type TestGitServer } from './support/git-server.ts';
import { freePort } from './support/identity-app.ts';
import { linksIn } from './support/mail-text.ts';
import { createSampleRepository, killProcessesUnder, requestThroughProxy } from './support/sample-apps.ts';
import { startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';
import { startTestSmtpServer, type TestSmtpServer } from './support/smtp-server.ts';

/**
 * The console's daily loop in a real browser (docs/console.md, "Tests"): Debian's Chromium driven by playwright-core
 * against the real `slipway server` with its local agent, a git server holding a sample application and the built
 * console. A person signs in through the OIDC flow, opens a project, creates an environment on a LOCAL cluster
 * (clones one and deletes the clone with typed confirmation), creates an application with the wizard (a name the
 * server refuses first: its message at the field), sets variables at three scopes and a secret, deploys it, watches
 * the live log reach DEPLOYED, sees it in the services table with its URL, and opens that URL; a 6,000-line log keeps
 * only a window of rows in the DOM. On SQLite and, with SLIPWAY_TEST_DATABASE_URL, PostgreSQL. axe checks every
 * screen, menu and dialog (WCAG 2.0/2.1 A and AA: zero violations); each screen is photographed at 1280×800 and
 * 390×844 into SCREENSHOTS.
 */
const CHROMIUM = process.env.SLIPWAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SCREENSHOTS = process.env.SLIPWAY_CONSOLE_SCREENSHOTS ?? path.join(tmpdir(), 'slipway-console-screenshots');
const CONSOLE_INDEX = path.resolve('dist/console/index.html');
const PASSWORD = 'correct horse battery staple';
const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21aa'];
/** A build and start of the sample on this machine takes seconds; other suites may share the CPU. */
const DEPLOY_TIMEOUT_MS = 120_000;
const MISSING = '00000000-0000-7000-8000-000000000000';

/** The ids in a service page's address. */
function applicationIdOf(url: string): { projectId: string; applicationId: string } {
  const match = /\/project\/([0-9a-f-]{36})\/environment\/[0-9a-f-]{36}\/application\/([0-9a-f-]{36})/.exec(url);
  return { projectId: match?.[1] as string, applicationId: match?.[2] as string };
}

for (const dialect of TEST_DIALECTS) {
  describe(`web console: environments, services, logs and variables (real browser, real server, local engine) [${dialect}]`, () => {
    let smtp: TestSmtpServer;
    let server: SlipwayServer;
    let gitServer: TestGitServer;
    let gitRoot: string;
    let appsPort: number;
    let browser: Browser;
    const email = `console-services-${process.pid}@example.com`;
    const problems: string[] = [];

    beforeAll(async () => {
      if (!existsSync(CHROMIUM)) {
        throw new Error(`Chromium is not installed at ${CHROMIUM}: install it with \`apt-get install -y chromium fonts-dejavu-core\` (.ci/run does), or point SLIPWAY_TEST_CHROMIUM at one.`);
      }
      if (!existsSync(CONSOLE_INDEX)) {
        const built = spawnSync(process.execPath, [path.resolve('node_modules/vite/bin/vite.js'), 'build', '--config', 'console/vite.config.ts'], { encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } });
        if (built.status !== 0) throw new Error(`building the console failed: ${built.stderr}`);
      }
      mkdirSync(SCREENSHOTS, { recursive: true });
      gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-console-git-'));
      await createSampleRepository(gitRoot, 'hello', 'hello');
      gitServer = await startGitServer({ root: gitRoot, privateRepositories: {} });
      smtp = await startTestSmtpServer();
      appsPort = await freePort();
      server = await startSlipwayServer(dialect, {
        SLIPWAY_SMTP_URL: smtp.url,
        SLIPWAY_MAIL_FROM: 'Slipway <slipway@example.com>',
        SLIPWAY_SIGNUP: 'open',
        SLIPWAY_LOCAL_AGENT: 'true',
        SLIPWAY_APPS_PORT: String(appsPort),
        SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
      });
      const signUp = await fetch(`${server.baseUrl}/oidc/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: PASSWORD, name: 'Sam Services' }),
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
      if (server !== undefined) await killProcessesUnder(server.dataDir);
      await gitServer?.close();
      await smtp?.close();
      if (gitRoot !== undefined) await rm(gitRoot, { recursive: true, force: true });
    }, 60_000);

    function watch(page: Page, expected: (url: string, status: number) => boolean): void {
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

    async function expectAccessible(page: Page, what: string): Promise<void> {
      const results = await new AxeBuilder({ page }).withTags(AXE_TAGS).analyze();
      const violations = results.violations.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => `${node.target.join(' ')} ${node.html}`).join(', ')})`);
      expect(violations, `axe on ${what}`).toEqual([]);
    }

    /** The screen at both sizes (the phone first), then back at the desktop size. */
    async function photograph(page: Page, name: string): Promise<void> {
      for (const viewport of [...VIEWPORTS].reverse()) {
        await page.setViewportSize(viewport);
        // Two frames: the new size is laid out and painted. (A string: the test's types are Node's, without the DOM's.)
        await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
        await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${viewport.width}x${viewport.height}.png`), animations: 'disabled' });
      }
    }

    async function check(page: Page, name: string): Promise<void> {
      await expectAccessible(page, name);
      await photograph(page, name);
    }

    /** The person's bearer token, as the console holds it, for the set-up the console has no screen for yet. */
    async function tokenOf(page: Page): Promise<string> {
      const stored = await page.evaluate(() => sessionStorage.getItem('slipway.console.session'));
      return (JSON.parse(stored as string) as { accessToken: string }).accessToken;
    }

    async function api<T>(token: string, method: string, url: string, body?: unknown): Promise<T> {
      const response = await fetch(`${server.baseUrl}${url}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    }

    async function chooseFromMenu(page: Page, trigger: string, item: string): Promise<Locator> {
      await page.getByRole('button', { name: trigger }).click();
      const menu = page.getByRole('menu', { name: trigger });
      await menu.waitFor();
      await menu.getByRole('menuitem', { name: item }).click();
      return menu;
    }

    it('creates an environment, an application with the wizard, its variables, deploys it and follows its live log', { timeout: 360_000 }, async () => {
      const context: BrowserContext = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, reducedMotion: 'reduce', locale: 'en-US' });
      const page = await context.newPage();
      // Refusals the flow provokes on purpose: an environment name taken (409), a service name the API refuses (400).
      // An environment that does not exist (404).
      watch(
        page,
        (url, status) =>
          (status === 409 && /\/project\/[^/]+\/environment$/.test(url)) || (status === 400 && /\/environment\/[^/]+\/application$/.test(url)) || (status === 404 && url.includes(MISSING)),
      );
      try {
        // Sign in through the provider, then the first organization.
        await page.goto(`${server.baseUrl}/console/`);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByLabel('E-mail').fill(email);
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('heading', { name: 'Create your first organization' }).waitFor();
        await page.getByLabel('Organization name').fill('Acme Robotics');
        await page.getByRole('button', { name: 'Create organization' }).click();
        await page.getByRole('heading', { level: 1, name: 'Acme Robotics' }).waitFor();
        const organizationId = /\/organization\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;

        // A LOCAL cluster (the operator allows it; the console has no cluster screens yet) and a project.
        const token = await tokenOf(page);
        const allowed = await server.operator(['admin', 'local-clusters', 'allow', '--organization', organizationId]);
        expect(allowed.code, allowed.stderr).toBe(0);
        const cluster = await api<{ id: string }>(token, 'POST', `/organization/${organizationId}/cluster`, { name: 'local', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
        await api(token, 'POST', `/organization/${organizationId}/cluster/${cluster.id}/deploy`);
        await expect
          .poll(async () => (await api<{ status: string }>(token, 'GET', `/organization/${organizationId}/cluster/${cluster.id}/status`)).status, { timeout: 30_000 })
          .toBe('DEPLOYED');
        await api(token, 'POST', `/organization/${organizationId}/project`, { name: 'shop', description: 'The shop and its workers' });

        // The project, from the organization overview: no environment yet.
        await page.reload();
        await page.getByRole('link', { name: 'shop' }).click();
        await page.getByRole('heading', { level: 1, name: 'shop' }).waitFor();
        await page.getByRole('heading', { name: 'No environments yet' }).waitFor();
        expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Environments' }).count()).toBe(1);
        await check(page, '20-project-empty');

        // A new environment on the cluster.
        await page.getByRole('button', { name: 'New environment' }).click();
        const dialog = page.getByRole('dialog', { name: 'New environment' });
        await dialog.waitFor();
        expect(await dialog.getByLabel('Cluster').inputValue()).toBe(cluster.id);
        await check(page, '21-new-environment-dialog');
        await dialog.getByLabel('Name').fill('staging');
        await dialog.getByLabel('Mode').selectOption('STAGING');
        await dialog.getByRole('button', { name: 'Create environment' }).click();
        await dialog.waitFor({ state: 'detached' });
        const environments = page.getByRole('list', { name: 'Environments' });
        const staging = environments.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'staging', exact: true }) });
        await staging.waitFor();
        expect(await staging.textContent()).toContain('Staging');
        // Its live state, from the status endpoint.
        await staging.locator('.chip[data-state="READY"]').waitFor();

        // The same name again: the API's refusal, in the dialog.
        await page.getByRole('button', { name: 'New environment' }).click();
        await dialog.getByLabel('Name').fill('staging');
        await dialog.getByRole('button', { name: 'Create environment' }).click();
        await dialog.getByRole('alert').waitFor();
        expect(await dialog.getByRole('alert').textContent()).toMatch(/staging/);
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'detached' });

        // Clone it, then delete the clone, confirmed by typing its name.
        const menu = await chooseFromMenu(page, 'More actions for staging', 'Clone…');
        await menu.waitFor({ state: 'detached' });
        const clone = page.getByRole('dialog', { name: 'Clone staging' });
        await clone.waitFor();
        await check(page, '22-clone-environment-dialog');
        expect(await clone.getByLabel('Name').inputValue()).toBe('staging-copy');
        await clone.getByRole('button', { name: 'Clone environment' }).click();
        await clone.waitFor({ state: 'detached' });
        await environments.getByRole('link', { name: 'staging-copy' }).waitFor();
        await page.getByRole('button', { name: 'More actions for staging-copy' }).click();
        await page.getByRole('menu').waitFor();
        await check(page, '23-environment-menu');
        await page.getByRole('menuitem', { name: 'Delete…' }).click();
        const remove = page.getByRole('dialog', { name: 'Delete staging-copy' });
        await remove.waitFor();
        const confirm = remove.getByRole('button', { name: 'Delete environment' });
        expect(await confirm.isDisabled()).toBe(true);
        await remove.getByLabel('Type staging-copy to confirm').fill('staging');
        expect(await confirm.isDisabled()).toBe(true);
        await check(page, '24-delete-environment-dialog');
        await remove.getByLabel('Type staging-copy to confirm').fill('staging-copy');
        await confirm.click();
        await remove.waitFor({ state: 'detached' });
        await expect.poll(() => environments.getByRole('listitem').count()).toBe(1);
        await check(page, '25-project-environments');

        // The environment: no service yet, a choice of kinds.
        await environments.getByRole('link', { name: 'staging', exact: true }).click();
        await page.getByRole('heading', { level: 1, name: 'staging' }).waitFor();
        await page.getByRole('heading', { name: 'No services yet' }).waitFor();
        await check(page, '26-environment-empty');

        // The application wizard: a name the API refuses first; its message is shown at the Name field.
        await page.getByRole('link', { name: /^New application/ }).click();
        await page.getByRole('heading', { level: 2, name: 'Source' }).waitFor();
        await check(page, '27-wizard-application-source');
        await page.getByLabel('Name').fill('Not_valid');
        await page.getByLabel('Repository URL').fill(gitServer.urlOf('hello'));
        await page.getByRole('button', { name: 'Next' }).click();
        await page.getByRole('heading', { level: 2, name: 'Ports and health check' }).waitFor();
        await page.getByLabel('Health check', { exact: true }).selectOption('HTTP');
        await page.getByLabel('Health check path').fill('/health');
        await check(page, '28-wizard-application-ports');
        await page.getByRole('button', { name: 'Next' }).click();
        await page.getByRole('heading', { level: 2, name: 'Resources' }).waitFor();
        await page.getByRole('button', { name: 'Next' }).click();
        await page.getByRole('heading', { level: 2, name: 'Review' }).waitFor();
        expect(await page.locator('dl.facts').textContent()).toContain(gitServer.urlOf('hello'));
        await check(page, '29-wizard-application-review');
        await page.getByRole('button', { name: 'Create application' }).click();
        // Back on the step that holds the field, the field marked invalid with the server's message.
        await page.getByRole('heading', { level: 2, name: 'Source' }).waitFor();
        const name = page.getByLabel('Name');
        await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
        const described = await name.evaluate((input) => (input.getAttribute('aria-describedby') ?? '').split(' ').map((id: string) => input.ownerDocument.getElementById(id)?.textContent ?? '').join(' '));
        expect(described).toMatch(/pattern|must|name/i);
        await page.getByRole('alert').waitFor();
        await check(page, '30-wizard-field-error');
        await name.fill('web');
        for (const step of ['Ports and health check', 'Resources', 'Review']) {
          await page.getByRole('button', { name: 'Next' }).click();
          await page.getByRole('heading', { level: 2, name: step }).waitFor();
        }
        await page.getByRole('button', { name: 'Create application' }).click();

        // The service page: its overview, never deployed.
        await page.getByRole('heading', { level: 1, name: 'web' }).waitFor();
        const serviceUrl = page.url();
        await page.getByRole('tab', { name: 'Overview', selected: true }).waitFor();
        await page.getByText('Never deployed').waitFor();
        await check(page, '31-service-overview-new');

        // Variables: one of the service, one of the environment, one of the project, and a secret.
        await page.getByRole('tab', { name: 'Variables' }).click();
        await page.getByRole('heading', { name: 'No variables yet' }).waitFor();
        expect(new URL(page.url()).searchParams.get('tab')).toBe('variables');
        const variables = page.getByRole('region', { name: 'Variables' });
        async function addVariable(key: string, value: string, scope: 'SERVICE' | 'ENVIRONMENT' | 'PROJECT', secret = false, photo?: string) {
          await page.getByRole('button', { name: 'New variable' }).click();
          const variableDialog = page.getByRole('dialog', { name: 'New variable' });
          await variableDialog.waitFor();
          await variableDialog.getByLabel('Name', { exact: true }).fill(key);
          await variableDialog.getByLabel('Value', { exact: true }).fill(value);
          if (secret) await variableDialog.getByLabel(/^Secret/).check();
          await variableDialog.getByLabel('Scope').selectOption(scope);
          if (photo !== undefined) await check(page, photo);
          await variableDialog.getByRole('button', { name: 'Create variable' }).click();
          await variableDialog.waitFor({ state: 'detached' });
          await variables.getByRole('rowheader', { name: new RegExp(`^${key}`) }).waitFor();
        }
        await addVariable('GREETING', 'hello from the console', 'SERVICE', false, '32-new-variable-dialog');
        await addVariable('REGION', 'eu-west', 'ENVIRONMENT');
        await addVariable('TEAM', 'shop', 'PROJECT');
        await addVariable('API_KEY', 'very-secret-value', 'SERVICE', true);
        // An alias: its badge, and a link to the variable it names.
        await addVariable('SERVICE_REGION', '$REGION', 'SERVICE');
        const rowOf = (key: string) => variables.getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(`^${key}`) }) });
        expect(await page.getByRole('table', { name: 'This service' }).getByRole('rowheader', { name: /^GREETING/ }).count()).toBe(1);
        expect(await page.getByRole('table', { name: /^Environment / }).getByRole('rowheader', { name: /^REGION/ }).count()).toBe(1);
        expect(await page.getByRole('table', { name: /^Project / }).getByRole('rowheader', { name: /^TEAM/ }).count()).toBe(1);
        expect(await rowOf('API_KEY').textContent()).toContain('hidden (secret)');
        expect(await rowOf('SERVICE_REGION').getByText('Alias', { exact: true }).count()).toBe(1);
        expect(await rowOf('SERVICE_REGION').getByRole('link', { name: 'REGION' }).getAttribute('href')).toBe('#variable-environment-REGION');
        // A secret is never shown, neither in the table nor anywhere on the page.
        expect(await page.textContent('body')).not.toContain('very-secret-value');
        // Built-ins on demand.
        await page.getByLabel(/^Show the \d+ built-in variables$/).check();
        await page.getByRole('table', { name: 'Built-in' }).waitFor();
        await page.getByLabel(/^Show the \d+ built-in variables$/).uncheck();
        // Edit one.
        await page.getByRole('button', { name: 'Edit GREETING' }).click();
        const edit = page.getByRole('dialog', { name: 'Edit GREETING' });
        await edit.getByLabel('Value', { exact: true }).fill('hello again');
        await edit.getByRole('button', { name: 'Save' }).click();
        await edit.waitFor({ state: 'detached' });
        await rowOf('GREETING').filter({ hasText: 'hello again' }).waitFor();
        await check(page, '33-service-variables');

        // Deploy, then the live log: the build, the rollout, the application's own output.
        await page.getByRole('tab', { name: 'Overview' }).click();
        await page.getByRole('button', { name: 'Deploy…' }).click();
        const deploy = page.getByRole('dialog', { name: 'Deploy' });
        await deploy.waitFor();
        await check(page, '34-deploy-dialog');
        await deploy.getByRole('button', { name: 'Deploy' }).click();
        await deploy.waitFor({ state: 'detached' });
        await page.getByRole('tab', { name: 'Logs' }).click();
        const log = page.getByRole('log', { name: 'Live output' });
        await log.waitFor();
        await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
        await log.getByText(/listening on \d+/).waitFor({ timeout: DEPLOY_TIMEOUT_MS });
        await log.getByText(/DEPLOYED/).first().waitFor({ timeout: DEPLOY_TIMEOUT_MS });
        // Following: the newest line is in view.
        expect(await log.evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight)).toBeLessThan(30);
        await check(page, '35-service-logs');
        // Search keeps the matching lines.
        await page.getByLabel('Search the log').fill('stamped build');
        await expect.poll(() => log.locator('.log-line').count()).toBeGreaterThan(0);
        expect(await log.locator('.log-line').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('stamped build')]));
        for (const text of await log.locator('.log-line').allTextContents()) expect(text).toContain('stamped build');
        await page.getByLabel('Search the log').fill('');


        // Overview: deployed, with its URL; the URL answers with the variable set in the console.
        await page.getByRole('tab', { name: 'Overview' }).click();
        await page.getByRole('region', { name: 'Status' }).locator('.chip[data-state="DEPLOYED"]').waitFor({ timeout: DEPLOY_TIMEOUT_MS });
        const url = await page.getByRole('link', { name: /^http:\/\/web-staging-/ }).textContent();
        expect(url).toMatch(new RegExp(`^http://web-staging-[a-z2-7]{8}\\.localhost:${appsPort}$`));
        const answer = await requestThroughProxy(appsPort, new URL(url as string).hostname);
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body)).toMatchObject({ app: 'hello', greeting: 'hello again' });
        await check(page, '36-service-overview-deployed');

        // Deployments: the one deployment, with its log.
        await page.getByRole('tab', { name: 'Deployments' }).click();
        const deployments = page.getByRole('list', { name: 'Deployments' });
        await deployments.getByRole('listitem').first().locator('.chip[data-state="DEPLOYED"]').waitFor();
        await deployments.getByRole('button', { name: 'Show log' }).first().click();
        await page.getByRole('region', { name: /^Log of deployment/ }).getByText(/stamped build/).waitFor();
        await check(page, '37-service-deployments');

        // The environment's services table: the application with its live state, URL and last deployment.
        await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'staging' }).click();
        const table = page.getByRole('table', { name: 'Services' });
        await table.waitFor();
        const web = table.getByRole('row').filter({ has: page.getByRole('link', { name: 'web', exact: true }) });
        await web.locator('.chip[data-state="DEPLOYED"]').waitFor();
        expect(await web.getByRole('link', { name: /^web-staging-/ }).getAttribute('href')).toBe(url);
        expect(await web.textContent()).toMatch(/just now|min ago/);
        await check(page, '38-environment-services');

        // A database through its wizard (created, not deployed): a second row, never deployed.
        await chooseFromMenu(page, 'New service', 'Database');
        await page.getByRole('heading', { level: 2, name: 'Database' }).waitFor();
        await page.getByLabel('Name').fill('main');
        expect(await page.getByLabel('Version').inputValue()).toBe('17');
        await page.getByLabel('Type').selectOption('REDIS');
        expect(await page.getByLabel('Version').inputValue()).toBe('7');
        await check(page, '39-wizard-database');
        // By keyboard: Enter in a field goes to the next step, whose heading takes the focus.
        await page.getByLabel('Name').press('Enter');
        await page.getByRole('heading', { level: 2, name: 'Review' }).waitFor();
        await expect.poll(() => page.evaluate('document.activeElement?.textContent')).toBe('Review');
        await page.getByRole('button', { name: 'Create database' }).click();
        await page.getByRole('heading', { level: 1, name: 'main' }).waitFor();
        expect(await page.getByRole('tab').allTextContents()).toEqual(['Overview', 'Deployments', 'Logs', 'Settings']);
        // A service never deployed: the empty states of its deployments and of its log (connected, waiting).
        await page.getByRole('tab', { name: 'Deployments' }).click();
        await page.getByRole('heading', { name: 'Not deployed yet' }).waitFor();
        await check(page, '43-database-deployments-empty');
        await page.getByRole('tab', { name: 'Logs' }).click();
        await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
        await page.getByText(/^Waiting for output/).waitFor();
        await check(page, '44-database-logs-empty');
        await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'staging' }).click();
        await expect.poll(() => table.getByRole('row').count()).toBe(3);
        await table.getByRole('row').filter({ hasText: 'main' }).locator('.chip[data-state="READY"]').waitFor();
        await check(page, '42-environment-two-services');
        // The README's picture (docs/images/console-services.png is a copy): the table without the empty page below it.
        await page.screenshot({ path: path.join(SCREENSHOTS, 'readme-console-services.png'), clip: { x: 0, y: 0, width: 1280, height: 560 }, animations: 'disabled' });

        // The job wizard's schedule step, and the container wizard without a registry.
        await chooseFromMenu(page, 'New service', 'Job');
        await page.getByLabel('Name').fill('nightly');
        await page.getByLabel('Repository URL').fill(gitServer.urlOf('hello'));
        await page.getByRole('button', { name: 'Next' }).click();
        await page.getByRole('heading', { level: 2, name: 'Schedule' }).waitFor();
        await page.getByLabel('Runs').selectOption('LIFECYCLE');
        await page.getByRole('group', { name: 'Run when the environment' }).waitFor();
        await check(page, '40-wizard-job-schedule');
        await page.goto(`${new URL(serviceUrl).origin}${new URL(page.url()).pathname.replace(/\/new\/job$/, '/new/container')}`);
        await page.getByText('This organization has no container registry yet').waitFor();
        await check(page, '41-wizard-container');


        // An environment that does not exist (or is not theirs): the API's refusal on the page, not a crash.
        await page.goto(`${server.baseUrl}/console/organization/${organizationId}/project/${applicationIdOf(serviceUrl).projectId}/environment/${MISSING}`);
        await page.getByRole('heading', { level: 1, name: 'Environment' }).waitFor();
        expect(await page.getByRole('alert').first().textContent()).toMatch(/not found|not allowed|no environment/i);
        await check(page, '45-environment-not-found');

        // Scrolled up, the view stays where the person put it while lines arrive, and counts them; the button goes back
        // to following. (A smaller window, so the log is taller than its view.)
        await page.goto(`${serviceUrl}?tab=logs`);
        await page.setViewportSize({ width: 1280, height: 560 });
        await log.getByText(/listening on \d+/).first().waitFor();
        await expect.poll(() => log.evaluate((element) => element.scrollHeight > element.clientHeight + 100)).toBe(true);
        await log.evaluate((element) => {
          element.scrollTop = 0;
          element.dispatchEvent(new Event('scroll'));
        });
        await api(token, 'POST', `/application/${applicationIdOf(serviceUrl).applicationId}/restart-service`);
        const jump = page.getByRole('button', { name: /^\d+ new lines?: jump to the latest$/ });
        await jump.waitFor({ timeout: DEPLOY_TIMEOUT_MS });
        expect(await log.evaluate((element) => element.scrollTop)).toBe(0);
        await check(page, '35b-service-logs-scrolled-up');
        await page.setViewportSize({ width: 1280, height: 560 });
        await jump.click();
        await jump.waitFor({ state: 'detached' });
        expect(await log.evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight)).toBeLessThan(30);

        // Paused, the view does not change while lines arrive; they are counted, and Resume shows them. (The rows in the
        // DOM are a window of the log, so "the view" is the text of those rows and the count of lines kept.)
        const inView = async () => (await log.locator('.log-line').allTextContents()).join('\n');
        const kept = async () => Number(/(\d+) lines/.exec((await page.locator('.logs-footer').textContent()) ?? '')?.[1]);
        await page.getByRole('button', { name: 'Pause' }).click();
        const before = await inView();
        const keptBefore = await kept();
        await api(token, 'POST', `/application/${applicationIdOf(serviceUrl).applicationId}/restart-service`);
        const resume = page.getByRole('button', { name: /^\d+ new lines?: resume$/ });
        await resume.waitFor({ timeout: DEPLOY_TIMEOUT_MS });
        expect(await inView()).toBe(before);
        expect(await kept()).toBeGreaterThan(keptBefore);
        await resume.click();
        await expect.poll(inView).not.toBe(before);
        await page.getByRole('button', { name: 'Pause' }).waitFor();
        await page.setViewportSize({ width: 1280, height: 800 });

        // A long log: an application that prints 6,000 lines as it starts. The page keeps the last 5,000; only the rows
        // in view (and a few around them) are in the DOM, wherever the view is scrolled.
        const environmentId = /\/environment\/([0-9a-f-]{36})\//.exec(serviceUrl)?.[1] as string;
        const chatty = await api<{ id: string }>(token, 'POST', `/environment/${environmentId}/application`, {
          name: 'chatty',
          git_repository: { url: gitServer.urlOf('hello'), branch: 'main', provider: 'GITHUB', owner: 'acme', name: 'hello' },
          ports: [{ internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' }],
          healthchecks: {},
          entrypoint: 'node',
          arguments: ['-e', "for (let i = 1; i <= 6000; i += 1) console.log('chatty line ' + i); require('./server.js')"],
        });
        await page.goto(serviceUrl.replace(/\/application\/[0-9a-f-]{36}/, `/application/${chatty.id}`) + '?tab=logs');
        await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
        await api(token, 'POST', `/application/${chatty.id}/deploy`, {});
        await log.getByText('chatty line 6000', { exact: true }).waitFor({ timeout: DEPLOY_TIMEOUT_MS });
        try {
          await log.getByText(/listening on \d+/).waitFor({ timeout: DEPLOY_TIMEOUT_MS });
        } catch (error) {
          // Seen once under a full suite's load and never alone: say what the page showed, for whoever meets it next.
          const footer = await page.locator('.logs-footer').textContent();
          const rows = await log.locator('.log-line').allTextContents();
          const status = await page.getByRole('status').allTextContents();
          const stored = await api<{ results?: unknown[] }>(token, 'GET', `/application/${chatty.id}/deploymentHistoryV2`).catch((failure: unknown) => String(failure));
          throw new Error(
            `no "listening on" line in the live log: footer ${JSON.stringify(footer)}, statuses ${JSON.stringify(status)}, ` +
              `last rows ${JSON.stringify(rows.slice(-5))}, deployments ${JSON.stringify(stored).slice(0, 600)}`,
            { cause: error },
          );
        }
        expect(await kept()).toBe(5000);
        const rows = () => log.locator('.log-line').count();
        expect(await rows()).toBeGreaterThan(10);
        expect(await rows()).toBeLessThan(100);
        // Following: the newest line in view.
        expect(await log.evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight)).toBeLessThan(30);
        // The top: the oldest line kept.
        await log.evaluate((element) => {
          element.scrollTop = 0;
          element.dispatchEvent(new Event('scroll'));
        });
        await expect.poll(() => log.locator('.log-line').first().textContent()).toMatch(/chatty line \d+$/);
        const oldest = Number(/chatty line (\d+)$/.exec((await log.locator('.log-line').first().textContent()) ?? '')?.[1]);
        // 1001 when the 6,000th line was the last; each line printed after it (the server's start, its state) moves it on.
        expect(oldest).toBeGreaterThanOrEqual(1001);
        expect(oldest).toBeLessThan(1100);
        expect(await rows()).toBeLessThan(100);
        // The middle: the rows there, and still only a window of them.
        await log.evaluate((element) => {
          element.scrollTop = element.scrollHeight / 2;
          element.dispatchEvent(new Event('scroll'));
        });
        await expect.poll(() => log.getByText(/^chatty line 3\d{3}$/).count()).toBeGreaterThan(10);
        expect(await log.getByText('chatty line 1001', { exact: true }).count()).toBe(0);
        expect(await rows()).toBeLessThan(100);
        // A search runs over every line kept, not only those in the DOM.
        await page.getByLabel('Search the log').fill('chatty line 1234');
        await expect.poll(() => log.locator('.log-line').allTextContents()).toEqual([expect.stringMatching(/chatty line 1234$/)]);
        await check(page, '46-service-logs-long');
        await page.getByLabel('Search the log').fill('');

        expect(problems).toEqual([]);
      } finally {
        await context.close();
        console.info(`console screenshots in ${SCREENSHOTS}`);
      }
    });
  });
}
