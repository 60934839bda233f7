import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator } from 'playwright-core';
import { callApi, checkScreen, consoleToken, type ConsoleWorld, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

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
 * A field message of the API's pattern reads as words. Then the definitions by scope: one table per scope with its
 * count, each Alias, Override and "Overridden by" link followed to its row (focused, in view), and the project's and
 * the environment's pages setting variables seen in the service's tables. axe on each screen and dialog; photographs
 * `99-…` to `102-…` and `180-…` to `184-…`.
 */
describe('web console: variables import and resolved view (real browser, real server)', () => {
  let world: ConsoleWorld;
  let server: SlipwayServer;
  let browser: Browser;
  const owner = `console-variables-${process.pid}@example.com`;
  const problems: string[] = [];

  beforeAll(async () => {
    world = await startConsoleWorld('sqlite', { email: owner, name: 'Vera Variables' });
    ({ server, browser } = world);
  }, 300_000);

  afterAll(async () => {
    await world?.close();
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
      const definitions = page.getByRole('table', { name: 'This service' });
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
      expect(await page.getByRole('table', { name: 'Environment prod' }).getByRole('row', { name: /NEW_FLAG/ }).count()).toBe(1);
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

  it('shows one table per scope, follows Alias and Override links to their rows, and sets variables on the project and environment pages', { timeout: 300_000 }, async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    watchPage(page, problems, () => false);
    try {
      await signIn(page, server, owner);
      const token = await consoleToken(page);
      const api = async <T>(method: string, url: string, body?: unknown): Promise<T> => {
        const answer = await callApi<T>(server, token, method, url, body);
        expect(answer.status, `${method} ${url}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
        return answer.body;
      };
      // Seeded through the API: at the project SHARED_URL and LOG_LEVEL; at the environment an alias of SHARED_URL, an
      // override of LOG_LEVEL (the API's override) and a file; at the service LOG_LEVEL again (a name the environment
      // holds: it overrides it), an alias of the environment's API_URL, a secret and an override of a built-in.
      const organization = await api<{ id: string }>('POST', '/organization', { name: 'Scope Stores' });
      const cluster = await api<{ id: string }>('POST', `/organization/${organization.id}/cluster`, { name: 'aws', region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' });
      const project = await api<{ id: string }>('POST', `/organization/${organization.id}/project`, { name: 'shop' });
      const environment = await api<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id });
      const application = await api<{ id: string }>('POST', `/environment/${environment.id}/application`, {
        name: 'web',
        git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' },
        healthchecks: {},
        ports: [{ internal_port: 8080, publicly_accessible: true }],
      });
      await api('POST', `/project/${project.id}/environmentVariable`, { key: 'SHARED_URL', value: 'https://shop.example' });
      const projectLogLevel = await api<{ id: string }>('POST', `/project/${project.id}/environmentVariable`, { key: 'LOG_LEVEL', value: 'info' });
      await api('POST', `/environment/${environment.id}/environmentVariable`, { key: 'API_URL', value: '$SHARED_URL' });
      await api('POST', `/environment/${environment.id}/environmentVariable/${projectLogLevel.id}/override`, { value: 'warn' });
      await api('POST', `/environment/${environment.id}/environmentVariable`, { key: 'CONFIG_JSON', value: '{"theme":"dark"}', mount_path: '/etc/app/config.json' });
      await api('POST', `/application/${application.id}/environmentVariable`, { key: 'LOG_LEVEL', value: 'debug' });
      await api('POST', `/application/${application.id}/environmentVariable`, { key: 'PUBLIC_URL', value: '$API_URL' });
      await api('POST', `/application/${application.id}/secret`, { key: 'DB_PASSWORD', value: 'never-shown-pw' });
      const listed = await api<{ results: { id: string; key: string; scope: string; value?: string }[] }>('GET', `/application/${application.id}/environmentVariable`);
      const builtIn = listed.results.find((variable) => variable.scope === 'BUILT_IN' && variable.value !== undefined);
      expect(builtIn, 'a built-in with a visible value').toBeDefined();
      const builtInKey = (builtIn as { key: string }).key;
      await api('POST', `/application/${application.id}/environmentVariable/${(builtIn as { id: string }).id}/override`, { value: 'overridden-here' });

      const servicePage = `${server.baseUrl}/console/organization/${organization.id}/project/${project.id}/environment/${environment.id}/application/${application.id}?tab=variables`;
      await page.goto(servicePage);
      const service = page.getByRole('table', { name: 'This service' });
      const environmentTable = page.getByRole('table', { name: 'Environment staging' });
      const projectTable = page.getByRole('table', { name: 'Project shop' });
      const rowIn = (table: Locator, key: string) => table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(`^${key}`) }) });
      await rowIn(service, 'PUBLIC_URL').waitFor();

      // One table per scope, narrowest first, each heading with its count; the built-ins hidden until asked for.
      const section = page.getByRole('region', { name: 'Variables' });
      // The environment's and the project's names arrive with their own reads.
      await expect.poll(() => section.getByRole('heading', { level: 3 }).allTextContents()).toEqual(['This service 4 variables', 'Environment staging 3 variables', 'Project shop 2 variables']);
      const keysIn = (table: Locator) => table.locator('tbody .variable-key').allTextContents();
      expect(await keysIn(service)).toEqual(['DB_PASSWORD', 'LOG_LEVEL', builtInKey, 'PUBLIC_URL'].sort((x, y) => x.localeCompare(y)));
      expect(await keysIn(environmentTable)).toEqual(['API_URL', 'CONFIG_JSON', 'LOG_LEVEL']);
      expect(await keysIn(projectTable)).toEqual(['LOG_LEVEL', 'SHARED_URL']);
      expect(await page.getByRole('table', { name: 'Built-in' }).count()).toBe(0);
      // The secret write-only; the file with its mount path.
      expect(await rowIn(service, 'DB_PASSWORD').innerText()).toContain('hidden (secret)');
      expect(await page.textContent('body')).not.toContain('never-shown-pw');
      expect(await rowIn(environmentTable, 'CONFIG_JSON').getByText('File', { exact: true }).count()).toBe(1);
      expect(await rowIn(environmentTable, 'CONFIG_JSON').innerText()).toContain('file at /etc/app/config.json');
      await checkScreen(page, '180-variables-by-scope');

      // Following a badge: the row it names is focused and in view.
      const focusedId = () => page.evaluate<string | undefined>('document.activeElement?.id');
      const inView = (id: string) =>
        page.evaluate<boolean>(`(() => { const box = document.getElementById(${JSON.stringify(id)}).getBoundingClientRect(); return box.top >= 0 && box.bottom <= window.innerHeight; })()`);
      async function follow(link: Locator, target: string) {
        expect(await link.getAttribute('href')).toBe(`#${target}`);
        await link.click();
        await expect.poll(focusedId).toBe(target);
        expect(await inView(target)).toBe(true);
      }
      // The alias: PUBLIC_URL → the environment's API_URL, itself an alias of the project's SHARED_URL.
      expect(await rowIn(service, 'PUBLIC_URL').innerText()).toMatch(/→ API_URL \(environment\)/);
      await follow(rowIn(service, 'PUBLIC_URL').getByRole('link', { name: 'Alias of API_URL (environment)' }), 'variable-environment-API_URL');
      await follow(rowIn(environmentTable, 'API_URL').getByRole('link', { name: 'Alias of SHARED_URL (project)' }), 'variable-project-SHARED_URL');
      // The overrides: the service's LOG_LEVEL over the environment's, which overrides the project's; each overridden
      // row says by which scope and links back.
      await follow(rowIn(service, 'LOG_LEVEL').getByRole('link', { name: 'Override of LOG_LEVEL (environment)' }), 'variable-environment-LOG_LEVEL');
      expect(await rowIn(environmentTable, 'LOG_LEVEL').innerText()).toMatch(/warn[\s\S]*overrides the project value[\s\S]*Overridden by the service/);
      await follow(rowIn(environmentTable, 'LOG_LEVEL').getByRole('link', { name: 'Override of LOG_LEVEL (project)' }), 'variable-project-LOG_LEVEL');
      expect(await rowIn(projectTable, 'LOG_LEVEL').getByRole('link').allInnerTexts()).toEqual(['Overridden by the environment']);
      await follow(rowIn(projectTable, 'LOG_LEVEL').getByRole('link', { name: 'Overridden by the environment' }), 'variable-environment-LOG_LEVEL');
      await follow(rowIn(environmentTable, 'LOG_LEVEL').getByRole('link', { name: 'Overridden by the service' }), 'variable-service-LOG_LEVEL');
      expect(await rowIn(service, 'PUBLIC_URL').getByText('Override', { exact: true }).count()).toBe(0);
      // At phone width (cards, a long page): the override of a built-in opens the built-ins' table at its row.
      await page.setViewportSize({ width: 390, height: 844 });
      const heading = await section.getByRole('heading', { level: 2, name: 'Variables' }).boundingBox();
      const newButton = await section.getByRole('button', { name: 'New variable' }).boundingBox();
      const importButton = await section.getByRole('button', { name: 'Import .env' }).boundingBox();
      // The heading on its own line, the two buttons side by side below it.
      expect((newButton?.y ?? 0) >= (heading?.y ?? 0) + (heading?.height ?? 0)).toBe(true);
      expect(newButton?.y).toBe(importButton?.y);
      await follow(rowIn(service, builtInKey).getByRole('link', { name: `Override of ${builtInKey} (built-in)` }), `variable-built-in-${builtInKey}`);
      expect(await page.getByLabel(/^Show the \d+ built-in variables$/).isChecked()).toBe(true);
      expect(await rowIn(page.getByRole('table', { name: 'Built-in' }), builtInKey).innerText()).toContain('Overridden by the service');
      await checkScreen(page, '181-variables-link-followed');
      await page.setViewportSize({ width: 1280, height: 800 });

      // The project's page: its own table, a variable created there (no scope to choose), edited; no import here.
      await page.goto(`${server.baseUrl}/console/organization/${organization.id}/project/${project.id}`);
      const projectOwn = page.getByRole('table', { name: 'This project' });
      await rowIn(projectOwn, 'SHARED_URL').waitFor();
      expect(await page.getByRole('region', { name: 'Variables' }).getByRole('heading', { level: 3 }).allTextContents()).toEqual(['This project 2 variables']);
      expect(await page.getByRole('button', { name: 'Import .env' }).isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'New variable' }).click();
      const create = page.getByRole('dialog', { name: 'New variable' });
      await create.getByText('Scope: every service of the project').waitFor();
      expect(await create.getByLabel('Scope').count()).toBe(0);
      await create.getByRole('textbox', { name: 'Name', exact: true }).fill('FEATURE_FLAGS');
      await create.getByRole('textbox', { name: 'Value', exact: true }).fill('search');
      await checkScreen(page, '182-project-new-variable');
      await create.getByRole('button', { name: 'Create variable' }).click();
      await create.waitFor({ state: 'detached' });
      await rowIn(projectOwn, 'FEATURE_FLAGS').filter({ hasText: 'search' }).waitFor();
      await page.getByRole('button', { name: 'Edit FEATURE_FLAGS' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit FEATURE_FLAGS' });
      await edit.getByRole('textbox', { name: 'Value', exact: true }).fill('search,cart');
      await edit.getByRole('button', { name: 'Save' }).click();
      await edit.waitFor({ state: 'detached' });
      await rowIn(projectOwn, 'FEATURE_FLAGS').filter({ hasText: 'search,cart' }).waitFor();
      await checkScreen(page, '183-project-variables');

      // The environment's page: its table and the project's (FEATURE_FLAGS there); a variable created at the
      // environment, a .env row imported there (through its service), one deleted.
      await page.goto(`${server.baseUrl}/console/organization/${organization.id}/project/${project.id}/environment/${environment.id}?tab=variables`);
      const environmentOwn = page.getByRole('table', { name: 'This environment' });
      const environmentProject = page.getByRole('table', { name: 'Project shop' });
      await rowIn(environmentProject, 'FEATURE_FLAGS').filter({ hasText: 'search,cart' }).waitFor();
      await expect.poll(() => page.getByRole('region', { name: 'Variables' }).getByRole('heading', { level: 3 }).allTextContents()).toEqual(['This environment 3 variables', 'Project shop 3 variables']);
      expect(await rowIn(environmentProject, 'LOG_LEVEL').getByRole('link').allInnerTexts()).toEqual(['Overridden by the environment']);
      await page.getByRole('button', { name: 'New variable' }).click();
      await create.waitFor();
      expect(await create.getByLabel('Scope').locator('option').allInnerTexts()).toEqual(['Every service of this environment', 'Every service of the project']);
      await create.getByRole('textbox', { name: 'Name', exact: true }).fill('REGION');
      await create.getByRole('textbox', { name: 'Value', exact: true }).fill('eu-west');
      await create.getByRole('button', { name: 'Create variable' }).click();
      await create.waitFor({ state: 'detached' });
      await rowIn(environmentOwn, 'REGION').waitFor();
      await page.getByRole('button', { name: 'Import .env' }).click();
      const importing = page.getByRole('dialog', { name: 'Import .env' });
      await importing.getByLabel('Or paste its lines').fill('QUEUE_URL=amqp://queue');
      expect(await importing.getByLabel('Scope of QUEUE_URL').locator('option').allInnerTexts()).toEqual(['The environment', 'The project']);
      await importing.getByRole('button', { name: 'Import 1 row' }).click();
      await importing.getByRole('status').filter({ hasText: '1 of 1 rows imported.' }).waitFor();
      expect(await importing.getByRole('status').innerText()).toContain('The services receive them at the next deployment.');
      await importing.getByRole('button', { name: 'Done' }).click();
      await rowIn(environmentOwn, 'QUEUE_URL').waitFor();
      await page.getByRole('button', { name: 'Delete CONFIG_JSON' }).click();
      const remove = page.getByRole('dialog', { name: 'Delete CONFIG_JSON' });
      expect(await remove.innerText()).toContain('Every service of the environment loses CONFIG_JSON at its next deployment.');
      await remove.getByRole('button', { name: 'Delete variable' }).click();
      await remove.waitFor({ state: 'detached' });
      await expect.poll(() => rowIn(environmentOwn, 'CONFIG_JSON').count()).toBe(0);
      await checkScreen(page, '184-environment-variables');

      // Back on the service's page: what the project's and the environment's pages set, in their tables.
      await page.goto(servicePage);
      await rowIn(projectTable, 'FEATURE_FLAGS').filter({ hasText: 'search,cart' }).waitFor();
      await rowIn(environmentTable, 'QUEUE_URL').waitFor();
      await rowIn(environmentTable, 'REGION').waitFor();
      expect(await environmentTable.getByRole('rowheader', { name: /^CONFIG_JSON/ }).count()).toBe(0);

      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
