import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Request } from 'playwright-core';
import { checkScreen, type ConsoleWorld, createFirstOrganization, localCluster, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

/**
 * Issue 20 in the console (docs/console.md, "Live states"): the signed-in shell follows the organization's change
 * stream, and a service's state changed through the API shows on an open environment page. The page's polling
 * fallback is set to ten minutes in this browser (`slipway:live-fallback-ms`), and every status request the page makes
 * is recorded: after the page has loaded and the stream is connected none is made until the change, so the read that
 * shows the new state was asked for by the pushed event, not by a poll. Real server, real Chromium; axe and
 * photographs `190-…`.
 */
for (const dialect of TEST_DIALECTS) {
  describe(`web console: live states pushed [${dialect}]`, () => {
    let world: ConsoleWorld;
    let server: SlipwayServer;
    let browser: Browser;
    const owner = `console-live-${dialect}-${process.pid}@example.com`;
    const problems: string[] = [];

    beforeAll(async () => {
      world = await startConsoleWorld(dialect, { email: owner, name: 'Lena Live' });
      ({ server, browser } = world);
    }, 120_000);

    afterAll(async () => {
      await world?.close();
    }, 60_000);

    it("shows a service's new state on an open environment page as soon as it is pushed, with polling ten minutes apart", { timeout: 180_000 }, async () => {
      const context = await newConsoleContext(browser);
      const page = await context.newPage();
      watchPage(page, problems, () => false);
      try {
        await signIn(page, server, owner);
        const { organizationId, made } = await createFirstOrganization(page, server, 'Acme Live');

        // A LOCAL cluster (no agent runs in this server: a deploy stays QUEUED), a project, an environment, an application.
        const cluster = await localCluster(server, organizationId, made);
        await made('POST', `/organization/${organizationId}/cluster/${cluster.id}/deploy`);
        await expect
          .poll(async () => (await made<{ status: string }>('GET', `/organization/${organizationId}/cluster/${cluster.id}/status`)).status, { timeout: 30_000 })
          .toBe('DEPLOYED');
        const project = await made<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
        const environment = await made<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
        const application = await made<{ id: string }>('POST', `/environment/${environment.id}/application`, {
          name: 'web',
          git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' },
          healthchecks: {},
        });

        // Polling ten minutes apart in this browser; every status read the page makes is recorded.
        await page.evaluate(() => localStorage.setItem('slipway:live-fallback-ms', '600000'));
        const statusReads: string[] = [];
        const changeStreams: string[] = [];
        page.on('request', (request: Request) => {
          const url = new URL(request.url());
          if (/\/status(es)?$/.test(url.pathname)) statusReads.push(url.pathname);
          if (url.pathname === `/organization/${organizationId}/changes`) changeStreams.push(request.headers()['accept'] ?? '');
        });
        await page.goto(`${server.baseUrl}/console/organization/${organizationId}/project/${project.id}/environment/${environment.id}`);
        await page.getByRole('heading', { level: 1, name: 'staging' }).waitFor();
        await page.locator('.shell[data-live-changes="connected"]').waitFor();
        const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'web', exact: true }) });
        await row.locator('.chip[data-state="READY"]').waitFor();
        expect(changeStreams).toEqual(['text/event-stream']);

        // The change, through the API. The page shows it; the status reads since the page settled are the environment's
        // statuses only, which the pushed event names (a poll is ten minutes away).
        const settledReads = statusReads.length;
        expect(statusReads).toContain(`/environment/${environment.id}/statuses`);
        await made('POST', `/application/${application.id}/deploy`, {});
        await row.locator('.chip[data-state="QUEUED"]').waitFor({ timeout: 10_000 });
        const sinceTheChange = statusReads.slice(settledReads);
        expect(sinceTheChange.length).toBeGreaterThan(0);
        expect(new Set(sinceTheChange)).toEqual(new Set([`/environment/${environment.id}/statuses`]));
        await checkScreen(page, '190-environment-state-pushed');
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
}
