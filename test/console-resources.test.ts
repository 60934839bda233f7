import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { callApi, checkScreen, consoleToken, type ConsoleWorld, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { type SlipwayServer } from './support/slipway-process.ts';
import { startWebhookReceiver, type TestWebhookReceiver } from './support/webhook-receiver.ts';

/**
 * The organization's resources in the settings (docs/console.md, "Tests (test/console-resources.test.ts)"), in a real
 * browser against the real server: a webhook (the server's refusal of a URL at its field, the generated secret shown
 * once and never again, a delivery to a real receiver after an event, a redelivery), a Helm repository (created, its
 * connection checked, edited, deleted by its name) and a labels group and an annotations group (key/value rows, the
 * server's message at the row's key, edited, deleted by name). axe on every screen and dialog; photographs `80-…` to
 * `89-…`.
 */
for (const dialect of TEST_DIALECTS) {
  describe(`web console: webhooks, Helm repositories, labels and annotations [${dialect}]`, () => {
    let world: ConsoleWorld;
    let server: SlipwayServer;
    let browser: Browser;
    let receiver: TestWebhookReceiver;
    const owner = `console-resources-${dialect}-${process.pid}@example.com`;
    const problems: string[] = [];

    beforeAll(async () => {
      receiver = await startWebhookReceiver();
      world = await startConsoleWorld(dialect, { email: owner, name: 'Rita Resources' }, {
        // The webhook receiver and the Helm repository are on loopback, over plain http.
        SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
      });
      ({ server, browser } = world);
    }, 120_000);

    afterAll(async () => {
      await world?.close();
      await receiver?.close();
    }, 60_000);

    async function openSection(page: Page, name: string): Promise<void> {
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name }).click();
      await expect.poll(() => page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name }).getAttribute('aria-current')).toBe('page');
    }

    it('creates a webhook that receives and redelivers an event, manages a Helm repository, a labels group and an annotations group', { timeout: 300_000 }, async () => {
      const context = await newConsoleContext(browser);
      const page = await context.newPage();
      // Refusals provoked on purpose: a webhook URL that is not http(s), a label key Kubernetes refuses.
      watchPage(page, problems, (url, status) => status === 400 && (/\/webhook$/.test(url) || /\/labelsGroups$/.test(url)));
      try {
        await signIn(page, server, owner);
        await page.getByLabel('Organization name').fill('Acme Resources');
        await page.getByRole('button', { name: 'Create organization' }).click();
        await page.getByRole('heading', { level: 1, name: 'Acme Resources' }).waitFor();
        const organizationId = /\/organization\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;
        const token = await consoleToken(page);
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();

        // Webhooks: empty; a URL the server refuses (its message at the field); then the receiver's URL.
        await openSection(page, 'Webhooks');
        await page.getByRole('heading', { name: 'No webhooks yet' }).waitFor();
        await checkScreen(page, '80-settings-webhooks-empty');
        await page.getByRole('button', { name: 'New webhook' }).click();
        const create = page.getByRole('dialog', { name: 'New webhook' });
        await create.getByLabel('URL').fill('ftp://hooks.example.com/slipway');
        await create.getByLabel('Deployment successful').uncheck();
        await create.getByLabel('Deployment failed').uncheck();
        await create.getByLabel('Organization event').check();
        await create.getByRole('button', { name: 'Create webhook' }).click();
        const url = create.getByLabel('URL');
        await expect.poll(() => url.getAttribute('aria-invalid')).toBe('true');
        expect(await create.getByRole('alert').textContent()).toMatch(/target_url/);
        await checkScreen(page, '81-settings-new-webhook');
        await url.fill(receiver.url);
        await create.getByLabel('Description (optional)').fill('audit to chat');
        await create.getByRole('button', { name: 'Create webhook' }).click();
        // The generated secret: shown once, copied from here only.
        const created = page.getByRole('dialog', { name: 'Webhook created' });
        await created.waitFor();
        const secret = await created.getByRole('textbox', { name: 'Signing secret' }).inputValue();
        expect(secret).toMatch(/^whsec_/);
        await checkScreen(page, '82-settings-webhook-secret');
        await created.getByRole('button', { name: 'Done' }).click();
        await created.waitFor({ state: 'detached' });
        const webhooks = page.getByRole('table', { name: 'Webhooks' });
        const webhookName = receiver.url.replace('http://', '');
        await webhooks.getByRole('row', { name: new RegExp(webhookName) }).waitFor();
        expect(await webhooks.getByRole('row', { name: new RegExp(webhookName) }).textContent()).toMatch(/secret set.*Organization event.*Enabled/);
        expect(await page.content()).not.toContain(secret);

        // Helm repositories: empty; one created (an organization event: the webhook hears it), checked, edited.
        await openSection(page, 'Helm repositories');
        await page.getByRole('heading', { name: 'No Helm repositories yet' }).waitFor();
        await checkScreen(page, '83-settings-helm-empty');
        await page.getByRole('button', { name: 'New Helm repository' }).click();
        const newRepository = page.getByRole('dialog', { name: 'New Helm repository' });
        await newRepository.getByLabel('Name', { exact: true }).fill('charts');
        await newRepository.getByLabel('URL').fill('http://127.0.0.1:9/charts');
        await newRepository.getByLabel('User name (optional)').fill('robot');
        await newRepository.getByLabel('Password or token (optional)').fill('helm-secret-value');
        await checkScreen(page, '84-settings-new-helm-repository');
        await newRepository.getByRole('button', { name: 'Add Helm repository' }).click();
        await newRepository.waitFor({ state: 'detached' });
        const repositories = page.getByRole('table', { name: 'Helm repositories' });
        await repositories.getByRole('row', { name: /charts/ }).waitFor();
        expect(await repositories.getByRole('row', { name: /charts/ }).textContent()).toMatch(/0 services.*HTTPS chart repository.*as robot/);
        await repositories.getByRole('button', { name: 'Check charts' }).click();
        await repositories.getByRole('row', { name: /charts/ }).getByText('Unreachable').waitFor();
        expect(await page.content()).not.toContain('helm-secret-value');
        await checkScreen(page, '85-settings-helm-repositories');
        await page.getByRole('button', { name: 'Actions for charts' }).click();
        await page.getByRole('menuitem', { name: 'Edit…' }).click();
        const editRepository = page.getByRole('dialog', { name: 'Edit charts' });
        await editRepository.getByLabel('Name', { exact: true }).fill('stable-charts');
        await editRepository.getByLabel('Description (optional)').fill('the stable ones');
        await editRepository.getByRole('button', { name: 'Save' }).click();
        await editRepository.waitFor({ state: 'detached' });
        await repositories.getByRole('row', { name: /stable-charts/ }).waitFor();
        const stored = await callApi<{ results: { name: string; description: string; config: { username?: string } }[] }>(server, token, 'GET', `/organization/${organizationId}/helmRepository`);
        // The password was left empty at the edit: the stored one is kept (the user name is still there).
        expect(stored.body.results).toMatchObject([{ name: 'stable-charts', description: 'the stable ones', config: { username: 'robot' } }]);

        // The webhook's delivery log: the repository's creation was delivered; redelivered, the receiver gets it again.
        await receiver.waitForCount(1, 30_000);
        await openSection(page, 'Webhooks');
        await page.getByRole('button', { name: `Deliveries of ${webhookName}` }).click();
        const deliveries = page.getByRole('dialog', { name: `Deliveries to ${webhookName}` });
        const log = deliveries.getByRole('table', { name: 'Deliveries' });
        await log.getByRole('row', { name: /Organization event/ }).first().waitFor();
        expect(await log.getByRole('row', { name: /Organization event/ }).first().textContent()).toMatch(/Delivered.*HTTP 200/);
        await checkScreen(page, '86-settings-webhook-deliveries');
        const before = receiver.received.length;
        await log.getByRole('button', { name: /^Redeliver/ }).last().click();
        await deliveries.getByText('Queued: it appears here once sent.').waitFor();
        // The same message again (its webhook-id), beside whatever new events (the redelivery is audited too) arrive.
        const earlierIds = new Set(receiver.received.slice(0, before).map((delivery) => delivery.headers['webhook-id']));
        await expect.poll(() => receiver.received.slice(before).some((delivery) => earlierIds.has(delivery.headers['webhook-id'])), { timeout: 30_000 }).toBe(true);
        await expect.poll(async () => {
          await deliveries.getByRole('button', { name: 'Refresh' }).click();
          return log.getByText('redelivery').count();
        }, { timeout: 30_000 }).toBeGreaterThan(0);
        await deliveries.getByRole('button', { name: 'Close' }).click();

        // Edited: the deployment events added, the secret kept.
        await page.getByRole('button', { name: `Actions for ${webhookName}` }).click();
        await page.getByRole('menuitem', { name: 'Edit…' }).click();
        const editWebhook = page.getByRole('dialog', { name: `Edit ${webhookName}` });
        expect(await editWebhook.getByLabel('New signing secret (optional)').inputValue()).toBe('');
        await editWebhook.getByLabel('Deployment failed').check();
        await editWebhook.getByLabel('Production').check();
        await editWebhook.getByRole('button', { name: 'Save' }).click();
        await editWebhook.waitFor({ state: 'detached' });
        const webhook = await callApi<{ results: { events: string[]; environment_types_filter: string[]; target_secret_set: boolean }[] }>(server, token, 'GET', `/organization/${organizationId}/webhook`);
        expect(webhook.body.results).toMatchObject([{ events: ['DEPLOYMENT_FAILURE', 'ORGANIZATION_EVENT'], environment_types_filter: ['PRODUCTION'], target_secret_set: true }]);

        // Labels: a key Kubernetes refuses (the server's message at that row's key), fixed, a second row propagated.
        await openSection(page, 'Labels and annotations');
        await page.getByRole('heading', { name: 'No labels groups yet' }).waitFor();
        await page.getByRole('heading', { name: 'No annotations groups yet' }).waitFor();
        await checkScreen(page, '87-settings-labels-annotations-empty');
        await page.getByRole('button', { name: 'New labels group' }).click();
        const newLabels = page.getByRole('dialog', { name: 'New labels group' });
        await newLabels.getByLabel('Name', { exact: true }).fill('team-labels');
        await newLabels.getByLabel('Key 1').fill('bad key!');
        await newLabels.getByLabel('Value 1').fill('shop');
        await newLabels.getByRole('button', { name: 'Create labels group' }).click();
        await expect.poll(() => newLabels.getByLabel('Key 1').getAttribute('aria-invalid')).toBe('true');
        await checkScreen(page, '88-settings-new-labels-group');
        await newLabels.getByLabel('Key 1').fill('team');
        await newLabels.getByRole('button', { name: 'Add a row' }).click();
        await newLabels.getByLabel('Key 2').fill('cost-centre');
        await newLabels.getByLabel('Value 2').fill('cc-42');
        await newLabels.getByLabel("Also on the cloud provider's resources (row 2)").check();
        await newLabels.getByRole('button', { name: 'Create labels group' }).click();
        await newLabels.waitFor({ state: 'detached' });
        const labels = page.getByRole('table', { name: 'Labels groups' });
        await labels.getByRole('row', { name: /team-labels/ }).waitFor();
        expect(await labels.getByRole('row', { name: /team-labels/ }).textContent()).toMatch(/team=shop.*cost-centre=cc-42.*cloud provider too/);

        // Edited: the first row removed, renamed.
        await page.getByRole('button', { name: 'Actions for team-labels' }).click();
        await page.getByRole('menuitem', { name: 'Edit…' }).click();
        const editLabels = page.getByRole('dialog', { name: 'Edit team-labels' });
        await editLabels.getByRole('button', { name: 'Remove row 1' }).click();
        await editLabels.getByLabel('Name', { exact: true }).fill('cost-labels');
        await editLabels.getByRole('button', { name: 'Save' }).click();
        await editLabels.waitFor({ state: 'detached' });
        await labels.getByRole('row', { name: /cost-labels/ }).waitFor();
        const group = await callApi<{ results: { name: string; labels: unknown[] }[] }>(server, token, 'GET', `/organization/${organizationId}/labelsGroups`);
        expect(group.body.results).toEqual([expect.objectContaining({ name: 'cost-labels', labels: [{ key: 'cost-centre', value: 'cc-42', propagate_to_cloud_provider: true }] })]);

        // An annotations group, applied to ingresses only.
        await page.getByRole('button', { name: 'New annotations group' }).click();
        const newAnnotations = page.getByRole('dialog', { name: 'New annotations group' });
        await newAnnotations.getByLabel('Name', { exact: true }).fill('ingress-tuning');
        await newAnnotations.getByLabel('Key 1').fill('nginx.ingress.kubernetes.io/proxy-body-size');
        await newAnnotations.getByLabel('Value 1').fill('64m');
        await newAnnotations.getByLabel('Deployments').uncheck();
        await newAnnotations.getByLabel('Stateful sets').uncheck();
        await newAnnotations.getByLabel('Ingresses').check();
        await checkScreen(page, '89-settings-new-annotations-group');
        await newAnnotations.getByRole('button', { name: 'Create annotations group' }).click();
        await newAnnotations.waitFor({ state: 'detached' });
        const annotations = page.getByRole('table', { name: 'Annotations groups' });
        await annotations.getByRole('row', { name: /ingress-tuning/ }).waitFor();
        expect(await annotations.getByRole('row', { name: /ingress-tuning/ }).textContent()).toMatch(/proxy-body-size=64m.*Ingresses/);
        await checkScreen(page, '90-settings-labels-annotations');

        // Where used: nowhere yet. Deleted by their names; the Helm repository and the webhook too.
        await page.getByRole('button', { name: 'Actions for cost-labels' }).click();
        await page.getByRole('menuitem', { name: 'Where it is used…' }).click();
        const usedBy = page.getByRole('dialog', { name: 'Where cost-labels is used' });
        await usedBy.getByText('No cluster or service uses it.').waitFor();
        await checkScreen(page, '91-settings-labels-used-by');
        await usedBy.getByRole('button', { name: 'Close' }).click();
        for (const [name, table] of [
          ['cost-labels', labels],
          ['ingress-tuning', annotations],
        ] as const) {
          await page.getByRole('button', { name: `Actions for ${name}` }).click();
          await page.getByRole('menuitem', { name: 'Delete…' }).click();
          const remove = page.getByRole('dialog', { name: `Delete ${name}` });
          const confirm = remove.getByRole('button', { name: /^Delete (labels|annotations) group$/ });
          expect(await confirm.isDisabled()).toBe(true);
          if (name === 'cost-labels') await checkScreen(page, '92-settings-delete-labels-group');
          await remove.getByLabel(`Type ${name} to confirm`).fill(name);
          await confirm.click();
          await remove.waitFor({ state: 'detached' });
          await table.waitFor({ state: 'detached' });
        }
        await page.getByRole('heading', { name: 'No labels groups yet' }).waitFor();
        await page.getByRole('heading', { name: 'No annotations groups yet' }).waitFor();

        await openSection(page, 'Helm repositories');
        await page.getByRole('button', { name: 'Actions for stable-charts' }).click();
        await page.getByRole('menuitem', { name: 'Delete…' }).click();
        const dropRepository = page.getByRole('dialog', { name: 'Delete stable-charts' });
        await dropRepository.getByLabel('Type stable-charts to confirm').fill('stable-charts');
        await dropRepository.getByRole('button', { name: 'Delete Helm repository' }).click();
        await page.getByRole('heading', { name: 'No Helm repositories yet' }).waitFor();

        await openSection(page, 'Webhooks');
        await page.getByRole('button', { name: `Actions for ${webhookName}` }).click();
        await page.getByRole('menuitem', { name: 'Delete…' }).click();
        const dropWebhook = page.getByRole('dialog', { name: `Delete ${webhookName}` });
        await dropWebhook.getByLabel(`Type ${webhookName} to confirm`).fill(webhookName);
        await dropWebhook.getByRole('button', { name: 'Delete webhook' }).click();
        await page.getByRole('heading', { name: 'No webhooks yet' }).waitFor();
        expect((await callApi<{ results: unknown[] }>(server, token, 'GET', `/organization/${organizationId}/webhook`)).body.results).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
}
