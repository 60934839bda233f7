import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { callApi, checkScreen, consoleToken, launchConsoleBrowser, newConsoleContext, signIn, signUp, watchPage } from './support/console-browser.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';
import { startTestSmtpServer, type TestSmtpServer } from './support/smtp-server.ts';

/**
 * What a role cannot do, in a real browser against the real server (docs/console.md, "Permissions"): a VIEWER
 * member (invited through the API, accepted with their own session) sees the organization, a project, an environment,
 * a service and its variables with every action their role lacks disabled and the reason beside it, read with the
 * buttons (`aria-describedby`); a page whose request the API refuses (API tokens: admins only) shows the refusal as a
 * message. On SQLite and, with SLIPWAY_TEST_DATABASE_URL, PostgreSQL. Photographs `103-…` to `106-…`.
 */
const WRITE_REASON = 'Your role is Viewer: creating, changing or deleting needs the Developer role or above.';
const DEPLOY_REASON = 'Your role is Viewer: deploying, restarting or stopping needs the Developer role or above.';

for (const dialect of TEST_DIALECTS) {
  describe(`web console: actions a role cannot take [${dialect}]`, () => {
    let smtp: TestSmtpServer;
    let server: SlipwayServer & { organizationId: string; apiToken: string };
    let browser: Browser;
    const vera = `console-viewer-${process.pid}@example.com`;
    const problems: string[] = [];
    const ids = { project: '', environment: '', application: '' };

    beforeAll(async () => {
      smtp = await startTestSmtpServer();
      server = await startSlipwayServer(dialect, { SLIPWAY_SMTP_URL: smtp.url, SLIPWAY_MAIL_FROM: 'Slipway <slipway@example.com>', SLIPWAY_SIGNUP: 'open' }, { bootstrap: true });
      await signUp(server, smtp, vera, 'Vera Viewer');
      // What the viewer will look at, made with the organization's ADMIN token: a LOCAL cluster, a project, an
      // environment, an application and a project variable.
      const { organizationId, apiToken } = server;
      const allowed = await server.operator(['admin', 'local-clusters', 'allow', '--organization', organizationId]);
      expect(allowed.code, allowed.stderr).toBe(0);
      const made = async <T>(method: string, url: string, body?: unknown): Promise<T> => {
        const answer = await callApi<T>(server, apiToken, method, url, body);
        expect(answer.status, `${method} ${url}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
        return answer.body;
      };
      const cluster = await made<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: 'local', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
      ids.project = (await made<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' })).id;
      ids.environment = (await made<{ id: string }>('POST', `/project/${ids.project}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' })).id;
      ids.application = (
        await made<{ id: string }>('POST', `/environment/${ids.environment}/application`, {
          name: 'web',
          git_repository: { url: 'https://git.example.com/acme/web.git', branch: 'main', provider: 'GITHUB', owner: 'acme', name: 'web' },
          ports: [{ internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' }],
          healthchecks: {},
        })
      ).id;
      await made('POST', `/project/${ids.project}/environmentVariable`, { key: 'TEAM', value: 'shop' });
      browser = await launchConsoleBrowser();
    }, 300_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
      await smtp?.close();
    }, 60_000);

    /** The control is disabled and described by the visible reason. */
    async function expectRefused(control: Locator, reason: string): Promise<void> {
      expect(await control.isDisabled()).toBe(true);
      const described = await control.evaluate((element) => (element.getAttribute('aria-describedby') ?? '').split(' ').map((id: string) => element.ownerDocument.getElementById(id)?.textContent ?? '').join(' '));
      expect(described).toBe(reason);
    }

    async function expectMenuItemsDisabled(page: Page, trigger: string, items: string[]): Promise<void> {
      await page.getByRole('button', { name: trigger }).click();
      const menu = page.getByRole('menu', { name: trigger });
      await menu.waitFor();
      for (const item of items) expect(await menu.getByRole('menuitem', { name: item }).getAttribute('aria-disabled'), item).toBe('true');
      await page.keyboard.press('Escape');
      await menu.waitFor({ state: 'detached' });
    }

    it('disables what a viewer cannot do, says why, and shows a refusal as a message', { timeout: 240_000 }, async () => {
      const { organizationId } = server;
      const context = await newConsoleContext(browser);
      const page = await context.newPage();
      // The one refusal provoked on purpose: the API tokens page, which only admins may read.
      watchPage(page, problems, (url, status) => status === 403 && url.endsWith(`/organization/${organizationId}/apiToken`));
      try {
        // Vera signs in (no organization yet), is invited as a viewer and accepts with her own session.
        await signIn(page, server, vera);
        const invitation = await callApi<{ id: string }>(server, server.apiToken, 'POST', `/organization/${organizationId}/inviteMember`, { email: vera, role: 'VIEWER' });
        expect(invitation.status).toBe(201);
        const accepted = await callApi(server, await consoleToken(page), 'POST', `/organization/${organizationId}/inviteMember/${invitation.body.id}`);
        expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);

        // The organization: projects can be opened, not created, renamed or deleted.
        await page.goto(`${server.baseUrl}/console/organization/${organizationId}`);
        await page.getByRole('link', { name: 'shop' }).waitFor();
        // The role comes with the members list, which may answer after the projects.
        await page.getByText(WRITE_REASON).first().waitFor();
        await expectRefused(page.getByRole('button', { name: 'New project' }), WRITE_REASON);
        await expectRefused(page.getByRole('button', { name: 'Rename shop' }), WRITE_REASON);
        await expectRefused(page.getByRole('button', { name: 'Delete shop' }), WRITE_REASON);
        await checkScreen(page, '103-viewer-organization');

        // The project: its environments, not created, deployed, restarted, stopped, cloned or deleted.
        await page.getByRole('link', { name: 'shop' }).click();
        await page.getByRole('heading', { level: 1, name: 'shop' }).waitFor();
        await page.getByRole('link', { name: 'staging', exact: true }).waitFor();
        await page.getByText(DEPLOY_REASON).first().waitFor();
        await expectRefused(page.getByRole('button', { name: 'New environment' }), WRITE_REASON);
        await expectRefused(page.getByRole('button', { name: 'Deploy staging' }), DEPLOY_REASON);
        await expectMenuItemsDisabled(page, 'More actions for staging', ['Restart services', 'Stop', 'Clone…', 'Delete…']);
        await checkScreen(page, '104-viewer-project');

        // The environment: its services, none deployed, restarted, stopped or created.
        await page.getByRole('link', { name: 'staging', exact: true }).click();
        const table = page.getByRole('table', { name: 'Services' });
        await table.getByRole('link', { name: 'web', exact: true }).waitFor();
        await page.getByText(DEPLOY_REASON).first().waitFor();
        await expectRefused(page.getByRole('button', { name: 'Deploy all' }), DEPLOY_REASON);
        await expectRefused(page.getByRole('button', { name: /^New service/ }), WRITE_REASON);
        await expectRefused(table.getByRole('button', { name: 'Deploy web' }), DEPLOY_REASON);
        await expectMenuItemsDisabled(page, 'More actions for web', ['Restart', 'Stop']);
        await expectMenuItemsDisabled(page, 'More actions for this environment', ['Restart all', 'Stop all']);

        // The service: its state and settings; no action.
        await table.getByRole('link', { name: 'web', exact: true }).click();
        await page.getByRole('heading', { level: 1, name: 'web' }).waitFor();
        await page.getByText(DEPLOY_REASON).first().waitFor();
        for (const action of ['Deploy…', 'Redeploy', 'Restart', 'Stop']) await expectRefused(page.getByRole('button', { name: action }), DEPLOY_REASON);
        await expectRefused(page.getByRole('button', { name: 'Delete application…' }), WRITE_REASON);
        await checkScreen(page, '105-viewer-service');

        // Its variables: read, not created, imported, edited or deleted.
        await page.getByRole('tab', { name: 'Variables' }).click();
        await page.getByRole('rowheader', { name: /^TEAM/ }).waitFor();
        await page.getByText(WRITE_REASON).first().waitFor();
        await expectRefused(page.getByRole('button', { name: 'New variable' }), WRITE_REASON);
        await expectRefused(page.getByRole('button', { name: 'Import .env' }), WRITE_REASON);
        await expectRefused(page.getByRole('button', { name: 'Edit TEAM' }), WRITE_REASON);
        await expectRefused(page.getByRole('button', { name: 'Delete TEAM' }), WRITE_REASON);

        // A page whose request the API refuses: the refusal as a message, the page still standing.
        await page.goto(`${server.baseUrl}/console/organization/${organizationId}/settings/api-tokens`);
        const refusal = page.getByRole('alert').filter({ hasText: /^You are not allowed to do this: / });
        await refusal.waitFor();
        await page.getByRole('navigation', { name: 'Main' }).waitFor();
        await checkScreen(page, '106-viewer-refused');

        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
}
