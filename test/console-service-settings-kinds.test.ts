import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator } from 'playwright-core';
import { readableFieldMessage } from '../console/src/api/field-messages.ts';
import { callApi, checkScreen, consoleToken, type ConsoleWorld, createFirstOrganization, localCluster, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { startTestAwsServer, type TestAwsServer } from './support/aws-server.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

/**
 * The settings tab of a container, a cron job and a database (docs/console.md, "Tests
 * (test/console-service-settings-kinds.test.ts)"), in a real browser against the real server: every section the kind
 * has gets one field changed, saved and read back from the API; a value the API refuses shows the API's message at
 * its field; axe on the tab of each kind. The application's sections are test/console-service-settings.test.ts's.
 * And the self-managed cluster's agent-install step on a phone: both commands whole and wrapped inside the dialog,
 * their Copy buttons in reach. Photographs `170-…` to `180-…`.
 */
for (const dialect of TEST_DIALECTS) {
  describe(`web console: settings of containers, jobs and databases [${dialect}]`, () => {
    let world: ConsoleWorld;
    let aws: TestAwsServer;
    let server: SlipwayServer;
    let browser: Browser;
    const owner = `console-settings-kinds-${dialect}-${process.pid}@example.com`;
    const problems: string[] = [];

    beforeAll(async () => {
      aws = await startTestAwsServer();
      world = await startConsoleWorld(dialect, { email: owner, name: 'Kim Kinds' }, {
        // The AWS credential of the self-managed cluster is checked against the local STS stand-in.
        SLIPWAY_AWS_ENDPOINT_URL: aws.url,
      });
      ({ server, browser } = world);
    }, 120_000);

    afterAll(async () => {
      await world?.close();
      await aws?.close();
    }, 60_000);

    it('edits every section of a container’s, a cron job’s and a database’s settings, each refusal at its field', { timeout: 300_000 }, async () => {
      const context = await newConsoleContext(browser);
      const page = await context.newPage();
      // The refusals provoked on purpose: one bad value per kind, sent with the kind's edit.
      watchPage(page, problems, (url, status) => status === 400 && /\/(container|job|database)\/[0-9a-f-]{36}$/.test(url));
      try {
        await signIn(page, server, owner);
        const { organizationId, made } = await createFirstOrganization(page, server, 'Acme Kinds');
        const token = await consoleToken(page);
        /** What the API says of `body` at `field`, in the words the console shows it (field-messages.ts). */
        const refusalAt = async (url: string, body: unknown, field: string): Promise<string> => {
          const answer = await callApi<{ details?: { field: string; message: string }[] }>(server, token, 'PUT', url, body);
          expect(answer.status, JSON.stringify(answer.body)).toBe(400);
          const detail = answer.body.details?.find((candidate) => candidate.field === field);
          expect(detail, JSON.stringify(answer.body)).toBeDefined();
          return readableFieldMessage((detail as { message: string }).message);
        };
        const cluster = await localCluster(server, organizationId, made);
        const project = await made<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
        const environment = await made<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
        const registry = await made<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, { name: 'hub', kind: 'DOCKER_HUB', url: 'https://docker.io' });
        const container = await made<{ id: string }>('POST', `/environment/${environment.id}/container`, {
          name: 'proxy',
          registry_id: registry.id,
          image_name: 'nginx',
          tag: '1.27',
          ports: [{ internal_port: 80, publicly_accessible: true, protocol: 'HTTP' }],
          healthchecks: {},
        });
        const job = await made<{ id: string }>('POST', `/environment/${environment.id}/job`, {
          name: 'nightly',
          source: { image: { image_name: 'busybox', tag: '1', registry_id: registry.id } },
          schedule: { cronjob: { scheduled_at: '0 3 * * *', timezone: 'UTC', arguments: ['sh', '-c', 'echo report'] } },
          port: 8080,
          healthchecks: {},
        });
        const database = await made<{ id: string }>('POST', `/environment/${environment.id}/database`, { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER', accessibility: 'PRIVATE' });
        const environmentPath = `${server.baseUrl}/console/organization/${organizationId}/project/${project.id}/environment/${environment.id}`;
        const section = (name: string) => page.getByRole('region', { name });
        const save = async (name: string, button = 'Save') => {
          await section(name).getByRole('button', { name: button, exact: true }).click();
          await section(name).getByRole('status').getByText('Saved.').waitFor();
        };
        /** The field is marked invalid and described by `message` (the API's, as the console words it). */
        const expectRefusedAt = async (field: Locator, message: string) => {
          await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
          const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(' ').filter((id) => id !== '');
          const descriptions = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()));
          expect(descriptions.join(' ')).toContain(message);
        };
        const openSettings = async (kind: string, id: string, lastHeading: string) => {
          await page.goto(`${environmentPath}/${kind}/${id}?tab=settings`);
          await page.getByRole('heading', { name: 'General' }).waitFor();
          await page.getByRole('heading', { name: lastHeading }).waitFor();
        };

        // A container: general (its tag, and an invalid one refused at the Tag field), resources, ports, health
        // checks, network (sticky sessions), advanced settings, and the danger zone's uninstall; a custom domain edited.
        const readContainer = () => made<Record<string, unknown>>('GET', `/container/${container.id}`);
        await openSettings('container', container.id, 'Advanced settings');
        await page.getByText('Every key and its default').waitFor();
        expect(await page.getByRole('heading', { name: 'Deployment restrictions' }).count()).toBe(0);
        await checkScreen(page, '170-container-settings');
        const tagMessage = await refusalAt(`/container/${container.id}`, { name: 'proxy', registry_id: registry.id, image_name: 'nginx', tag: 'not a tag', healthchecks: {} }, '/tag');
        await section('General').getByLabel('Tag').fill('not a tag');
        await section('General').getByRole('button', { name: 'Save', exact: true }).click();
        await expectRefusedAt(section('General').getByLabel('Tag'), tagMessage);
        await section('General').scrollIntoViewIfNeeded();
        await checkScreen(page, '171-container-settings-refused');
        await section('General').getByLabel('Tag').fill('1.27.3');
        await save('General');
        expect(await readContainer()).toMatchObject({ image_name: 'nginx', tag: '1.27.3' });
        await section('Resources').getByLabel('Memory (MiB)').fill('256');
        await section('Resources').getByLabel('Minimum instances').fill('2');
        await section('Resources').getByLabel('Maximum instances').fill('2');
        await save('Resources');
        expect(await readContainer()).toMatchObject({ memory: 256, min_running_instances: 2, max_running_instances: 2 });
        await section('Ports').getByRole('button', { name: 'Add a port' }).click();
        await section('Ports').getByLabel('Port number 2').fill('9113');
        await save('Ports');
        expect(((await readContainer()).ports as { internal_port: number; publicly_accessible: boolean }[]).map((port) => [port.internal_port, port.publicly_accessible])).toEqual([
          [80, true],
          [9113, false],
        ]);
        await section('Health checks').getByLabel('Readiness: check').selectOption('HTTP');
        await section('Health checks').getByLabel('Readiness: path').fill('/ready');
        await save('Health checks');
        expect(await readContainer()).toMatchObject({ healthchecks: { readiness_probe: { type: { http: { path: '/ready', port: 80 } } } } });
        await section('Network').getByLabel('Sticky sessions').check();
        await save('Network');
        expect(await made('GET', `/container/${container.id}/network`)).toEqual({ sticky_session: true });
        await section('Advanced settings').getByRole('button', { name: 'Override a key' }).click();
        await section('Advanced settings').getByLabel('Key 1').selectOption('deployment.termination_grace_period_seconds');
        await section('Advanced settings').getByLabel('Value 1').fill('120');
        await section('Advanced settings').getByRole('button', { name: 'Save advanced settings' }).click();
        await expect.poll(async () => (await made<Record<string, unknown>>('GET', `/container/${container.id}/advancedSettings`))['deployment.termination_grace_period_seconds']).toBe(120);
        // The danger zone's uninstall: the API accepts it (202) and the container stays, never deployed.
        const uninstallAnswer = page.waitForResponse((response) => response.request().method() === 'POST' && response.url().endsWith(`/container/${container.id}/uninstall`));
        await section('Danger zone').getByRole('button', { name: 'Uninstall container…' }).click();
        const uninstall = page.getByRole('dialog', { name: 'Uninstall proxy' });
        await uninstall.getByRole('button', { name: 'Uninstall container' }).waitFor();
        await checkScreen(page, '178-service-uninstall');
        await uninstall.getByRole('button', { name: 'Uninstall container' }).click();
        expect((await uninstallAnswer).status()).toBe(202);
        await section('Danger zone').getByRole('status').getByText('Uninstall requested: the cluster removes it.').waitFor();
        expect(await made('GET', `/container/${container.id}/status`)).toMatchObject({ state: 'READY' });
        expect(await readContainer()).toMatchObject({ name: 'proxy', tag: '1.27.3' });
        // Its Domains tab: a domain edited (a new name, no certificate); the API replaced it, waiting for DNS again.
        await made('POST', `/container/${container.id}/customDomain`, { domain: 'proxy.invalid', generate_certificate: true });
        await page.goto(`${environmentPath}/container/${container.id}?tab=domains`);
        await page.getByRole('article', { name: 'proxy.invalid' }).getByRole('button', { name: 'Edit proxy.invalid…' }).click();
        const editDomain = page.getByRole('dialog', { name: 'Edit proxy.invalid' });
        expect(await editDomain.getByLabel('Domain').inputValue()).toBe('proxy.invalid');
        await editDomain.getByLabel('Domain').fill('edge.invalid');
        await editDomain.getByLabel('Issue a TLS certificate').uncheck();
        await checkScreen(page, '180-service-edit-domain');
        await editDomain.getByRole('button', { name: 'Save domain' }).click();
        await editDomain.waitFor({ state: 'detached' });
        await page.getByRole('article', { name: 'edge.invalid' }).getByText('not generated by Slipway').waitFor();
        expect((await made<{ results: unknown[] }>('GET', `/container/${container.id}/customDomain`)).results).toMatchObject([{ domain: 'edge.invalid', generate_certificate: false, status: 'VALIDATION_PENDING' }]);

        // A cron job: its schedule (an expression the API cannot read refused at its field), general, resources,
        // health checks (its one port), deployment restrictions, advanced settings; then cloned.
        const readJob = () => made<Record<string, unknown>>('GET', `/job/${job.id}`);
        await openSettings('job', job.id, 'Advanced settings');
        await page.getByText('Every key and its default').waitFor();
        expect(await page.getByRole('heading', { name: 'Ports' }).count()).toBe(0);
        await checkScreen(page, '172-job-settings');
        const stored = await readJob();
        const cronMessage = await refusalAt(
          `/job/${job.id}`,
          { name: 'nightly', source: { image: { image_name: 'busybox', tag: '1', registry_id: registry.id } }, healthchecks: {}, schedule: { cronjob: { scheduled_at: 'every night', timezone: 'UTC' } } },
          '/schedule/cronjob/scheduled_at',
        );
        await section('Schedule').getByLabel('Cron expression').fill('every night');
        await section('Schedule').getByRole('button', { name: 'Save', exact: true }).click();
        await expectRefusedAt(section('Schedule').getByLabel('Cron expression'), cronMessage);
        await section('Schedule').scrollIntoViewIfNeeded();
        await checkScreen(page, '173-job-settings-refused');
        await section('Schedule').getByLabel('Cron expression').fill('30 4 * * 1-5');
        await section('Schedule').getByLabel('Time zone').fill('Europe/Paris');
        await save('Schedule');
        // The command is kept as it was.
        expect(await readJob()).toMatchObject({ schedule: { cronjob: { scheduled_at: '30 4 * * 1-5', timezone: 'Europe/Paris', arguments: ['sh', '-c', 'echo report'] } } });
        await section('General').getByLabel('Description (optional)').fill('the nightly report');
        await save('General');
        expect(await readJob()).toMatchObject({ name: 'nightly', description: 'the nightly report', source: stored.source });
        await section('Resources').getByLabel('CPU (millicores)').fill('250');
        await save('Resources');
        expect(await readJob()).toMatchObject({ cpu: 250 });
        await section('Health checks').getByLabel('Liveness: check').selectOption('TCP');
        await save('Health checks');
        expect(await readJob()).toMatchObject({ healthchecks: { liveness_probe: { type: { tcp: { port: 8080 } } } } });
        await section('Deployment restrictions').getByLabel('Mode').selectOption('MATCH');
        await section('Deployment restrictions').getByLabel('Path').fill('reports/');
        await section('Deployment restrictions').getByRole('button', { name: 'Add restriction' }).click();
        await section('Deployment restrictions').getByRole('table', { name: 'Deployment restrictions' }).getByRole('row', { name: /reports\// }).waitFor();
        expect((await made<{ results: unknown[] }>('GET', `/job/${job.id}/deploymentRestriction`)).results).toMatchObject([{ mode: 'MATCH', type: 'PATH', value: 'reports/' }]);
        await section('Advanced settings').getByRole('button', { name: 'Override a key' }).click();
        await section('Advanced settings').getByLabel('Key 1').selectOption('cronjob.failed_jobs_history_limit');
        await section('Advanced settings').getByLabel('Value 1').fill('5');
        await section('Advanced settings').getByRole('button', { name: 'Save advanced settings' }).click();
        await expect.poll(async () => (await made<Record<string, unknown>>('GET', `/job/${job.id}/advancedSettings`))['cronjob.failed_jobs_history_limit']).toBe(5);
        // Cloned into another environment of the project: the copy keeps the schedule and opens on its page.
        const production = await made<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'production', cluster: cluster.id, mode: 'PRODUCTION' });
        await page.reload();
        await section('Clone').getByRole('button', { name: 'Clone job…' }).click();
        const clone = page.getByRole('dialog', { name: 'Clone nightly' });
        expect(await clone.getByLabel('Name of the copy').inputValue()).toBe('nightly-copy');
        await clone.getByLabel('Name of the copy').fill('nightly-eu');
        await clone.getByLabel('Environment').selectOption(production.id);
        await checkScreen(page, '179-service-clone');
        await clone.getByRole('button', { name: 'Clone job' }).click();
        await page.getByRole('heading', { level: 1, name: 'nightly-eu' }).waitFor();
        expect(page.url()).toContain(`/environment/${production.id}/job/`);
        const copies = await made<{ results: Record<string, unknown>[] }>('GET', `/environment/${production.id}/job`);
        expect(copies.results).toMatchObject([{ name: 'nightly-eu', schedule: { cronjob: { scheduled_at: '30 4 * * 1-5', timezone: 'Europe/Paris' } } }]);

        // A database: general (a version that is not one refused at its field; then a newer one, and reachable from
        // the internet), resources (memory and storage) and its connection (the master credentials, revealed on
        // request); no other section.
        const readDatabase = () => made<Record<string, unknown>>('GET', `/database/${database.id}`);
        await openSettings('database', database.id, 'Connection');
        for (const absent of ['Ports', 'Health checks', 'Network', 'Deployment restrictions', 'Advanced settings']) expect(await page.getByRole('heading', { name: absent }).count(), absent).toBe(0);
        await checkScreen(page, '174-database-settings');
        // The versions it may move to, from the API, beside the field.
        const versions = (await made<{ results: { name: string }[] }>('GET', `/database/${database.id}/version`)).results.map((version) => version.name);
        expect(versions).toContain('17');
        await section('General').getByText(`Versions it accepts: ${versions.join(', ')}`).waitFor();
        const versionMessage = await refusalAt(`/database/${database.id}`, { version: 'latest' }, '/version');
        await section('General').getByLabel('Version').fill('latest');
        await section('General').getByRole('button', { name: 'Save', exact: true }).click();
        await expectRefusedAt(section('General').getByLabel('Version'), versionMessage);
        await checkScreen(page, '175-database-settings-refused');
        await section('General').getByLabel('Version').fill('17');
        await section('General').getByLabel('Reachable from').selectOption('PUBLIC');
        await save('General');
        expect(await readDatabase()).toMatchObject({ version: '17', accessibility: 'PUBLIC' });
        await section('Resources').getByLabel('Memory (MiB)').fill('512');
        await section('Resources').getByLabel('Storage (GiB)').fill('20');
        await save('Resources');
        expect(await readDatabase()).toMatchObject({ memory: 512, storage: 20 });
        const credentials = await made<{ host: string; port: number; login: string; password: string }>('GET', `/database/${database.id}/masterCredentials`);
        await section('Connection').getByRole('button', { name: 'Reveal the credentials' }).click();
        await section('Connection').getByText(credentials.login, { exact: true }).waitFor();
        await section('Connection').getByText(credentials.host, { exact: true }).waitFor();
        expect(await section('Connection').getByRole('textbox', { name: 'Password' }).inputValue()).toBe(credentials.password);
        await section('Connection').getByRole('button', { name: 'Hide' }).scrollIntoViewIfNeeded();
        await checkScreen(page, '177-database-credentials');
        await section('Connection').getByRole('button', { name: 'Hide' }).click();
        await section('Connection').getByRole('button', { name: 'Reveal the credentials' }).waitFor();
        expect(await section('Connection').getByRole('textbox', { name: 'Password' }).count()).toBe(0);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it('shows the agent’s install commands whole on a phone, with their Copy buttons in reach', { timeout: 180_000 }, async () => {
      const context = await newConsoleContext(browser);
      const page = await context.newPage();
      watchPage(page, problems, () => false);
      try {
        await signIn(page, server, owner);
        const token = await consoleToken(page);
        const made = async <T>(method: string, url: string, body?: unknown): Promise<T> => {
          const answer = await callApi<T>(server, token, method, url, body);
          expect(answer.status, `${method} ${url}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
          return answer.body;
        };
        const organizationId = (await made<{ id: string }>('POST', '/organization', { name: 'Acme Phone' })).id;
        // A paid plan (self-managed clusters need one) and an AWS credential the stand-in knows.
        await made('POST', `/organization/${organizationId}/changePlan`, { plan: 'STARTUP' });
        const keys = aws.addKey('123456789012');
        await made('POST', `/organization/${organizationId}/aws/credentials`, { type: 'AWS_STATIC', name: 'acme-aws', access_key_id: keys.accessKeyId, secret_access_key: keys.secretAccessKey });

        await page.setViewportSize({ width: 390, height: 844 });
        await page.goto(`${server.baseUrl}/console/organization/${organizationId}/clusters`);
        await page.getByRole('button', { name: 'New cluster' }).click();
        const wizard = page.getByRole('dialog', { name: 'New cluster' });
        await wizard.getByLabel('Kind').selectOption('SELF_MANAGED');
        await wizard.getByLabel('Name', { exact: true }).fill('phone-eks');
        await wizard.getByLabel('Platform template').selectOption('aws-eks-baseline@2.0.0');
        await wizard.getByLabel('observability').uncheck();
        await wizard.getByLabel('autoscaling').uncheck();
        await wizard.getByLabel(/^Existing VPC id \(missing\)/).fill('vpc-0123abcd');
        await wizard.getByLabel(/^Existing VPC id \(ready\)/).waitFor();
        await wizard.getByLabel(/^ACME account e-mail|acme/i).first().fill('ops@example.com');
        await wizard.getByRole('button', { name: 'Create cluster' }).click();

        const install = page.getByRole('dialog', { name: 'Install the agent on phone-eks' });
        await install.getByText('Waiting for the agent').waitFor();
        const dialogBox = await install.boundingBox();
        expect(dialogBox).not.toBeNull();
        const { x: left, width } = dialogBox as { x: number; width: number };
        for (const [id, label, copy] of [
          ['install-helm', 'In the Kubernetes cluster, with Helm', 'Copy the Helm command'],
          ['install-agent', 'Or on a host, with the Slipway CLI', 'Copy the agent command'],
        ] as const) {
          const command = install.getByRole('textbox', { name: label });
          // The whole command shows: wrapped inside its box, which neither scrolls sideways nor hides lines.
          const overflow = await command.evaluate((box) => ({ down: box.scrollHeight - box.clientHeight, across: box.scrollWidth - box.clientWidth }));
          expect(overflow, label).toEqual({ down: 0, across: 0 });
          const box = await command.boundingBox();
          expect(box, label).not.toBeNull();
          const { x, width: commandWidth } = box as { x: number; width: number };
          expect(x, label).toBeGreaterThanOrEqual(left);
          expect(x + commandWidth, label).toBeLessThanOrEqual(left + width);
          // Its Copy button is on the line of its label, inside the dialog, and answers a tap.
          const button = install.getByRole('button', { name: copy });
          await button.scrollIntoViewIfNeeded();
          const buttonBox = await button.boundingBox();
          expect(buttonBox, copy).not.toBeNull();
          const { x: buttonX, y: buttonY, width: buttonWidth, height: buttonHeight } = buttonBox as { x: number; y: number; width: number; height: number };
          expect(buttonX + buttonWidth, copy).toBeLessThanOrEqual(left + width);
          expect(buttonY, copy).toBeGreaterThanOrEqual(0);
          expect(buttonY + buttonHeight, copy).toBeLessThanOrEqual(844);
          expect(buttonHeight, copy).toBeGreaterThanOrEqual(24);
          const labelBox = await install.locator(`label[for="${id}"]`).boundingBox();
          expect(labelBox, label).not.toBeNull();
          const { y: labelY, height: labelHeight } = labelBox as { y: number; height: number };
          // On the label's line: the two boxes share a band of the screen's height, above the command.
          expect(labelY, label).toBeLessThan(buttonY + buttonHeight);
          expect(buttonY, copy).toBeLessThan(labelY + labelHeight);
          expect(buttonY + buttonHeight, copy).toBeLessThanOrEqual((box as { y: number }).y);
        }
        await install.getByRole('textbox', { name: 'In the Kubernetes cluster, with Helm' }).scrollIntoViewIfNeeded();
        await checkScreen(page, '176-cluster-agent-install');
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
}
