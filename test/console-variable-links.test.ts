import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator } from 'playwright-core';
import { checkScreen, type ConsoleWorld, createFirstOrganization, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

interface Listed {
  id: string;
  key: string;
  scope: string;
  variable_type: string;
  aliased_secret?: { id: string };
  overridden_variable?: { id: string };
}

/**
 * A row's alias and override from the console (docs/console.md, "Variables"), in a real browser against the real
 * server (SQLite): a project's secret aliased into a service (the service's secret alias operation), an environment's
 * variable overridden at a service, a built-in overridden at the environment (the only way to set a PLATFORM_ name);
 * each lands where chosen, with its badge linking to what it names, and the resolved views (the service's and the
 * environment's) show the winner. axe and photographs `350-…` of each dialog and of the environment's resolved view.
 */
describe('web console: aliases and overrides of variables (real browser, real server)', () => {
  let world: ConsoleWorld;
  let server: SlipwayServer;
  let browser: Browser;
  const owner = `console-variable-links-${process.pid}@example.com`;
  const problems: string[] = [];

  beforeAll(async () => {
    world = await startConsoleWorld('sqlite', { email: owner, name: 'Lina Links' });
    ({ server, browser } = world);
  }, 120_000);

  afterAll(async () => {
    await world?.close();
  }, 60_000);

  it('aliases a project secret into a service, overrides an environment variable at the service and a built-in at the environment', { timeout: 120_000 }, async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    // The refusal provoked on purpose: an alias with an invalid name (400).
    watchPage(page, problems, (url, status) => status === 400 && url.endsWith('/alias'));
    try {
      await signIn(page, server, owner);
      const { organizationId, made: api } = await createFirstOrganization(page, server, 'Link Labs');
      // Seeded through the API: a cluster (variables need none deployed), a project with a secret, an environment
      // with LOG_LEVEL, an application.
      const cluster = await api<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: 'aws', region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' });
      const project = await api<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
      const environment = await api<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'prod', cluster: cluster.id });
      const application = await api<{ id: string }>('POST', `/environment/${environment.id}/application`, {
        name: 'web',
        git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' },
        healthchecks: {},
        ports: [{ internal_port: 8080, publicly_accessible: true }],
      });
      const projectSecret = await api<{ id: string }>('POST', `/project/${project.id}/secret`, { key: 'DB_PASSWORD', value: 'never-shown-pw' });
      const logLevel = await api<{ id: string }>('POST', `/environment/${environment.id}/environmentVariable`, { key: 'LOG_LEVEL', value: 'info' });

      const rowIn = (table: Locator, key: string) => table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(`^${key}`) }) });
      const focusedId = () => page.evaluate<string | undefined>('document.activeElement?.id');
      /** Opens a row's "⋯" menu and chooses an action. */
      async function act(row: Locator, menu: string, action: string) {
        await row.getByRole('button', { name: menu }).click();
        await page.getByRole('menuitem', { name: action }).click();
      }
      /** Submits a dialog and waits for the operation it must call. */
      async function submitTo(dialog: Locator, button: string, path: string) {
        const answered = page.waitForResponse((response) => new URL(response.url()).pathname === path && response.request().method() === 'POST');
        await dialog.getByRole('button', { name: button, exact: true }).click();
        expect((await answered).status()).toBe(201);
        await dialog.waitFor({ state: 'detached' });
      }

      // The service's page: the project's secret aliased into the service (a secret cannot be written as $NAME).
      await page.goto(`${server.baseUrl}/console/organization/${organizationId}/project/${project.id}/environment/${environment.id}/application/${application.id}?tab=variables`);
      const service = page.getByRole('table', { name: 'This service' });
      const environmentTable = page.getByRole('table', { name: 'Environment prod' });
      const projectTable = page.getByRole('table', { name: 'Project shop' });
      await act(rowIn(projectTable, 'DB_PASSWORD'), 'More actions for DB_PASSWORD (project)', 'Alias…');
      const alias = page.getByRole('dialog', { name: 'Alias DB_PASSWORD' });
      expect(await alias.innerText()).toContain('A new name whose value is always that of DB_PASSWORD, the project’s secret, following its changes; the alias is a secret too.');
      // It lands where the page is unless told otherwise; the project's consumers see the secret too.
      expect(await alias.getByLabel('Lands in').locator('option').allInnerTexts()).toEqual(['This service', 'Every service of this environment', 'Every service of the project']);
      expect(await alias.getByLabel('Lands in').inputValue()).toBe('SERVICE');
      // A name the API refuses: its message at the field.
      const newName = alias.getByRole('textbox', { name: 'New name' });
      await newName.fill('app-db-password');
      await alias.getByRole('button', { name: 'Create alias' }).click();
      await expect.poll(() => newName.getAttribute('aria-invalid')).toBe('true');
      expect(await alias.locator('[slot="errorMessage"]').first().textContent()).toBe('must start with a letter or an underscore and contain only letters, digits and underscores');
      await newName.fill('APP_DB_PASSWORD');
      await checkScreen(page, '350-variable-alias-dialog');
      await submitTo(alias, 'Create alias', `/application/${application.id}/secret/${projectSecret.id}/alias`);
      await expect.poll(focusedId).toBe('variable-service-APP_DB_PASSWORD');
      const aliasRow = rowIn(service, 'APP_DB_PASSWORD');
      expect(await aliasRow.getByText('Secret', { exact: true }).count()).toBe(1);
      expect(await aliasRow.getByRole('link', { name: 'Alias of DB_PASSWORD (project)' }).getAttribute('href')).toBe('#variable-project-DB_PASSWORD');
      expect(await aliasRow.innerText()).toContain('hidden (secret)');

      // The environment's LOG_LEVEL overridden at the service: the one scope narrower than the environment here.
      await act(rowIn(environmentTable, 'LOG_LEVEL'), 'More actions for LOG_LEVEL (environment)', 'Override…');
      const override = page.getByRole('dialog', { name: 'Override LOG_LEVEL' });
      await override.getByText('Lands in: this service').waitFor();
      expect(await override.getByLabel('Lands in').count()).toBe(0);
      await override.getByRole('textbox', { name: 'Value' }).fill('debug');
      await checkScreen(page, '351-variable-override-dialog');
      await submitTo(override, 'Override', `/application/${application.id}/environmentVariable/${logLevel.id}/override`);
      const overrideRow = rowIn(service, 'LOG_LEVEL');
      await overrideRow.filter({ hasText: 'debug' }).waitFor();
      expect(await overrideRow.getByRole('link', { name: 'Override of LOG_LEVEL (environment)' }).count()).toBe(1);
      expect(await rowIn(environmentTable, 'LOG_LEVEL').getByRole('link', { name: 'Overridden by the service' }).count()).toBe(1);
      // Overridden here already: edited, not overridden again.
      await rowIn(environmentTable, 'LOG_LEVEL').getByRole('button', { name: 'More actions for LOG_LEVEL (environment)' }).click();
      expect(await page.getByRole('menu').getByRole('menuitem').allInnerTexts()).toEqual(['Alias…']);
      await page.keyboard.press('Escape');
      const secrets = await api<{ results: Listed[] }>('GET', `/application/${application.id}/secret`);
      expect(secrets.results.find((secret) => secret.key === 'APP_DB_PASSWORD')).toMatchObject({ scope: 'APPLICATION', variable_type: 'ALIAS', aliased_secret: { id: projectSecret.id } });

      // What the service receives: the alias's chain to the project's secret, the service's LOG_LEVEL winning.
      await page.getByRole('button', { name: 'What the service receives' }).click();
      const received = page.getByRole('table', { name: 'What the service receives' });
      await rowIn(received, 'LOG_LEVEL').waitFor();
      expect(await rowIn(received, 'APP_DB_PASSWORD').innerText()).toMatch(/hidden \(secret\)[\s\S]*Service[\s\S]*APP_DB_PASSWORD \(service\) → DB_PASSWORD \(project\)/);
      expect(await rowIn(received, 'LOG_LEVEL').innerText()).toMatch(/debug[\s\S]*Service[\s\S]*LOG_LEVEL \(environment\)/);

      // The environment's page: a built-in overridden there (its PLATFORM_ name kept).
      await page.goto(`${server.baseUrl}/console/organization/${organizationId}/project/${project.id}/environment/${environment.id}?tab=variables`);
      const environmentOwn = page.getByRole('table', { name: 'This environment' });
      await rowIn(environmentOwn, 'LOG_LEVEL').waitFor();
      await page.getByLabel(/^Show the \d+ built-in variables$/).check();
      const builtIns = page.getByRole('table', { name: 'Built-in' });
      const builtIn = (await api<{ results: Listed[] }>('GET', `/environment/${environment.id}/environmentVariable`)).results.find((variable) => variable.key === 'PLATFORM_IS_PRODUCTION');
      expect(builtIn?.scope).toBe('BUILT_IN');
      await act(rowIn(builtIns, 'PLATFORM_IS_PRODUCTION'), 'More actions for PLATFORM_IS_PRODUCTION (built-in)', 'Override…');
      const builtInOverride = page.getByRole('dialog', { name: 'Override PLATFORM_IS_PRODUCTION' });
      // Built-ins exist per environment: the project cannot override one.
      await builtInOverride.getByText('Lands in: every service of this environment').waitFor();
      await builtInOverride.getByRole('textbox', { name: 'Value' }).fill('true');
      await checkScreen(page, '352-variable-override-built-in-dialog');
      await submitTo(builtInOverride, 'Override', `/environment/${environment.id}/environmentVariable/${(builtIn as Listed).id}/override`);
      await expect.poll(focusedId).toBe('variable-environment-PLATFORM_IS_PRODUCTION');
      expect(await rowIn(environmentOwn, 'PLATFORM_IS_PRODUCTION').getByRole('link', { name: 'Override of PLATFORM_IS_PRODUCTION (built-in)' }).count()).toBe(1);
      expect(await rowIn(builtIns, 'PLATFORM_IS_PRODUCTION').getByRole('link', { name: 'Overridden by the environment' }).count()).toBe(1);

      // What the environment resolves: the override winning over the built-in.
      await page.getByRole('button', { name: 'What the environment resolves' }).click();
      const resolved = page.getByRole('table', { name: 'What the environment resolves' });
      const production = rowIn(resolved, 'PLATFORM_IS_PRODUCTION');
      await production.waitFor();
      await production.scrollIntoViewIfNeeded();
      expect(await production.innerText()).toMatch(/true[\s\S]*Environment[\s\S]*PLATFORM_IS_PRODUCTION \(built-in\)/);
      expect(await rowIn(resolved, 'DB_PASSWORD').innerText()).toMatch(/hidden \(secret\)[\s\S]*Project/);
      expect(await resolved.getByRole('rowheader', { name: /^APP_DB_PASSWORD/ }).count()).toBe(0);
      await checkScreen(page, '353-environment-resolved-variables');

      expect(await page.textContent('body')).not.toContain('never-shown-pw');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
