import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { callApi, checkScreen, consoleToken, launchConsoleBrowser, newConsoleContext, signIn, signUp, watchPage } from './support/console-browser.ts';
import { freePort } from './support/identity-app.ts';
import { startOciRegistry, type TestOciRegistry } from './support/oci-registry-server.ts';
import { killProcessesUnder } from './support/sample-apps.ts';
import { startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';
import { startTestSmtpServer, type TestSmtpServer } from './support/smtp-server.ts';

/**
 * The organization's settings in a real browser against the real server (docs/console.md, "Tests"): general (rename,
 * delete with typed confirmation), members and invitations (the invitation mailed to a real SMTP server, accepted by
 * the invited person, their role changed, ownership transferred, a member removed), custom roles (created and edited
 * with per environment type permissions, offered when inviting, deleted) and API tokens (shown once, copied, working,
 * then refused with 401 once deleted). axe on every screen and dialog; photographs `50-…` to `69-…`.
 */
describe('web console: organization settings (real browser, real server)', () => {
  let smtp: TestSmtpServer;
  let server: SlipwayServer;
  let browser: Browser;
  let registry: TestOciRegistry;
  const owner = `console-settings-owner-${process.pid}@example.com`;
  const dana = `console-settings-dana-${process.pid}@example.com`;
  const eli = `console-settings-eli-${process.pid}@example.com`;
  const operatorOfClusters = `console-settings-cleo-${process.pid}@example.com`;
  const problems: string[] = [];

  beforeAll(async () => {
    smtp = await startTestSmtpServer();
    registry = await startOciRegistry({ mode: 'basic', username: 'robot', password: 'registry-secret', repositories: { 'shop/web': ['1.0'] } });
    server = await startSlipwayServer('sqlite', {
      SLIPWAY_SMTP_URL: smtp.url,
      SLIPWAY_MAIL_FROM: 'Slipway <slipway@example.com>',
      SLIPWAY_SIGNUP: 'open',
      SLIPWAY_LOCAL_AGENT: 'true',
      // The test registry is on loopback, over plain http.
      SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
      SLIPWAY_APPS_PORT: String(await freePort()),
    });
    await signUp(server, smtp, owner, 'Olive Owner');
    await signUp(server, smtp, dana, 'Dana Developer');
    await signUp(server, smtp, eli, 'Eli Extra');
    await signUp(server, smtp, operatorOfClusters, 'Cleo Clusters');
    browser = await launchConsoleBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (server !== undefined) await killProcessesUnder(server.dataDir);
    await smtp?.close();
    await registry?.close();
  }, 60_000);

  /** The invited person signs in (in a context of their own) and accepts through the API with their console token. */
  async function accept(email: string, organizationId: string, inviteId: string): Promise<void> {
    const context = await newConsoleContext(browser);
    try {
      const page = await context.newPage();
      await signIn(page, server, email);
      const token = await consoleToken(page);
      const accepted = await callApi(server, token, 'POST', `/organization/${organizationId}/inviteMember/${inviteId}`);
      expect(accepted.status, JSON.stringify(accepted.body)).toBeLessThan(300);
    } finally {
      await context.close();
    }
  }

  async function openSection(page: Page, name: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name }).click();
    await expect.poll(() => page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name }).getAttribute('aria-current')).toBe('page');
  }

  it('renames the organization, manages members, invitations, roles, API and git tokens, reads its audit log, sets its billing, and deletes it', { timeout: 300_000 }, async () => {
    const context = await newConsoleContext(browser, { clipboard: true });
    const page = await context.newPage();
    // Refusals provoked on purpose: an API token name taken (409), a credit code that does not exist (400).
    watchPage(page, problems, (url, status) => (status === 409 && /\/apiToken$/.test(url)) || (status === 400 && /\/creditCode$/.test(url)));
    try {
      await signIn(page, server, owner);
      await page.getByRole('heading', { name: 'Create your first organization' }).waitFor();
      await page.getByLabel('Organization name').fill('Acme Settings');
      await page.getByRole('button', { name: 'Create organization' }).click();
      await page.getByRole('heading', { level: 1, name: 'Acme Settings' }).waitFor();
      const organizationId = /\/organization\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;
      const token = await consoleToken(page);

      // General: from the main navigation; rename.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('heading', { level: 2, name: 'General' }).waitFor();
      expect(await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'General' }).getAttribute('aria-current')).toBe('page');
      const save = page.getByRole('button', { name: 'Save changes' });
      expect(await save.isDisabled()).toBe(true);
      await checkScreen(page, '50-settings-general');
      await page.getByLabel('Name').fill('Acme Labs');
      await page.getByLabel('Description (optional)').fill('Robots, mostly');
      await save.click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      await page.getByRole('heading', { level: 1, name: 'Acme Labs' }).waitFor();
      expect(await page.getByRole('button', { name: 'Organization: Acme Labs' }).count()).toBe(1);
      const stored = await callApi<{ name: string; description: string }>(server, token, 'GET', `/organization/${organizationId}`);
      expect(stored.body).toMatchObject({ name: 'Acme Labs', description: 'Robots, mostly' });

      // Members: the owner alone, no invitation yet.
      await openSection(page, 'Members');
      const members = page.getByRole('table', { name: 'Members' });
      await members.getByRole('row', { name: /Olive Owner/ }).waitFor();
      expect(await members.getByRole('row', { name: /Olive Owner/ }).textContent()).toContain('Owner');
      await page.getByRole('heading', { name: 'No pending invitations' }).waitFor();

      // Invite Dana as a developer: the mail reaches the SMTP server; the invitation is pending.
      await page.getByRole('button', { name: 'Invite member' }).click();
      const invite = page.getByRole('dialog', { name: 'Invite a member' });
      await invite.waitFor();
      expect(await invite.getByLabel('Role').locator('option:checked').textContent()).toBe('Developer');
      await checkScreen(page, '51-settings-invite-dialog');
      await invite.getByLabel('E-mail').fill(dana);
      await invite.getByRole('button', { name: 'Send invitation' }).click();
      await invite.waitFor({ state: 'detached' });
      const invitations = page.getByRole('table', { name: 'Invitations' });
      await invitations.getByRole('row', { name: new RegExp(dana) }).waitFor();
      expect(await invitations.getByRole('row', { name: new RegExp(dana) }).textContent()).toMatch(/Developer.*Pending/);
      await smtp.waitFor((mail) => mail.to.includes(dana) && mail.raw.includes('invited you'));
      await checkScreen(page, '52-settings-members-invited');

      // Resend: a new invitation (and mail) replaces the old one.
      const first = await callApi<{ results: { id: string; email: string }[] }>(server, token, 'GET', `/organization/${organizationId}/inviteMember`);
      const firstId = first.body.results.find((entry) => entry.email === dana)?.id as string;
      const mailsBefore = smtp.received.filter((mail) => mail.to.includes(dana)).length;
      await page.getByRole('button', { name: `Actions for the invitation of ${dana}` }).click();
      await page.getByRole('menu').waitFor();
      await checkScreen(page, '53-settings-invitation-menu');
      await page.getByRole('menuitem', { name: 'Resend' }).click();
      await page.getByRole('status').filter({ hasText: `A new invitation was sent to ${dana}.` }).waitFor();
      await expect.poll(() => smtp.received.filter((mail) => mail.to.includes(dana)).length).toBe(mailsBefore + 1);
      const second = await callApi<{ results: { id: string; email: string }[] }>(server, token, 'GET', `/organization/${organizationId}/inviteMember`);
      const secondId = second.body.results.find((entry) => entry.email === dana)?.id as string;
      expect(secondId).not.toBe(firstId);

      // Dana accepts; she appears as a developer.
      await accept(dana, organizationId, secondId);
      await page.reload();
      await members.getByRole('row', { name: /Dana Developer/ }).waitFor();
      expect(await members.getByRole('row', { name: /Dana Developer/ }).textContent()).toContain('Developer');
      await page.getByRole('heading', { name: 'No pending invitations' }).waitFor();

      // Invite Eli and revoke it; invite again, Eli accepts.
      await page.getByRole('button', { name: 'Invite member' }).click();
      await invite.getByLabel('E-mail').fill(eli);
      await invite.getByLabel('Role').selectOption({ label: 'Viewer' });
      await invite.getByRole('button', { name: 'Send invitation' }).click();
      await invite.waitFor({ state: 'detached' });
      await page.getByRole('button', { name: `Actions for the invitation of ${eli}` }).click();
      await page.getByRole('menuitem', { name: 'Revoke…' }).click();
      const revoke = page.getByRole('dialog', { name: `Revoke the invitation of ${eli}` });
      await revoke.waitFor();
      await checkScreen(page, '54-settings-revoke-invitation');
      await revoke.getByRole('button', { name: 'Revoke invitation' }).click();
      await revoke.waitFor({ state: 'detached' });
      await page.getByRole('heading', { name: 'No pending invitations' }).waitFor();
      await page.getByRole('button', { name: 'Invite member' }).click();
      await invite.getByLabel('E-mail').fill(eli);
      await invite.getByLabel('Role').selectOption({ label: 'Viewer' });
      await invite.getByRole('button', { name: 'Send invitation' }).click();
      await invite.waitFor({ state: 'detached' });
      const pending = await callApi<{ results: { id: string; email: string }[] }>(server, token, 'GET', `/organization/${organizationId}/inviteMember`);
      await accept(eli, organizationId, pending.body.results.find((entry) => entry.email === eli)?.id as string);
      await page.reload();
      await members.getByRole('row', { name: /Eli Extra/ }).waitFor();

      // The owner's row offers nothing (its role moves only by a transfer); change Dana's role to viewer.
      expect(await page.getByRole('button', { name: 'Actions for Olive Owner' }).count()).toBe(0);
      await page.getByRole('button', { name: 'Actions for Dana Developer' }).click();
      await page.getByRole('menu').waitFor();
      await page.getByRole('menuitem', { name: 'Change role…' }).click();
      const changeRole = page.getByRole('dialog', { name: 'Change the role of Dana Developer' });
      await changeRole.waitFor();
      await changeRole.getByLabel('Role').selectOption({ label: 'Viewer' });
      await checkScreen(page, '55-settings-change-role');
      await changeRole.getByRole('button', { name: 'Change role' }).click();
      await changeRole.waitFor({ state: 'detached' });
      await expect.poll(() => members.getByRole('row', { name: /Dana Developer/ }).textContent()).toContain('Viewer');

      // Remove Eli.
      await page.getByRole('button', { name: 'Actions for Eli Extra' }).click();
      await page.getByRole('menuitem', { name: 'Remove…' }).click();
      const remove = page.getByRole('dialog', { name: 'Remove Eli Extra' });
      await remove.waitFor();
      await remove.getByRole('button', { name: 'Remove member' }).click();
      await remove.waitFor({ state: 'detached' });
      await members.getByRole('row', { name: /Eli Extra/ }).waitFor({ state: 'detached' });
      await checkScreen(page, '56-settings-members');

      // Roles: built-in ones described, no custom role yet; create one with per environment type permissions.
      await openSection(page, 'Roles');
      await page.getByRole('heading', { name: 'No custom roles yet' }).waitFor();
      await checkScreen(page, '57-settings-roles-empty');
      await page.getByRole('button', { name: 'New custom role' }).click();
      const editor = page.getByRole('dialog', { name: 'New custom role' });
      await editor.waitFor();
      await editor.getByLabel('Name').fill('Release manager');
      await editor.getByLabel('Staging', { exact: true }).selectOption('DEPLOYER');
      await editor.getByLabel('Production', { exact: true }).selectOption('VIEWER');
      expect(await editor.getByLabel('Reveals secrets in development').isDisabled()).toBe(true);
      await editor.getByLabel('Reveals secrets in staging').check();
      await checkScreen(page, '58-settings-role-editor');
      await editor.getByRole('button', { name: 'Create role' }).click();
      await editor.waitFor({ state: 'detached' });
      const customRoles = page.getByRole('table', { name: 'Custom roles' });
      const releaseRow = customRoles.getByRole('row', { name: /Release manager/ });
      await releaseRow.waitFor();
      expect(await releaseRow.textContent()).toMatch(/Production: Viewer.*Staging: Deployer, reveals secrets.*Development: No access/);
      await checkScreen(page, '59-settings-roles');
      // Edit it: development becomes viewer.
      await page.getByRole('button', { name: 'Actions for Release manager' }).click();
      await page.getByRole('menuitem', { name: 'Edit…' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit Release manager' });
      await edit.waitFor();
      expect(await edit.getByLabel('Staging', { exact: true }).inputValue()).toBe('DEPLOYER');
      await edit.getByLabel('Development', { exact: true }).selectOption('VIEWER');
      await edit.getByRole('button', { name: 'Save role' }).click();
      await edit.waitFor({ state: 'detached' });
      await expect.poll(() => releaseRow.textContent()).toContain('Development: Viewer');
      // It is offered when inviting.
      await openSection(page, 'Members');
      await page.getByRole('button', { name: 'Invite member' }).click();
      expect(await invite.getByLabel('Role').locator('option').allTextContents()).toEqual(expect.arrayContaining(['Admin', 'Developer', 'Viewer', 'Release manager']));
      await page.keyboard.press('Escape');
      await invite.waitFor({ state: 'detached' });
      // Deleted, confirmed by its name.
      await openSection(page, 'Roles');
      await page.getByRole('button', { name: 'Actions for Release manager' }).click();
      await page.getByRole('menuitem', { name: 'Delete…' }).click();
      const deleteRole = page.getByRole('dialog', { name: 'Delete Release manager' });
      await deleteRole.getByLabel('Type Release manager to confirm').fill('Release manager');
      await deleteRole.getByRole('button', { name: 'Delete role' }).click();
      await deleteRole.waitFor({ state: 'detached' });
      await page.getByRole('heading', { name: 'No custom roles yet' }).waitFor();

      // API tokens: none; create one, shown once with a copy button; it works.
      await openSection(page, 'API tokens');
      await page.getByRole('heading', { name: 'No API tokens yet' }).waitFor();
      await checkScreen(page, '60-settings-api-tokens-empty');
      await page.getByRole('button', { name: 'New API token' }).click();
      const create = page.getByRole('dialog', { name: 'New API token' });
      await create.waitFor();
      await create.getByLabel('Name').fill('ci');
      await create.getByLabel('Scope').selectOption('DEPLOY');
      await checkScreen(page, '61-settings-new-api-token');
      await create.getByRole('button', { name: 'Create token' }).click();
      const created = page.getByRole('dialog', { name: 'API token ci created' });
      await created.waitFor();
      const value = await created.getByRole('textbox', { name: 'Token' }).inputValue();
      expect(value.length).toBeGreaterThan(20);
      await created.getByRole('button', { name: 'Copy the token' }).click();
      await created.getByRole('button', { name: 'Copy the token' }).filter({ hasText: 'Copied' }).waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(value);
      await checkScreen(page, '62-settings-api-token-created');
      expect((await callApi(server, value, 'GET', `/organization/${organizationId}`)).status).toBe(200);
      await created.getByRole('button', { name: 'Done' }).click();
      await created.waitFor({ state: 'detached' });
      const tokens = page.getByRole('table', { name: 'API tokens' });
      const ciRow = tokens.getByRole('row', { name: /^ci/ });
      await ciRow.waitFor();
      expect(await ciRow.textContent()).toMatch(/Developer.*DEPLOY/);
      // The value appears nowhere once the dialog is closed.
      expect(await page.content()).not.toContain(value);
      await checkScreen(page, '63-settings-api-tokens');

      // The same name again: the API's 409, in the dialog.
      await page.getByRole('button', { name: 'New API token' }).click();
      await create.getByLabel('Name').fill('ci');
      await create.getByRole('button', { name: 'Create token' }).click();
      await create.getByRole('alert').waitFor();
      expect(await create.getByRole('alert').textContent()).toMatch(/ci/);
      await page.keyboard.press('Escape');
      await create.waitFor({ state: 'detached' });

      // Delete it, confirmed by its name: a request with it is refused.
      await page.getByRole('button', { name: 'Delete ci' }).click();
      const deleteToken = page.getByRole('dialog', { name: 'Delete ci' });
      await deleteToken.waitFor();
      const confirmDelete = deleteToken.getByRole('button', { name: 'Delete token' });
      expect(await confirmDelete.isDisabled()).toBe(true);
      await deleteToken.getByLabel('Type ci to confirm').fill('ci');
      await confirmDelete.click();
      await deleteToken.waitFor({ state: 'detached' });
      await page.getByRole('heading', { name: 'No API tokens yet' }).waitFor();
      expect((await callApi(server, value, 'GET', `/organization/${organizationId}`)).status).toBe(401);

      // Git tokens: none; one created (its value never shown again), edited keeping its value, deleted.
      await openSection(page, 'Git tokens');
      await page.getByRole('heading', { name: 'No git tokens yet' }).waitFor();
      await page.getByRole('button', { name: 'New git token' }).click();
      const gitDialog = page.getByRole('dialog', { name: 'New git token' });
      await gitDialog.getByLabel('Name').fill('github-ci');
      await gitDialog.getByLabel('Git host').selectOption('GITLAB');
      await gitDialog.getByLabel('Token').fill('glpat-console-secret-value');
      await checkScreen(page, '74-settings-new-git-token');
      await gitDialog.getByRole('button', { name: 'Create git token' }).click();
      await gitDialog.waitFor({ state: 'detached' });
      const gitRow = page.getByRole('table', { name: 'Git tokens' }).getByRole('row', { name: /github-ci/ });
      await gitRow.waitFor();
      expect(await gitRow.textContent()).toMatch(/GitLab.*no service/);
      expect(await page.content()).not.toContain('glpat-console-secret-value');
      await checkScreen(page, '75-settings-git-tokens');
      await page.getByRole('button', { name: 'Actions for github-ci' }).click();
      await page.getByRole('menuitem', { name: 'Edit or replace…' }).click();
      const gitEdit = page.getByRole('dialog', { name: 'Edit github-ci' });
      expect(await gitEdit.getByLabel('New token value (optional)').inputValue()).toBe('');
      await gitEdit.getByLabel('Description (optional)').fill('CI reads');
      await gitEdit.getByRole('button', { name: 'Save' }).click();
      await gitEdit.waitFor({ state: 'detached' });
      await expect.poll(() => gitRow.textContent()).toContain('CI reads');
      await page.getByRole('button', { name: 'Actions for github-ci' }).click();
      await page.getByRole('menuitem', { name: 'Delete…' }).click();
      const gitDelete = page.getByRole('dialog', { name: 'Delete github-ci' });
      await gitDelete.getByLabel('Type github-ci to confirm').fill('github-ci');
      await gitDelete.getByRole('button', { name: 'Delete git token' }).click();
      await page.getByRole('heading', { name: 'No git tokens yet' }).waitFor();

      // Transfer ownership to Dana: typed confirmation; Dana owner, the former owner admin.
      await openSection(page, 'Members');
      await page.getByRole('button', { name: 'Actions for Dana Developer' }).click();
      await page.getByRole('menuitem', { name: 'Transfer ownership…' }).click();
      const transfer = page.getByRole('dialog', { name: 'Transfer ownership to Dana Developer' });
      await transfer.waitFor();
      const confirmTransfer = transfer.getByRole('button', { name: 'Transfer ownership' });
      expect(await confirmTransfer.isDisabled()).toBe(true);
      await transfer.getByLabel(`Type ${dana} to confirm`).fill(dana);
      await checkScreen(page, '64-settings-transfer-ownership');
      await confirmTransfer.click();
      await transfer.waitFor({ state: 'detached' });
      await expect.poll(() => members.getByRole('row', { name: /Dana Developer/ }).textContent()).toContain('Owner');
      expect(await members.getByRole('row', { name: /Olive Owner/ }).textContent()).toContain('Admin');

      // The audit log: everything above, newest first; filtered to the organization's updates, the rename with its change.
      await openSection(page, 'Audit log');
      const audit = page.getByRole('table', { name: 'Audit log' });
      await audit.getByRole('row').nth(1).waitFor();
      expect(await audit.getByRole('row').count()).toBeGreaterThan(10);
      expect(await audit.textContent()).toContain('Transfer ownership');
      await checkScreen(page, '72-settings-audit-log');
      await page.getByLabel('Target').selectOption('ORGANIZATION');
      await page.getByLabel('Action').selectOption('UPDATE');
      await page.getByLabel('Origin').selectOption('CONSOLE');
      // The rename, and the git token's edit (a sub-target of the organization).
      await expect.poll(() => audit.getByRole('row').count()).toBe(3);
      expect(await audit.locator('tbody tr').allTextContents()).toEqual([expect.stringMatching(/Update.*Git token github-ci/), expect.stringMatching(/Update.*Organization Acme Labs/)]);
      await audit.getByRole('row').filter({ hasText: 'Organization Acme Labs' }).getByRole('button', { name: /Details/ }).click();
      const change = audit.locator('pre');
      await change.waitFor();
      expect(await change.textContent()).toContain('"description": "Robots, mostly"');
      expect(await audit.getByRole('button', { name: /Hide/ }).getAttribute('aria-expanded')).toBe('true');
      await checkScreen(page, '73-settings-audit-log-entry');
      await page.getByLabel('Action').selectOption('LOCK');
      await page.getByRole('heading', { name: 'No events' }).waitFor();

      // Billing: the plan and its cost, a credit code (a wrong one refused at the form, the operator's accepted), a plan
      // change, the billing information saved, no invoice yet.
      await openSection(page, 'Billing');
      const plan = page.getByRole('region', { name: 'Plan and cost' });
      await plan.getByText('In good standing').waitFor();
      expect(await plan.locator('.plan-name').textContent()).toBe('Community');
      await page.getByRole('heading', { name: 'No invoices yet' }).waitFor();
      await checkScreen(page, '76-settings-billing');
      const credit = page.getByRole('region', { name: 'Credit code' });
      await credit.getByLabel('Code').fill('SLW-00000-00000-00000-00000-00000-00000');
      await credit.getByRole('button', { name: 'Redeem' }).click();
      await credit.getByRole('alert').waitFor();
      const issued = await server.operator(['admin', 'credit-code', 'create', '--amount', '25.00', '--expires', '2099-12-31', '--json']);
      expect(issued.code, issued.stderr).toBe(0);
      await credit.getByLabel('Code').fill((JSON.parse(issued.stdout) as { code: string }).code);
      await credit.getByRole('button', { name: 'Redeem' }).click();
      await credit.getByRole('status').filter({ hasText: 'Credit added.' }).waitFor();
      await plan.getByLabel('Change plan').selectOption('STARTUP');
      await plan.getByRole('button', { name: 'Change plan' }).click();
      await plan.getByRole('status').filter({ hasText: 'The plan is now Startup.' }).waitFor();
      await expect.poll(() => plan.locator('.plan-name').textContent()).toBe('Startup');
      expect(await plan.textContent()).toContain('trial: 14 days left');
      const info = page.getByRole('region', { name: 'Billing information' });
      await info.getByLabel('First name').fill('Olive');
      await info.getByLabel('Last name').fill('Owner');
      await info.getByLabel('Invoice e-mail').fill(owner);
      await info.getByLabel('Address').fill('1 Quay Street');
      await info.getByLabel('City').fill('Lyon');
      await info.getByLabel('Postcode').fill('69002');
      await info.getByLabel('Country code').fill('fr');
      await info.getByRole('button', { name: 'Save billing information' }).click();
      await info.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const billingInfo = await callApi<{ city: string; country_code: string }>(server, token, 'GET', `/organization/${organizationId}/billingInfo`);
      expect(billingInfo.body).toMatchObject({ city: 'Lyon', country_code: 'FR' });
      await checkScreen(page, '77-settings-billing-startup');

      // General: delete the organization, confirmed by its name; back to the first-organization page.
      await openSection(page, 'General');
      await page.getByRole('button', { name: 'Delete organization…' }).click();
      const deleteOrganization = page.getByRole('dialog', { name: 'Delete Acme Labs' });
      await deleteOrganization.waitFor();
      const confirmOrganization = deleteOrganization.getByRole('button', { name: 'Delete organization' });
      await deleteOrganization.getByLabel('Type Acme Labs to confirm').fill('Acme');
      expect(await confirmOrganization.isDisabled()).toBe(true);
      await deleteOrganization.getByLabel('Type Acme Labs to confirm').fill('Acme Labs');
      await checkScreen(page, '65-settings-delete-organization');
      await confirmOrganization.click();
      await page.getByRole('heading', { name: 'Create your first organization' }).waitFor();
      expect((await callApi(server, token, 'GET', `/organization/${organizationId}`)).status).toBe(404);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('creates a LOCAL cluster, follows its state and agent live, locks, edits and deletes it; checks container registries', { timeout: 240_000 }, async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    // Refusals provoked on purpose: a LOCAL cluster before the operator allows it (403); a deploy while locked (409).
    watchPage(page, problems, (url, status) => (status === 403 && /\/cluster$/.test(url)) || (status === 409 && /\/deploy$/.test(url)));
    try {
      await signIn(page, server, operatorOfClusters);
      await page.getByRole('heading', { name: 'Create your first organization' }).waitFor();
      await page.getByLabel('Organization name').fill('Acme Clusters');
      await page.getByRole('button', { name: 'Create organization' }).click();
      await page.getByRole('heading', { level: 1, name: 'Acme Clusters' }).waitFor();
      const organizationId = /\/organization\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;

      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Clusters' }).click();
      await page.getByRole('heading', { name: 'No clusters yet' }).waitFor();
      await checkScreen(page, '66-clusters-empty');

      // Without the operator's grant: the API's refusal, in the dialog, naming the command.
      await page.getByRole('button', { name: 'New cluster' }).click();
      const dialog = page.getByRole('dialog', { name: 'New cluster' });
      await dialog.waitFor();
      await dialog.getByLabel('Name').fill('edge');
      await checkScreen(page, '67-new-cluster-dialog');
      await dialog.getByRole('button', { name: 'Create cluster' }).click();
      await dialog.getByRole('alert').waitFor();
      expect(await dialog.getByRole('alert').textContent()).toMatch(/not allowed.*local-clusters allow/s);
      const allowed = await server.operator(['admin', 'local-clusters', 'allow', '--organization', organizationId]);
      expect(allowed.code, allowed.stderr).toBe(0);
      await dialog.getByLabel('Name').fill('edge ');
      await dialog.getByLabel('Name').fill('edge');
      await dialog.getByRole('button', { name: 'Create cluster' }).click();

      // Its page: the state turns DEPLOYED live; the agent is there.
      await page.getByRole('heading', { level: 1, name: 'edge' }).waitFor();
      const heading = page.locator('.page-heading');
      await heading.locator('.chip[data-state="DEPLOYED"]').waitFor({ timeout: 60_000 });
      const agent = page.getByRole('region', { name: 'Agent' });
      await agent.getByText('Connected').waitFor({ timeout: 30_000 });
      await checkScreen(page, '68-cluster');

      // Locked with a reason: a deploy is refused with it, shown where it was asked; unlocked, it deploys.
      await page.getByRole('button', { name: 'Lock…' }).click();
      const lock = page.getByRole('dialog', { name: 'Lock the cluster' });
      await lock.getByLabel('Reason').fill('Black Friday freeze');
      await lock.getByLabel('For').selectOption('7');
      await checkScreen(page, '69-cluster-lock-dialog');
      await lock.getByRole('button', { name: 'Lock cluster' }).click();
      await lock.waitFor({ state: 'detached' });
      const lockSection = page.getByRole('region', { name: 'Lock' });
      await lockSection.getByText('Black Friday freeze').waitFor();
      expect(await lockSection.textContent()).toContain('for 7 days');
      await page.getByRole('button', { name: 'Deploy', exact: true }).click();
      await page.getByRole('region', { name: 'Actions' }).getByRole('alert').waitFor();
      expect(await page.getByRole('region', { name: 'Actions' }).getByRole('alert').textContent()).toContain('Black Friday freeze');
      await checkScreen(page, '70-cluster-locked');
      await lockSection.getByRole('button', { name: 'Unlock' }).click();
      await lockSection.getByRole('button', { name: 'Lock…' }).waitFor();

      // Edit: renamed.
      await page.getByRole('button', { name: 'Edit…' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit edge' });
      await edit.getByLabel('Name').fill('edge-1');
      await edit.getByRole('button', { name: 'Save' }).click();
      await edit.waitFor({ state: 'detached' });
      await page.getByRole('heading', { level: 1, name: 'edge-1' }).waitFor();

      // The list: the cluster with its live state.
      await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Clusters', exact: true }).click();
      const row = page.getByRole('table', { name: 'Clusters' }).getByRole('row', { name: /edge-1/ });
      await row.locator('.chip[data-state="DEPLOYED"]').waitFor();
      expect(await row.textContent()).toContain('Local (this host)');
      await checkScreen(page, '71-clusters');

      // Deleted, confirmed by its name.
      await row.getByRole('link', { name: 'edge-1' }).click();
      await page.getByRole('button', { name: 'Delete cluster…' }).click();
      const remove = page.getByRole('dialog', { name: 'Delete edge-1' });
      const confirm = remove.getByRole('button', { name: 'Delete cluster' });
      expect(await confirm.isDisabled()).toBe(true);
      await remove.getByLabel('Type edge-1 to confirm').fill('edge-1');
      await confirm.click();
      await page.getByRole('heading', { level: 1, name: 'Clusters' }).waitFor();
      const token = await consoleToken(page);
      await expect
        .poll(async () => (await callApi<{ results: { name: string }[] }>(server, token, 'GET', `/organization/${organizationId}/cluster`)).body.results.length, { timeout: 60_000 })
        .toBe(0);

      // Container registries: one with a wrong password (its check says access is refused), one right (connected).
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
      await openSection(page, 'Container registries');
      await page.getByRole('heading', { name: 'No container registries yet' }).waitFor();
      for (const [name, password] of [
        ['wrong', 'not-the-password'],
        ['shop-registry', 'registry-secret'],
      ] as const) {
        await page.getByRole('button', { name: 'New registry' }).click();
        const add = page.getByRole('dialog', { name: 'New container registry' });
        await add.getByLabel('Name', { exact: true }).fill(name);
        await add.getByLabel('URL').fill(registry.url);
        await add.getByLabel('User name (optional)').fill('robot');
        await add.getByLabel('Password or token (optional)').fill(password);
        if (name === 'wrong') await checkScreen(page, '78-settings-new-registry');
        await add.getByRole('button', { name: 'Add registry' }).click();
        await add.waitFor({ state: 'detached' });
      }
      const registries = page.getByRole('table', { name: 'Container registries' });
      await registries.getByRole('button', { name: 'Check wrong' }).click();
      await registries.getByRole('row', { name: /wrong/ }).getByText('Access refused').waitFor();
      await registries.getByRole('button', { name: 'Check shop-registry' }).click();
      await registries.getByRole('row', { name: /shop-registry/ }).getByText('Connected').waitFor();
      expect(await page.content()).not.toContain('registry-secret');
      await checkScreen(page, '79-settings-registries');
      await page.getByRole('button', { name: 'Delete wrong' }).click();
      const dropRegistry = page.getByRole('dialog', { name: 'Delete wrong' });
      await dropRegistry.getByLabel('Type wrong to confirm').fill('wrong');
      await dropRegistry.getByRole('button', { name: 'Delete registry' }).click();
      await registries.getByRole('row', { name: /wrong/ }).waitFor({ state: 'detached' });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
