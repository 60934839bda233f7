import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { callApi, consoleToken, type ConsoleWorld, expectBaseline, localCluster, newConsoleContext, PASSWORD, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

/**
 * The console's look, compared pixel by pixel with committed baselines (docs/console.md, "Screenshot baselines"):
 * sign-in, the organization, a project, an environment, a service's overview, logs and variables (three scopes), and
 * a dialog, at 1280×800 and 390×844. Deterministic by construction: every name is chosen here, the page's clock is
 * fixed before the first navigation (so every relative time reads the same), the application has no public port (its
 * URL would carry an id), and what stays variable carries `data-volatile` and is masked. Run on SQLite alone: the
 * database changes no pixel, and the flow on PostgreSQL is test/console-services.test.ts's.
 */
/** Before every timestamp the server writes, so each relative time reads "just now". */
const FIXED_TIME = new Date('2026-01-01T09:00:00Z');

describe('web console: screenshot baselines (real browser, real server)', () => {
  let world: ConsoleWorld;
  let server: SlipwayServer;
  let browser: Browser;
  const email = 'robin@example.com';
  const problems: string[] = [];

  beforeAll(async () => {
    world = await startConsoleWorld('sqlite', { email: email, name: 'Robin Baseline' });
    ({ server, browser } = world);
  }, 300_000);

  afterAll(async () => {
    await world?.close();
  }, 60_000);

  it('looks like its baselines on every main screen at both sizes', { timeout: 240_000 }, async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    watchPage(page, problems, () => false);
    await page.clock.setFixedTime(FIXED_TIME);
    try {
      // Sign-in: the console's page, then the provider's form.
      await page.goto(`${server.baseUrl}/console/`);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await expectBaseline(page, 'sign-in');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('E-mail').waitFor();
      await expectBaseline(page, 'provider-sign-in');
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Create your first organization' }).waitFor();
      await page.getByLabel('Organization name').fill('Acme Robotics');
      await page.getByRole('button', { name: 'Create organization' }).click();
      await page.getByRole('heading', { level: 1, name: 'Acme Robotics' }).waitFor();
      const organizationId = /\/organization\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;

      // What the screens show, through the API with the person's token: a LOCAL cluster, a project, an environment,
      // an application and a variable at each scope, a secret and an alias.
      const token = await consoleToken(page);
      const made = async <T>(method: string, url: string, body?: unknown): Promise<T> => {
        const answer = await callApi<T>(server, token, method, url, body);
        expect(answer.status, `${method} ${url}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
        return answer.body;
      };
      const cluster = await localCluster(server, organizationId, made);
      const project = await made<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop', description: 'The shop and its workers' });
      const environment = await made<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
      const application = await made<{ id: string }>('POST', `/environment/${environment.id}/application`, {
        name: 'web',
        description: 'The storefront',
        git_repository: { url: 'https://git.example.com/acme/web.git', branch: 'main', provider: 'GITHUB', owner: 'acme', name: 'web' },
        healthchecks: {},
      });
      await made('POST', `/project/${project.id}/environmentVariable`, { key: 'TEAM', value: 'shop' });
      await made('POST', `/environment/${environment.id}/environmentVariable`, { key: 'REGION', value: 'eu-west' });
      await made('POST', `/application/${application.id}/environmentVariable`, { key: 'GREETING', value: 'hello from the console' });
      await made('POST', `/application/${application.id}/environmentVariable`, { key: 'SERVICE_REGION', value: '$REGION' });
      await made('POST', `/application/${application.id}/secret`, { key: 'API_KEY', value: 'very-secret-value' });

      const projectPath = `${server.baseUrl}/console/organization/${organizationId}/project/${project.id}`;
      await page.goto(`${server.baseUrl}/console/organization/${organizationId}`);
      await page.getByRole('list', { name: 'Projects' }).getByText('1 environment').waitFor();
      await page.getByText('1 service').waitFor();
      await expectBaseline(page, 'organization');

      await page.goto(projectPath);
      await page.getByRole('list', { name: 'Environments' }).locator('.chip').waitFor();
      await page.getByRole('list', { name: 'Environments' }).getByText('1 service').waitFor();
      await expectBaseline(page, 'project');

      await page.goto(`${projectPath}/environment/${environment.id}`);
      const services = page.getByRole('table', { name: 'Services' });
      await services.locator('.chip').waitFor();
      await expectBaseline(page, 'environment');

      const servicePath = `${projectPath}/environment/${environment.id}/application/${application.id}`;
      await page.goto(servicePath);
      await page.getByText('Never deployed').waitFor();
      await page.getByText('https://git.example.com/acme/web.git').waitFor();
      await expectBaseline(page, 'service-overview');

      await page.getByRole('tab', { name: 'Logs' }).click();
      await page.getByText(/^Waiting for output/).waitFor();
      await page.mouse.move(0, 0);
      await expectBaseline(page, 'service-logs');

      await page.getByRole('tab', { name: 'Variables' }).click();
      const variables = page.getByRole('region', { name: 'Variables' });
      for (const key of ['API_KEY', 'GREETING', 'REGION', 'SERVICE_REGION', 'TEAM']) await variables.getByRole('rowheader', { name: new RegExp(`^${key}`) }).waitFor();
      await page.mouse.move(0, 0);
      await expectBaseline(page, 'service-variables');

      await page.getByRole('button', { name: 'New variable' }).click();
      const dialog = page.getByRole('dialog', { name: 'New variable' });
      await dialog.waitFor();
      await dialog.getByLabel('Name', { exact: true }).fill('LOG_LEVEL');
      await dialog.getByLabel('Value', { exact: true }).fill('debug');
      await expectBaseline(page, 'new-variable-dialog');

      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
