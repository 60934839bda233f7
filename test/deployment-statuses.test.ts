import { expect, it } from 'vitest';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The status pages that span an environment or a project (issue 24, part 3): getEnvironmentStatuses, the per-kind
 * getEnvironment…Status lists, getProjectEnvironmentsStatus and getProjectEnvironmentServiceNumber. Each reads the
 * statuses the environment and service routes answer one by one; another organization's environment or project is
 * a 404, as for those routes.
 */
describeEachDatabase('environment and project statuses', (ctx) => {
  interface World {
    owner: TestUser;
    organizationId: string;
    projectId: string;
    environmentId: string;
    emptyEnvironmentId: string;
    applicationId: string;
    databaseId: string;
  }

  async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
    const response = await ctx().call(auth, { method: 'POST', url, payload });
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  }

  async function world(): Promise<World> {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId } = await enrolledCluster(ctx(), organizationId, owner);
    const projectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
    const environmentId = await created(owner.auth, `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' });
    const emptyEnvironmentId = await created(owner.auth, `/project/${projectId}/environment`, { name: uniqueName('empty'), cluster: clusterId, mode: 'DEVELOPMENT' });
    const applicationId = await created(owner.auth, `/environment/${environmentId}/application`, {
      name: 'web',
      git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' },
      healthchecks: {},
    });
    const databaseId = await created(owner.auth, `/environment/${environmentId}/database`, { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' });
    return { owner, organizationId, projectId, environmentId, emptyEnvironmentId, applicationId, databaseId };
  }

  async function get<T>(auth: string | undefined, url: string): Promise<T> {
    const response = await ctx().call(auth, { method: 'GET', url });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<T>();
  }

  interface Status {
    id: string;
    state: string;
  }

  it("groups every service's status by kind beside the environment's, as the one-by-one routes answer them", async () => {
    const w = await world();
    const deployed = await ctx().call(w.owner.auth, { method: 'POST', url: `/database/${w.databaseId}/deploy` });
    expect(deployed.statusCode, deployed.body).toBe(202);

    const statuses = await get<Record<string, Status[]> & { environment: Status }>(w.owner.auth, `/environment/${w.environmentId}/statuses`);
    expect(statuses.environment).toEqual(await get(w.owner.auth, `/environment/${w.environmentId}/status`));
    expect(statuses.applications).toEqual([await get(w.owner.auth, `/application/${w.applicationId}/status`)]);
    expect(statuses.databases).toEqual([await get(w.owner.auth, `/database/${w.databaseId}/status`)]);
    expect(statuses.databases?.[0]?.state).toBe('QUEUED');
    expect(statuses.applications?.[0]?.state).toBe('READY');
    for (const group of ['containers', 'jobs', 'helms', 'terraforms', 'agentic_workflows']) expect(statuses[group], group).toEqual([]);

    const empty = await get<Record<string, Status[]> & { environment: Status }>(w.owner.auth, `/environment/${w.emptyEnvironmentId}/statuses`);
    expect(empty.environment.id).toBe(w.emptyEnvironmentId);
    expect(empty.applications).toEqual([]);
  });

  it('lists the statuses of one kind per environment', async () => {
    const w = await world();
    const applications = await get<{ results: Status[] }>(w.owner.auth, `/environment/${w.environmentId}/application/status`);
    expect(applications.results.map((status) => status.id)).toEqual([w.applicationId]);
    const databases = await get<{ results: Status[] }>(w.owner.auth, `/environment/${w.environmentId}/database/status`);
    expect(databases.results.map((status) => status.id)).toEqual([w.databaseId]);
    for (const kind of ['container', 'job', 'helm']) {
      expect((await get<{ results: Status[] }>(w.owner.auth, `/environment/${w.environmentId}/${kind}/status`)).results, kind).toEqual([]);
    }
  });

  it("answers each environment's status and service count for a project", async () => {
    const w = await world();
    const statuses = await get<{ results: Status[] }>(w.owner.auth, `/project/${w.projectId}/environment/status`);
    expect(new Set(statuses.results.map((status) => status.id))).toEqual(new Set([w.environmentId, w.emptyEnvironmentId]));
    for (const status of statuses.results) expect(status).toEqual(await get(w.owner.auth, `/environment/${status.id}/status`));

    const stats = await get<{ results: Array<{ id: string; service_total_number: number; number: number }> }>(w.owner.auth, `/project/${w.projectId}/environment/stats`);
    const byId = new Map(stats.results.map((entry) => [entry.id, entry]));
    expect(byId.get(w.environmentId)).toEqual({ id: w.environmentId, service_total_number: 2, number: 2 });
    expect(byId.get(w.emptyEnvironmentId)).toEqual({ id: w.emptyEnvironmentId, service_total_number: 0, number: 0 });
    expect(byId.size).toBe(2);
  });

  it("refuses malformed and unknown ids, anonymous callers, and another organization's environments and projects", async () => {
    const w = await world();
    const stranger = await ctx().signUpWithOrganization();
    const urls = [
      `/environment/${w.environmentId}/statuses`,
      `/environment/${w.environmentId}/application/status`,
      `/project/${w.projectId}/environment/status`,
      `/project/${w.projectId}/environment/stats`,
    ];
    for (const url of urls) {
      expectErrorBody(await ctx().call(undefined, { method: 'GET', url }), 401);
      // Another organization's member learns nothing, not even that the environment or project exists.
      expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url }), 404);
      expectErrorBody(await ctx().call(w.owner.auth, { method: 'GET', url: url.replace(/[0-9a-f-]{36}/, '0190f0b2-6c5e-7000-8000-00000000dead') }), 404);
      expectErrorBody(await ctx().call(w.owner.auth, { method: 'GET', url: url.replace(/[0-9a-f-]{36}/, 'not-a-uuid') }), 400);
    }
  });
});
