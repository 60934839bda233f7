import { expect, it } from 'vitest';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * An environment's logs (docs/deployment-queue.md, "Environment logs"): the lines its services' deployments recorded
 * — each service's newest deployment, or one deployment request's (`version`) — and its activity, one entry per
 * action of the environment or of its services. The agent's lines arrive through the real agent protocol.
 */

interface EnvironmentLogLine {
  type: string;
  timestamp: string;
  details: { organization_id: string; cluster_id: string; execution_id: string; transmitter: { id: string; name: string; type: string }; stage: { step: string } };
  error: { tag: string; user_log_message: string } | null;
  message: { safe_message: string } | null;
  deployment_id: string;
}

interface ActivityEntry {
  id: string;
  scope: { type?: string; name: string; id: string };
  state: string;
  status: string;
  action: string;
  service: { id: string; name: string; service_type: string } | null;
}

interface AgentTask {
  id: string;
  subject_id: string;
  deployment_id: string;
  lease_id: string;
}

describeEachDatabase('environment logs', (ctx) => {
  interface World {
    owner: TestUser;
    organizationId: string;
    clusterId: string;
    credential: string;
    environmentId: string;
    applicationId: string;
    databaseId: string;
  }

  async function call(auth: string, method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload }) });
  }

  async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
    const response = await call(auth, 'POST', url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  }

  async function world(): Promise<World> {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
    const projectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
    const environmentId = await created(owner.auth, `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' });
    const applicationId = await created(owner.auth, `/environment/${environmentId}/application`, {
      name: 'web',
      git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' },
      healthchecks: {},
    });
    const databaseId = await created(owner.auth, `/environment/${environmentId}/database`, { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' });
    return { owner, organizationId, clusterId, credential, environmentId, applicationId, databaseId };
  }

  async function lines(w: World, query = ''): Promise<EnvironmentLogLine[]> {
    const response = await call(w.owner.auth, 'GET', `/environment/${w.environmentId}/logs${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<EnvironmentLogLine[]>();
  }

  async function activity(w: World): Promise<ActivityEntry[]> {
    const response = await call(w.owner.auth, 'GET', `/environment/${w.environmentId}/log`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ results: ActivityEntry[] }>().results;
  }

  async function deploy(w: World, item: string, serviceId: string): Promise<string> {
    const response = await call(w.owner.auth, 'POST', `/${item}/${serviceId}/deploy`, {});
    expect(response.statusCode, response.body).toBe(202);
    return response.json<{ deployment_request_id: string }>().deployment_request_id;
  }

  async function leaseTask(w: World, deploymentId: string): Promise<AgentTask> {
    for (let attempt = 0; attempt < 60; attempt++) {
      const response = await call(`Bearer ${w.credential}`, 'GET', '/operator/v1/tasks?wait_seconds=1');
      expect(response.statusCode, response.body).toBe(200);
      const task = response.json<{ tasks: AgentTask[] }>().tasks.find((candidate) => candidate.deployment_id === deploymentId);
      if (task !== undefined) return task;
    }
    throw new Error(`no task was dispatched for deployment ${deploymentId}`);
  }

  it("lists each service's newest deployment's lines, the agent's included, in the order printed", async () => {
    const w = await world();
    expect(await lines(w)).toEqual([]);
    const deploymentId = await deploy(w, 'application', w.applicationId);
    const task = await leaseTask(w, deploymentId);
    const agentLines = [
      { stream: 'stdout', line: 'Step 1/3 : FROM node:24', seq: 1, at: new Date(Date.now() + 1000).toISOString() },
      { stream: 'stderr', line: 'npm warn deprecated', seq: 2, at: new Date(Date.now() + 2000).toISOString() },
    ];
    const appended = await call(`Bearer ${w.credential}`, 'POST', `/operator/v1/tasks/${task.id}/logs`, { lease_id: task.lease_id, lines: agentLines });
    expect(appended.statusCode, appended.body).toBe(200);

    const read = await lines(w);
    expect(read.map((line) => line.message?.safe_message)).toEqual(expect.arrayContaining(['Step 1/3 : FROM node:24', 'npm warn deprecated']));
    expect(read[0]).toMatchObject({
      type: 'SYSTEM',
      details: {
        organization_id: w.organizationId,
        cluster_id: w.clusterId,
        transmitter: { id: w.applicationId, name: 'web', type: 'APPLICATION' },
        stage: { step: 'DEPLOY' },
      },
      error: null,
      deployment_id: deploymentId,
    });
    expect(read[0]?.message?.safe_message).toMatch(/^deploy of application web requested by /);
    expect(read.at(-1)).toMatchObject({ type: 'STDERR', error: { tag: 'STDERR', user_log_message: 'npm warn deprecated' } });
    const times = read.map((line) => line.timestamp);
    expect([...times].sort()).toEqual(times);

    // The database's deployment joins in; `version` narrows the read to one request.
    const databaseDeployment = await deploy(w, 'database', w.databaseId);
    const both = await lines(w);
    expect(new Set(both.map((line) => line.deployment_id))).toEqual(new Set([deploymentId, databaseDeployment]));
    const onlyDatabase = await lines(w, `?version=${databaseDeployment}`);
    expect(onlyDatabase.length).toBeGreaterThan(0);
    for (const line of onlyDatabase) expect(line.details.transmitter).toMatchObject({ id: w.databaseId, type: 'DATABASE' });
  });

  it("reads an environment action's lines: the services' deployments it was carried into", async () => {
    const w = await world();
    const deployed = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploy`);
    expect(deployed.statusCode, deployed.body).toBe(202);
    const requestId = deployed.json<{ deployment_request_id: string }>().deployment_request_id;
    for (let attempt = 0; attempt < 100; attempt++) {
      const row = await ctx().database.db.selectFrom('environment_deployments').select('services_requested_at').where('id', '=', requestId).executeTakeFirst();
      if (row?.services_requested_at != null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const read = await lines(w, `?version=${requestId}`);
    expect(new Set(read.map((line) => line.details.transmitter.id))).toEqual(new Set([w.applicationId, w.databaseId]));

    const entries = await activity(w);
    expect(entries.map((entry) => entry.scope.id).sort()).toEqual([w.environmentId, w.applicationId, w.databaseId].sort());
    expect(entries.find((entry) => entry.id === requestId)).toMatchObject({ scope: { type: 'ENVIRONMENT', id: w.environmentId }, state: 'WAITING', status: 'QUEUED', action: 'DEPLOY', service: null });
    expect(entries.find((entry) => entry.scope.id === w.applicationId)).toMatchObject({
      scope: { type: 'APPLICATION', name: 'web' },
      service: { id: w.applicationId, name: 'web', service_type: 'APPLICATION' },
      state: 'WAITING',
    });
  });

  it('shows in the activity the state each action reached, newest first', async () => {
    const w = await world();
    const first = await deploy(w, 'application', w.applicationId);
    const task = await leaseTask(w, first);
    for (const [seq, event] of ['take', 'built', 'succeed'].entries()) {
      const report = await call(`Bearer ${w.credential}`, 'POST', `/operator/v1/tasks/${task.id}/progress`, { lease_id: task.lease_id, seq: seq + 1, event });
      expect(report.statusCode, report.body).toBe(200);
    }
    const stop = await call(w.owner.auth, 'POST', `/application/${w.applicationId}/stop`);
    expect(stop.statusCode, stop.body).toBe(202);
    const entries = await activity(w);
    expect(entries.map((entry) => [entry.action, entry.state, entry.status])).toEqual([
      ['STOP', 'WAITING', 'QUEUED'],
      ['DEPLOY', 'DEPLOYED', 'DEPLOYED'],
    ]);
  });

  it("refuses a version that is not one of the environment's requests (400) and other organizations (404)", async () => {
    const w = await world();
    const other = await world();
    const otherDeployment = await deploy(other, 'application', other.applicationId);
    for (const version of [otherDeployment, '0190f0b2-6c5e-7000-8000-00000000abcd']) {
      const refused = expectErrorBody(await call(w.owner.auth, 'GET', `/environment/${w.environmentId}/logs?version=${version}`), 400);
      expect(refused.details).toEqual([{ field: '/version', message: 'names no deployment request of this environment' }]);
    }
    expectErrorBody(await call(w.owner.auth, 'GET', `/environment/${w.environmentId}/logs?version=not-a-uuid`), 400);
    expectErrorBody(await call(w.owner.auth, 'GET', `/environment/${other.environmentId}/logs`), 404);
    expectErrorBody(await call(w.owner.auth, 'GET', `/environment/${other.environmentId}/log`), 404);
  });
});
