import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { checkScreen, type ConsoleWorld, createFirstOrganization, expectAccessible, localCluster, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

/**
 * The environment's operations in a real browser against the real server, without an agent (requests stay queued):
 * the environment renamed and exported as Terraform (a real download), services ticked in the table and deployed,
 * deleted by typing how many, the deployment queue of the environment and of a service with a request cancelled from
 * each, the history with each execution's services and its build usage report downloaded and deleted, the activity and
 * log lines, the project's environments with their cluster's provider, the failed jobs cleaned and the environment
 * uninstalled by its name. axe on each new screen at 390 and 1280 px; photographs `300-…` to `307-…`.
 */
for (const dialect of ['sqlite'] as const) {
  describe(`web console: environment operations [${dialect}]`, () => {
    let world: ConsoleWorld;
    let server: SlipwayServer;
    let browser: Browser;
    const owner = `console-environment-operations-${dialect}-${process.pid}@example.com`;
    const problems: string[] = [];

    beforeAll(async () => {
      world = await startConsoleWorld(dialect, { email: owner, name: 'Erin Environments' });
      ({ server, browser } = world);
    }, 120_000);

    afterAll(async () => {
      await world?.close();
    }, 60_000);

    /** axe at the phone's width too (checkScreen runs it at the desktop's), then the photographs at both. */
    async function checkBothWidths(page: Page, name: string): Promise<void> {
      await page.setViewportSize({ width: 390, height: 844 });
      await expectAccessible(page, `${name} at 390 px`);
      await page.setViewportSize({ width: 1280, height: 800 });
      await checkScreen(page, name);
    }

    // One long walk through every tab (65 s alone on a 2-core machine, over 120 s inside the full parallel suite).
    it('renames, exports, acts on selected services, shows and cancels the queue, the history, the logs, and uninstalls', { timeout: 240_000 }, async () => {
      const context = await newConsoleContext(browser);
      const page = await context.newPage();
      // The refusal provoked on purpose: stopping a database that was never deployed.
      watchPage(page, problems, (url, status) => status === 409 && /\/service\/stop$/.test(url));
      try {
        await signIn(page, server, owner);
        const { organizationId, made } = await createFirstOrganization(page, server, 'Acme Environments');
        const cluster = await localCluster(server, organizationId, made);
        const project = await made<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
        const environment = await made<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
        const registry = await made<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, { name: 'hub', kind: 'DOCKER_HUB', url: 'https://docker.io' });
        const container = (name: string) =>
          made<{ id: string }>('POST', `/environment/${environment.id}/container`, { name, registry_id: registry.id, image_name: 'nginx', tag: '1.27', ports: [{ internal_port: 80, publicly_accessible: false, protocol: 'HTTP' }], healthchecks: {} });
        await container('web');
        const worker = await container('worker');
        await container('cache');
        await made('POST', `/environment/${environment.id}/database`, { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER', accessibility: 'PRIVATE' });
        const environmentUrl = `${server.baseUrl}/console/organization/${organizationId}/project/${project.id}/environment/${environment.id}`;
        const tab = (name: string) => page.getByRole('tablist', { name: 'Environment' }).getByRole('tab', { name });

        // Settings: renamed (the heading follows), exported as one .tf file.
        await page.goto(`${environmentUrl}?tab=settings`);
        await page.getByRole('heading', { name: 'Database versions' }).waitFor();
        await page.getByRole('table', { name: 'Database versions' }).getByRole('row', { name: /PostgreSQL/ }).waitFor();
        const general = page.getByRole('region', { name: 'General' });
        await general.getByLabel('Name').fill('staging-eu');
        await general.getByRole('button', { name: 'Save changes' }).click();
        await general.getByRole('status').getByText('Saved.').waitFor();
        await page.getByRole('heading', { level: 1, name: 'staging-eu' }).waitFor();
        expect(await made<{ name: string }>('GET', `/environment/${environment.id}`)).toMatchObject({ name: 'staging-eu' });
        const [terraform] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download Terraform file' }).click()]);
        expect(terraform.suggestedFilename()).toBe('staging-eu.tf');
        expect(await readFile(await terraform.path(), 'utf8')).toMatch(/resource "slipway_environment"[\s\S]*"web"/);
        await page.evaluate('window.scrollTo(0, 0)');
        await checkBothWidths(page, '300-environment-settings');
        await page.getByRole('button', { name: 'Clean failed jobs' }).click();
        await page.getByText('No job had a failed run to clean.').waitFor();
        await page.getByRole('region', { name: 'Database versions' }).scrollIntoViewIfNeeded();
        await checkBothWidths(page, '307-environment-danger-zone');

        // Services: web and worker ticked and deployed (queued: no agent), cache ticked and deleted by typing "1 service".
        await tab('Services').click();
        const services = page.getByRole('table', { name: 'Services' });
        await services.getByRole('row', { name: /cache/ }).waitFor();
        await services.getByRole('checkbox', { name: 'Select web' }).check();
        await services.getByRole('checkbox', { name: 'Select worker' }).check();
        await page.getByText('2 services selected').waitFor();
        await checkBothWidths(page, '301-environment-services-selected');
        await page.getByRole('button', { name: 'Deploy selected' }).click();
        await page.getByText('2 services: deployment queued.').waitFor();
        expect(await services.getByRole('checkbox', { name: 'Select web' }).isChecked()).toBe(false);
        await services.getByRole('row', { name: /web/ }).getByText('Stage').waitFor();
        await services.getByRole('checkbox', { name: 'Select cache' }).check();
        await page.getByRole('button', { name: 'Delete selected…' }).click();
        const confirm = page.getByRole('dialog', { name: 'Delete 1 service' });
        await confirm.getByLabel('Type 1 service to confirm').fill('1 service');
        await checkBothWidths(page, '302-environment-delete-selected');
        await confirm.getByRole('button', { name: 'Delete 1 service' }).click();
        await confirm.waitFor({ state: 'detached' });
        await services.getByRole('row', { name: /cache/ }).waitFor({ state: 'detached' });
        // The database, never deployed, cannot be stopped: the API's refusal is shown beside the bulk actions.
        await services.getByRole('checkbox', { name: 'Select orders' }).check();
        await page.getByRole('button', { name: 'Stop selected' }).click();
        const bulk = page.getByRole('group', { name: 'Actions on the selected services' });
        await bulk.getByRole('alert').getByText(/^cannot stop the service: database orders \([0-9a-f-]{36}\) has never been deployed \(it is READY\); nothing was queued$/).waitFor();
        await checkBothWidths(page, '302-environment-bulk-refused');
        await services.getByRole('checkbox', { name: 'Select orders' }).uncheck();

        // Deployments: the queue (web's and worker's own deploys), web's cancelled there.
        await tab('Deployments').click();
        const queue = page.getByRole('table', { name: 'Deployment queue' });
        await queue.getByRole('row', { name: /Deploy web/ }).waitFor();
        await queue.getByRole('row', { name: /Deploy worker/ }).waitFor();
        await checkBothWidths(page, '303-environment-deployments');
        await queue.getByRole('button', { name: 'Cancel the deploy of web' }).click();
        await queue.getByRole('row', { name: /Deploy web/ }).waitFor({ state: 'detached' });

        // The worker's own queue on its Deployments tab, its deploy cancelled there.
        await page.goto(`${environmentUrl}/container/${worker.id}?tab=deployments`);
        const serviceQueue = page.getByRole('table', { name: 'Deployment queue' });
        await serviceQueue.getByRole('row', { name: /Deploy/ }).waitFor();
        await checkBothWidths(page, '304-service-deployment-queue');
        await serviceQueue.getByRole('button', { name: 'Cancel the queued deploy' }).click();
        await serviceQueue.waitFor({ state: 'detached' });

        // The environment's own deploy: queued, cancelled from the queue, then in the history with each service and
        // its build usage report, downloaded and deleted.
        await page.goto(`${environmentUrl}?tab=deployments`);
        await page.getByText('Nothing is queued.').waitFor();
        await page.getByRole('button', { name: 'Deploy all' }).click();
        const environmentDeploy = queue.getByRole('row', { name: /Deploy orders, web, worker/ });
        await environmentDeploy.waitFor();
        await environmentDeploy.getByRole('button', { name: /^Cancel the deploy of/ }).click();
        // Cancelled once it was carried into its services' own deploys: those are cancelled with it.
        await environmentDeploy.waitFor({ state: 'detached' });
        await page.getByText('Nothing is queued.').waitFor();
        const history = page.getByRole('list', { name: 'Deployment history' });
        const entry = history.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Deploy of 3 services' }) });
        await entry.getByRole('list', { name: 'Services of this deployment' }).getByText('worker').waitFor();
        await checkBothWidths(page, '305-environment-history');
        await entry.getByRole('button', { name: 'Build usage report' }).click();
        const [report] = await Promise.all([page.waitForEvent('download'), entry.getByRole('button', { name: 'Download report (CSV)' }).click()]);
        expect(report.suggestedFilename()).toMatch(/^build-usage-.*\.csv$/);
        expect(await readFile(await report.path(), 'utf8')).toMatch(/worker/);
        await entry.getByRole('button', { name: 'Delete report' }).click();
        await entry.getByText('Report deleted.').waitFor();

        // Logs: the activity, and the log lines of one of its entries.
        await tab('Logs').click();
        const activity = page.getByRole('table', { name: 'Activity' });
        await activity.getByRole('row', { name: /Deploy web/ }).first().waitFor();
        await activity.getByRole('button', { name: 'Log lines of the deploy of web' }).first().click();
        await page.getByText('Deploy of web (the last 1,000 lines).').waitFor();
        await checkBothWidths(page, '306-environment-logs');

        // Web uninstalled with the selection: its workloads go, its configuration stays.
        await tab('Services').click();
        await services.getByRole('checkbox', { name: 'Select web' }).check();
        await page.getByRole('button', { name: 'Uninstall selected…' }).click();
        const uninstallSelected = page.getByRole('dialog', { name: 'Uninstall 1 service' });
        await uninstallSelected.getByLabel('Type 1 service to confirm').fill('1 service');
        await uninstallSelected.getByRole('button', { name: 'Uninstall 1 service' }).click();
        await uninstallSelected.waitFor({ state: 'detached' });
        await page.getByText('1 service: uninstalled.').waitFor();
        await services.getByRole('row', { name: /web/ }).waitFor();

        // The project's environments: the new name, the cluster's provider.
        await page.goto(`${server.baseUrl}/console/organization/${organizationId}/project/${project.id}`);
        const row = page.getByRole('list', { name: 'Environments' }).getByRole('listitem').filter({ hasText: 'staging-eu' });
        await row.getByText('On premise').waitFor();

        // Uninstalled, confirmed by the environment's name.
        await page.goto(`${environmentUrl}?tab=settings`);
        // The sections above the danger zone load on their own: once none is loading, the button stays where it is.
        await page.getByRole('heading', { name: 'Deployment stages' }).waitFor();
        await expect.poll(() => page.locator('.tab-panel .loading').count()).toBe(0);
        await page.getByRole('button', { name: 'Uninstall environment…' }).click();
        const uninstall = page.getByRole('dialog', { name: 'Uninstall staging-eu' });
        await uninstall.getByLabel('Type staging-eu to confirm').fill('staging-eu');
        await uninstall.getByRole('button', { name: 'Uninstall environment' }).click();
        await uninstall.waitFor({ state: 'detached' });
        expect((await made<{ deployment_status: string }>('GET', `/environment/${environment.id}/status`)).deployment_status).toBe('NEVER_DEPLOYED');
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
}
