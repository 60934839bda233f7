import { beforeAll, expect, it } from 'vitest';
import { readJson } from '../src/db/db.json.ts';
import { ingressAnnotationsOf } from '../src/engine/kubernetes/kubernetes-ingress.ts';
import { advancedSettingsOf } from '../src/modules/services/services.advanced-settings.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Network settings (issue 24 part 3; docs/network-settings.md): getApplicationNetwork / editApplicationNetwork and the
 * container's, kept as the advanced setting network.ingress.enable_sticky_session, so a change makes a deployed
 * service OUT_OF_DATE, rides the next deployment to the agent and becomes ingress-nginx's cookie affinity.
 */
describeEachDatabase('network settings', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  let environmentId: string;

  async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, auth = owner.auth) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function ok<T>(method: 'GET' | 'POST' | 'PUT', url: string, payload: unknown, status: number): Promise<T> {
    const response = await call(method, url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  async function createApplication(): Promise<string> {
    const body = { name: uniqueName('web'), git_repository: { url: 'https://github.com/acme/shop', provider: 'GITHUB' }, healthchecks: {}, ports: [{ internal_port: 8080, publicly_accessible: true }] };
    return (await ok<{ id: string }>('POST', `/environment/${environmentId}/application`, body, 201)).id;
  }

  async function createContainer(): Promise<string> {
    const registry = await ok<{ id: string }>('POST', `/organization/${organizationId}/containerRegistry`, { name: uniqueName('hub'), kind: 'DOCKER_HUB', url: 'https://docker.io' }, 201);
    const body = { name: uniqueName('nginx'), registry_id: registry.id, image_name: 'library/nginx', tag: '1.27', healthchecks: {}, ports: [{ internal_port: 80, publicly_accessible: true }] };
    return (await ok<{ id: string }>('POST', `/environment/${environmentId}/container`, body, 201)).id;
  }

  const storedSettings = async (serviceId: string) =>
    readJson<Record<string, unknown>>((await ctx().database.db.selectFrom('services').select('settings').where('id', '=', serviceId).executeTakeFirstOrThrow()).settings);

  beforeAll(async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    const projectId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200)).id;
    const clusterId = (await ok<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: uniqueName('cluster'), region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' }, 201)).id;
    environmentId = (await ok<{ id: string }>('POST', `/project/${projectId}/environment`, { name: uniqueName('prod'), cluster: clusterId }, 201)).id;
  });

  it("reads and replaces an application's and a container's sticky sessions, as their advanced setting", async () => {
    for (const [item, serviceId] of [['application', await createApplication()], ['container', await createContainer()]] as const) {
      const url = `/${item}/${serviceId}/network`;
      expect(await ok('GET', url, undefined, 200)).toEqual({ sticky_session: false });
      // Another advanced setting set before is kept by a network edit.
      await ok('PUT', `/${item}/${serviceId}/advancedSettings`, { 'network.ingress.proxy_body_size_mb': 8 }, 201);
      expect(await ok('PUT', url, { sticky_session: true }, 201)).toEqual({ sticky_session: true });
      expect(await ok('GET', url, undefined, 200)).toEqual({ sticky_session: true });
      expect(await ok<Record<string, unknown>>('GET', `/${item}/${serviceId}/advancedSettings`, undefined, 200)).toMatchObject({
        'network.ingress.enable_sticky_session': true,
        'network.ingress.proxy_body_size_mb': 8,
      });
      expect((await storedSettings(serviceId)).advanced_settings).toEqual({ 'network.ingress.enable_sticky_session': true, 'network.ingress.proxy_body_size_mb': 8 });
      // The advanced settings operation turns it off as well: one stored value.
      await ok('PUT', `/${item}/${serviceId}/advancedSettings`, {}, 201);
      expect(await ok('GET', url, undefined, 200)).toEqual({ sticky_session: false });
      // A PUT is the whole object: left out is false.
      await ok('PUT', url, { sticky_session: true }, 201);
      expect(await ok('PUT', url, {}, 201)).toEqual({ sticky_session: false });
      expect((await storedSettings(serviceId)).advanced_settings).toBeUndefined();
    }
  });

  it('refuses bad bodies (400, nothing written), other kinds and other organizations (404)', async () => {
    const applicationId = await createApplication();
    const url = `/application/${applicationId}/network`;
    await ok('PUT', url, { sticky_session: true }, 201);
    for (const body of [{ sticky_session: 'yes' }, { sticky_session: null }, { sticky_session: true, affinity: 'cookie' }]) {
      const refused = await call('PUT', url, body);
      expectErrorBody(refused, 400);
    }
    expect(await ok('GET', url, undefined, 200)).toEqual({ sticky_session: true });
    expectErrorBody(await call('GET', `/container/${applicationId}/network`), 404);
    expectErrorBody(await call('PUT', `/application/${crypto.randomUUID()}/network`, { sticky_session: true }), 404);
    const stranger = await ctx().signUpWithOrganization();
    expectErrorBody(await call('GET', url, undefined, stranger.owner.auth), 404);
    expectErrorBody(await call('PUT', url, { sticky_session: false }, stranger.owner.auth), 404);
    expect(await ok('GET', url, undefined, 200)).toEqual({ sticky_session: true });
  });

  it('rides the next deployment to the agent, where the ingress renders cookie affinity; a change makes a deployed service OUT_OF_DATE', async () => {
    const applicationId = await createApplication();
    await ok('PUT', `/application/${applicationId}/network`, { sticky_session: true }, 201);
    await ok('POST', `/application/${applicationId}/deploy`, {}, 202);
    const deployment = await ctx().database.db.selectFrom('service_deployments').select(['id', 'snapshot']).where('service_id', '=', applicationId).executeTakeFirstOrThrow();
    const settings = readJson<{ service: { settings: Record<string, unknown> } }>(deployment.snapshot).service.settings;
    expect(settings.advanced_settings).toEqual({ 'network.ingress.enable_sticky_session': true });
    // What the agent spec sends (every key of the kind) and what the Kubernetes driver makes of it.
    const annotations = ingressAnnotationsOf({ advanced_settings: advancedSettingsOf('APPLICATION', settings) }, false);
    expect(annotations).toMatchObject({ 'nginx.ingress.kubernetes.io/affinity': 'cookie', 'nginx.ingress.kubernetes.io/affinity-mode': 'persistent' });
    expect(ingressAnnotationsOf({ advanced_settings: advancedSettingsOf('APPLICATION', {}) }, false)['nginx.ingress.kubernetes.io/affinity']).toBeUndefined();

    // As if the agent had finished the deployment: it is what runs, up to date until the setting changes.
    await ctx().database.db.updateTable('service_runtime').set({ deployed_deployment_id: deployment.id }).where('service_id', '=', applicationId).execute();
    const toUpdate = async () => (await ok<{ results: Array<{ id: string }> }>('GET', `/environment/${environmentId}/application?toUpdate=true`, undefined, 200)).results.map((entry) => entry.id);
    expect(await toUpdate()).not.toContain(applicationId);
    await ok('PUT', `/application/${applicationId}/network`, { sticky_session: false }, 201);
    expect(await toUpdate()).toContain(applicationId);
  });
});
