import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { checkScreen, type ConsoleWorld, createFirstOrganization, localCluster, newConsoleContext, SCREENSHOTS, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { type SlipwayServer } from './support/slipway-process.ts';
import { type TestSmtpServer } from './support/smtp-server.ts';
import { startWebhookReceiver, type TestWebhookReceiver } from './support/webhook-receiver.ts';

/**
 * Alerts, the person's account and the organization's extras (issue 22) in a real browser against the real server
 * (SQLite): an e-mail alert receiver refused by its test message (a closed port), then tested on a real SMTP server and
 * created; a test message sent again from the list; a rule on a container using it, edited, its history read, then
 * deleted with the receiver; the account's communication e-mail changed and read back from the API; the audit log
 * filtered by one target; a webhook's deployment events; the billing customer id; the installation's egress addresses
 * and root certificate; the organization's services and its onboarding checklist, dismissed. axe and photographs
 * `320-…` on each new screen and dialog.
 */
describe('web console: alerts, account and organization extras [sqlite]', () => {
  let world: ConsoleWorld;
  let smtp: TestSmtpServer;
  let server: SlipwayServer;
  let browser: Browser;
  let receiver: TestWebhookReceiver;
  const owner = `console-alerts-${process.pid}@example.com`;
  const problems: string[] = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    world = await startConsoleWorld('sqlite', { email: owner, name: 'Robin Alerts' }, {
      // The alert receiver's SMTP server and the webhook receiver are on loopback.
      SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
      SLIPWAY_EGRESS_IPS: '203.0.113.7, 2001:db8::7',
    });
    ({ server, browser, smtp } = world);
  }, 120_000);

  afterAll(async () => {
    await world?.close();
    await receiver?.close();
  }, 60_000);

  async function openSection(page: Page, name: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name, exact: true }).click();
    await expect.poll(() => page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name, exact: true }).getAttribute('aria-current')).toBe('page');
  }

  it('manages alert receivers and rules, the account, and the organization’s extras', { timeout: 180_000 }, async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    // The installation has no certificate authority of its own (it serves no HTTPS): the download's 404 is its answer.
    watchPage(page, problems, (url, status) => status === 404 && url.endsWith('/certificateAuthority'));
    try {
      await signIn(page, server, owner);
      const { organizationId, made } = await createFirstOrganization(page, server, 'Acme Alerts');
      const cluster = await localCluster(server, organizationId, made);
      const project = await made<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
      await made('POST', `/organization/${organizationId}/project`, { name: 'blog' });
      const environment = await made<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
      const registry = await made<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, { name: 'hub', kind: 'DOCKER_HUB', url: 'https://docker.io' });
      const container = await made<{ id: string }>('POST', `/environment/${environment.id}/container`, {
        name: 'proxy',
        registry_id: registry.id,
        image_name: 'nginx',
        tag: '1.27',
        ports: [{ internal_port: 80, publicly_accessible: false, protocol: 'HTTP' }],
        healthchecks: {},
      });

      // The organization's page: the onboarding checklist (cluster, project and service done, no teammate yet) and
      // every service of the organization, narrowed by project.
      await page.reload();
      const onboarding = page.getByRole('region', { name: 'Get started' });
      await onboarding.getByText('3 of 4 done').waitFor();
      const services = page.getByRole('table', { name: 'All services' });
      await services.getByRole('row', { name: /proxy/ }).waitFor();
      expect(await services.getByRole('row', { name: /proxy/ }).textContent()).toMatch(/proxy.*Container.*shop › staging/);
      await checkScreen(page, '320-organization-services-onboarding');
      await page.getByLabel('Project', { exact: true }).selectOption({ label: 'blog' });
      await page.getByText('No service matches these filters.').waitFor();
      await page.getByLabel('Project', { exact: true }).selectOption({ label: 'shop' });
      await services.getByRole('link', { name: 'proxy' }).waitFor();
      await onboarding.getByRole('button', { name: 'Hide the checklist' }).click();
      await onboarding.waitFor({ state: 'detached' });
      expect((await made<{ status: string }>('GET', `/organization/${organizationId}/onboarding`)).status).toBe('DISMISSED');
      await checkScreen(page, '320-organization-all-services');
      // The section whole (below the projects, out of the window's photograph).
      for (const width of [390, 1280]) {
        await page.setViewportSize({ width, height: 844 });
        await page.getByRole('region', { name: 'All services' }).screenshot({ path: path.join(SCREENSHOTS, `320-organization-all-services-section-${width}.png`) });
      }

      // The audit log filtered to one target: the project shop (its creation), among the targets the log names.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
      await openSection(page, 'Audit log');
      const audit = page.getByRole('table', { name: 'Audit log' });
      await audit.getByRole('row').nth(1).waitFor();
      await page.getByLabel('Target', { exact: true }).selectOption('PROJECT');
      const names = page.getByLabel('Name', { exact: true });
      await expect.poll(async () => (await names.locator('option').allTextContents()).sort()).toEqual(['Any project', 'blog', 'shop']);
      await names.selectOption({ label: 'shop' });
      const shopEvents = await made<{ events: unknown[] }>('GET', `/organization/${organizationId}/events?targetId=${project.id}`);
      await expect.poll(() => audit.locator('tbody tr').allTextContents()).toEqual(shopEvents.events.map(() => expect.stringMatching(/Project shop/)));
      expect(shopEvents.events.length).toBeGreaterThan(0);
      await checkScreen(page, '320-settings-audit-log-target');

      // A webhook's deployment events: a deployment of the container queued then cancelled (no agent takes it) is
      // sent to the receiver; the dialog lists it with the receiver's answer and the body sent.
      const webhook = await made<{ id: string }>('POST', `/organization/${organizationId}/webhook`, { kind: 'STANDARD', target_url: receiver.url, events: ['DEPLOYMENT_STARTED', 'DEPLOYMENT_CANCELLED'], enabled: true });
      await made('POST', `/container/${container.id}/deploy`, {});
      await made('POST', `/container/${container.id}/cancelDeployment`);
      await expect.poll(async () => (await made<{ results: unknown[] }>('GET', `/organization/${organizationId}/webhook/${webhook.id}/event`)).results.length, { timeout: 20_000 }).toBeGreaterThan(0);
      await openSection(page, 'Webhooks');
      const webhookName = receiver.url.replace('http://', '');
      await page.getByRole('button', { name: `Actions for ${webhookName}` }).click();
      await page.getByRole('menuitem', { name: 'Deployment events…' }).click();
      const events = page.getByRole('dialog', { name: `Deployment events sent to ${webhookName}` });
      const sentEvents = events.getByRole('table', { name: 'Deployment events' });
      await sentEvents.getByRole('row', { name: /Deployment cancelled/ }).waitFor();
      expect(await sentEvents.getByRole('row', { name: /Deployment cancelled/ }).textContent()).toMatch(/HTTP 200/);
      await sentEvents.getByRole('button', { name: 'Body of Deployment cancelled' }).click();
      expect(await events.locator('pre').textContent()).toContain(container.id);
      await checkScreen(page, '320-webhook-deployment-events');
      await events.getByRole('button', { name: 'Close' }).click();

      // Billing: the customer id the API answers.
      const customer = await made<{ id: string }>('GET', `/organization/${organizationId}/billingExternalId`);
      expect(customer.id).toMatch(/^cus_[0-9a-f]{24}$/);
      await openSection(page, 'Billing');
      await page.getByText(customer.id).waitFor();

      // General: the installation's egress addresses, and its root certificate (none: the API's 404 said in words).
      await openSection(page, 'General');
      const installation = page.getByRole('region', { name: 'Installation' });
      expect(await installation.getByRole('list', { name: 'Outbound IP addresses' }).getByRole('listitem').allTextContents()).toEqual(['203.0.113.7', '2001:db8::7']);
      await installation.getByRole('button', { name: 'Download the root certificate (PEM)' }).click();
      await installation.getByText(/Nothing to download: this installation has no certificate authority of its own/).waitFor();
      await checkScreen(page, '320-settings-general-installation');

      // The account, from the top bar: profile, and the communication e-mail changed and read back from the API.
      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByRole('heading', { level: 1 }).filter({ hasText: /Robin|account/ }).waitFor();
      const email = page.getByLabel('E-mail for messages from Slipway');
      await expect.poll(() => email.inputValue()).toBe(owner);
      await checkScreen(page, '320-account');
      await email.fill('robin.oncall@example.com');
      await page.getByRole('button', { name: 'Save e-mail' }).click();
      await page.getByRole('status').getByText('Saved.').waitFor();
      expect((await made<{ communication_email: string }>('GET', '/account')).communication_email).toBe('robin.oncall@example.com');
      await page.reload();
      await expect.poll(() => page.getByLabel('E-mail for messages from Slipway').inputValue()).toBe('robin.oncall@example.com');
      await checkScreen(page, '320-account-saved');

      // Alerts: empty; a receiver whose test message is refused (nothing listens on port 1), offered "Create anyway";
      // then the real SMTP server: tested, delivered, created.
      await page.goto(`${server.baseUrl}/console/organization/${organizationId}/settings/alerts`);
      await page.getByRole('heading', { name: 'Alert receivers' }).waitFor();
      await page.getByRole('heading', { name: 'No receivers yet' }).waitFor();
      await checkScreen(page, '320-settings-alerts-empty');
      await page.getByRole('button', { name: 'New receiver' }).click();
      const newReceiver = page.getByRole('dialog', { name: 'New alert receiver' });
      await newReceiver.getByLabel('Name', { exact: true }).fill('on-call mail');
      await newReceiver.getByLabel('To', { exact: true }).fill('oncall@example.com');
      await newReceiver.getByLabel('From', { exact: true }).fill('alerts@example.com');
      await newReceiver.getByLabel('SMTP server').fill('127.0.0.1:1');
      await newReceiver.getByRole('button', { name: 'Test and create' }).click();
      await newReceiver.getByText(/The test message was not delivered/).waitFor();
      await newReceiver.getByRole('button', { name: 'Create anyway' }).waitFor();
      expect((await made<{ results: unknown[] }>('GET', `/organization/${organizationId}/alert-receivers`)).results).toEqual([]);
      await checkScreen(page, '320-new-alert-receiver-undelivered');
      await newReceiver.getByLabel('SMTP server').fill(new URL(smtp.url).host);
      await newReceiver.getByRole('button', { name: 'Test and create' }).click();
      // Closed once created; a refusal shown in the dialog instead fails here with its words.
      await expect
        .poll(async () => ((await newReceiver.count()) === 0 ? 'closed' : (await newReceiver.getByRole('alert').allTextContents()).join(' ') || 'open'), { timeout: 15_000 })
        .toBe('closed');
      await smtp.waitFor((mail) => mail.to.includes('oncall@example.com'));
      const receivers = page.getByRole('table', { name: 'Alert receivers' });
      await receivers.getByRole('row', { name: /on-call mail/ }).waitFor();
      expect(await receivers.getByRole('row', { name: /on-call mail/ }).textContent()).toMatch(/E-mail to oncall@example\.com via 127\.0\.0\.1:\d+.*Told when resolved/);
      // A test message of the stored receiver, from its row.
      const mailsBefore = smtp.received.filter((mail) => mail.to.includes('oncall@example.com')).length;
      await receivers.getByRole('button', { name: 'Send test to on-call mail' }).click();
      await expect.poll(() => receivers.getByRole('row', { name: /on-call mail/ }).textContent()).toMatch(/Delivered/);
      await expect.poll(() => smtp.received.filter((mail) => mail.to.includes('oncall@example.com')).length).toBe(mailsBefore + 1);
      const [storedReceiver] = (await made<{ results: { id: string; name: string }[] }>('GET', `/organization/${organizationId}/alert-receivers`)).results;

      // A rule on the container's failed deployments, telling the receiver.
      await page.getByRole('button', { name: 'New rule' }).click();
      const newRule = page.getByRole('dialog', { name: 'New alert rule' });
      await newRule.getByLabel('Name', { exact: true }).fill('proxy deploy failed');
      await newRule.getByLabel('Service', { exact: true }).selectOption({ label: 'shop › staging › proxy (container)' });
      await newRule.getByLabel('For at least').fill('2');
      await newRule.getByLabel('Summary (optional)').fill('The proxy failed to deploy');
      expect(await newRule.getByRole('checkbox', { name: /on-call mail/ }).isChecked()).toBe(true);
      await checkScreen(page, '320-new-alert-rule');
      await newRule.getByRole('button', { name: 'Create rule' }).click();
      await newRule.waitFor({ state: 'detached' });
      const rules = page.getByRole('table', { name: 'Alert rules' });
      await rules.getByRole('row', { name: /proxy deploy failed/ }).waitFor();
      expect(await rules.getByRole('row', { name: /proxy deploy failed/ }).textContent()).toMatch(/Container shop › staging › proxy.*The last deployment failed, for 2 minutes.*High severity.*(Not evaluated yet|OK).*on-call mail/);
      const [createdRule] = (await made<{ results: { id: string; cluster_id: string; target: unknown; alert_receiver_ids: string[]; for_duration: string; condition: unknown }[] }>('GET', `/organization/${organizationId}/alert-rules`)).results;
      expect(createdRule).toMatchObject({
        cluster_id: cluster.id,
        target: { target_type: 'CONTAINER', target_id: container.id },
        alert_receiver_ids: [storedReceiver?.id],
        for_duration: 'PT2M',
        condition: { kind: 'BUILT', promql: 'deployment_failed' },
      });

      // Edited: ten minutes, critical; read back from the API.
      await page.getByRole('button', { name: 'Actions for proxy deploy failed' }).click();
      await page.getByRole('menuitem', { name: 'Edit…' }).click();
      const editRule = page.getByRole('dialog', { name: 'Edit proxy deploy failed' });
      await editRule.getByLabel('For at least').fill('10');
      await editRule.getByLabel('Severity', { exact: true }).selectOption('CRITICAL');
      await editRule.getByRole('button', { name: 'Save' }).click();
      await editRule.waitFor({ state: 'detached' });
      await rules.getByRole('row', { name: /for 10 minutes.*Critical severity/ }).waitFor();
      expect(await made<{ for_duration: string; severity: string }>('GET', `/alert-rules/${createdRule?.id}`)).toMatchObject({ for_duration: 'PT10M', severity: 'CRITICAL' });
      await rules.getByRole('button', { name: 'History of proxy deploy failed' }).click();
      const history = page.getByRole('dialog', { name: 'History of proxy deploy failed' });
      await history.getByText('It has not fired.').waitFor();
      await checkScreen(page, '320-alert-rule-history');
      await history.getByRole('button', { name: 'Close' }).click();

      // The receiver edited: renamed, its password left as it is (none).
      await page.getByRole('button', { name: 'Actions for on-call mail' }).click();
      await page.getByRole('menuitem', { name: 'Edit…' }).click();
      const editReceiver = page.getByRole('dialog', { name: 'Edit on-call mail' });
      await editReceiver.getByLabel('Name', { exact: true }).fill('on-call mailbox');
      await checkScreen(page, '320-edit-alert-receiver');
      await editReceiver.getByRole('button', { name: 'Save' }).click();
      await editReceiver.waitFor({ state: 'detached' });
      await rules.getByRole('row', { name: /on-call mailbox/ }).waitFor();
      expect(await made<{ name: string; auth_password_set: boolean }>('GET', `/alert-receivers/${storedReceiver?.id}`)).toMatchObject({ name: 'on-call mailbox', auth_password_set: false });
      await checkScreen(page, '320-settings-alerts');

      // Deleted by their typed names: the rule, then the receiver.
      await page.getByRole('button', { name: 'Actions for proxy deploy failed' }).click();
      await page.getByRole('menuitem', { name: 'Delete…' }).click();
      const deleteRule = page.getByRole('dialog', { name: 'Delete proxy deploy failed' });
      await deleteRule.getByLabel('Type proxy deploy failed to confirm').fill('proxy deploy failed');
      await deleteRule.getByRole('button', { name: 'Delete rule' }).click();
      await page.getByRole('heading', { name: 'No rules yet' }).waitFor();
      await page.getByRole('button', { name: 'Actions for on-call mailbox' }).click();
      await page.getByRole('menuitem', { name: 'Delete…' }).click();
      const deleteReceiver = page.getByRole('dialog', { name: 'Delete on-call mailbox' });
      await deleteReceiver.getByLabel('Type on-call mailbox to confirm').fill('on-call mailbox');
      await deleteReceiver.getByRole('button', { name: 'Delete receiver' }).click();
      await page.getByRole('heading', { name: 'No receivers yet' }).waitFor();
      expect((await made<{ results: unknown[] }>('GET', `/organization/${organizationId}/alert-rules`)).results).toEqual([]);
      expect((await made<{ results: unknown[] }>('GET', `/organization/${organizationId}/alert-receivers`)).results).toEqual([]);

    } finally {
      await context.close();
    }
    expect(problems).toEqual([]);
  });
});
