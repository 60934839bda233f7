import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestAwsServer, type TestAwsServer } from './support/aws-server.ts';
import { checkScreen, type ConsoleWorld, createFirstOrganization, localCluster, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { spawnSlipway, type SlipwayServer } from './support/slipway-process.ts';

/**
 * Console part 2's clusters and service screens (docs/console.md, "Tests (test/console-clusters-services.test.ts)"),
 * in a real browser against the real server, with the real AWS SDK talking to a local STS/ECR stand-in: a self-managed
 * cluster created through the wizard (AWS credential, platform template, the `resolve` preview's fields), its install
 * commands shown, the page waiting live until a real `slipway agent` started with the copied enrollment token enrolls;
 * the cluster's current cost and delete modes; an application's custom domains (added, DNS records, checked, deleted).
 * axe on every screen and dialog; photographs `130-…` to `138-…`.
 */
for (const dialect of TEST_DIALECTS) {
  describe(`web console: self-managed clusters and custom domains [${dialect}]`, () => {
    let world: ConsoleWorld;
    let aws: TestAwsServer;
    let server: SlipwayServer;
    let browser: Browser;
    let agentDir: string;
    const owner = `console-clusters-${dialect}-${process.pid}@example.com`;
    const problems: string[] = [];

    beforeAll(async () => {
      aws = await startTestAwsServer();
      agentDir = await mkdtemp(path.join(tmpdir(), 'slipway-console-agent-'));
      world = await startConsoleWorld(dialect, { email: owner, name: 'Clara Clusters' }, {
        SLIPWAY_AWS_ENDPOINT_URL: aws.url,
      });
      ({ server, browser } = world);
    }, 120_000);

    afterAll(async () => {
      await world?.close();
      await aws?.close();
      if (agentDir !== undefined) await rm(agentDir, { recursive: true, force: true });
    }, 60_000);

    it('creates a self-managed cluster whose agent enrolls live, shows its cost and delete modes, and manages custom domains', { timeout: 300_000 }, async () => {
      const context = await newConsoleContext(browser);
      const page = await context.newPage();
      // The refusal provoked on purpose: a custom domain that is not a host name.
      watchPage(page, problems, (url, status) => status === 400 && /\/customDomain$/.test(url));
      try {
        await signIn(page, server, owner);
        const { organizationId, made } = await createFirstOrganization(page, server, 'Acme Clusters');
        // A paid plan (self-managed clusters need one) and an AWS credential the stand-in knows.
        await made('POST', `/organization/${organizationId}/changePlan`, { plan: 'STARTUP' });
        const keys = aws.addKey('123456789012');
        await made('POST', `/organization/${organizationId}/aws/credentials`, { type: 'AWS_STATIC', name: 'acme-aws', access_key_id: keys.accessKeyId, secret_access_key: keys.secretAccessKey });

        // The wizard: kind, name, region, credential, template; the resolve preview's fields for the components.
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Clusters' }).click();
        await page.getByRole('heading', { name: 'No clusters yet' }).waitFor();
        await page.getByRole('button', { name: 'New cluster' }).click();
        const wizard = page.getByRole('dialog', { name: 'New cluster' });
        await wizard.getByLabel('Kind').selectOption('SELF_MANAGED');
        await wizard.getByLabel('Name', { exact: true }).fill('byo-eks');
        await wizard.getByLabel('Platform template').selectOption('aws-eks-baseline@2.0.0');
        expect(await wizard.getByLabel('AWS credential').locator('option:checked').textContent()).toBe('acme-aws');
        await wizard.getByLabel('observability').uncheck();
        await wizard.getByLabel('autoscaling').uncheck();
        const vpc = wizard.getByLabel(/^Existing VPC id \(missing\)/);
        await vpc.fill('vpc-0123abcd');
        // The preview answers again with the value: the input is READY.
        await wizard.getByLabel(/^Existing VPC id \(ready\)/).waitFor();
        await wizard.getByLabel(/^ACME account e-mail|acme/i).first().fill('ops@example.com');
        await checkScreen(page, '130-new-self-managed-cluster');
        await wizard.getByRole('button', { name: 'Create cluster' }).click();

        // The install step: the commands with the one-time token, and the page waiting for the agent.
        const install = page.getByRole('dialog', { name: 'Install the agent on byo-eks' });
        await install.waitFor();
        const helm = await install.getByRole('textbox', { name: 'In the Kubernetes cluster, with Helm' }).inputValue();
        const agentCommand = await install.getByRole('textbox', { name: 'Or on a host, with the Slipway CLI' }).inputValue();
        const enrollmentToken = /--enrollment-token (\S+)/.exec(agentCommand)?.[1] as string;
        expect(enrollmentToken).toMatch(/^slwe_/);
        expect(helm).toContain(enrollmentToken);
        await install.getByText('Waiting for the agent').waitFor();
        await checkScreen(page, '131-cluster-agent-install-waiting');

        // A real agent with the copied command: the page turns live.
        const controlPlane = /--control-plane (\S+)/.exec(agentCommand)?.[1] as string;
        expect(controlPlane).toBe(server.baseUrl);
        const agent = spawnSlipway(['agent', '--control-plane', controlPlane, '--enrollment-token', enrollmentToken, '--state-dir', agentDir, '--driver', 'local'], { HOME: agentDir });
        try {
          await install.getByText('The agent enrolled').waitFor({ timeout: 60_000 });
          await checkScreen(page, '132-cluster-agent-enrolled');
          await install.getByRole('link', { name: 'Open the cluster' }).click();
          await page.getByRole('heading', { level: 1, name: 'byo-eks' }).waitFor();
          await page.getByText('Connected').first().waitFor();
        } finally {
          agent.kill('SIGTERM');
          await agent.result;
        }

        // The cluster's page: its current cost; the delete modes with the typed name.
        await page.getByText(/€|\$|£/).first().waitFor();
        await checkScreen(page, '133-self-managed-cluster');
        await page.getByRole('button', { name: 'Delete cluster…' }).click();
        const remove = page.getByRole('dialog', { name: 'Delete byo-eks' });
        await remove.getByLabel('What to delete').selectOption('DELETE_CLUSTER_AND_PLATFORM_CONFIG');
        expect(await remove.getByRole('button', { name: 'Delete cluster', exact: true }).isDisabled()).toBe(true);
        await remove.getByLabel('Type byo-eks to confirm').fill('byo-eks');
        await checkScreen(page, '134-delete-cluster-modes');
        await remove.getByRole('button', { name: 'Delete cluster', exact: true }).click();
        await page.getByRole('heading', { level: 1, name: 'Clusters' }).waitFor();
        await expect.poll(async () => (await made<{ results: unknown[] }>('GET', `/organization/${organizationId}/cluster`)).results.length, { timeout: 30_000 }).toBe(0);

        // Custom domains: an application with a public port on a LOCAL cluster.
        const cluster = await localCluster(server, organizationId, made);
        const project = await made<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
        const environment = await made<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
        const application = await made<{ id: string }>('POST', `/environment/${environment.id}/application`, {
          name: 'web',
          git_repository: { url: 'https://git.example.com/acme/web.git', branch: 'main', provider: 'GITHUB', owner: 'acme', name: 'web' },
          ports: [{ internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' }],
          healthchecks: {},
        });
        await page.goto(`${server.baseUrl}/console/organization/${organizationId}/project/${project.id}/environment/${environment.id}/application/${application.id}?tab=domains`);
        await page.getByRole('heading', { name: 'No custom domains yet' }).waitFor();
        await checkScreen(page, '135-service-domains-empty');
        await page.getByRole('button', { name: 'Add domain' }).click();
        const add = page.getByRole('dialog', { name: 'Add a custom domain' });
        await add.getByLabel('Domain').fill('not a host');
        await add.getByRole('button', { name: 'Add domain' }).click();
        await expect.poll(() => add.getByLabel('Domain').getAttribute('aria-invalid')).toBe('true');
        await checkScreen(page, '136-service-add-domain-refused');
        await add.getByLabel('Domain').fill('shop.invalid');
        await add.getByRole('button', { name: 'Add domain' }).click();
        await add.waitFor({ state: 'detached' });
        const card = page.getByRole('article', { name: 'shop.invalid' });
        await card.waitFor();
        const stored = await made<{ results: { validation_domain: string; verification_record: { value: string } }[] }>('GET', `/application/${application.id}/customDomain`);
        const [domain] = stored.results;
        const records = card.getByRole('table', { name: 'DNS records for shop.invalid' });
        expect(await records.textContent()).toContain(domain?.validation_domain);
        expect(await records.textContent()).toContain(domain?.verification_record.value);
        expect(await card.textContent()).toMatch(/Waiting for DNS.*not checked yet.*after verification/);
        await card.getByRole('button', { name: 'Check shop.invalid now' }).click();
        await expect.poll(async () => card.textContent(), { timeout: 30_000 }).toMatch(/Waiting for DNS.*Last checkno DNS record found.*has no CNAME, A or AAAA record yet/);
        await checkScreen(page, '137-service-domains');
        await card.getByRole('button', { name: 'Delete shop.invalid…' }).click();
        const removeDomain = page.getByRole('dialog', { name: 'Delete shop.invalid' });
        await removeDomain.getByLabel('Type shop.invalid to confirm').fill('shop.invalid');
        await checkScreen(page, '138-service-delete-domain');
        await removeDomain.getByRole('button', { name: 'Delete domain' }).click();
        await page.getByRole('heading', { name: 'No custom domains yet' }).waitFor();
        expect((await made<{ results: unknown[] }>('GET', `/application/${application.id}/customDomain`)).results).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
}
