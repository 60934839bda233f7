import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { readJson } from '../src/db/db.json.ts';
import { keyedOverrides, keyedSettingsWith, type KeyedSetting } from '../src/lib/keyed-settings.ts';
import { defaultClusterAdvancedSettings } from '../src/modules/clusters/clusters.advanced-settings.ts';
import { expectErrorBody } from './support/error-body.ts';
import { REFERENCE_DOCUMENT_PATH } from './support/reference-contract.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Cluster advanced settings (issue 24 part 3; docs/clusters.md, "Advanced settings"): the defaults, a cluster's map
 * read and replaced (201, a key left out back to its default, only overrides stored), refused whole on a bad key or
 * value (400 naming it), a change of the cluster's definition (OUT_OF_DATE, refused while locked), and another
 * organization's cluster 404. Every answer is checked against the reference's ClusterAdvancedSettings.
 */

describe('keyed settings', () => {
  const entries: KeyedSetting[] = [
    { key: 'a.flag', value: { type: 'boolean' }, default: false },
    { key: 'a.list', value: { type: 'cidrs' }, default: ['0.0.0.0/0'] },
  ];

  it('keeps only what differs from the defaults, and answers every key', () => {
    expect(keyedOverrides(entries, { 'a.flag': false, 'a.list': ['10.0.0.0/8'] })).toEqual({ 'a.list': ['10.0.0.0/8'] });
    expect(keyedSettingsWith(entries, { 'a.flag': true, stale: 1 })).toEqual({ 'a.flag': true, 'a.list': ['0.0.0.0/0'] });
    expect(keyedSettingsWith(entries, null)).toEqual({ 'a.flag': false, 'a.list': ['0.0.0.0/0'] });
  });
});

describeEachDatabase('cluster advanced settings', (ctx) => {
  let owner: TestUser;
  let organizationId: string;

  async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, auth = owner.auth) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function ok<T>(method: 'GET' | 'POST' | 'PUT', url: string, payload: unknown, status: number): Promise<T> {
    const response = await call(method, url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  async function createCluster(): Promise<string> {
    return (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
  }

  const storedOverrides = async (clusterId: string) =>
    readJson<unknown>((await ctx().database.db.selectFrom('clusters').select('advanced_settings').where('id', '=', clusterId).executeTakeFirstOrThrow()).advanced_settings);

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
  });

  it('answers the defaults, every key of the reference', async () => {
    const defaults = await ok<Record<string, unknown>>('GET', '/defaultClusterAdvancedSettings', undefined, 200);
    expect(defaults).toEqual(defaultClusterAdvancedSettings());
    // Exactly the reference's keys: its schema allows others, so the contract check alone would not notice one missing.
    const reference = parseYaml(readFileSync(REFERENCE_DOCUMENT_PATH, 'utf8')) as { components: { schemas: { ClusterAdvancedSettings: { properties: Record<string, unknown> } } } };
    expect(Object.keys(defaults).sort()).toEqual(Object.keys(reference.components.schemas.ClusterAdvancedSettings.properties).sort());
    expect(defaults).toMatchObject({ 'aws.eks.enable_alb_controller': true, 'aws.eks.efs.throughput_mode': 'elastic', 'registry.mirroring_mode': 'Service', 'envoy.gateway_api.retry.num_retries': null });
    expectErrorBody(await ctx().call(undefined, { method: 'GET', url: '/defaultClusterAdvancedSettings' }), 401);
  });

  it("reads and replaces a cluster's settings, keeping only overrides; an edit of the cluster keeps them", async () => {
    const clusterId = await createCluster();
    const url = `/organization/${organizationId}/cluster/${clusterId}/advancedSettings`;
    expect(await ok('GET', url, undefined, 200)).toEqual(defaultClusterAdvancedSettings());
    const changes = {
      'loki.log_retention_in_week': 4,
      'registry.image_retention_time': 7 * 86_400,
      'database.postgresql.allowed_cidrs': ['10.0.0.0/8', '2001:db8::/32'],
      'cloud_provider.container_registry.tags': { team: 'payments' },
      'envoy.gateway_api.retry.retry_on': '5xx',
      'aws.eks.efs.transition_to_ia': '',
      'aws.eks.enable_alb_controller': true,
    };
    const edited = await ok<Record<string, unknown>>('PUT', url, changes, 201);
    expect(edited).toEqual({ ...defaultClusterAdvancedSettings(), ...changes });
    expect(await ok('GET', url, undefined, 200)).toEqual(edited);
    const { 'aws.eks.enable_alb_controller': _sameAsDefault, ...overrides } = changes;
    expect(await storedOverrides(clusterId)).toEqual(overrides);

    const cluster = await ok<Record<string, unknown>>('GET', `/organization/${organizationId}/cluster/${clusterId}`, undefined, 200);
    await ok('PUT', `/organization/${organizationId}/cluster/${clusterId}`, { name: cluster.name, region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 200);
    expect(await ok('GET', url, undefined, 200)).toEqual(edited);

    // A PUT is the whole map: what it leaves out goes back to its default.
    expect(await ok('PUT', url, { 'platform.static_ip_mode': true }, 201)).toEqual({ ...defaultClusterAdvancedSettings(), 'platform.static_ip_mode': true });
    expect(await ok('PUT', url, {}, 201)).toEqual(defaultClusterAdvancedSettings());
    expect(await storedOverrides(clusterId)).toBeNull();
  });

  it('refuses a bad key or value whole, naming it, and writes nothing', async () => {
    const clusterId = await createCluster();
    const url = `/organization/${organizationId}/cluster/${clusterId}/advancedSettings`;
    await ok('PUT', url, { 'loki.log_retention_in_week': 2 }, 201);
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ 'loki.log_retention_in_week': 'two' }, '/loki.log_retention_in_week'],
      [{ 'loki.log_retention_in_week': 0 }, '/loki.log_retention_in_week'],
      [{ 'loki.deployment_mode': 'distributed' }, '/loki.deployment_mode'],
      [{ 'aws.eks.enable_alb_controller': 'yes' }, '/aws.eks.enable_alb_controller'],
      [{ 'k8s.api.allowed_public_access_cidrs': ['everyone'] }, '/k8s.api.allowed_public_access_cidrs'],
      [{ 'registry.mirroring_mode': 'Mirror' }, '/registry.mirroring_mode'],
      [{ 'network.ingress.force_ssl_redirect': false }, 'network.ingress.force_ssl_redirect'],
      [{ 'nginx.hpa.min_number_instances': 10, 'nginx.hpa.max_number_instances': 3 }, '/nginx.hpa.min_number_instances'],
      [{ 'loki.read.memory_request_mib': 4096 }, '/loki.read.memory_request_mib'],
    ];
    for (const [body, field] of bad) {
      const refused = await call('PUT', url, body);
      expectErrorBody(refused, 400);
      expect(refused.body, JSON.stringify(body)).toContain(field);
    }
    expect((await ok<Record<string, unknown>>('GET', url, undefined, 200))['loki.log_retention_in_week']).toBe(2);
    expect(await storedOverrides(clusterId)).toEqual({ 'loki.log_retention_in_week': 2 });
  });

  it('makes a deployed cluster OUT_OF_DATE, is refused while the cluster is locked (409), and hides other organizations’ clusters (404)', async () => {
    const clusterId = await createCluster();
    const url = `/organization/${organizationId}/cluster/${clusterId}/advancedSettings`;
    // As if its deploy had finished: the definition deployed is the current one.
    const row = await ctx().database.db.selectFrom('clusters').select('config_revision').where('id', '=', clusterId).executeTakeFirstOrThrow();
    await ctx().database.db.updateTable('clusters').set({ deployed_revision: row.config_revision }).where('id', '=', clusterId).execute();
    const deploymentStatus = async () => (await ok<{ deployment_status: string }>('GET', `/organization/${organizationId}/cluster/${clusterId}`, undefined, 200)).deployment_status;
    expect(await deploymentStatus()).toBe('UP_TO_DATE');
    await ok('PUT', url, { 'load_balancer.size': 'lb-m' }, 201);
    expect(await deploymentStatus()).toBe('OUT_OF_DATE');

    await ok('POST', `/cluster/${clusterId}/lock`, { reason: 'freeze' }, 200);
    expectErrorBody(await call('PUT', url, { 'load_balancer.size': 'lb-l' }), 409);
    expect((await ok<Record<string, unknown>>('GET', url, undefined, 200))['load_balancer.size']).toBe('lb-m');

    const stranger = await ctx().signUpWithOrganization();
    expectErrorBody(await call('GET', url, undefined, stranger.owner.auth), 404);
    expectErrorBody(await call('GET', `/organization/${stranger.organizationId}/cluster/${clusterId}/advancedSettings`, undefined, stranger.owner.auth), 404);
    expectErrorBody(await call('PUT', `/organization/${stranger.organizationId}/cluster/${clusterId}/advancedSettings`, {}, stranger.owner.auth), 404);
    expectErrorBody(await call('GET', `/organization/${organizationId}/cluster/${crypto.randomUUID()}/advancedSettings`), 404);
  });
});
