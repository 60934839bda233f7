import { expect, it } from 'vitest';
import { newId } from '../src/lib/ids.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The organization-wide listings (issue 24): every environment and service of the organization (filtered by project,
 * environment, cluster, and by what a custom role may read), every cloud credential with its clusters, the services
 * using a container registry or a Helm repository, the audit log's targets and a webhook's deployment events. Another
 * organization's ids answer 404.
 */

interface Light {
  id: string;
  name: string;
  service_type: string;
  project_id: string;
  environment_id: string;
  cluster_id: string;
  job_type?: string;
}

describeEachDatabase('organization-wide listings', (ctx) => {
  let owner: TestUser;
  let organizationId: string;
  let clusterId: string;
  let otherClusterId: string;
  const projects: Record<'shop' | 'blog', string> = { shop: '', blog: '' };
  const environments: Record<'shopProduction' | 'shopDevelopment' | 'blogProduction', string> = { shopProduction: '', shopDevelopment: '', blogProduction: '' };
  const services: Record<string, string> = {};
  let registryId: string;
  let chartsId: string;

  async function created<T = { id: string }>(auth: string, method: 'POST' | 'PUT', url: string, payload: unknown, status = 201): Promise<T> {
    const response = await ctx().call(auth, { method, url, payload: payload as Record<string, unknown> });
    expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(status);
    return response.json<T>();
  }

  const get = (auth: string, url: string) => ctx().call(auth, { method: 'GET', url });

  it('sets up two projects, three environments on two clusters, and services of four kinds using a registry and a repository', async () => {
    ({ owner, organizationId } = await ctx().signUpWithOrganization());
    projects.shop = (await created(owner.auth, 'POST', `/organization/${organizationId}/project`, { name: uniqueName('shop') }, 200)).id;
    projects.blog = (await created(owner.auth, 'POST', `/organization/${organizationId}/project`, { name: uniqueName('blog') }, 200)).id;
    const cluster = (name: string) => created(owner.auth, 'POST', `/organization/${organizationId}/cluster`, { name, region: 'eu-west-3', cloud_provider: 'AWS', kubernetes: 'MANAGED' });
    clusterId = (await cluster(uniqueName('main'))).id;
    otherClusterId = (await cluster(uniqueName('spare'))).id;
    const environment = (projectId: string, mode: string, onCluster: string) =>
      created(owner.auth, 'POST', `/project/${projectId}/environment`, { name: uniqueName(mode.toLowerCase()), mode, cluster: onCluster });
    environments.shopProduction = (await environment(projects.shop, 'PRODUCTION', clusterId)).id;
    environments.shopDevelopment = (await environment(projects.shop, 'DEVELOPMENT', otherClusterId)).id;
    environments.blogProduction = (await environment(projects.blog, 'PRODUCTION', clusterId)).id;

    registryId = (
      await created(owner.auth, 'POST', `/organization/${organizationId}/containerRegistry`, {
        name: uniqueName('registry'),
        kind: 'GENERIC_CR',
        url: 'https://registry.slipway-listings.invalid',
        config: { username: 'robot', password: 'fixture-pw' },
      })
    ).id;
    chartsId = (await created(owner.auth, 'POST', `/organization/${organizationId}/helmRepository`, { name: uniqueName('charts'), kind: 'HTTPS', url: 'https://charts.slipway-listings.invalid/stable' })).id;

    services.web = (await created(owner.auth, 'POST', `/environment/${environments.shopProduction}/container`, { name: 'web', registry_id: registryId, image_name: 'library/nginx', tag: '1.27', healthchecks: {} })).id;
    services.nightly = (
      await created(owner.auth, 'POST', `/environment/${environments.shopProduction}/job`, {
        name: 'nightly',
        source: { image: { image_name: 'busybox', tag: '1', registry_id: registryId } },
        schedule: { cronjob: { scheduled_at: '0 3 * * *', timezone: 'UTC' } },
        healthchecks: {},
      })
    ).id;
    services.api = (
      await created(owner.auth, 'POST', `/environment/${environments.shopDevelopment}/application`, {
        name: 'api',
        description: 'The shop API',
        git_repository: { url: 'https://github.com/acme/api.git', provider: 'GITHUB', branch: 'main' },
        healthchecks: {},
      })
    ).id;
    services.chart = (
      await created(owner.auth, 'POST', `/environment/${environments.blogProduction}/helm`, {
        name: 'chart',
        source: { helm_repository: { repository: chartsId, chart_name: 'nginx', chart_version: '1.2.3' } },
      })
    ).id;
  });

  it('lists every environment of the organization with its project and mode', async () => {
    const answer = await get(owner.auth, `/organization/${organizationId}/environments`);
    expect(answer.statusCode, answer.body).toBe(200);
    const results = answer.json<{ results: Array<{ id: string; organization: { id: string }; project: { id: string }; mode: string }> }>().results;
    expect(results.map((entry) => entry.id).sort()).toEqual(Object.values(environments).sort());
    expect(results.find((entry) => entry.id === environments.shopDevelopment)).toMatchObject({
      organization: { id: organizationId },
      project: { id: projects.shop },
      mode: 'DEVELOPMENT',
    });
  });

  it('lists every service with where it runs, filtered by project, environment and cluster', async () => {
    const list = async (query = '') => {
      const answer = await get(owner.auth, `/organization/${organizationId}/services${query}`);
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.json<{ results: Light[] }>().results;
    };
    const all = await list();
    expect(all.map((entry) => entry.id).sort()).toEqual(Object.values(services).sort());
    expect(all.find((entry) => entry.id === services.nightly)).toMatchObject({ service_type: 'JOB', job_type: 'CRON', cluster_id: clusterId, project_id: projects.shop });
    expect(all.find((entry) => entry.id === services.api)).toMatchObject({ service_type: 'APPLICATION', description: 'The shop API', cluster_id: otherClusterId });
    expect(all.find((entry) => entry.id === services.web)).not.toHaveProperty('job_type');

    expect((await list(`?project_id=${projects.blog}`)).map((entry) => entry.id)).toEqual([services.chart]);
    expect((await list(`?environment_id=${environments.shopDevelopment}`)).map((entry) => entry.id)).toEqual([services.api]);
    expect((await list(`?cluster_id=${clusterId}`)).map((entry) => entry.id).sort()).toEqual([services.web, services.nightly, services.chart].sort());
    expect(await list(`?project_id=${projects.blog}&cluster_id=${otherClusterId}`)).toEqual([]);
    expect(await list(`?project_id=${newId()}`)).toEqual([]);
    expectErrorBody(await get(owner.auth, `/organization/${organizationId}/services?project_id=shop`), 400);
    expectErrorBody(await get(owner.auth, `/organization/${organizationId}/services?colour=red`), 400);
  });

  it('lists the services using a registry (containers and jobs by schedule) and a repository; other ids answer 404', async () => {
    const registry = await get(owner.auth, `/organization/${organizationId}/containerRegistry/${registryId}/associatedServices`);
    expect(registry.statusCode, registry.body).toBe(200);
    const registryUsers = registry.json<{ results: Array<{ service_id: string; service_type: string; project_id: string; environment_id: string }> }>().results;
    expect(registryUsers.map((entry) => [entry.service_id, entry.service_type]).sort()).toEqual(
      [
        [services.web, 'CONTAINER'],
        [services.nightly, 'CRON'],
      ].sort(),
    );
    expect(registryUsers[0]).toMatchObject({ project_id: projects.shop, environment_id: environments.shopProduction });

    const charts = await get(owner.auth, `/organization/${organizationId}/helmRepository/${chartsId}/associatedServices`);
    expect(charts.json()).toMatchObject({ results: [{ service_id: services.chart, service_name: 'chart', service_type: 'HELM', project_id: projects.blog }] });

    expectErrorBody(await get(owner.auth, `/organization/${organizationId}/containerRegistry/${chartsId}/associatedServices`), 404);
    expectErrorBody(await get(owner.auth, `/organization/${organizationId}/helmRepository/${newId()}/associatedServices`), 404);
    const stranger = await ctx().signUpWithOrganization();
    expectErrorBody(await get(stranger.owner.auth, `/organization/${stranger.organizationId}/containerRegistry/${registryId}/associatedServices`), 404);
    expectErrorBody(await get(stranger.owner.auth, `/organization/${organizationId}/services`), 404);
    expectErrorBody(await get(stranger.owner.auth, `/organization/${organizationId}/environments`), 404);
    expect((await get(stranger.owner.auth, `/organization/${stranger.organizationId}/services`)).json()).toEqual({ results: [] });
  });

  it('shows a custom role only the environments and services it may read, as their own routes would', async () => {
    const role = await created(owner.auth, 'POST', `/organization/${organizationId}/customRole`, {
      name: uniqueName('shop-prod-viewer'),
      project_permissions: [{ project_id: projects.shop, permissions: [{ environment_type: 'PRODUCTION', permission: 'VIEWER' }] }],
    });
    const auth = `Token ${await ctx().createApiToken(owner.auth, organizationId, { name: uniqueName('ci'), role_id: role.id })}`;
    const environmentsSeen = (await get(auth, `/organization/${organizationId}/environments`)).json<{ results: Array<{ id: string }> }>().results;
    expect(environmentsSeen.map((entry) => entry.id)).toEqual([environments.shopProduction]);
    const servicesSeen = (await get(auth, `/organization/${organizationId}/services`)).json<{ results: Light[] }>().results;
    expect(servicesSeen.map((entry) => entry.id).sort()).toEqual([services.web, services.nightly].sort());
    expect((await get(auth, `/helm/${services.chart}`)).statusCode).toBe(403);
    const charts = await get(auth, `/organization/${organizationId}/helmRepository/${chartsId}/associatedServices`);
    expect(charts.json()).toEqual({ results: [] });
    // A built-in VIEWER reads everything.
    const viewer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    expect((await get(viewer.auth, `/organization/${organizationId}/services`)).json<{ results: Light[] }>().results).toHaveLength(4);
  });

  it('lists every cloud credential of every provider with the clusters created on it', async () => {
    const aws = await created(owner.auth, 'POST', `/organization/${organizationId}/aws/credentials`, { type: 'AWS_ROLE', name: uniqueName('aws'), role_arn: 'arn:aws:iam::123456789012:role/slipway' });
    const azure = await created(owner.auth, 'POST', `/organization/${organizationId}/azure/credentials`, {
      name: uniqueName('azure'),
      azure_subscription_id: '0b1f6471-1bf0-4dda-aec3-cb9272f09590',
      azure_tenant_id: '72f988bf-86f1-41af-91ab-2d7cd011db47',
    });
    const clusterName = uniqueName('eks');
    const cluster = await created(owner.auth, 'POST', `/organization/${organizationId}/cluster`, {
      name: clusterName,
      region: 'eu-west-3',
      cloud_provider: 'AWS',
      kubernetes: 'MANAGED',
      cloud_provider_credentials: { cloud_provider: 'AWS', credentials: { id: aws.id } },
    });
    const answer = await get(owner.auth, `/organization/${organizationId}/credentials`);
    expect(answer.statusCode, answer.body).toBe(200);
    const results = answer.json<{ results: Array<{ credential: { id: string; object_type: string }; clusters: unknown[] }> }>().results;
    expect(results).toHaveLength(2);
    expect(results.find((entry) => entry.credential.id === aws.id)).toEqual({
      credential: expect.objectContaining({ object_type: 'AWS_ROLE' }),
      clusters: [{ id: cluster.id, name: clusterName, cloud_provider: 'AWS' }],
    });
    expect(results.find((entry) => entry.credential.id === azure.id)).toEqual({ credential: expect.objectContaining({ object_type: 'AZURE' }), clusters: [] });
  });

  it('lists the targets the audit log has events about, by target type or at the project and environment levels', async () => {
    const targets = async (query: string) => {
      const answer = await get(owner.auth, `/organization/${organizationId}/targets${query}`);
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.json<{ targets: Array<{ id: string; name: string }> }>().targets;
    };
    const projectTargets = await targets('?targetType=PROJECT');
    expect(projectTargets.map((target) => target.id).sort()).toEqual(Object.values(projects).sort());
    expect(projectTargets.every((target) => target.name.length > 0)).toBe(true);
    expect((await targets('?targetType=CONTAINER')).map((target) => target.id)).toEqual([services.web]);
    const atEnvironments = await targets(`?targetLevelToFetch=ENVIRONMENT&projectId=${projects.shop}`);
    expect(atEnvironments.map((target) => target.id).sort()).toEqual([environments.shopProduction, environments.shopDevelopment].sort());
    const atProjects = await targets('?targetLevelToFetch=PROJECT');
    expect(atProjects.map((target) => target.id).sort()).toEqual(Object.values(projects).sort());
    expect(await targets(`?targetType=PROJECT&toTimestamp=2000-01-01T00:00:00Z`)).toEqual([]);
    expectErrorBody(await get(owner.auth, `/organization/${organizationId}/targets?targetType=SPACESHIP`), 400);
    expectErrorBody(await get(owner.auth, `/organization/${organizationId}/targets?fromTimestamp=yesterday`), 400);
    const viewer = await ctx().signUp();
    await ctx().addMemberDirectly(organizationId, viewer, 'VIEWER');
    expectErrorBody(await get(viewer.auth, `/organization/${organizationId}/targets`), 403);
  });

  it('lists a webhook\'s deployment events with the body sent and the answer received, newest first', async () => {
    const hook = await created(owner.auth, 'POST', `/organization/${organizationId}/webhook`, { target_url: 'https://hooks.example.com/slipway', events: ['DEPLOYMENT_STARTED', 'DEPLOYMENT_FAILURE'] });
    const events = `/organization/${organizationId}/webhook/${hook.id}/event`;
    expect((await get(owner.auth, events)).json()).toEqual({ results: [] });

    // Deliveries as the worker logs them (webhooks.test.ts drives the real sender): a success, a failure without an answer, an audit event.
    const { db } = ctx().database;
    const deliver = async (eventType: string, body: Record<string, unknown>, outcome: { status: number | null; error: string | null }) => {
      const messageId = newId();
      const at = new Date().toISOString();
      await db.insertInto('webhook_messages').values({ id: messageId, webhook_id: hook.id, event_type: eventType, body: JSON.stringify(body), created_at: at }).execute();
      const id = newId();
      await db
        .insertInto('webhook_deliveries')
        .values({ id, webhook_id: hook.id, message_id: messageId, event_type: eventType, attempt: 1, trigger: 'EVENT', succeeded: outcome.status === 200 ? 1 : 0, response_status: outcome.status, latency_ms: 12, error: outcome.error, created_at: at })
        .execute();
      return id;
    };
    const started = await deliver('DEPLOYMENT_STARTED', { type: 'DEPLOYMENT_STARTED', data: { service: 'web' } }, { status: 200, error: null });
    const failed = await deliver('DEPLOYMENT_FAILURE', { type: 'DEPLOYMENT_FAILURE' }, { status: null, error: 'connection refused' });
    await deliver('ORGANIZATION_EVENT', { type: 'ORGANIZATION_EVENT' }, { status: 200, error: null });

    const answer = await get(owner.auth, events);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json<{ results: unknown[] }>().results).toEqual([
      {
        id: failed,
        created_at: expect.any(String),
        kind: 'STANDARD',
        matched_event: 'DEPLOYMENT_FAILURE',
        target_url_used: 'https://hooks.example.com/slipway',
        request: { type: 'DEPLOYMENT_FAILURE' },
        target_response_status_code: 0,
        target_response_body: 'connection refused',
      },
      expect.objectContaining({ id: started, matched_event: 'DEPLOYMENT_STARTED', request: { type: 'DEPLOYMENT_STARTED', data: { service: 'web' } }, target_response_status_code: 200 }),
    ]);
    expectErrorBody(await get(owner.auth, `/organization/${organizationId}/webhook/${newId()}/event`), 404);
    const stranger = await ctx().signUpWithOrganization();
    expectErrorBody(await get(stranger.owner.auth, `/organization/${stranger.organizationId}/webhook/${hook.id}/event`), 404);
  });
});
