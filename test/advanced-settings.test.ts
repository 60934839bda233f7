import { beforeAll, expect, it } from 'vitest';
import { ADVANCED_SETTINGS_KINDS, advancedSettingKeysOf, defaultAdvancedSettings } from '../src/modules/services/services.advanced-settings.ts';
import { readJson } from '../src/db/db.json.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The reference's advanced-settings operations (issue 24 part 3; docs/service-kinds.md, "Advanced settings"): each
 * kind's defaults; a service's settings read (every key: its own value or the default), replaced (201, a key left
 * out goes back to its default), refused whole on a bad key or value (400, nothing written), kept through an edit of
 * the service, carried by the next deployment's snapshot; other organizations' services are 404. Every answer is
 * checked against the reference's schema by the test app (reference-contract.ts).
 */
describeEachDatabase('advanced settings', (ctx) => {
  let owner: TestUser;
  let environmentId: string;

  async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, auth = owner.auth) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function ok<T>(method: 'GET' | 'POST' | 'PUT', url: string, payload: unknown, status: number, auth = owner.auth): Promise<T> {
    const response = await call(method, url, payload, auth);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  async function createApplication(): Promise<string> {
    const body = { name: uniqueName('web'), git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' }, healthchecks: {}, ports: [{ internal_port: 8080, publicly_accessible: true }] };
    return (await ok<{ id: string }>('POST', `/environment/${environmentId}/application`, body, 201)).id;
  }

  beforeAll(async () => {
    let organizationId: string;
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    const projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    const clusterId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
    environmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName('prod'), cluster: clusterId }, 201)).id;
  });

  it("answers each kind's defaults, with exactly its keys", async () => {
    const paths = { APPLICATION: 'Application', CONTAINER: 'Container', JOB: 'Job', HELM: 'Helm', TERRAFORM: 'Terraform' } as const;
    for (const kind of ADVANCED_SETTINGS_KINDS) {
      const defaults = await ok<Record<string, unknown>>('GET', `/default${paths[kind]}AdvancedSettings`, undefined, 200);
      expect(defaults).toEqual(defaultAdvancedSettings(kind));
      expect(Object.keys(defaults).sort()).toEqual(advancedSettingKeysOf(kind).map((entry) => entry.key).sort());
    }
    const application = await ok<Record<string, unknown>>('GET', '/defaultApplicationAdvancedSettings', undefined, 200);
    expect(application).toMatchObject({ 'deployment.termination_grace_period_seconds': 60, 'network.ingress.force_ssl_redirect': true, 'build.timeout_max_sec': 1800 });
    expectErrorBody(await ctx().call(undefined, { method: 'GET', url: '/defaultJobAdvancedSettings' }), 401);
  });

  it('reads, replaces and resets a service’s settings; an edit of the service keeps them; the next deployment carries them', async () => {
    const applicationId = await createApplication();
    const url = `/application/${applicationId}/advancedSettings`;
    expect(await ok('GET', url, undefined, 200)).toEqual(defaultAdvancedSettings('APPLICATION'));

    const edited = await ok<Record<string, unknown>>(
      'PUT',
      url,
      { 'deployment.termination_grace_period_seconds': 5, 'network.ingress.force_ssl_redirect': false, 'deployment.lifecycle.pre_stop_exec_command': ['sh', '-c', 'sleep 1'], 'hpa.memory.average_utilization_percent': 80 },
      201,
    );
    expect(edited).toEqual({
      ...defaultAdvancedSettings('APPLICATION'),
      'deployment.termination_grace_period_seconds': 5,
      'network.ingress.force_ssl_redirect': false,
      'deployment.lifecycle.pre_stop_exec_command': ['sh', '-c', 'sleep 1'],
      'hpa.memory.average_utilization_percent': 80,
    });
    expect(await ok('GET', url, undefined, 200)).toEqual(edited);
    // Only what differs from the defaults is kept.
    const row = await ctx().database.db.selectFrom('services').select('settings').where('id', '=', applicationId).executeTakeFirstOrThrow();
    expect(readJson<Record<string, unknown>>(row.settings).advanced_settings).toEqual({
      'deployment.termination_grace_period_seconds': 5,
      'network.ingress.force_ssl_redirect': false,
      'deployment.lifecycle.pre_stop_exec_command': ['sh', '-c', 'sleep 1'],
      'hpa.memory.average_utilization_percent': 80,
    });

    // Editing the service itself keeps them.
    const service = await ok<Record<string, unknown>>('GET', `/application/${applicationId}`, undefined, 200);
    await ok('PUT', `/application/${applicationId}`, { name: service.name, git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' }, healthchecks: {}, ports: [{ internal_port: 8080, publicly_accessible: true }] }, 200);
    expect(await ok('GET', url, undefined, 200)).toEqual(edited);

    // The deployment's snapshot carries them to the cluster's agent.
    await ok('POST', `/application/${applicationId}/deploy`, {}, 202);
    const deployment = await ctx().database.db.selectFrom('service_deployments').select('snapshot').where('service_id', '=', applicationId).executeTakeFirstOrThrow();
    expect(readJson<{ service: { settings: Record<string, unknown> } }>(deployment.snapshot).service.settings.advanced_settings).toMatchObject({ 'deployment.termination_grace_period_seconds': 5 });

    // A PUT is the whole object: what it leaves out goes back to its default.
    expect(await ok('PUT', url, { 'build.timeout_max_sec': 600 }, 201)).toEqual({ ...defaultAdvancedSettings('APPLICATION'), 'build.timeout_max_sec': 600 });
    expect(await ok('PUT', url, {}, 201)).toEqual(defaultAdvancedSettings('APPLICATION'));
    const reset = await ctx().database.db.selectFrom('services').select('settings').where('id', '=', applicationId).executeTakeFirstOrThrow();
    expect(readJson<Record<string, unknown>>(reset.settings).advanced_settings).toBeUndefined();
  });

  it('refuses a bad key or value whole, naming it, and writes nothing', async () => {
    const applicationId = await createApplication();
    const url = `/application/${applicationId}/advancedSettings`;
    await ok('PUT', url, { 'build.timeout_max_sec': 900 }, 201);
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ 'build.timeout_max_sec': 'fast' }, '/build.timeout_max_sec'],
      [{ 'build.timeout_max_sec': 10 }, '/build.timeout_max_sec'],
      [{ 'deployment.update_strategy.rolling_update.max_surge_percent': 150 }, '/deployment.update_strategy.rolling_update.max_surge_percent'],
      [{ 'deployment.antiaffinity.pod': 'Required' }, '/deployment.antiaffinity.pod'],
      [{ 'cronjob.concurrency_policy': 'Forbid' }, 'cronjob.concurrency_policy'],
      [{ 'network.ingress.force_ssl_redirect': 'yes' }, '/network.ingress.force_ssl_redirect'],
      [{ 'deployment.affinity.node.required': { 'bad key!': 'x' } }, '/deployment.affinity.node.required'],
      [{ 'network.ingress.extra_headers': 'a\u0000b' }, '/network.ingress.extra_headers'],
    ];
    for (const [body, field] of bad) {
      const refused = await call('PUT', url, body);
      expectErrorBody(refused, 400);
      expect(refused.body, JSON.stringify(body)).toContain(field);
    }
    expect((await ok<Record<string, unknown>>('GET', url, undefined, 200))['build.timeout_max_sec']).toBe(900);
    // A job has its own keys; an application's is refused there.
    const job = await ok<{ id: string }>('POST', `/environment/${environmentId}/job`, {
      name: uniqueName('nightly'),
      source: { image: { image_name: 'busybox', tag: '1', registry_id: await registryId() } },
      schedule: { cronjob: { scheduled_at: '0 3 * * *', timezone: 'UTC' } },
      healthchecks: {},
    }, 201);
    expect(await ok<Record<string, unknown>>('PUT', `/job/${job.id}/advancedSettings`, { 'cronjob.concurrency_policy': 'Replace' }, 201)).toMatchObject({ 'cronjob.concurrency_policy': 'Replace' });
    expectErrorBody(await call('PUT', `/job/${job.id}/advancedSettings`, { 'network.ingress.force_ssl_redirect': false }), 400);
  });

  it('hides other organizations’ services and kinds other than the path’s (404)', async () => {
    const applicationId = await createApplication();
    const stranger = await ctx().signUpWithOrganization();
    expectErrorBody(await call('GET', `/application/${applicationId}/advancedSettings`, undefined, stranger.owner.auth), 404);
    expectErrorBody(await call('PUT', `/application/${applicationId}/advancedSettings`, {}, stranger.owner.auth), 404);
    expectErrorBody(await call('GET', `/container/${applicationId}/advancedSettings`), 404);
    expectErrorBody(await call('GET', `/application/00000000-0000-4000-8000-000000000000/advancedSettings`), 404);
  });

  async function registryId(): Promise<string> {
    const organizationId = (await ok<{ results: Array<{ id: string }> }>('GET', '/organization', undefined, 200)).results[0]?.id ?? '';
    const registries = await ok<{ results: Array<{ id: string }> }>('GET', `/organization/${organizationId}/containerRegistry`, undefined, 200);
    if (registries.results[0] !== undefined) return registries.results[0].id;
    return (await ok<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, { name: uniqueName('hub'), kind: 'DOCKER_HUB', url: 'https://docker.io' }, 201)).id;
  }
});
