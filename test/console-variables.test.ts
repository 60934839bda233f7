import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { callApi, checkScreen, consoleToken, launchConsoleBrowser, newConsoleContext, signIn, signUp, watchPage } from './support/console-browser.ts';
import { startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';
import { startTestSmtpServer, type TestSmtpServer } from './support/smtp-server.ts';

interface Variable {
  key: string;
  value?: string;
  scope: string;
}

/**
 * A service's variables in a real browser against the real server (docs/console.md, "Variables"): a `.env` file
 * pasted into the import dialog, read in the browser with a line it cannot read named; rows given their scopes and
 * secrecy; a row whose name exists marked before anything is sent, kept or replaced as chosen; a row the API refuses
 * shown at that row, nothing written; then the resolved view (which scope won, the alias chain, what it overrides).
 * A field message of the API's pattern reads as words. axe on each screen and dialog; photographs `99-…` to `102-…`.
 */
describe('web console: variables import and resolved view (real browser, real server)', () => {
  let smtp: TestSmtpServer;
  let server: SlipwayServer;
  let browser: Browser;
  const owner = `console-variables-${process.pid}@example.com`;
  const problems: string[] = [];

  beforeAll(async () => {
    smtp = await startTestSmtpServer();
    server = await startSlipwayServer('sqlite', { SLIPWAY_SMTP_URL: smtp.url, SLIPWAY_MAIL_FROM: 'Slipway <slipway@example.com>', SLIPWAY_SIGNUP: 'open' });
    await signUp(server, smtp, owner, 'Vera Variables');
    browser = await launchConsoleBrowser();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
  }, 60_000);

  it('imports a .env file with per-row scopes and conflicts, refuses a bad row at its row, and explains the resolved variables', { timeout: 300_000 }, async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    // Refusals provoked on purpose: an import with an invalid name, a variable with an invalid name (both 400).
    watchPage(page, problems, (url, status) => status === 400 && (url.endsWith('/environmentVariable/import') || url.endsWith('/environmentVariable')));
    try {
      await signIn(page, server, owner);
      await page.getByLabel('Organization name').fill('Acme Robotics');
      await page.getByRole('button', { name: 'Create organization' }).click();
      await page.getByRole('heading', { level: 1, name: 'Acme Robotics' }).waitFor();
      const organizationId = /\/organization\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;

      // Seeded through the API: a cluster (not deployed: variables need none), a project, an environment, an application,
      // a project variable, an environment alias of it, and LOG_LEVEL at the environment overridden by the service.
      const token = await consoleToken(page);
      const api = async <T>(method: string, url: string, body?: unknown): Promise<T> => {
        const answer = await callApi<T>(server, token, method, url, body);
        expect(answer.status, `${method} ${url}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
        return answer.body;
      };
      const cluster = await api<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: 'aws', region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' });
      const project = await api<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
      const environment = await api<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'prod', cluster: cluster.id });
      const application = await api<{ id: string }>('POST', `/environment/${environment.id}/application`, {
        name: 'web',
        git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' },
        healthchecks: {},
        ports: [{ internal_port: 8080, publicly_accessible: true }],
      });
      await api('POST', `/project/${project.id}/environmentVariable`, { key: 'SHARED_URL', value: 'https://shop.example' });
      await api('POST', `/environment/${environment.id}/environmentVariable`, { key: 'API_URL', value: '$SHARED_URL' });
      await api('POST', `/environment/${environment.id}/environmentVariable`, { key: 'LOG_LEVEL', value: 'info' });
      await api('POST', `/application/${application.id}/environmentVariable`, { key: 'LOG_LEVEL', value: 'debug' });

      await page.goto(`${server.baseUrl}/console/organization/${organizationId}/project/${project.id}/environment/${environment.id}/application/${application.id}?tab=variables`);
      const definitions = page.getByRole('table', { name: 'Variables' });
      await definitions.getByRole('row', { name: /LOG_LEVEL.*debug/ }).waitFor();

      // A field message of the API's pattern, in words (not "must match pattern ^[A-Za-z_]…").
      await page.getByRole('button', { name: 'New variable' }).click();
      const create = page.getByRole('dialog', { name: 'New variable' });
      await create.getByRole('textbox', { name: 'Name', exact: true }).fill('bad-name');
      await create.getByRole('textbox', { name: 'Value', exact: true }).fill('x');
      await create.getByRole('button', { name: 'Create variable' }).click();
      await expect.poll(() => create.getByRole('textbox', { name: 'Name', exact: true }).getAttribute('aria-invalid')).toBe('true');
      const fieldMessage = await create.locator('[slot="errorMessage"]').first().textContent();
      expect(fieldMessage).toBe('must start with a letter or an underscore and contain only letters, digits and underscores');
      await page.keyboard.press('Escape');
      await create.waitFor({ state: 'detached' });

      // The import: a pasted file, a line it cannot read, rows with their scopes and secrecy, the existing name marked.
      await page.getByRole('button', { name: 'Import .env' }).click();
      const dialog = page.getByRole('dialog', { name: 'Import .env' });
      await dialog.waitFor();
      await checkScreen(page, '99-variables-import-empty');
      await dialog.getByLabel('Or paste its lines').fill(['# shop', 'LOG_LEVEL=trace', 'NEW_FLAG=on', 'API_TOKEN="s3cret value"', '9LIVES=x', 'not a variable'].join('\n'));
      await dialog.getByRole('alert').filter({ hasText: 'Line 6 is not NAME=value' }).waitFor();
      const rows = dialog.getByRole('table', { name: 'Rows to import' });
      expect(await rows.getByRole('rowheader').allTextContents()).toEqual(['LOG_LEVEL', 'NEW_FLAG', 'API_TOKEN', '9LIVES']);
      // API_TOKEN looks like a credential: offered as a secret, its value not shown in the rows.
      expect(await dialog.getByLabel('API_TOKEN is a secret').isChecked()).toBe(true);
      expect(await rows.textContent()).not.toContain('s3cret value');
      expect(await rows.getByRole('row', { name: /LOG_LEVEL/ }).textContent()).toContain('Exists: kept, row skipped');
      expect(await rows.getByRole('row', { name: /NEW_FLAG/ }).textContent()).toContain('New');
      await dialog.getByLabel('Scope of NEW_FLAG').selectOption('ENVIRONMENT');
      await dialog.getByLabel('When a name exists at its scope').selectOption('overwrite');
      expect(await rows.getByRole('row', { name: /LOG_LEVEL/ }).textContent()).toContain('Exists: replaced');
      await checkScreen(page, '100-variables-import-rows');

      // The API refuses 9LIVES: its row says why, nothing is written.
      await dialog.getByRole('button', { name: 'Import 4 rows' }).click();
      await expect.poll(() => dialog.getByLabel('Scope of 9LIVES').getAttribute('aria-invalid')).toBe('true');
      expect(await rows.getByRole('row', { name: /9LIVES/ }).textContent()).toContain('not a variable name');
      expect((await api<{ results: Variable[] }>('GET', `/environment/${environment.id}/environmentVariable`)).results.map((variable) => variable.key)).not.toContain('NEW_FLAG');
      await checkScreen(page, '101-variables-import-refused');

      // Without that line (the rows keep their scopes): imported; LOG_LEVEL replaced.
      await dialog.getByLabel('Or paste its lines').fill(['# shop', 'LOG_LEVEL=trace', 'NEW_FLAG=on', 'API_TOKEN="s3cret value"'].join('\n'));
      expect(await dialog.getByLabel('Scope of NEW_FLAG').inputValue()).toBe('ENVIRONMENT');
      await dialog.getByRole('button', { name: 'Import 3 rows' }).click();
      const outcome = dialog.getByRole('status');
      await outcome.filter({ hasText: '3 of 3 rows imported.' }).waitFor();
      expect(await outcome.textContent()).toContain('Created: NEW_FLAG, API_TOKEN');
      expect(await outcome.textContent()).toContain('Replaced: LOG_LEVEL');
      await dialog.getByRole('button', { name: 'Done' }).click();
      await dialog.waitFor({ state: 'detached' });
      await definitions.getByRole('row', { name: /LOG_LEVEL.*trace/ }).waitFor();
      expect(await definitions.getByRole('row', { name: /NEW_FLAG/ }).textContent()).toContain('Environment');
      expect(await definitions.getByRole('row', { name: /API_TOKEN/ }).textContent()).toContain('hidden (secret)');
      expect((await api<{ results: Variable[] }>('GET', `/environment/${environment.id}/environmentVariable`)).results).toEqual(
        expect.arrayContaining([expect.objectContaining({ key: 'NEW_FLAG', value: 'on' })]),
      );

      // Importing LOG_LEVEL again, keeping what exists: skipped.
      await page.getByRole('button', { name: 'Import .env' }).click();
      await dialog.getByLabel('Or paste its lines').fill('LOG_LEVEL=error');
      await dialog.getByRole('button', { name: 'Import 1 row' }).click();
      await dialog.getByRole('status').filter({ hasText: 'Skipped, already set (kept their values): LOG_LEVEL' }).waitFor();
      await dialog.getByRole('button', { name: 'Done' }).click();
      await definitions.getByRole('row', { name: /LOG_LEVEL.*trace/ }).waitFor();

      // The resolved view: which scope won, through which aliases, overriding what.
      await page.getByRole('button', { name: 'What the service receives' }).click();
      expect(await page.getByRole('button', { name: 'What the service receives' }).getAttribute('aria-pressed')).toBe('true');
      const resolved = page.getByRole('table', { name: 'What the service receives' });
      const apiUrl = resolved.getByRole('row', { name: /API_URL/ });
      await apiUrl.waitFor();
      expect(await apiUrl.innerText()).toMatch(/https:\/\/shop\.example[\s\S]*Environment[\s\S]*API_URL \(environment\) → SHARED_URL \(project\)/);
      expect(await resolved.getByRole('row', { name: /LOG_LEVEL/ }).innerText()).toMatch(/trace[\s\S]*Service[\s\S]*LOG_LEVEL \(environment\)/);
      expect(await resolved.getByRole('row', { name: /API_TOKEN/ }).innerText()).toContain('hidden (secret)');
      await checkScreen(page, '102-variables-resolved');

      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
