import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import type { FastifyTypeBox } from '../src/http/fastify.types.ts';
import { AppError } from '../src/lib/errors.ts';
import { createSecretBox } from '../src/lib/secret-box.ts';
import { BUNDLED_CATALOG_DIRECTORY, catalogSourceFor, createRemoteCatalogSource } from '../src/modules/platform-templates/platform-templates.catalog-source.ts';
import { buildCatalog, CatalogInvalidError, parseRelease, type CatalogRelease } from '../src/modules/platform-templates/platform-templates.catalog.ts';
import { createPlatformTemplatesService, type PlatformTemplatesService } from '../src/modules/platform-templates/platform-templates.service.ts';
import { startCatalogServer, type CatalogServer } from './support/catalog-server.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, TestClock, type TestApp, type TestUser } from './support/test-app.ts';

interface Constraints {
  allowedValues: string[] | null;
  min: number | null;
  max: number | null;
  minLength: number | null;
  maxLength: number | null;
  pattern: string | null;
}
interface Field {
  key: string;
  type: string;
  required: boolean;
  defaultValue: string | null;
  label: string;
  description: string | null;
  sensitive: boolean;
  constraints: Constraints;
}
interface Layer {
  key: string;
  mandatory: boolean;
  enabledByDefault: boolean;
  modes: string[];
  providers: string[] | null;
  componentKeys: string[];
  components: { key: string; kind: string; description: string | null; fields: Field[] }[];
}
interface Template {
  key: string;
  version: string;
  status: string;
  description: string | null;
  layers: Layer[];
}
interface Resolution {
  componentKey: string;
  fields: Field[];
  requirements: (Field & { scope: string; status: string })[];
  componentBindings: { input: string; fromComponent: string; output: string }[];
  violations: { code: string; fieldPath: string; message: string }[];
}

function template(results: Template[], key: string, version: string): Template {
  const found = results.find((candidate) => candidate.key === key && candidate.version === version);
  if (found === undefined) throw new Error(`${key}@${version} not listed`);
  return found;
}

function fieldOf(release: Template, componentKey: string, fieldKey: string): Field {
  for (const layer of release.layers) {
    const field = layer.components.find((component) => component.key === componentKey)?.fields.find((candidate) => candidate.key === fieldKey);
    if (field !== undefined) return field;
  }
  throw new Error(`${componentKey}.${fieldKey} not found`);
}

/** A second app on the test app's database, issuer and clock, reading its catalog from `templateCatalogUrl`. */
async function appWithCatalog(testApp: TestApp, templateCatalogUrl: string): Promise<FastifyTypeBox> {
  return buildApp({
    config: {
      oidc: { issuer: testApp.issuer.issuer, audience: testApp.issuer.audience },
      egressIps: [],
      logLevel: 'silent',
      templateCatalogUrl,
    },
    database: testApp.database,
    clock: testApp.clock,
  });
}

const REMOTE_RELEASE = {
  key: 'remote-edge',
  version: '3.0.0',
  status: 'PUBLISHED',
  description: 'Served by the remote catalog source only.',
  modes: ['PLATFORM_MANAGED'],
  providers: ['AWS', 'UNKNOWN'],
  layers: [
    {
      key: 'ingress',
      mandatory: true,
      enabledByDefault: true,
      modes: ['PLATFORM_MANAGED'],
      components: [
        {
          key: 'envoy',
          kind: 'HELM',
          fields: [{ key: 'replicas', type: 'number', label: 'Replicas', required: true, defaultValue: '2', constraints: { min: 1, max: 4 } }],
        },
      ],
    },
  ],
};

describeEachDatabase('platform templates', (ctx) => {
  let owner: TestUser;
  let organizationId: string;

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
  });

  const list = (query = '') => ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/platformTemplate${query}` });
  const resolve = (target: string, query: string, payload: Record<string, unknown> = {}) =>
    ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/platformTemplate/${target}/resolve${query}`, payload });

  describe('listPlatformTemplates', () => {
    it('lists the published and deprecated releases of the bundled catalog, never drafts, with the reference shapes', async () => {
      const response = await list();
      expect(response.statusCode, response.body).toBe(200);
      const { results } = response.json<{ results: Template[] }>();
      expect(results.map((release) => `${release.key}@${release.version}:${release.status}`)).toEqual([
        'aws-eks-baseline@2.0.0:PUBLISHED',
        'aws-eks-baseline@1.1.0:PUBLISHED',
        'aws-eks-baseline@1.0.0:DEPRECATED',
        'generic-kubernetes@1.1.0:PUBLISHED',
        'generic-kubernetes@1.0.0:PUBLISHED',
      ]);
      const eks = template(results, 'aws-eks-baseline', '2.0.0');
      expect(eks.layers.map((layer) => layer.key)).toEqual(['networking', 'kubernetes', 'ingress', 'autoscaling', 'observability']);
      const networking = eks.layers[0] as Layer;
      expect(networking).toMatchObject({ mandatory: true, enabledByDefault: true, modes: ['PLATFORM_MANAGED', 'CUSTOMER_MANAGED'], providers: ['AWS'], componentKeys: ['vpc'] });
      expect(networking.components[0]).toMatchObject({ key: 'vpc', kind: 'TERRAFORM' });
      // Without a context every field is listed with its base constraints, nulls where a constraint is not set.
      expect(fieldOf(eks, 'ingress-nginx', 'replica_count')).toEqual({
        key: 'replica_count',
        type: 'number',
        required: true,
        defaultValue: '2',
        label: 'Controller replicas',
        description: null,
        sensitive: false,
        constraints: { allowedValues: null, min: 1, max: 10, minLength: null, maxLength: null, pattern: null },
      });
      expect(fieldOf(eks, 'vpc', 'cidr_block').defaultValue).toBe('10.0.0.0/16');
      expect(fieldOf(eks, 'log-forwarder', 'datadog_api_key').sensitive).toBe(true);
      expect(template(results, 'generic-kubernetes', '1.1.0').layers.find((layer) => layer.key === 'ingress')?.providers).toBeNull();
    });

    it('narrows templates, layers and field constraints to a customer-managed AWS cluster', async () => {
      const response = await list('?clusterMode=CUSTOMER_MANAGED&cloudProvider=AWS');
      expect(response.statusCode, response.body).toBe(200);
      const { results } = response.json<{ results: Template[] }>();
      const eks = template(results, 'aws-eks-baseline', '2.0.0');
      // The EKS cluster layer is the platform's to create: it does not apply when the customer manages the cluster.
      expect(eks.layers.map((layer) => layer.key)).toEqual(['networking', 'ingress', 'autoscaling', 'observability']);
      expect(eks.layers.every((layer) => layer.modes.join() === 'CUSTOMER_MANAGED' && layer.providers?.join() === 'AWS')).toBe(true);
      expect(fieldOf(eks, 'ingress-nginx', 'replica_count')).toMatchObject({ defaultValue: '1', constraints: { min: 1, max: 5 } });
      expect(fieldOf(eks, 'ingress-nginx', 'load_balancer_type').constraints.allowedValues).toEqual(['nlb']);
      expect(fieldOf(eks, 'prometheus', 'retention_days').constraints.max).toBe(30);
      expect(() => fieldOf(eks, 'vpc', 'cidr_block')).toThrow();
      // The generic template applies everywhere, but its on-premise storage layer does not apply on AWS.
      expect(template(results, 'generic-kubernetes', '1.1.0').layers.map((layer) => layer.key)).toEqual(['ingress', 'observability', 'backup']);
    });

    it('narrows to a platform-managed on-premise cluster (UNKNOWN provider): no AWS template, on-premise defaults', async () => {
      const response = await list('?clusterMode=PLATFORM_MANAGED&cloudProvider=UNKNOWN');
      expect(response.statusCode, response.body).toBe(200);
      const { results } = response.json<{ results: Template[] }>();
      expect(results.map((release) => release.key)).toEqual(['generic-kubernetes', 'generic-kubernetes']);
      const generic = template(results, 'generic-kubernetes', '1.1.0');
      expect(generic.layers.map((layer) => layer.key)).toEqual(['ingress', 'storage', 'observability', 'backup']);
      expect(fieldOf(generic, 'traefik', 'service_type').defaultValue).toBe('NodePort');
      expect(fieldOf(generic, 'prometheus', 'storage_size_gi')).toMatchObject({ defaultValue: '20', constraints: { min: 10, max: 200 } });
      expect(fieldOf(generic, 'velero', 's3_endpoint').type).toBe('string');
    });

    it('refuses clusterMode without cloudProvider and the reverse, and unknown values, with 400', async () => {
      expect(expectErrorBody(await list('?clusterMode=CUSTOMER_MANAGED'), 400).details).toEqual([{ field: '/cloudProvider', message: 'is required with the other' }]);
      expect(expectErrorBody(await list('?cloudProvider=AWS'), 400).details).toEqual([{ field: '/clusterMode', message: 'is required with the other' }]);
      expectErrorBody(await list('?clusterMode=SOMETIMES&cloudProvider=AWS'), 400);
      expectErrorBody(await list('?clusterMode=CUSTOMER_MANAGED&cloudProvider=ON_PREMISE'), 400);
      expectErrorBody(await list('?region=eu'), 400);
    });
  });

  describe('resolvePlatformTemplateComponentConfiguration', () => {
    it('binds runtime inputs to other components on a platform-managed cluster, READY once the output is known', async () => {
      const target = 'aws-eks-baseline/2.0.0/component/ingress-nginx';
      const bare = await resolve(target, '?clusterMode=PLATFORM_MANAGED&cloudProvider=AWS');
      expect(bare.statusCode, bare.body).toBe(200);
      const resolution = bare.json<Resolution>();
      expect(resolution.componentKey).toBe('ingress-nginx');
      expect(resolution.fields.map((field) => field.key)).toEqual(['replica_count', 'load_balancer_type', 'internal']);
      expect(resolution.componentBindings).toEqual([{ input: 'subnet_ids', fromComponent: 'vpc', output: 'public_subnet_ids' }]);
      expect(resolution.requirements.map((requirement) => [requirement.key, requirement.scope, requirement.status])).toEqual([
        ['replica_count', 'PLATFORM_PROFILE', 'READY'],
        ['load_balancer_type', 'PLATFORM_PROFILE', 'READY'],
        ['subnet_ids', 'CLUSTER', 'MISSING'],
      ]);
      expect(resolution.violations).toEqual([]);

      const withOutput = await resolve(target, '?clusterMode=PLATFORM_MANAGED&cloudProvider=AWS', {
        componentOutputs: { vpc: { public_subnet_ids: 'subnet-0a1b2c3d,subnet-0e1f2a3b' } },
      });
      expect(withOutput.json<Resolution>().requirements.find((requirement) => requirement.key === 'subnet_ids')?.status).toBe('READY');

      // A value the platform provides cannot also come from the customer.
      const overridden = await resolve(target, '?clusterMode=PLATFORM_MANAGED&cloudProvider=AWS', { clusterInputs: { subnet_ids: 'subnet-0a1b2c3d' } });
      expect(overridden.json<Resolution>().violations).toEqual([
        { code: 'BOUND_INPUT', fieldPath: 'clusterInputs.subnet_ids', message: expect.stringContaining('vpc') as unknown as string },
      ]);
    });

    it('asks the customer for runtime inputs on a customer-managed cluster and reports each violated constraint', async () => {
      const target = 'aws-eks-baseline/2.0.0/component/ingress-nginx';
      const query = '?clusterMode=CUSTOMER_MANAGED&cloudProvider=AWS';
      const ready = await resolve(target, query, { profileConfig: { replica_count: 3, load_balancer_type: 'nlb' }, clusterInputs: { subnet_ids: 'subnet-0a1b2c3d' } });
      expect(ready.statusCode, ready.body).toBe(200);
      const readyResolution = ready.json<Resolution>();
      expect(readyResolution.componentBindings).toEqual([]);
      expect(readyResolution.violations).toEqual([]);
      expect(readyResolution.requirements.every((requirement) => requirement.status === 'READY')).toBe(true);

      const broken = await resolve(target, query, {
        profileConfig: { replica_count: 7, load_balancer_type: 'alb', internal: 'yes', colour: 'blue' },
        clusterInputs: { subnet_ids: 'sn-123', zone: 'a' },
      });
      expect(broken.statusCode, broken.body).toBe(200);
      const resolution = broken.json<Resolution>();
      expect(resolution.violations.map((violation) => [violation.code, violation.fieldPath])).toEqual([
        ['ABOVE_MAX', 'profileConfig.replica_count'],
        ['NOT_ALLOWED_VALUE', 'profileConfig.load_balancer_type'],
        ['INVALID_TYPE', 'profileConfig.internal'],
        ['UNKNOWN_FIELD', 'profileConfig.colour'],
        ['PATTERN_MISMATCH', 'clusterInputs.subnet_ids'],
        ['UNKNOWN_INPUT', 'clusterInputs.zone'],
      ]);
      expect(resolution.violations[0]?.message).toBe('Controller replicas must be at most 5');
      // An invalid value leaves its requirement unmet unless a default stands in.
      expect(resolution.requirements.find((requirement) => requirement.key === 'subnet_ids')?.status).toBe('MISSING');
      expect(resolution.requirements.find((requirement) => requirement.key === 'replica_count')?.status).toBe('READY');
    });

    it('reports a required field without default as MISSING until a valid value is given', async () => {
      const target = 'aws-eks-baseline/2.0.0/component/cert-manager';
      const query = '?clusterMode=PLATFORM_MANAGED&cloudProvider=AWS';
      const missing = (await resolve(target, query)).json<Resolution>();
      expect(missing.requirements).toEqual([expect.objectContaining({ key: 'acme_email', scope: 'PLATFORM_PROFILE', status: 'MISSING', defaultValue: null })]);
      const invalid = (await resolve(target, query, { profileConfig: { acme_email: 'not-an-address' } })).json<Resolution>();
      expect(invalid.violations.map((violation) => violation.code)).toEqual(['PATTERN_MISMATCH']);
      expect(invalid.requirements[0]?.status).toBe('MISSING');
      const valid = (await resolve(target, query, { profileConfig: { acme_email: 'ops@example.com' } })).json<Resolution>();
      expect(valid.requirements[0]?.status).toBe('READY');
    });

    it('answers 404 for an unknown template, version, draft release or component', async () => {
      const query = '?clusterMode=PLATFORM_MANAGED&cloudProvider=AWS';
      expectErrorBody(await resolve('no-such-template/1.0.0/component/vpc', query), 404);
      expectErrorBody(await resolve('aws-eks-baseline/9.9.9/component/vpc', query), 404);
      expectErrorBody(await resolve('aws-eks-baseline/2.1.0/component/vpc', query), 404);
      expectErrorBody(await resolve('aws-eks-baseline/2.0.0/component/no-such-component', query), 404);
    });

    it('answers 400 without the cluster context, or for a context the template or layer is not made for', async () => {
      expectErrorBody(await resolve('aws-eks-baseline/2.0.0/component/vpc', ''), 400);
      expectErrorBody(await resolve('aws-eks-baseline/2.0.0/component/vpc', '?clusterMode=PLATFORM_MANAGED'), 400);
      expectErrorBody(await resolve('aws-eks-baseline/2.0.0/component/vpc', '?clusterMode=PLATFORM_MANAGED&cloudProvider=GCP'), 400);
      const skipped = expectErrorBody(await resolve('aws-eks-baseline/2.0.0/component/eks-cluster', '?clusterMode=CUSTOMER_MANAGED&cloudProvider=AWS'), 400);
      expect(skipped.message).toContain('layer kubernetes');
      expectErrorBody(await resolve('aws-eks-baseline/2.0.0/component/vpc', '?clusterMode=PLATFORM_MANAGED&cloudProvider=AWS', { profile: {} }), 400);
    });
  });

  describe('when the catalog cannot be loaded', () => {
    let directory: string;
    let broken: FastifyTypeBox;

    beforeAll(async () => {
      // A copy of the bundled catalog with one release broken: a layer's `mandatory` is not a boolean.
      directory = await mkdtemp(path.join(tmpdir(), 'slipway-catalog-'));
      await cp(BUNDLED_CATALOG_DIRECTORY, directory, { recursive: true });
      const file = path.join(directory, 'generic-kubernetes', '1.0.0.json');
      const release = JSON.parse(await readFile(file, 'utf8')) as { layers: { mandatory: unknown }[] };
      (release.layers[0] as { mandatory: unknown }).mandatory = 'yes';
      await writeFile(file, JSON.stringify(release));
      broken = await appWithCatalog(ctx(), pathToFileURL(directory).href);
    });

    afterAll(async () => {
      await broken.close();
      await rm(directory, { recursive: true, force: true });
    });

    it('answers 500 with the error body to the listing and to resolve', async () => {
      const listing = await broken.inject({ method: 'GET', url: `/organization/${organizationId}/platformTemplate`, headers: { authorization: owner.auth } });
      const body = expectErrorBody(listing, 500);
      expect(body.message).toContain('generic-kubernetes/1.0.0.json');
      expect(body.message).toContain('/layers/0/mandatory');
      const resolution = await broken.inject({
        method: 'POST',
        url: `/organization/${organizationId}/platformTemplate/aws-eks-baseline/2.0.0/component/vpc/resolve?clusterMode=PLATFORM_MANAGED&cloudProvider=AWS`,
        headers: { authorization: owner.auth },
        payload: {},
      });
      expectErrorBody(resolution, 500);
    });

    it('refuses semantic mistakes too: a binding to an output no component has', async () => {
      const file = path.join(directory, 'generic-kubernetes', '1.0.0.json');
      const release = JSON.parse(await readFile(path.join(BUNDLED_CATALOG_DIRECTORY, 'generic-kubernetes', '1.0.0.json'), 'utf8')) as {
        layers: { components: { inputs?: unknown[] }[] }[];
      };
      (release.layers[0]?.components[0] as { inputs?: unknown[] }).inputs = [
        { key: 'ip', type: 'string', label: 'IP', required: true, boundTo: [{ fromComponent: 'loki', output: 'address' }] },
      ];
      await writeFile(file, JSON.stringify(release));
      // The directory source keeps no failed load, so the changed file is read again.
      const listing = await broken.inject({ method: 'GET', url: `/organization/${organizationId}/platformTemplate`, headers: { authorization: owner.auth } });
      expect(expectErrorBody(listing, 500).message).toContain('loki.address');
    });
  });

  describe('with a remote catalog source', () => {
    let server: CatalogServer;
    let remote: FastifyTypeBox;

    beforeAll(async () => {
      server = await startCatalogServer({ kind: 'status', status: 503 });
      remote = await appWithCatalog(ctx(), server.url);
    });

    afterAll(async () => {
      await remote.close();
      await server.close();
    });

    const remoteList = () => remote.inject({ method: 'GET', url: `/organization/${organizationId}/platformTemplate`, headers: { authorization: owner.auth } });

    it('answers 503 while the source answers 503 or drops the connection, then serves and caches its catalog', async () => {
      expect(expectErrorBody(await remoteList(), 503).message).toContain('temporarily unavailable');
      server.behave({ kind: 'close' });
      expectErrorBody(await remoteList(), 503);
      const resolution = await remote.inject({
        method: 'POST',
        url: `/organization/${organizationId}/platformTemplate/remote-edge/3.0.0/component/envoy/resolve?clusterMode=PLATFORM_MANAGED&cloudProvider=AWS`,
        headers: { authorization: owner.auth },
        payload: {},
      });
      expectErrorBody(resolution, 503);

      server.behave({ kind: 'serve', document: { releases: [REMOTE_RELEASE] } });
      const served = await remoteList();
      expect(served.statusCode, served.body).toBe(200);
      expect(served.json<{ results: Template[] }>().results.map((release) => `${release.key}@${release.version}`)).toEqual(['remote-edge@3.0.0']);
      const requestsSoFar = server.requests;

      // Within the TTL the cached catalog answers, even while the source is down.
      server.behave({ kind: 'status', status: 503 });
      expect((await remoteList()).statusCode).toBe(200);
      expect(server.requests).toBe(requestsSoFar);

      // Past the TTL the source is asked again, and its unavailability shows.
      ctx().clock.advance(6 * 60_000);
      expectErrorBody(await remoteList(), 503);
      expect(server.requests).toBe(requestsSoFar + 1);
    });

    it('answers 500 when the source answers something that is not a catalog, or refuses for good', async () => {
      ctx().clock.advance(6 * 60_000);
      server.behave({ kind: 'body', body: '{"releases": [{"key": "broken"}]}' });
      expectErrorBody(await remoteList(), 500);
      server.behave({ kind: 'body', body: '<html>not json</html>' });
      expectErrorBody(await remoteList(), 500);
      server.behave({ kind: 'status', status: 404 });
      const refused = expectErrorBody(await remoteList(), 500);
      expect(refused.message).not.toContain(server.url);
    });
  });
  describe('cluster platform configuration', () => {
    let awsClusterId: string;
    let localClusterId: string;
    const configurationUrl = (clusterId: string, kind = 'platformConfiguration') => `/organization/${organizationId}/cluster/${clusterId}/${kind}`;
    const put = (clusterId: string, payload: Record<string, unknown>, kind = 'platformConfiguration') =>
      ctx().call(owner.auth, { method: 'PUT', url: configurationUrl(clusterId, kind), payload });
    const get = (clusterId: string, kind = 'platformConfiguration') => ctx().call(owner.auth, { method: 'GET', url: configurationUrl(clusterId, kind) });
    const storedRow = (clusterId: string) =>
      ctx().database.db.selectFrom('cluster_platform_configurations').selectAll().where('cluster_id', '=', clusterId).executeTakeFirst();

    const DATADOG_KEY = '0123456789abcdef0123456789abcdef';
    const VALID = {
      templateKey: 'aws-eks-baseline',
      templateVersion: '2.0.0',
      layerSelections: { observability: true, autoscaling: false },
      managedConfig: {
        'cert-manager': { acme_email: 'ops@example.com' },
        'ingress-nginx': { replica_count: 3 },
        'log-forwarder': { destination: 'datadog', datadog_api_key: DATADOG_KEY },
      },
      customerProvidedInputs: {},
    };

    beforeAll(async () => {
      const createCluster = async (payload: Record<string, unknown>) => {
        const response = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/cluster`, payload });
        expect(response.statusCode, response.body).toBe(201);
        return response.json<{ id: string }>().id;
      };
      awsClusterId = await createCluster({ name: 'eks-prod', region: 'us-east-1', cloud_provider: 'AWS', kubernetes: 'MANAGED' });
      await ctx().allowLocalClusters(organizationId);
      localClusterId = await createCluster({ name: 'on-host', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
    });

    it('answers 404 while a cluster has no configuration, and for a cluster of no organization of the caller', async () => {
      expect(expectErrorBody(await get(awsClusterId), 404).message).toContain('no platform configuration');
      expectErrorBody(await get('0190f1f0-0000-7000-8000-000000000000'), 404);
      const stranger = await ctx().signUpWithOrganization();
      const foreign = await ctx().call(stranger.owner.auth, {
        method: 'PUT',
        url: `/organization/${stranger.organizationId}/cluster/${awsClusterId}/platformConfiguration`,
        payload: VALID,
      });
      expectErrorBody(foreign, 404);
      expect(await storedRow(awsClusterId)).toBeUndefined();
    });

    it('stores a valid configuration, resolves its layers, and keeps sensitive values sealed and out of every answer', async () => {
      const response = await put(awsClusterId, VALID);
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json<Record<string, unknown>>();
      expect(body).toEqual({
        clusterId: awsClusterId,
        organizationId,
        templateKey: 'aws-eks-baseline',
        templateVersion: '2.0.0',
        layerSelections: { observability: true, autoscaling: false },
        managedConfig: {
          'cert-manager': { acme_email: 'ops@example.com' },
          'ingress-nginx': { replica_count: 3 },
          'log-forwarder': { destination: 'datadog' },
        },
        customerProvidedInputs: {},
        layers: [
          { key: 'networking', status: 'ENABLED', reason: 'the layer is mandatory', componentKeys: ['vpc'] },
          { key: 'kubernetes', status: 'ENABLED', reason: 'the layer is mandatory', componentKeys: ['eks-cluster'] },
          { key: 'ingress', status: 'ENABLED', reason: 'enabled by default', componentKeys: ['ingress-nginx', 'cert-manager'] },
          { key: 'autoscaling', status: 'DISABLED', reason: 'disabled by the layer selection', componentKeys: ['karpenter'] },
          { key: 'observability', status: 'ENABLED', reason: 'enabled by the layer selection', componentKeys: ['prometheus', 'log-forwarder'] },
        ],
      });
      expect(response.body).not.toContain(DATADOG_KEY);
      const row = await storedRow(awsClusterId);
      expect(row).toMatchObject({ organization_id: organizationId, cluster_mode: 'PLATFORM_MANAGED', cloud_provider: 'AWS' });
      expect(JSON.stringify(row)).not.toContain(DATADOG_KEY);
      expect(row?.sensitive_envelope).toMatch(/^v1\./);

      for (const kind of ['platformConfiguration', 'platformBinding']) {
        const read = await get(awsClusterId, kind);
        expect(read.statusCode, read.body).toBe(200);
        expect(read.json()).toEqual(body);
      }
    });

    it('keeps a stored sensitive value that an update leaves out, and drops it when the field is switched off', async () => {
      const { datadog_api_key: _key, ...withoutKey } = VALID.managedConfig['log-forwarder'];
      const kept = await put(awsClusterId, { ...VALID, managedConfig: { ...VALID.managedConfig, 'log-forwarder': withoutKey } }, 'platformBinding');
      expect(kept.statusCode, kept.body).toBe(200);
      expect((await storedRow(awsClusterId))?.sensitive_envelope).toMatch(/^v1\./);

      // On another template the stored secret has no meaning: nothing is carried over.
      const generic = await put(awsClusterId, { templateKey: 'generic-kubernetes', templateVersion: '1.1.0' });
      expect(generic.statusCode, generic.body).toBe(200);
      expect((await storedRow(awsClusterId))?.sensitive_envelope).toBeNull();
      expect(generic.json<{ layers: { key: string; status: string }[] }>().layers.map((layer) => `${layer.key}:${layer.status}`)).toEqual([
        'ingress:ENABLED',
        'storage:SKIPPED',
        'observability:DISABLED',
        'backup:DISABLED',
      ]);
      expect((await put(awsClusterId, VALID)).statusCode).toBe(200);
    });

    it('refuses an invalid configuration with 400 naming every problem, and changes nothing', async () => {
      const before = await storedRow(awsClusterId);
      const invalid = await put(awsClusterId, {
        templateKey: 'aws-eks-baseline',
        templateVersion: '2.0.0',
        layerSelections: { networking: false, search: true },
        managedConfig: {
          'ingress-nginx': { replica_count: 11, colour: 'blue' },
          'no-such-component': {},
        },
        customerProvidedInputs: { vpc: { vpc_id: 'vpc-0123abcd' } },
      });
      const body = expectErrorBody(invalid, 400);
      expect(body.message).toBe('invalid platform configuration');
      expect(body.details?.map((detail) => detail.field)).toEqual([
        '/layerSelections/networking',
        '/layerSelections/search',
        '/managedConfig/ingress-nginx/replica_count',
        '/managedConfig/ingress-nginx/colour',
        '/managedConfig/no-such-component',
        '/customerProvidedInputs/vpc/vpc_id',
        '/managedConfig/cert-manager/acme_email',
      ]);
      expect(body.details?.[0]?.message).toContain('mandatory');

      const deprecated = expectErrorBody(await put(awsClusterId, { templateKey: 'aws-eks-baseline', templateVersion: '1.0.0' }), 400);
      expect(deprecated.message).toContain('deprecated');
      expectErrorBody(await put(awsClusterId, { templateKey: 'aws-eks-baseline', templateVersion: '2.1.0' }), 404);
      expectErrorBody(await put(awsClusterId, { templateKey: 'nothing', templateVersion: '1.0.0' }), 404);
      expectErrorBody(await put(awsClusterId, { templateKey: 'generic-kubernetes', templateVersion: '1.1.0', layerSelections: { storage: true } }), 400);
      expectErrorBody(await put(awsClusterId, { templateKey: 'aws-eks-baseline' }), 400);
      expectErrorBody(await put(awsClusterId, { ...VALID, extra: true }), 400);
      expectErrorBody(await put(awsClusterId, { ...VALID, layerSelections: { observability: 'yes' } }), 400);
      expect(await storedRow(awsClusterId)).toEqual(before);
    });

    it('settles concurrent updates of one cluster on one of them, whole', async () => {
      const bodies = [1, 2, 3, 4].map((replicas) => ({ templateKey: 'generic-kubernetes', templateVersion: '1.1.0', managedConfig: { traefik: { replicas } } }));
      const answers = await Promise.all(bodies.map((body) => put(awsClusterId, body)));
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200]);
      const stored = (await get(awsClusterId)).json<{ managedConfig: { traefik: { replicas: number } } }>();
      expect([1, 2, 3, 4]).toContain(stored.managedConfig.traefik.replicas);
      const rows = await ctx().database.db.selectFrom('cluster_platform_configurations').select('cluster_id').where('cluster_id', '=', awsClusterId).execute();
      expect(rows).toHaveLength(1);
      expect((await put(awsClusterId, VALID)).statusCode).toBe(200);
    });

    it('validates a local cluster as a platform-managed on-premise (UNKNOWN) one', async () => {
      const aws = expectErrorBody(await put(localClusterId, { templateKey: 'aws-eks-baseline', templateVersion: '2.0.0' }), 400);
      expect(aws.message).toContain('PLATFORM_MANAGED clusters on UNKNOWN');
      const generic = await put(localClusterId, {
        templateKey: 'generic-kubernetes',
        templateVersion: '1.0.0',
        managedConfig: { 'local-path-provisioner': { storage_path: '/var/lib/volumes' } },
        customerProvidedInputs: { traefik: { load_balancer_ip: '192.168.10.5' } },
      });
      expect(generic.statusCode, generic.body).toBe(200);
      expect(generic.json<{ layers: { key: string; status: string }[] }>().layers.map((layer) => `${layer.key}:${layer.status}`)).toEqual([
        'ingress:ENABLED',
        'storage:ENABLED',
        'observability:DISABLED',
      ]);
      const badInput = await put(localClusterId, { templateKey: 'generic-kubernetes', templateVersion: '1.0.0', customerProvidedInputs: { traefik: { load_balancer_ip: 'nine' } } });
      expect(expectErrorBody(badInput, 400).details).toEqual([{ field: '/customerProvidedInputs/traefik/load_balancer_ip', message: 'Load balancer address must match ^([0-9]{1,3}\\.){3}[0-9]{1,3}$' }]);
    });

    it('answers 500 when the stored template release is no longer in the catalog', async () => {
      const server = await startCatalogServer({ kind: 'serve', document: { releases: [REMOTE_RELEASE] } });
      const remote = await appWithCatalog(ctx(), server.url);
      try {
        const response = await remote.inject({ method: 'GET', url: configurationUrl(awsClusterId), headers: { authorization: owner.auth } });
        expect(expectErrorBody(response, 500).message).toContain('no longer in the catalog');
        server.behave({ kind: 'close' });
        ctx().clock.advance(6 * 60_000);
        expectErrorBody(await remote.inject({ method: 'GET', url: configurationUrl(awsClusterId), headers: { authorization: owner.auth } }), 503);
      } finally {
        await remote.close();
        await server.close();
      }
    });

    it('marks the platformBinding operations deprecated in the OpenAPI document, naming their replacements', async () => {
      const document = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json<{
        paths: Record<string, Record<string, { operationId: string; deprecated?: boolean; description?: string }>>;
      }>();
      const binding = document.paths['/organization/{organizationId}/cluster/{clusterId}/platformBinding'];
      const configuration = document.paths['/organization/{organizationId}/cluster/{clusterId}/platformConfiguration'];
      expect(binding?.get).toMatchObject({ operationId: 'getClusterPlatformBinding', deprecated: true });
      expect(binding?.get?.description).toContain('getClusterPlatformConfiguration');
      expect(binding?.put).toMatchObject({ operationId: 'updateClusterPlatformBinding', deprecated: true });
      expect(binding?.put?.description).toContain('updateClusterPlatformConfiguration');
      expect(configuration?.get?.operationId).toBe('getClusterPlatformConfiguration');
      expect(configuration?.get?.deprecated).toBeUndefined();
      expect(configuration?.put?.operationId).toBe('updateClusterPlatformConfiguration');
    });
  });
  describe('the contract createSelfManagedCluster relies on', () => {
    let service: PlatformTemplatesService;
    let clusterId: string;
    const CUSTOMER_REQUEST = {
      templateKey: 'aws-eks-baseline',
      templateVersion: '2.0.0',
      managedConfig: { 'cert-manager': { acme_email: 'ops@example.com' } },
      customerProvidedInputs: { vpc: { vpc_id: 'vpc-0123abcd', private_subnet_ids: 'subnet-0a1b2c3d,subnet-0e1f2a3b' } },
    };

    beforeAll(async () => {
      service = createPlatformTemplatesService({
        db: ctx().database.db,
        clock: ctx().clock,
        secrets: createSecretBox(randomBytes(32)),
        catalog: catalogSourceFor(undefined, ctx().clock),
        clusters: {
          findClusterSummary: () => {
            throw new Error('validate, store and delete never look a cluster up');
          },
        },
      });
      const response = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/cluster`,
        payload: { name: 'contract', region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' },
      });
      expect(response.statusCode, response.body).toBe(201);
      clusterId = response.json<{ id: string }>().id;
    });

    async function appErrorOf(promise: Promise<unknown>): Promise<AppError> {
      const error = await promise.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(AppError);
      return error as AppError;
    }

    it('validates for a customer-managed AWS cluster, and maps a cluster provider the catalog does not name to UNKNOWN', async () => {
      const validated = await service.validatePlatformConfiguration({ request: CUSTOMER_REQUEST, clusterMode: 'CUSTOMER_MANAGED', cloudProvider: 'AWS' });
      expect(validated).toMatchObject({
        templateKey: 'aws-eks-baseline',
        templateVersion: '2.0.0',
        clusterMode: 'CUSTOMER_MANAGED',
        cloudProvider: 'AWS',
        customerProvidedInputs: CUSTOMER_REQUEST.customerProvidedInputs,
      });
      const onPremise = await service.validatePlatformConfiguration({
        request: { templateKey: 'generic-kubernetes', templateVersion: '1.0.0' },
        clusterMode: 'CUSTOMER_MANAGED',
        cloudProvider: 'ON_PREMISE',
      });
      expect(onPremise.cloudProvider).toBe('UNKNOWN');
    });

    it('throws not_found for an unknown release and bad_request for a configuration the release refuses', async () => {
      expect((await appErrorOf(service.validatePlatformConfiguration({ request: { templateKey: 'aws-eks-baseline', templateVersion: '7.0.0' }, clusterMode: 'CUSTOMER_MANAGED', cloudProvider: 'AWS' }))).kind).toBe('not_found');
      const refused = await appErrorOf(
        service.validatePlatformConfiguration({
          request: { ...CUSTOMER_REQUEST, managedConfig: { ...CUSTOMER_REQUEST.managedConfig, 'eks-cluster': { node_count: 3 } } },
          clusterMode: 'CUSTOMER_MANAGED',
          cloudProvider: 'AWS',
        }),
      );
      expect(refused.kind).toBe('bad_request');
      expect(refused.details).toEqual([{ field: '/managedConfig/eks-cluster', message: expect.stringContaining('layer kubernetes') as unknown as string }]);
      expect((await appErrorOf(service.validatePlatformConfiguration({ request: CUSTOMER_REQUEST, clusterMode: 'CUSTOMER_MANAGED', cloudProvider: 'GCP' }))).kind).toBe('bad_request');
    });

    it('stores and deletes inside the caller\'s transaction', async () => {
      const configuration = await service.validatePlatformConfiguration({ request: CUSTOMER_REQUEST, clusterMode: 'CUSTOMER_MANAGED', cloudProvider: 'AWS' });
      const { db } = ctx().database;
      const rowOf = () => db.selectFrom('cluster_platform_configurations').selectAll().where('cluster_id', '=', clusterId).executeTakeFirst();
      await expect(
        db.transaction().execute(async (trx) => {
          await service.storeClusterPlatformConfiguration(trx, { organizationId, clusterId, configuration });
          throw new Error('a later step of the creation failed');
        }),
      ).rejects.toThrow('a later step');
      expect(await rowOf()).toBeUndefined();

      await db.transaction().execute((trx) => service.storeClusterPlatformConfiguration(trx, { organizationId, clusterId, configuration }));
      expect(await rowOf()).toMatchObject({ template_key: 'aws-eks-baseline', cluster_mode: 'CUSTOMER_MANAGED', sensitive_envelope: null });
      await db.transaction().execute((trx) => service.deleteClusterPlatformConfiguration(trx, clusterId));
      expect(await rowOf()).toBeUndefined();
    });
  });
});

describe('the catalog loader', () => {
  const bundled = (): CatalogRelease =>
    parseRelease(JSON.parse(readFileSync(path.join(BUNDLED_CATALOG_DIRECTORY, 'generic-kubernetes', '1.1.0.json'), 'utf8')), 'generic-kubernetes/1.1.0.json');
  const problemOf = (release: CatalogRelease): string => {
    try {
      buildCatalog([release], 'test catalog');
    } catch (error) {
      expect(error).toBeInstanceOf(CatalogInvalidError);
      return (error as Error).message;
    }
    throw new Error('the catalog was accepted');
  };
  const traefik = (release: CatalogRelease) => release.layers[0]?.components[0] as CatalogRelease['layers'][number]['components'][number];

  it('accepts the bundled release as it is', () => {
    expect(buildCatalog([bundled()], 'test catalog').find('generic-kubernetes', '1.1.0')?.layers).toHaveLength(4);
  });

  it('refuses a default that breaks its constraints in one context only', () => {
    const release = bundled();
    (traefik(release).fields[1] as { overrides?: unknown[] }).overrides = [{ when: { modes: ['CUSTOMER_MANAGED'] }, constraints: { max: 1 } }];
    expect(problemOf(release)).toContain('traefik field replicas: default "2" must be at most 1');
  });

  it('refuses duplicate keys, patterns that do not compile, misplaced constraints and a mandatory layer off by default', () => {
    const duplicate = bundled();
    duplicate.layers[1]?.components.push(traefik(duplicate));
    expect(problemOf(duplicate)).toContain('component traefik appears twice');

    const pattern = bundled();
    traefik(pattern).fields[0] = { ...(traefik(pattern).fields[0] as CatalogRelease['layers'][number]['components'][number]['fields'][number]), constraints: { pattern: '(' } };
    expect(problemOf(pattern)).toContain('does not compile');

    const misplaced = bundled();
    traefik(misplaced).fields[0] = { key: 'mode', type: 'string', label: 'Mode', required: false, constraints: { min: 1 } };
    expect(problemOf(misplaced)).toContain('min/max need a number field');

    const mandatory = bundled();
    (mandatory.layers[0] as { enabledByDefault: boolean }).enabledByDefault = false;
    expect(problemOf(mandatory)).toContain('layer ingress is mandatory but not enabled by default');
  });

  it('refuses documents that do not match the schema, naming the place', () => {
    expect(() => parseRelease({ ...bundled(), status: 'LIVE' }, 'x/1.0.0.json')).toThrow(/x\/1.0.0.json: \/status/);
    expect(() => parseRelease({ ...bundled(), version: 'v1' }, 'x/1.0.0.json')).toThrow(/\/version/);
  });

  it('counts a remote source that does not answer in time as unavailable, and shares one fetch between concurrent loads', async () => {
    const server = await startCatalogServer({ kind: 'hang' });
    try {
      const source = createRemoteCatalogSource({ url: server.url, clock: new TestClock(), ttlMs: 60_000, timeoutMs: 200 });
      const error = await source.load().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).kind).toBe('unavailable');
      expect((error as AppError).message).toContain('did not answer in time');

      server.behave({ kind: 'serve', document: { releases: [bundled()] } });
      const before = server.requests;
      const [first, second] = await Promise.all([source.load(), source.load()]);
      expect(first).toBe(second);
      expect(server.requests).toBe(before + 1);
    } finally {
      await server.close();
    }
  });
});
