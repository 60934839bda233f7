import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestAwsServer, type TestAwsServer } from './support/aws-server.ts';
import { checkScreen, type ConsoleWorld, createFirstOrganization, newConsoleContext, signIn, startConsoleWorld, watchPage } from './support/console-browser.ts';
import { type SlipwayServer } from './support/slipway-process.ts';

/**
 * The cluster page's tabs beyond its overview (issue 22: every operation the API serves to an organization's people has
 * a place in the console), in a real browser against the real server, on SQLite: a self-managed cluster (its AWS
 * credential checked against the local STS/ECR stand-in, Karpenter and EKS Anywhere parameters given by editCluster)
 * created through the API, then each tab opened and read — readiness and the edit keeping what it does not show,
 * environments, logs with a Loki search (refused at its query, then answered) and a metrics query, Kubernetes events,
 * an analysis run to its findings, the platform configuration with a component's requirements and its edit, the
 * routing table (a refusal at its field, then saved and read back), the DNS provider (saved and read back), the cloud
 * provider binding with the catalog's regions, the advanced settings (saved and read back), Karpenter's subnets
 * (refused at a zone, then saved), EKS Anywhere (no commits, a cluster token), the operator (an update recorded) and the
 * kubeconfig (given, then shown without credentials). axe and photographs `330-…` at 1280 and 390 px.
 */
const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
  - name: byo
    cluster:
      server: https://k8s.example.com:6443
users:
  - name: admin
    user:
      token: secret-bearer-token
contexts:
  - name: byo
    context:
      cluster: byo
      user: admin
current-context: byo
`;

describe('web console: a cluster’s operations [sqlite]', () => {
  let world: ConsoleWorld;
  let aws: TestAwsServer;
  let server: SlipwayServer;
  let browser: Browser;
  const owner = `console-cluster-ops-${process.pid}@example.com`;
  const problems: string[] = [];

  beforeAll(async () => {
    aws = await startTestAwsServer();
    world = await startConsoleWorld('sqlite', { email: owner, name: 'Otto Operations' }, { SLIPWAY_AWS_ENDPOINT_URL: aws.url });
    ({ server, browser } = world);
  }, 120_000);

  afterAll(async () => {
    await world?.close();
    await aws?.close();
  }, 60_000);

  it('opens every tab of a self-managed cluster, saves its settings and shows refusals at their fields', { timeout: 120_000 }, async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    // Refusals provoked on purpose: a route whose CIDR has host bits, a log query Slipway does not serve, the
    // kubeconfig read before one is given, a malformed subnet id.
    watchPage(page, problems, (url, status) => (status === 400 && /\/routingTable$/.test(url)) || (status === 400 && /\/cluster\/[^/]+\/logs\?/.test(url)) || (status === 404 && /\/kubeconfig\?/.test(url)) || (status === 400 && /\/karpenterPrivateSubnetIds$/.test(url)));
    try {
      await signIn(page, server, owner);
      const { organizationId, made } = await createFirstOrganization(page, server, 'Acme Operations');
      await made('POST', `/organization/${organizationId}/changePlan`, { plan: 'STARTUP' });
      const keys = aws.addKey('123456789012');
      const credential = await made<{ id: string }>('POST', `/organization/${organizationId}/aws/credentials`, { type: 'AWS_STATIC', name: 'acme-aws', access_key_id: keys.accessKeyId, secret_access_key: keys.secretAccessKey });
      const cluster = await made<{ id: string }>('POST', `/v1/organization/${organizationId}/selfManagedCluster`, {
        name: 'byo-eks',
        region: 'eu-west-3',
        cloud_provider: 'AWS',
        cloud_provider_credentials: { cloud_provider: 'AWS', credentials: { id: credential.id, name: 'acme-aws' }, region: 'eu-west-3' },
        production: false,
        dns_provider: 'PLATFORM_DNS',
        build_provider: 'CLUSTER',
        platform_configuration: { templateKey: 'aws-eks-baseline', templateVersion: '2.0.0', managedConfig: { 'cert-manager': { acme_email: 'ops@example.com' } } },
      });
      const base = `${server.baseUrl}/console/organization/${organizationId}/clusters/${cluster.id}`;
      const clusterPath = `/organization/${organizationId}/cluster/${cluster.id}`;
      // Karpenter (a feature with its parameters) and EKS Anywhere (its parameters, no git repository yet), which only
      // editCluster sets: the Settings tab shows their sections.
      const karpenter = { id: '5d7f3a8e-2c1b-4e9a-9f00-6b1d2c3e4f50', value: { default_service_architecture: 'AMD64', platform_node_pools: {} } };
      await made('PUT', clusterPath, { name: 'byo-eks', region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'SELF_MANAGED', features: [karpenter], infrastructure_charts_parameters: { eks_anywhere_parameters: {} } });
      const openTab = async (name: string) => {
        await page.getByRole('tablist', { name: 'Cluster' }).getByRole('tab', { name, exact: true }).click();
        await page.getByRole('tab', { name, exact: true, selected: true }).waitFor();
      };

      // Overview: readiness (not deployed, no agent).
      await page.goto(base);
      await page.getByRole('heading', { level: 1, name: 'byo-eks' }).waitFor();
      await page.getByText('No: it must be deployed, with its agent connected').waitFor();
      await checkScreen(page, '330-cluster-overview');
      // The edit keeps what it does not show (the API replaces the definition whole).
      await page.getByRole('button', { name: 'Edit…' }).click();
      const editCluster = page.getByRole('dialog', { name: 'Edit byo-eks' });
      await editCluster.getByLabel('Description (optional)').fill('Our own EKS');
      await editCluster.getByRole('button', { name: 'Save' }).click();
      await editCluster.waitFor({ state: 'detached' });
      const edited = await made<{ description: string; features: unknown[]; infrastructure_charts_parameters: unknown }>('GET', clusterPath);
      expect(edited).toMatchObject({ description: 'Our own EKS', features: [karpenter], infrastructure_charts_parameters: { eks_anywhere_parameters: {} } });

      // Environments: one placed on the cluster, its project and service named.
      const project = await made<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
      const environment = await made<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
      await made('POST', `/environment/${environment.id}/container`, { name: 'web', registry_id: await defaultRegistry(made, organizationId), image_name: 'nginx', tag: '1.27', healthchecks: {} });
      await openTab('Environments');
      const environments = page.getByRole('table', { name: 'Environments on this cluster' });
      await environments.getByRole('link', { name: 'staging' }).waitFor();
      expect(await environments.textContent()).toContain('web (container)');
      expect(page.url()).toContain('?tab=environments');
      await checkScreen(page, '330-cluster-environments');

      // Logs: the list, a search refused at its query, a search answered, a metrics query.
      await openTab('Logs');
      await page.getByRole('heading', { name: 'Log', exact: true }).waitFor();
      const search = page.getByRole('region', { name: 'Search the log' });
      await search.getByLabel('Query').fill('type=~"x"');
      await search.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => search.getByLabel('Query').getAttribute('aria-invalid')).toBe('true');
      await search.getByLabel('Query').fill('{type!="error"}');
      await search.getByRole('button', { name: 'Search' }).click();
      await search.getByText(/\d+ lines? found\./).waitFor();
      const metrics = page.getByRole('region', { name: 'Metrics' });
      await metrics.getByRole('button', { name: 'Query' }).click();
      await metrics.getByText('0 series (vector).').waitFor();
      await checkScreen(page, '330-cluster-logs');

      // Events: none reported for this range.
      await openTab('Events');
      await page.getByText('No events in this range.').waitFor();
      await checkScreen(page, '330-cluster-events');

      // Analyses: one started and followed to its findings.
      await openTab('Analyses');
      await page.getByRole('button', { name: 'Start the analysis' }).click();
      const findings = page.getByRole('region', { name: 'Findings' });
      await findings.getByText(/: succeeded\./).waitFor({ timeout: 30_000 });
      expect(await findings.getByLabel('Analysis output').textContent()).toMatch(/agent-heartbeat/);
      await findings.scrollIntoViewIfNeeded();
      await checkScreen(page, '330-cluster-analyses');

      // Platform: the stored release and its layers, a component's requirements, the edit saved and read back.
      await openTab('Platform');
      await page.getByText('Template aws-eks-baseline 2.0.0').waitFor();
      await page.getByRole('table', { name: 'Layers' }).waitFor();
      await page.getByLabel('Component', { exact: true }).selectOption('cert-manager');
      await page.getByRole('table', { name: 'Requirements of cert-manager' }).waitFor();
      await page.getByRole('region', { name: 'Component requirements' }).scrollIntoViewIfNeeded();
      await checkScreen(page, '330-cluster-platform');
      await page.getByRole('button', { name: 'Edit the configuration…' }).click();
      const edit = page.getByRole('dialog', { name: 'Platform configuration' });
      await edit.getByLabel('Template release').waitFor();
      await expect.poll(() => edit.getByLabel(/^ACME account e-mail|acme/i).first().inputValue()).toBe('ops@example.com');
      await edit.getByLabel(/^ACME account e-mail|acme/i).first().fill('platform@example.com');
      await checkScreen(page, '330-cluster-platform-edit');
      await edit.getByRole('button', { name: 'Save the configuration' }).click();
      await edit.waitFor({ state: 'detached' });
      const configuration = await made<{ managedConfig: Record<string, Record<string, unknown>> }>('GET', `${clusterPath}/platformConfiguration`);
      expect(configuration.managedConfig['cert-manager']?.acme_email).toBe('platform@example.com');

      // Network: a route refused at its destination, corrected, saved and read back; the DNS provider; the binding.
      await openTab('Network');
      const routing = page.getByRole('region', { name: 'Routing table' });
      await routing.getByRole('button', { name: 'Add a route' }).click();
      await routing.getByLabel('Destination (CIDR)').fill('10.1.2.3/8');
      await routing.getByLabel('Target').fill('local');
      await routing.getByLabel('Description').fill('the VPC');
      await routing.getByRole('button', { name: 'Save the routing table' }).click();
      await expect.poll(() => routing.getByLabel('Destination (CIDR)').getAttribute('aria-invalid')).toBe('true');
      expect(await routing.textContent()).toContain('10.0.0.0/8');
      await checkScreen(page, '330-cluster-routing-refused');
      await routing.getByLabel('Destination (CIDR)').fill('10.0.0.0/8');
      await routing.getByRole('button', { name: 'Save the routing table' }).click();
      await expect.poll(async () => (await made<{ results: { destination: string; target: string }[] }>('GET', `${clusterPath}/routingTable`)).results).toEqual([{ destination: '10.0.0.0/8', target: 'local', description: 'the VPC' }]);
      const dns = page.getByRole('region', { name: 'DNS provider' });
      expect(await dns.getByLabel('Provider').inputValue()).toBe('PLATFORM');
      await dns.getByLabel('Provider').selectOption('CLOUDFLARE');
      await dns.getByLabel('Domain').fill('apps.acme.example');
      await dns.getByLabel('Cloudflare account e-mail').fill('dns@acme.example');
      await dns.getByLabel('API token').fill('cf-token-123');
      await dns.getByRole('button', { name: 'Save the DNS provider' }).click();
      await expect.poll(async () => (await made<{ dns_provider: Record<string, unknown> }>('GET', `/cluster/${cluster.id}/dnsProvider`)).dns_provider).toEqual({ provider: 'CLOUDFLARE', domain: 'apps.acme.example', email: 'dns@acme.example', proxied: false });
      // The binding's region is offered from the provider's catalog.
      const binding = page.getByRole('region', { name: 'Cloud provider binding' });
      await binding.getByText('Bound to acme-aws in eu-west-3.').waitFor();
      expect(await binding.getByLabel('Region').locator('option:checked').textContent()).toMatch(/^eu-west-3 \(Paris, France\)$/);
      await binding.getByRole('button', { name: 'Bind these credentials' }).click();
      await binding.getByText('Saved.').waitFor();
      await checkScreen(page, '330-cluster-network');

      // Settings: an advanced setting overridden, saved and read back.
      await openTab('Settings');
      const advanced = page.getByRole('region', { name: 'Advanced settings' });
      await advanced.getByRole('button', { name: 'Override a key' }).click();
      await advanced.getByLabel('Key 1').selectOption('loki.log_retention_in_week');
      await advanced.getByLabel('Value 1').fill('20');
      await advanced.getByRole('button', { name: 'Save advanced settings' }).click();
      await advanced.getByText('Saved.').waitFor();
      expect((await made<Record<string, unknown>>('GET', `${clusterPath}/advancedSettings`))['loki.log_retention_in_week']).toBe(20);
      // Karpenter's subnets: a malformed id refused at its zone, then saved.
      const subnets = page.getByRole('region', { name: 'Karpenter Fargate subnets' });
      await subnets.getByLabel('Zone A subnet ids').fill('subnet-0123abcd');
      await subnets.getByLabel('Zone B subnet ids').fill('subnet-xyz');
      await subnets.getByRole('button', { name: 'Save the subnets' }).click();
      await expect.poll(() => subnets.getByLabel('Zone B subnet ids').getAttribute('aria-invalid')).toBe('true');
      await subnets.getByLabel('Zone B subnet ids').fill('subnet-4567cdef, subnet-89abcdef');
      await subnets.getByRole('button', { name: 'Save the subnets' }).click();
      await subnets.getByText('Saved.').waitFor();
      // EKS Anywhere: no repository, so no commit to choose; a cluster token shown on request.
      const eksAnywhere = page.getByRole('region', { name: 'EKS Anywhere' });
      expect(await eksAnywhere.getByLabel('Commit').textContent()).toContain('No commits (no repository configured)');
      await eksAnywhere.getByRole('button', { name: 'Show a cluster token' }).click();
      expect(await eksAnywhere.getByLabel('Cluster token (valid for one hour)').inputValue()).toMatch(/^eyJ/);
      await checkScreen(page, '330-cluster-settings');

      // Operator: its status, an update recorded; the kubeconfig given, then shown without credentials.
      await openTab('Operator');
      const operator = page.getByRole('region', { name: 'Operator' });
      await operator.getByText('Disconnected').waitFor();
      await operator.getByLabel('Chart version').fill('9.9.9');
      await operator.getByRole('button', { name: 'Record the update' }).click();
      await operator.getByText(/Update to chart 9\.9\.9, image .+ recorded/).waitFor();
      expect((await made<{ desired_chart_version: string }>('GET', `${clusterPath}/operator/status`)).desired_chart_version).toBe('9.9.9');
      const kubeconfig = page.getByRole('region', { name: 'Kubeconfig' });
      await kubeconfig.getByRole('button', { name: 'Show the kubeconfig' }).click();
      await kubeconfig.getByText('No kubeconfig has been given for this cluster yet.').waitFor();
      await kubeconfig.getByRole('button', { name: 'Replace the kubeconfig…' }).click();
      await kubeconfig.getByLabel('Kubeconfig (YAML)').fill(KUBECONFIG);
      await kubeconfig.getByRole('button', { name: 'Save the kubeconfig' }).click();
      await kubeconfig.getByText('Saved.').waitFor();
      await kubeconfig.getByRole('button', { name: 'Show the kubeconfig' }).click();
      const shown = await kubeconfig.getByLabel('Kubeconfig (without credentials)').inputValue();
      expect(shown).toContain('current-context: byo');
      expect(shown).not.toContain('secret-bearer-token');
      await checkScreen(page, '330-cluster-operator');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

/** The container registry the self-managed cluster's creation made (its ECR), for a container service. */
async function defaultRegistry(made: <T>(method: string, url: string, body?: unknown) => Promise<T>, organizationId: string): Promise<string> {
  const registries = await made<{ results: { id: string }[] }>('GET', `/organization/${organizationId}/containerRegistry`);
  return registries.results[0]?.id as string;
}
