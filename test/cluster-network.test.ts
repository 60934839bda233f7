import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { parseCidr } from '../src/modules/cluster-settings/cluster-settings.network.ts';
import { expectErrorBody } from './support/error-body.ts';
import { createBareRepository, startGitServer, type TestGitServer } from './support/git-server.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * A cluster's network and provider settings (docs/cluster-network.md): routing table, DNS provider (secrets sealed),
 * cloud provider binding, EKS Anywhere JWT and commits (from a real git repository served over HTTP), Karpenter
 * Fargate subnets, and the platform component preview of a cluster. Each checked for bad input (nothing written),
 * another organization's caller (404) and a viewer (reads, never writes).
 */

const GIT_TOKEN = 'glpat-EksAnywhere7c1f2e9a4b5d';
let gitRoot: string;
let gitServer: TestGitServer;

beforeAll(async () => {
  gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-eks-git-'));
  await createBareRepository(gitRoot, 'eks-clusters', { main: ['clusters/prod.yaml'] });
  gitServer = await startGitServer({ root: gitRoot, privateRepositories: { 'eks-clusters': GIT_TOKEN } });
});

afterAll(async () => {
  await gitServer.close();
  await rm(gitRoot, { recursive: true, force: true });
});

it('parses CIDR blocks: canonical forms, host bits, prefixes', () => {
  expect(parseCidr('10.0.0.0/16')).toEqual({ family: 4, text: '10.0.0.0/16' });
  expect(parseCidr('2001:DB8:0:0:0::/32')).toEqual({ family: 6, text: '2001:db8::/32' });
  expect(parseCidr('::/0')).toEqual({ family: 6, text: '::/0' });
  expect(parseCidr('::ffff:10.0.0.0/104')).toEqual({ family: 6, text: '::ffff:a00:0/104' });
  expect(parseCidr('10.0.0.1/8')).toEqual({ problem: expect.stringContaining('10.0.0.0/8') as unknown as string });
  expect(parseCidr('2001:db8::1/64')).toEqual({ problem: expect.stringContaining('2001:db8::/64') as unknown as string });
  expect('problem' in parseCidr('10.0.0.0/33')).toBe(true);
  expect('problem' in parseCidr('10.0.0.0')).toBe(true);
  expect('problem' in parseCidr('300.0.0.0/8')).toBe(true);
  expect('problem' in parseCidr('10.0.0.0/+8')).toBe(true);
});

describeEachDatabase(
  'cluster network and provider settings',
  (ctx) => {
    let owner: TestUser;
    let viewer: TestUser;
    let organizationId: string;
    let stranger: { owner: TestUser; organizationId: string };
    let plainId: string;
    let eksAnywhereId: string;
    let karpenterId: string;
    let gitTokenId: string;
    const eksAnywhereParameters = (tokenId: string) => ({
      eks_anywhere_parameters: { git_repository: { url: gitServer.urlOf('eks-clusters'), branch: 'main', git_token_id: tokenId }, yaml_file_path: 'clusters/prod.yaml' },
    });
    const at = (clusterId: string, suffix: string) => `/organization/${organizationId}/cluster/${clusterId}/${suffix}`;
    const settingsRow = (clusterId: string) => ctx().database.db.selectFrom('cluster_settings').selectAll().where('cluster_id', '=', clusterId).executeTakeFirst();

    it('sets up an organization with a viewer, another organization, and three AWS clusters', async () => {
      ({ owner, organizationId } = await ctx().signUpWithOrganization());
      viewer = await ctx().signUp();
      await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
      stranger = await ctx().signUpWithOrganization();
      const create = async (payload: Record<string, unknown>) => {
        const response = await ctx().call(owner.auth, {
          method: 'POST',
          url: `/organization/${organizationId}/cluster`,
          payload: { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED', ...payload },
        });
        expect(response.statusCode, response.body).toBe(201);
        return response.json<{ id: string }>().id;
      };
      const token = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/gitToken`, payload: { name: uniqueName('git'), type: 'GITLAB', token: GIT_TOKEN } });
      expect(token.statusCode, token.body).toBe(201);
      gitTokenId = token.json<{ id: string }>().id;
      plainId = await create({});
      eksAnywhereId = await create({ infrastructure_charts_parameters: eksAnywhereParameters(gitTokenId) });
      karpenterId = await create({
        features: [{ id: '0190f1f0-0000-7000-8000-00000000ca11', value: { spot_enabled: false, disk_size_in_gib: 50, default_service_architecture: 'AMD64', platform_node_pools: {} } }],
      });
    });

    it('stores a routing table in canonical form, and answers it to readers', async () => {
      expect((await ctx().call(owner.auth, { method: 'GET', url: at(plainId, 'routingTable') })).json()).toEqual({ results: [] });
      const routes = [
        { destination: '10.0.0.0/16', target: 'local', description: 'VPC' },
        { destination: '0.0.0.0/0', target: 'nat-0123456789abcdef0', description: 'egress through NAT' },
        { destination: '2001:DB8:0::/48', target: 'eigw-0a1b2c3d', description: 'IPv6 egress' },
        { destination: '192.168.10.0/24', target: '10.0.5.4', description: 'on-premises via appliance' },
      ];
      const edited = await ctx().call(owner.auth, { method: 'PUT', url: at(plainId, 'routingTable'), payload: { routes } });
      expect(edited.statusCode, edited.body).toBe(201);
      const expected = { results: routes.map((route) => (route.destination === '2001:DB8:0::/48' ? { ...route, destination: '2001:db8::/48' } : route)) };
      expect(edited.json()).toEqual(expected);
      expect((await ctx().call(viewer.auth, { method: 'GET', url: at(plainId, 'routingTable') })).json()).toEqual(expected);
      // Another cluster's table is its own.
      expect((await ctx().call(owner.auth, { method: 'GET', url: at(karpenterId, 'routingTable') })).json()).toEqual({ results: [] });
    });

    it('refuses bad routes naming each, and writes nothing', async () => {
      const before = (await ctx().call(owner.auth, { method: 'GET', url: at(plainId, 'routingTable') })).json<unknown>();
      const good = { destination: '172.16.0.0/12', target: 'tgw-0123456789abcdef0', description: 'transit' };
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['host bits', { routes: [good, { ...good, destination: '10.1.2.3/8' }] }, '/routes/1/destination'],
        ['prefix too long', { routes: [{ ...good, destination: '10.0.0.0/33' }] }, '/routes/0/destination'],
        ['not an address', { routes: [{ ...good, destination: 'office/24' }] }, '/routes/0/destination'],
        ['unknown target', { routes: [{ ...good, target: 'my-gateway' }] }, '/routes/0/target'],
        ['next hop of the other family', { routes: [{ ...good, target: 'fe80::1' }] }, '/routes/0/target'],
        ['duplicate destination', { routes: [good, { ...good, destination: '172.16.0.0/12', target: 'local' }] }, '/routes/1/destination'],
        ['missing description', { routes: [{ destination: good.destination, target: good.target }] }, 'description'],
        ['unknown field', { routes: [{ ...good, weight: 3 }] }, 'weight'],
        ['no routes', {}, 'routes'],
      ];
      for (const [label, payload, field] of cases) {
        const refused = expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: at(plainId, 'routingTable'), payload }), 400);
        expect(JSON.stringify(refused), label).toContain(field);
      }
      expect((await ctx().call(owner.auth, { method: 'GET', url: at(plainId, 'routingTable') })).json()).toEqual(before);
    });

    it('keeps settings from viewers (403) and from other organizations (404)', async () => {
      const routes = { routes: [] };
      expectErrorBody(await ctx().call(viewer.auth, { method: 'PUT', url: at(plainId, 'routingTable'), payload: routes }), 403);
      expectErrorBody(await ctx().call(viewer.auth, { method: 'PUT', url: `/cluster/${plainId}/dnsProvider`, payload: { dns_provider: { provider: 'PLATFORM', domain: 'example.com' } } }), 403);
      expectErrorBody(await ctx().call(viewer.auth, { method: 'POST', url: at(plainId, 'cloudProviderInfo'), payload: {} }), 403);
      expectErrorBody(await ctx().call(viewer.auth, { method: 'GET', url: at(eksAnywhereId, 'eks-anywhere/jwt') }), 403);
      expectErrorBody(await ctx().call(viewer.auth, { method: 'PUT', url: at(karpenterId, 'karpenterPrivateSubnetIds'), payload: {} }), 403);

      // The stranger names their own organization with our cluster, or ours directly: both 404, nothing read or written.
      const theirs = (suffix: string) => `/organization/${stranger.organizationId}/cluster/${plainId}/${suffix}`;
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: theirs('routingTable') }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'PUT', url: theirs('routingTable'), payload: routes }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: theirs('cloudProviderInfo') }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: at(plainId, 'routingTable') }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/cluster/${plainId}/dnsProvider` }), 404);
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'PUT', url: `/cluster/${plainId}/dnsProvider`, payload: { dns_provider: { provider: 'PLATFORM', domain: 'evil.example' } } }), 404);
      expect((await ctx().call(owner.auth, { method: 'GET', url: at(plainId, 'routingTable') })).json<{ results: unknown[] }>().results).toHaveLength(4);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: at('0190f1f0-0000-7000-8000-000000000000', 'routingTable') }), 404);
    });

    it('answers the PLATFORM DNS provider until one is set, then seals the Cloudflare token and the Route 53 secret key', async () => {
      const url = `/cluster/${plainId}/dnsProvider`;
      expect((await ctx().call(viewer.auth, { method: 'GET', url })).json()).toEqual({ dns_provider: { provider: 'PLATFORM', domain: 'localhost' } });

      const apiToken = `cf-${uniqueName('token')}`;
      const cloudflare = await ctx().call(owner.auth, {
        method: 'PUT',
        url,
        payload: { dns_provider: { provider: 'CLOUDFLARE', domain: 'Apps.Example.com', email: 'dns@example.com', api_token: apiToken } },
      });
      expect(cloudflare.statusCode, cloudflare.body).toBe(200);
      expect(cloudflare.json()).toEqual({ dns_provider: { provider: 'CLOUDFLARE', domain: 'apps.example.com', email: 'dns@example.com', proxied: false } });
      const row = await settingsRow(plainId);
      expect(row?.dns_secret_envelope).toMatch(/^v1\./);
      expect(JSON.stringify(row)).not.toContain(apiToken);
      expect((await ctx().call(owner.auth, { method: 'GET', url })).body).not.toContain(apiToken);

      const secretKey = `aws/${uniqueName('secret')}`;
      const route53 = await ctx().call(owner.auth, {
        method: 'PUT',
        url,
        payload: {
          dns_provider: {
            provider: 'ROUTE53',
            domain: 'example.org',
            credentials: { type: 'STATIC', aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE', aws_secret_access_key: secretKey },
            aws_region: 'eu-west-3',
            hosted_zone_id: '/hostedzone/Z0123456789ABCDEFGHIJ',
          },
        },
      });
      expect(route53.statusCode, route53.body).toBe(200);
      const view = {
        dns_provider: {
          provider: 'ROUTE53',
          domain: 'example.org',
          credentials: { type: 'STATIC', aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE' },
          aws_region: 'eu-west-3',
          hosted_zone_id: 'Z0123456789ABCDEFGHIJ',
        },
      };
      expect(route53.json()).toEqual(view);
      expect((await ctx().call(viewer.auth, { method: 'GET', url })).json()).toEqual(view);
      expect(JSON.stringify(await settingsRow(plainId))).not.toContain(secretKey);

      // PLATFORM holds no secret: the sealed one goes.
      const platform = await ctx().call(owner.auth, { method: 'PUT', url, payload: { dns_provider: { provider: 'PLATFORM', domain: 'apps.example.net' } } });
      expect(platform.json()).toEqual({ dns_provider: { provider: 'PLATFORM', domain: 'apps.example.net' } });
      expect((await settingsRow(plainId))?.dns_secret_envelope).toBeNull();
    });

    it('refuses bad DNS providers and writes nothing', async () => {
      const url = `/cluster/${plainId}/dnsProvider`;
      const cases: Array<[string, Record<string, unknown>]> = [
        ['bad domain', { provider: 'PLATFORM', domain: 'not a domain' }],
        ['bad email', { provider: 'CLOUDFLARE', domain: 'example.com', email: 'nobody', api_token: 't' }],
        ['missing token', { provider: 'CLOUDFLARE', domain: 'example.com', email: 'dns@example.com' }],
        ['field of another provider', { provider: 'PLATFORM', domain: 'example.com', email: 'dns@example.com' }],
        ['bad region', { provider: 'ROUTE53', domain: 'example.com', credentials: { type: 'STATIC', aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE', aws_secret_access_key: 's' }, aws_region: 'Paris' }],
        ['unknown provider', { provider: 'GANDI', domain: 'example.com' }],
      ];
      for (const [label, dnsProvider] of cases) {
        expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url, payload: { dns_provider: dnsProvider } }), 400);
        expect((await ctx().call(owner.auth, { method: 'GET', url })).json(), label).toEqual({ dns_provider: { provider: 'PLATFORM', domain: 'apps.example.net' } });
      }
    });

    it('binds a cluster to credentials of its provider and keeps bound credentials from deletion', async () => {
      const url = at(plainId, 'cloudProviderInfo');
      expect((await ctx().call(viewer.auth, { method: 'GET', url })).json()).toEqual({ cloud_provider: 'AWS', region: 'eu-west-3' });
      const name = uniqueName('aws');
      const credentials = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/aws/credentials`,
        payload: { type: 'AWS_ROLE', name, role_arn: 'arn:aws:iam::123456789012:role/slipway' },
      });
      expect(credentials.statusCode, credentials.body).toBe(201);
      const credentialsId = credentials.json<{ id: string }>().id;

      const bound = await ctx().call(owner.auth, { method: 'POST', url, payload: { cloud_provider: 'AWS', credentials: { id: credentialsId }, region: 'us-east-1' } });
      expect(bound.statusCode, bound.body).toBe(201);
      const view = { cloud_provider: 'AWS', credentials: { id: credentialsId, name }, region: 'us-east-1' };
      expect(bound.json()).toEqual(view);
      expect((await ctx().call(viewer.auth, { method: 'GET', url })).json()).toEqual(view);

      const gcp = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/gcp/credentials`,
        payload: { name: uniqueName('gcp'), gcp_credentials: JSON.stringify({ type: 'service_account', project_id: 'p', private_key_id: 'k', client_email: 'sa@p.iam.gserviceaccount.com' }) },
      });
      const theirCredentials = await ctx().call(stranger.owner.auth, {
        method: 'POST',
        url: `/organization/${stranger.organizationId}/aws/credentials`,
        payload: { type: 'AWS_ROLE', name: uniqueName('theirs'), role_arn: 'arn:aws:iam::123456789012:role/theirs' },
      });
      expect(theirCredentials.statusCode, theirCredentials.body).toBe(201);
      const refusals: Array<[string, Record<string, unknown>]> = [
        ['no credentials', { cloud_provider: 'AWS' }],
        ['unknown credentials', { credentials: { id: '0190f1f0-0000-7000-8000-000000000000' } }],
        ["another organization's", { credentials: { id: theirCredentials.json<{ id: string }>().id } }],
        ['another provider than the cluster', { cloud_provider: 'GCP', credentials: { id: credentialsId } }],
        ['bad region', { credentials: { id: credentialsId }, region: 'US East' }],
        ['unknown field', { credentials: { id: credentialsId }, zone: 'a' }],
      ];
      if (gcp.statusCode === 201) refusals.push(['credentials of another provider', { credentials: { id: gcp.json<{ id: string }>().id } }]);
      for (const [label, payload] of refusals) {
        expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload }), 400);
        expect((await ctx().call(owner.auth, { method: 'GET', url })).json(), label).toEqual(view);
      }

      const deleted = await ctx().call(owner.auth, { method: 'DELETE', url: `/organization/${organizationId}/aws/credentials/${credentialsId}` });
      expectErrorBody(deleted, 409);
      expect((await ctx().call(owner.auth, { method: 'GET', url })).json()).toEqual(view);
    });

    it('signs a JWT scoped to an EKS Anywhere cluster, and refuses one for another kind', async () => {
      const answer = await ctx().call(owner.auth, { method: 'GET', url: at(eksAnywhereId, 'eks-anywhere/jwt') });
      expect(answer.statusCode, answer.body).toBe(200);
      const { jwt } = answer.json<{ jwt: string }>();
      expect(decodeProtectedHeader(jwt).alg).toBe('HS256');
      const claims = decodeJwt(jwt);
      expect(claims.sub).toBe(`cluster:${eksAnywhereId}`);
      expect(claims.aud).toBe('slipway-eks-anywhere');
      expect(claims.organization_id).toBe(organizationId);
      expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600);
      const refused = expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: at(plainId, 'eks-anywhere/jwt') }), 400);
      expect(refused.message).toContain('not an EKS Anywhere cluster');
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url: `/organization/${stranger.organizationId}/cluster/${eksAnywhereId}/eks-anywhere/jwt` }), 404);
    });

    it("lists the commits of the cluster definition's repository and selects one", async () => {
      const listed = await ctx().call(viewer.auth, { method: 'GET', url: at(eksAnywhereId, 'eks-anywhere/commits') });
      expect(listed.statusCode, listed.body).toBe(200);
      const commits = listed.json<{ results: Array<{ git_commit_id: string; message: string; author_name: string }> }>().results;
      expect(commits).toHaveLength(1);
      const [commit] = commits;
      expect(commit?.message).toBe('main fixture');
      const commitId = commit?.git_commit_id ?? '';
      expect(commitId).toMatch(/^[0-9a-f]{40}$/);

      const selected = await ctx().call(owner.auth, { method: 'PUT', url: at(eksAnywhereId, 'eks-anywhere/commit'), payload: { commit_id: commitId.slice(0, 10).toUpperCase() } });
      expect(selected.statusCode, selected.body).toBe(200);
      expect(selected.json()).toEqual({ commit_id: commitId });
      expect((await settingsRow(eksAnywhereId))?.eks_anywhere_commit_id).toBe(commitId);

      expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: at(eksAnywhereId, 'eks-anywhere/commit'), payload: { commit_id: 'deadbeefdeadbeef' } }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: at(eksAnywhereId, 'eks-anywhere/commit'), payload: { commit_id: 'main' } }), 400);
      expectErrorBody(await ctx().call(viewer.auth, { method: 'PUT', url: at(eksAnywhereId, 'eks-anywhere/commit'), payload: { commit_id: commitId } }), 403);
      expect((await settingsRow(eksAnywhereId))?.eks_anywhere_commit_id).toBe(commitId);
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: at(plainId, 'eks-anywhere/commits') }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: at(plainId, 'eks-anywhere/commit'), payload: { commit_id: commitId } }), 400);
    });

    it('answers 400 when the git host refuses the repository\'s token', async () => {
      const wrong = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/gitToken`, payload: { name: uniqueName('wrong'), type: 'GITLAB', token: 'glpat-WrongValue0000000000' } });
      expect(wrong.statusCode, wrong.body).toBe(201);
      const created = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/cluster`,
        payload: { name: uniqueName('eksa'), region: 'eu-west-3', cloud_provider: 'AWS', infrastructure_charts_parameters: eksAnywhereParameters(wrong.json<{ id: string }>().id) },
      });
      expect(created.statusCode, created.body).toBe(201);
      const clusterId = created.json<{ id: string }>().id;
      expectErrorBody(await ctx().call(owner.auth, { method: 'GET', url: at(clusterId, 'eks-anywhere/commits') }), 400);
      expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: at(clusterId, 'eks-anywhere/commit'), payload: { commit_id: 'abcdef0' } }), 400);
      expect(await settingsRow(clusterId)).toBeUndefined();
    });

    it("stores Karpenter's Fargate subnets for a Karpenter cluster only", async () => {
      const url = at(karpenterId, 'karpenterPrivateSubnetIds');
      const payload = {
        eks_karpenter_fargate_subnets_zone_a_ids: ['subnet-0123456789abcdef0'],
        eks_karpenter_fargate_subnets_zone_b_ids: ['subnet-0a1b2c3d'],
        eks_karpenter_fargate_subnets_zone_c_ids: [],
      };
      const stored = await ctx().call(owner.auth, { method: 'PUT', url, payload });
      expect(stored.statusCode, stored.body).toBe(200);
      const expected = { zone_a: ['subnet-0123456789abcdef0'], zone_b: ['subnet-0a1b2c3d'], zone_c: [] };
      const read = async () => JSON.parse(JSON.stringify((await settingsRow(karpenterId))?.karpenter_fargate_subnets)) as unknown;
      const asObject = (value: unknown) => (typeof value === 'string' ? (JSON.parse(value) as unknown) : value);
      expect(asObject(await read())).toEqual(expected);

      const refusals: Array<[string, Record<string, unknown>]> = [
        ['malformed id', { eks_karpenter_fargate_subnets_zone_a_ids: ['subnet-xyz'] }],
        ['same id in two zones', { eks_karpenter_fargate_subnets_zone_a_ids: ['subnet-0a1b2c3d'], eks_karpenter_fargate_subnets_zone_b_ids: ['subnet-0a1b2c3d'] }],
        ['repeated id', { eks_karpenter_fargate_subnets_zone_a_ids: ['subnet-0a1b2c3d', 'subnet-0a1b2c3d'] }],
        ['unknown field', { eks_karpenter_fargate_subnets_zone_d_ids: [] }],
      ];
      for (const [label, body] of refusals) {
        expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url, payload: body }), 400);
        expect(asObject(await read()), label).toEqual(expected);
      }
      const notKarpenter = expectErrorBody(await ctx().call(owner.auth, { method: 'PUT', url: at(plainId, 'karpenterPrivateSubnetIds'), payload }), 400);
      expect(notKarpenter.message).toContain('does not run Karpenter');
    });

    it("previews a component of the cluster's platform configuration over its stored values", async () => {
      const url = at(karpenterId, 'platformBinding/component/cert-manager/resolve');
      expect(expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: {} }), 404).message).toContain('no platform configuration');
      const configured = await ctx().call(owner.auth, {
        method: 'PUT',
        url: at(karpenterId, 'platformConfiguration'),
        payload: {
          templateKey: 'aws-eks-baseline',
          templateVersion: '2.0.0',
          layerSelections: { observability: false, autoscaling: false },
          managedConfig: { 'cert-manager': { acme_email: 'ops@example.com' } },
          customerProvidedInputs: {},
        },
      });
      expect(configured.statusCode, configured.body).toBe(200);

      const preview = await ctx().call(viewer.auth, { method: 'POST', url, payload: {} });
      expect(preview.statusCode, preview.body).toBe(200);
      const resolution = preview.json<{ clusterId: string; componentKey: string; requirements: Array<{ key: string; status: string }>; violations: unknown[] }>();
      expect(resolution.clusterId).toBe(karpenterId);
      expect(resolution.componentKey).toBe('cert-manager');
      expect(resolution.requirements.find((requirement) => requirement.key === 'acme_email')?.status).toBe('READY');
      expect(resolution.violations).toEqual([]);

      const overridden = await ctx().call(owner.auth, { method: 'POST', url, payload: { profileConfig: { acme_email: 'not-an-email' } } });
      expect(overridden.statusCode, overridden.body).toBe(200);
      expect(overridden.json<{ violations: Array<{ fieldPath: string }> }>().violations.map((violation) => violation.fieldPath)).toContain('profileConfig.acme_email');

      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url: at(karpenterId, 'platformBinding/component/no-such-component/resolve'), payload: {} }), 404);
      expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: { colour: 'blue' } }), 400);
      expectErrorBody(
        await ctx().call(stranger.owner.auth, { method: 'POST', url: `/organization/${stranger.organizationId}/cluster/${karpenterId}/platformBinding/component/cert-manager/resolve`, payload: {} }),
        404,
      );
    });

    it("runs an analysis through the installation's worker until it has ended", async () => {
      const started = await ctx().call(owner.auth, { method: 'POST', url: `/clusters/${plainId}/analysis`, payload: { kind: 'COST_RECOMMENDATION', output_format: 'TABLE' } });
      expect(started.statusCode, started.body).toBe(202);
      const { id } = started.json<{ id: string }>();
      await vi.waitFor(
        async () => {
          const analysis = await ctx().call(viewer.auth, { method: 'GET', url: `/clusters/${plainId}/analysis/${id}` });
          expect(analysis.json<{ status: string }>().status).toBe('SUCCEEDED');
        },
        { timeout: 20_000, interval: 50 },
      );
      const logs = await ctx().call(viewer.auth, { method: 'GET', url: `/clusters/${plainId}/analysis/${id}/logs` });
      expect(logs.json<{ results: Array<{ message: string }> }>().results.some((line) => line.message.includes('no agent has ever connected'))).toBe(true);
    });

    it("deletes an organization whose cluster is bound to the organization's credentials, settings and all", async () => {
      const doomed = await ctx().signUpWithOrganization();
      const cluster = await ctx().call(doomed.owner.auth, {
        method: 'POST',
        url: `/organization/${doomed.organizationId}/cluster`,
        payload: { name: uniqueName('doomed'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
      });
      const clusterId = cluster.json<{ id: string }>().id;
      const credentials = await ctx().call(doomed.owner.auth, {
        method: 'POST',
        url: `/organization/${doomed.organizationId}/aws/credentials`,
        payload: { type: 'AWS_ROLE', name: uniqueName('doomed'), role_arn: 'arn:aws:iam::123456789012:role/doomed' },
      });
      const bound = await ctx().call(doomed.owner.auth, {
        method: 'POST',
        url: `/organization/${doomed.organizationId}/cluster/${clusterId}/cloudProviderInfo`,
        payload: { credentials: { id: credentials.json<{ id: string }>().id } },
      });
      expect(bound.statusCode, bound.body).toBe(201);
      const removed = await ctx().call(doomed.owner.auth, { method: 'DELETE', url: `/organization/${doomed.organizationId}` });
      expect(removed.statusCode, removed.body).toBe(204);
      await ctx().organizationPurged(doomed.organizationId);
      expect(await settingsRow(clusterId)).toBeUndefined();
    });
  },
  { gitAllowPrivateHosts: true },
);
