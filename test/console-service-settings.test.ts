import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { callApi, checkScreen, consoleToken, type ConsoleWorld, createFirstOrganization, localCluster, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { createBareRepository, startGitServer, type TestGitServer } from './support/git-server.ts';
import { startHelmRepo, type TestHelmRepo } from './support/helm-repo-server.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

const INDEX_YAML = `apiVersion: v1
entries:
  redis:
  - apiVersion: v2
    name: redis
    version: 19.0.1
    urls:
    - charts/redis-19.0.1.tgz
  - apiVersion: v2
    name: redis
    version: 18.6.4
    urls:
    - charts/redis-18.6.4.tgz
generated: "2024-03-01T10:00:00Z"
`;

/**
 * A service's settings tab and the Helm and Terraform wizards (docs/console.md, "Tests
 * (test/console-service-settings.test.ts)"), in a real browser against the real server: each section of an
 * application's settings edited and read back from the API (general, resources, ports, health checks, deployment
 * restrictions, advanced settings with the server's defaults), a 400 shown at its field, the danger zone's delete by
 * typed name; a Helm chart created from a chart of a local Helm repository, a Terraform service from a local git
 * server's repository, and an agentic workflow, through their wizards. axe on every screen and dialog; photographs
 * `150-…` to `159-…`.
 */
for (const dialect of TEST_DIALECTS) {
  describe(`web console: service settings and the Helm and Terraform wizards [${dialect}]`, () => {
    let world: ConsoleWorld;
    let server: SlipwayServer;
    let browser: Browser;
    let charts: TestHelmRepo;
    let git: TestGitServer;
    let gitRoot: string;
    const owner = `console-service-settings-${dialect}-${process.pid}@example.com`;
    const problems: string[] = [];

    beforeAll(async () => {
      charts = await startHelmRepo({ path: '/stable', indexYaml: INDEX_YAML });
      gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-console-git-'));
      await createBareRepository(gitRoot, 'infra', { main: ['main.tf', 'prod.tfvars'] });
      git = await startGitServer({ root: gitRoot, privateRepositories: {} });
      world = await startConsoleWorld(dialect, { email: owner, name: 'Sam Settings' }, {
        // The Helm repository and the git server are on loopback, over plain http.
        SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
      });
      ({ server, browser } = world);
    }, 120_000);

    afterAll(async () => {
      await world?.close();
      await charts?.close();
      await git?.close();
      if (gitRoot !== undefined) await rm(gitRoot, { recursive: true, force: true });
    }, 60_000);

    async function saveSection(page: Page, heading: string, button = 'Save'): Promise<void> {
      const section = page.getByRole('region', { name: heading });
      await section.getByRole('button', { name: button, exact: true }).click();
      await section.getByRole('status').getByText('Saved.').waitFor();
    }

    it('edits each section of an application’s settings, deletes it by name, and creates Helm, Terraform and agentic-workflow services with their wizards', { timeout: 300_000 }, async () => {
      const context = await newConsoleContext(browser);
      const page = await context.newPage();
      // The refusals provoked on purpose: a CPU below the minimum, an advanced setting that is not a number.
      watchPage(page, problems, (url, status) => status === 400 && (/\/application\/[0-9a-f-]{36}$/.test(url) || /\/advancedSettings$/.test(url)));
      try {
        await signIn(page, server, owner);
        const { organizationId, made } = await createFirstOrganization(page, server, 'Acme Settings');
        const token = await consoleToken(page);
        const cluster = await localCluster(server, organizationId, made);
        const project = await made<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
        const environment = await made<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
        const application = await made<{ id: string }>('POST', `/environment/${environment.id}/application`, {
          name: 'web',
          git_repository: { url: 'https://git.example.com/acme/web.git', branch: 'main', provider: 'GITHUB', owner: 'acme', name: 'web' },
          ports: [{ internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' }],
          healthchecks: {},
        });
        const environmentPath = `${server.baseUrl}/console/organization/${organizationId}/project/${project.id}/environment/${environment.id}`;
        const read = () => made<Record<string, unknown>>('GET', `/application/${application.id}`);

        await page.goto(`${environmentPath}/application/${application.id}?tab=settings`);
        await page.getByRole('heading', { name: 'General' }).waitFor();
        await page.getByRole('heading', { name: 'Advanced settings' }).waitFor();
        await page.getByText('Every key and its default').waitFor();
        await checkScreen(page, '150-service-settings');

        // General: name, description and the source's branch.
        const general = page.getByRole('region', { name: 'General' });
        await general.getByLabel('Name').fill('storefront');
        await general.getByLabel('Description (optional)').fill('the shop front');
        await general.getByLabel('Branch').fill('release');
        await saveSection(page, 'General');
        expect(await read()).toMatchObject({ name: 'storefront', description: 'the shop front', git_repository: { branch: 'release', url: 'https://git.example.com/acme/web.git' } });

        // Resources: a CPU below the API's minimum is refused at its field; then saved.
        const resources = page.getByRole('region', { name: 'Resources' });
        await resources.getByLabel('CPU (millicores)').fill('5');
        await resources.getByRole('button', { name: 'Save', exact: true }).click();
        await expect.poll(() => resources.getByLabel('CPU (millicores)').getAttribute('aria-invalid')).toBe('true');
        expect(await resources.getByRole('alert').textContent()).toMatch(/See the fields marked above/);
        await checkScreen(page, '151-service-settings-refused');
        await resources.getByLabel('CPU (millicores)').fill('750');
        await resources.getByLabel('Memory (MiB)').fill('1024');
        await resources.getByLabel('Maximum instances').fill('3');
        await saveSection(page, 'Resources');
        expect(await read()).toMatchObject({ cpu: 750, memory: 1024, max_running_instances: 3 });

        // Ports: a second, private one.
        const ports = page.getByRole('region', { name: 'Ports' });
        await ports.getByRole('button', { name: 'Add a port' }).click();
        await ports.getByLabel('Port number 2').fill('9090');
        await ports.getByLabel('Protocol 2').selectOption('GRPC');
        await saveSection(page, 'Ports');
        expect(((await read()).ports as { internal_port: number; publicly_accessible: boolean; protocol: string }[]).map((port) => [port.internal_port, port.publicly_accessible, port.protocol])).toEqual([
          [8080, true, 'HTTP'],
          [9090, false, 'GRPC'],
        ]);

        // Health checks: an HTTP readiness probe on /healthz, a TCP liveness probe.
        const health = page.getByRole('region', { name: 'Health checks' });
        await health.getByLabel('Readiness: check').selectOption('HTTP');
        await health.getByLabel('Readiness: path').fill('/healthz');
        await health.getByLabel('Liveness: check').selectOption('TCP');
        await saveSection(page, 'Health checks');
        expect(await read()).toMatchObject({ healthchecks: { readiness_probe: { type: { http: { path: '/healthz', port: 8080 } } }, liveness_probe: { type: { tcp: { port: 8080 } } } } });

        // Deployment restrictions: one added, listed, then deleted.
        const restrictions = page.getByRole('region', { name: 'Deployment restrictions' });
        await restrictions.getByLabel('Mode').selectOption('EXCLUDE');
        await restrictions.getByLabel('Path').fill('docs/');
        await restrictions.getByRole('button', { name: 'Add restriction' }).click();
        await restrictions.getByRole('table', { name: 'Deployment restrictions' }).getByRole('row', { name: /docs\// }).waitFor();
        expect((await made<{ results: unknown[] }>('GET', `/application/${application.id}/deploymentRestriction`)).results).toMatchObject([{ mode: 'EXCLUDE', type: 'PATH', value: 'docs/' }]);
        await checkScreen(page, '152-service-settings-edited');
        await restrictions.getByRole('button', { name: 'Delete the restriction docs/' }).click();
        await restrictions.getByText('No restrictions: every push deploys.').waitFor();
        expect((await made<{ results: unknown[] }>('GET', `/application/${application.id}/deploymentRestriction`)).results).toEqual([]);

        // Advanced settings: the server's default beside the key; a value that is not a number refused at its key; saved.
        const defaults = await made<Record<string, unknown>>('GET', '/defaultApplicationAdvancedSettings');
        const advanced = page.getByRole('region', { name: 'Advanced settings' });
        await advanced.getByRole('button', { name: 'Override a key' }).click();
        await advanced.getByLabel('Key 1').selectOption('build.timeout_max_sec');
        expect(await advanced.getByText(/^Default:/).textContent()).toBe(`Default: ${String(defaults['build.timeout_max_sec'])}`);
        await advanced.getByLabel('Value 1').fill('soon');
        await advanced.getByRole('button', { name: 'Save advanced settings' }).click();
        await expect.poll(() => advanced.getByLabel('Value 1').getAttribute('aria-invalid')).toBe('true');
        await checkScreen(page, '153-service-advanced-settings-refused');
        await advanced.getByLabel('Value 1').fill('900');
        await advanced.getByRole('button', { name: 'Save advanced settings' }).click();
        await expect.poll(async () => (await made<Record<string, unknown>>('GET', `/application/${application.id}/advancedSettings`))['build.timeout_max_sec']).toBe(900);
        await advanced.getByLabel('Value 1').waitFor();
        expect(await advanced.getByLabel('Value 1').inputValue()).toBe('900');

        // The Helm wizard, from the environment's "New service" menu: the local repository's chart and version.
        await made('POST', `/organization/${organizationId}/helmRepository`, { name: 'stable', kind: 'HTTPS', url: charts.url });
        await page.goto(environmentPath);
        await page.getByRole('button', { name: 'New service' }).click();
        await page.getByRole('menuitem', { name: 'Helm chart' }).click();
        await page.getByRole('heading', { level: 1, name: 'New helm chart' }).waitFor();
        await page.getByLabel('Name', { exact: true }).fill('cache');
        await expect.poll(() => page.getByLabel('Chart', { exact: true }).inputValue(), { timeout: 30_000 }).toBe('redis');
        expect(await page.getByLabel('Version', { exact: true }).inputValue()).toBe('19.0.1');
        await page.getByLabel('Version', { exact: true }).selectOption('18.6.4');
        await checkScreen(page, '154-new-helm-chart');
        await page.getByRole('button', { name: 'Next' }).click();
        await page.getByLabel('Values override (YAML, optional)').fill('architecture: standalone\n');
        await page.getByRole('button', { name: 'Add a row' }).click();
        await page.getByLabel('Key 1').fill('auth.enabled');
        await page.getByLabel('Value 1').fill('false');
        await checkScreen(page, '155-new-helm-values');
        await page.getByRole('button', { name: 'Next' }).click();
        await page.getByRole('heading', { name: 'Review' }).waitFor();
        await page.getByRole('button', { name: 'Create helm chart' }).click();
        await page.getByRole('heading', { level: 1, name: 'cache' }).waitFor();
        const helmId = /\/helm\/([0-9a-f-]{36})/.exec(page.url())?.[1] as string;
        expect(await made('GET', `/helm/${helmId}`)).toMatchObject({
          name: 'cache',
          source: { repository: { chart_name: 'redis', chart_version: '18.6.4' } },
          values_override: { set: [['auth.enabled', 'false']], file: { raw: { values: [{ name: 'values.yaml', content: 'architecture: standalone\n' }] } } },
        });
        await page.getByRole('tab', { name: 'Settings' }).click();
        await page.getByRole('heading', { name: 'Deployment restrictions' }).waitFor();
        await checkScreen(page, '156-helm-settings');
        // The same settings component for a Helm chart: its chart version.
        await page.getByRole('region', { name: 'General' }).getByLabel('Chart version').fill('19.0.1');
        await saveSection(page, 'General');
        expect(await made('GET', `/helm/${helmId}`)).toMatchObject({ source: { repository: { chart_name: 'redis', chart_version: '19.0.1' } } });

        // The Terraform wizard: the local git server's repository, a variable and a variable file.
        await page.goto(environmentPath);
        await page.getByRole('button', { name: 'New service' }).click();
        await page.getByRole('menuitem', { name: 'Terraform' }).click();
        await page.getByRole('heading', { level: 1, name: 'New terraform' }).waitFor();
        await page.getByLabel('Name', { exact: true }).fill('network');
        await page.getByLabel('Repository URL').fill(git.urlOf('infra'));
        await page.getByLabel('Engine').selectOption('OPEN_TOFU');
        await checkScreen(page, '157-new-terraform');
        await page.getByRole('button', { name: 'Next' }).click();
        await page.getByRole('button', { name: 'Add a row' }).click();
        await page.getByLabel('Key 1').fill('region');
        await page.getByLabel('Value 1').fill('eu-west-3');
        await page.getByLabel('Variable files (optional)').fill('prod.tfvars');
        await page.getByRole('button', { name: 'Next' }).click();
        await page.getByRole('heading', { name: 'Review' }).waitFor();
        await page.getByRole('button', { name: 'Create terraform' }).click();
        await page.getByRole('heading', { level: 1, name: 'network' }).waitFor();
        const terraformId = /\/terraform\/([0-9a-f-]{36})/.exec(page.url())?.[1] as string;
        expect(await made('GET', `/terraform/${terraformId}`)).toMatchObject({
          name: 'network',
          engine: 'OPEN_TOFU',
          terraform_files_source: { git_repository: { url: git.urlOf('infra'), branch: 'main' } },
          terraform_variables_source: { tf_vars: [{ key: 'region', value: 'eu-west-3' }], tf_var_file_paths: ['prod.tfvars'] },
        });

        // The agentic workflow wizard: a model, its API key's secret name, instructions; run when deployed.
        await page.goto(environmentPath);
        await page.getByRole('button', { name: 'New service' }).click();
        await page.getByRole('menuitem', { name: 'Agentic workflow' }).click();
        await page.getByRole('heading', { level: 1, name: 'New agentic workflow' }).waitFor();
        await page.getByLabel('Name', { exact: true }).fill('triage');
        await page.getByLabel('Model', { exact: true }).fill('claude-sonnet');
        await page.getByLabel('Instructions').fill('Label the new issues of the shop.');
        await checkScreen(page, '159-new-agentic-workflow');
        await page.getByRole('button', { name: 'Next' }).click();
        await page.getByRole('heading', { name: 'Schedule and resources' }).waitFor();
        await page.getByRole('button', { name: 'Next' }).click();
        await page.getByRole('heading', { name: 'Review' }).waitFor();
        await page.getByRole('button', { name: 'Create agentic workflow' }).click();
        await page.getByRole('heading', { level: 1, name: 'triage' }).waitFor();
        const workflowId = /\/agenticWorkflow\/([0-9a-f-]{36})/.exec(page.url())?.[1] as string;
        expect(await made('GET', `/agenticWorkflow/${workflowId}`)).toMatchObject({
          name: 'triage',
          model: { provider: 'ANTHROPIC', model: 'claude-sonnet', api_key_variable: 'ANTHROPIC_API_KEY' },
          instructions: 'Label the new issues of the shop.',
        });

        // The danger zone: the application deleted by its typed name.
        await page.goto(`${environmentPath}/application/${application.id}?tab=settings`);
        await page.getByRole('region', { name: 'Danger zone' }).getByRole('button', { name: 'Delete application…' }).click();
        const remove = page.getByRole('dialog', { name: 'Delete storefront' });
        await remove.getByLabel('Type storefront to confirm').fill('storefront');
        await checkScreen(page, '158-service-delete');
        await remove.getByRole('button', { name: 'Delete application' }).click();
        await page.getByRole('heading', { level: 1, name: 'staging' }).waitFor();
        await expect.poll(async () => (await callApi(server, token, 'GET', `/application/${application.id}`)).status, { timeout: 30_000 }).toBe(404);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
}
