import { expect, it } from 'vitest';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * An environment's bulk actions (docs/deployment-queue.md, "Bulk actions"): deploy, stop, delete and uninstall the
 * services a request names — every id checked first, so a refused request leaves nothing half-done — the uninstall of
 * a whole environment, the clean of failed job runs, and the listings of an environment's services and a project's
 * environments. The agent's side goes through the real agent protocol of an enrolled cluster.
 */

interface AgentTask {
  id: string;
  subject_type: string;
  subject_id: string;
  deployment_id: string;
  lease_id: string;
}

const COMMIT = 'abc1234def0123456789abcdef0123456789abcd';

describeEachDatabase('environment bulk actions', (ctx) => {
  interface World {
    owner: TestUser;
    organizationId: string;
    projectId: string;
    environmentId: string;
    credential: string;
    applicationId: string;
    databaseId: string;
    jobId: string;
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
    const git = { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' };
    const applicationId = await created(owner.auth, `/environment/${environmentId}/application`, { name: 'web', git_repository: git, healthchecks: {} });
    const databaseId = await created(owner.auth, `/environment/${environmentId}/database`, { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' });
    const jobId = await created(owner.auth, `/environment/${environmentId}/job`, {
      name: 'nightly',
      source: { docker: { git_repository: git, dockerfile_path: 'Dockerfile' } },
      schedule: { cronjob: { scheduled_at: '0 3 * * *', timezone: 'UTC' } },
      healthchecks: {},
    });
    return { owner, organizationId, projectId, environmentId, credential, applicationId, databaseId, jobId };
  }

  /** The teardown jobs queued for a service (the payload is JSON text on SQLite, jsonb on PostgreSQL). */
  async function teardownsOf(serviceId: string): Promise<unknown[]> {
    const jobs = await ctx().database.db.selectFrom('jobs').select('payload').where('kind', '=', 'service.teardown').execute();
    return jobs.filter((job) => (typeof job.payload === 'string' ? job.payload : JSON.stringify(job.payload)).includes(serviceId));
  }

  const deploymentsOf = (serviceId: string) =>
    ctx().database.db.selectFrom('service_deployments').selectAll().where('service_id', '=', serviceId).orderBy('id').execute();

  async function serviceState(w: World, item: string, serviceId: string): Promise<{ state: string; service_deployment_status: string; workload?: unknown }> {
    const response = await call(w.owner.auth, 'GET', `/${item}/${serviceId}/status`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  }

  /** Leases tasks until the deployment's own arrives, and has the agent report `events` on it (by default, to its end). */
  async function carryOut(w: World, deploymentId: string, events = ['take', 'built', 'succeed']): Promise<void> {
    for (let attempt = 0; attempt < 60; attempt++) {
      const response = await call(`Bearer ${w.credential}`, 'GET', '/operator/v1/tasks?wait_seconds=1');
      expect(response.statusCode, response.body).toBe(200);
      const task = response.json<{ tasks: AgentTask[] }>().tasks.find((candidate) => candidate.deployment_id === deploymentId);
      if (task === undefined) continue;
      for (const [seq, event] of events.entries()) {
        const report = await call(`Bearer ${w.credential}`, 'POST', `/operator/v1/tasks/${task.id}/progress`, { lease_id: task.lease_id, seq: seq + 1, event });
        expect(report.statusCode, report.body).toBe(200);
      }
      return;
    }
    throw new Error(`no task was dispatched for deployment ${deploymentId}`);
  }

  async function deployToRunning(w: World, item: string, serviceId: string): Promise<void> {
    const response = await call(w.owner.auth, 'POST', `/${item}/${serviceId}/deploy`, {});
    expect(response.statusCode, response.body).toBe(202);
    await carryOut(w, response.json<{ deployment_request_id: string }>().deployment_request_id);
    expect((await serviceState(w, item, serviceId)).state).toBe('DEPLOYED');
  }

  it('deploys the services named at their commit, in one transaction, and every service when none is named', async () => {
    const w = await world();
    const response = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/service/deploy`, {
      applications: [{ application_id: w.applicationId, git_commit_id: COMMIT }],
      databases: [w.databaseId],
    });
    expect(response.statusCode, response.body).toBe(202);
    expect(response.json()).toMatchObject({ id: w.environmentId });
    const [application] = await deploymentsOf(w.applicationId);
    expect(application).toMatchObject({ action: 'DEPLOY', status: 'QUEUED', git_commit_id: COMMIT });
    expect(await deploymentsOf(w.databaseId)).toHaveLength(1);
    // Databases first: the database's deployment was written before the application's.
    expect(((await deploymentsOf(w.databaseId))[0]?.id ?? '') < (application?.id ?? '')).toBe(true);
    expect(await deploymentsOf(w.jobId)).toEqual([]);

    // Both are busy now: a deploy of everything is refused as a whole, the job's included.
    expectErrorBody(await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/service/deploy`, {}), 409);
    expect(await deploymentsOf(w.jobId)).toEqual([]);

    const other = await world();
    const everything = await call(other.owner.auth, 'POST', `/environment/${other.environmentId}/service/deploy`);
    expect(everything.statusCode, everything.body).toBe(202);
    for (const serviceId of [other.applicationId, other.databaseId, other.jobId]) expect(await deploymentsOf(serviceId)).toHaveLength(1);
  });

  it('refuses ids of another environment or organization, the wrong kind, twice the same, and settings-only fields: nothing is queued', async () => {
    const w = await world();
    const stranger = await world();
    const url = `/environment/${w.environmentId}/service/deploy`;
    const refused = expectErrorBody(
      await call(w.owner.auth, 'POST', url, { applications: [{ application_id: w.applicationId }, { application_id: stranger.applicationId }], databases: [w.applicationId] }),
      400,
    );
    expect(refused.details).toEqual([
      { field: '/applications/1/application_id', message: `no application ${stranger.applicationId} in this environment` },
      { field: '/databases/0', message: `no database ${w.applicationId} in this environment` },
    ]);
    expect(expectErrorBody(await call(w.owner.auth, 'POST', url, { databases: [w.databaseId, w.databaseId] }), 400).details?.[0]?.field).toBe('/databases/1');
    expect(expectErrorBody(await call(w.owner.auth, 'POST', url, { helms: [{ id: w.applicationId, chart_version: '1.2.3' }] }), 400).details?.[0]?.field).toBe('/helms/0/chart_version');
    expectErrorBody(await call(w.owner.auth, 'POST', url, { applications: [{ application_id: w.applicationId, git_commit_id: 'abc1234' }] }), 400);
    expectErrorBody(await call(w.owner.auth, 'POST', url, { unknown_field: [] }), 400);
    for (const serviceId of [w.applicationId, w.databaseId, stranger.applicationId]) expect(await deploymentsOf(serviceId)).toEqual([]);

    // Another organization's environment is not found, whatever the body names.
    expectErrorBody(await call(stranger.owner.auth, 'POST', url, { databases: [w.databaseId] }), 404);
    expectErrorBody(await call(stranger.owner.auth, 'POST', `/environment/${w.environmentId}/service/stop`, { database_ids: [w.databaseId] }), 404);
    expectErrorBody(await call(stranger.owner.auth, 'POST', `/environment/${w.environmentId}/service/delete`, { database_ids: [w.databaseId] }), 404);
    expectErrorBody(await call(stranger.owner.auth, 'POST', `/environment/${w.environmentId}/uninstall`), 404);
    expect(await deploymentsOf(w.databaseId)).toEqual([]);
  });

  it('stops the deployed services named, all or none', async () => {
    const w = await world();
    await deployToRunning(w, 'application', w.applicationId);
    const url = `/environment/${w.environmentId}/service/stop`;
    // The database was never deployed: nothing is stopped.
    expectErrorBody(await call(w.owner.auth, 'POST', url, { application_ids: [w.applicationId], database_ids: [w.databaseId] }), 409);
    expect((await serviceState(w, 'application', w.applicationId)).state).toBe('DEPLOYED');
    expectErrorBody(await call(w.owner.auth, 'POST', url, {}), 400);

    const stopped = await call(w.owner.auth, 'POST', url, { application_ids: [w.applicationId] });
    expect(stopped.statusCode, stopped.body).toBe(200);
    expect(stopped.json<{ results: Array<{ id: string; state: string }> }>().results).toMatchObject([{ id: w.applicationId, state: 'QUEUED' }]);
    expect((await deploymentsOf(w.applicationId)).at(-1)).toMatchObject({ action: 'STOP', status: 'QUEUED' });
  });

  it('deletes the services named after checking them all; skipReconcile leaves their workloads', async () => {
    const w = await world();
    const queued = await call(w.owner.auth, 'POST', `/database/${w.databaseId}/deploy`, {});
    expect(queued.statusCode, queued.body).toBe(202);
    await carryOut(w, queued.json<{ deployment_request_id: string }>().deployment_request_id);
    const busy = await call(w.owner.auth, 'POST', `/application/${w.applicationId}/deploy`, {});
    expect(busy.statusCode, busy.body).toBe(202);
    // The agent works on the application's deploy (BUILDING): no service named with it is deleted.
    await carryOut(w, busy.json<{ deployment_request_id: string }>().deployment_request_id, ['take']);
    const url = `/environment/${w.environmentId}/service/delete`;
    const services = () => ctx().database.db.selectFrom('services').select('id').where('environment_id', '=', w.environmentId).orderBy('id').execute();
    expect(expectErrorBody(await call(w.owner.auth, 'POST', url, { database_ids: [w.databaseId], application_ids: [w.applicationId] }), 409).message).toMatch(/BUILDING/);
    expect(await services()).toHaveLength(3);

    const deleted = await call(w.owner.auth, 'POST', `${url}?skipReconcile=true`, { database_ids: [w.databaseId], job_ids: [w.jobId] });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({
      results: [
        { id: w.databaseId, service_type: 'DATABASE', name: 'orders' },
        { id: w.jobId, service_type: 'JOB', name: 'nightly' },
      ],
    });
    expect((await services()).map((row) => row.id)).toEqual([w.applicationId]);
    expect(await teardownsOf(w.databaseId)).toEqual([]);
    expectErrorBody(await call(w.owner.auth, 'POST', url, { database_ids: [w.databaseId] }), 400);
  });

  it('uninstalls the services named, and a whole environment: workloads go, services stay, never deployed', async () => {
    const w = await world();
    await deployToRunning(w, 'application', w.applicationId);
    await deployToRunning(w, 'database', w.databaseId);
    const url = `/environment/${w.environmentId}/service/uninstall`;

    const uninstalled = await call(w.owner.auth, 'POST', url, { application_ids: [w.applicationId] });
    expect(uninstalled.statusCode, uninstalled.body).toBe(200);
    expect(uninstalled.json<{ results: unknown[] }>().results).toMatchObject([{ id: w.applicationId, state: 'READY', service_deployment_status: 'NEVER_DEPLOYED' }]);
    expect(await teardownsOf(w.applicationId)).toHaveLength(1);
    expect((await call(w.owner.auth, 'GET', `/application/${w.applicationId}`)).statusCode).toBe(200);
    expect((await serviceState(w, 'database', w.databaseId)).state).toBe('DEPLOYED');

    // A busy service refuses the environment's uninstall as a whole.
    const queued = await call(w.owner.auth, 'POST', `/application/${w.applicationId}/deploy`, {});
    expect(queued.statusCode, queued.body).toBe(202);
    expectErrorBody(await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/uninstall`), 409);
    expect((await serviceState(w, 'database', w.databaseId)).state).toBe('DEPLOYED');
    expect((await call(w.owner.auth, 'POST', `/application/${w.applicationId}/cancelDeployment`)).statusCode).toBe(202);

    const environment = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/uninstall`);
    expect(environment.statusCode, environment.body).toBe(202);
    expect(environment.json()).toMatchObject({ id: w.environmentId, state: 'READY', deployment_status: 'NEVER_DEPLOYED' });
    expect(await serviceState(w, 'database', w.databaseId)).toMatchObject({ state: 'READY', service_deployment_status: 'NEVER_DEPLOYED' });
    expect(await teardownsOf(w.databaseId)).toHaveLength(1);
    const services = await ctx().database.db.selectFrom('services').select('id').where('environment_id', '=', w.environmentId).execute();
    expect(services).toHaveLength(3);
    expectErrorBody(await call(w.owner.auth, 'POST', url, { database_ids: [w.applicationId] }), 400);
  });

  it("cleans a job's failed run, of the jobs named or of every job", async () => {
    const w = await world();
    await deployToRunning(w, 'job', w.jobId);
    const health = await call(`Bearer ${w.credential}`, 'POST', `/operator/v1/workloads/${w.jobId}/health`, { health: 'FAILED', restarts: 0, message: 'exit code 3' });
    expect(health.statusCode, health.body).toBe(200);
    expect((await serviceState(w, 'job', w.jobId)).workload).toMatchObject({ health: 'FAILED' });

    expect(expectErrorBody(await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/cleanFailedJobs`, { job_ids: [w.applicationId] }), 400).details?.[0]?.field).toBe('/job_ids/0');
    const cleaned = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/cleanFailedJobs`, {});
    expect(cleaned.statusCode, cleaned.body).toBe(200);
    expect(cleaned.json()).toEqual({ clean_job_ids: [w.jobId], clean_kubernetes_jobs: [] });
    expect((await serviceState(w, 'job', w.jobId)).workload).toBeNull();
    const [deployment] = await deploymentsOf(w.jobId);
    const lines = await ctx().database.db.selectFrom('service_deployment_logs').select('message').where('deployment_id', '=', deployment?.id ?? '').execute();
    expect(lines.some((line) => line.message.includes('failed run cleaned by') && line.message.includes('exit code 3'))).toBe(true);

    // Nothing failed any more: nothing to clean.
    expect((await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/cleanFailedJobs`, { job_ids: [w.jobId] })).json()).toEqual({ clean_job_ids: [], clean_kubernetes_jobs: [] });
    await call(`Bearer ${w.credential}`, 'POST', `/operator/v1/workloads/${w.jobId}/health`, { health: 'FAILED', restarts: 1, message: 'exit code 4' });
    const one = await call(w.owner.auth, 'POST', `/job/${w.jobId}/cleanFailedJob`);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toEqual({ clean_kubernetes_jobs: [] });
    expect((await serviceState(w, 'job', w.jobId)).workload).toBeNull();
    expectErrorBody(await call(w.owner.auth, 'POST', `/job/${w.applicationId}/cleanFailedJob`), 404);
    const { owner: stranger } = await ctx().signUpWithOrganization();
    expectErrorBody(await call(stranger.auth, 'POST', `/job/${w.jobId}/cleanFailedJob`), 404);
  });

  it("lists an environment's services of every kind, and a project's environments overview", async () => {
    const w = await world();
    const services = await call(w.owner.auth, 'GET', `/environment/${w.environmentId}/services`);
    expect(services.statusCode, services.body).toBe(200);
    expect(services.json<{ results: Array<{ id: string; service_type: string }> }>().results.map((service) => [service.service_type, service.id])).toEqual([
      ['APPLICATION', w.applicationId],
      ['DATABASE', w.databaseId],
      ['JOB', w.jobId],
    ]);

    const overview = await call(w.owner.auth, 'GET', `/project/${w.projectId}/environment/overview`);
    expect(overview.statusCode, overview.body).toBe(200);
    expect(overview.json()).toMatchObject({
      results: [
        {
          id: w.environmentId,
          mode: 'STAGING',
          cluster: { is_demo: false },
          services_overview: { service_count: 3, managed_by: 'PLATFORM' },
          deployment_status: { id: w.environmentId, state: 'READY', deployment_status: 'NEVER_DEPLOYED' },
        },
      ],
    });

    const { owner: stranger } = await ctx().signUpWithOrganization();
    expectErrorBody(await call(stranger.auth, 'GET', `/environment/${w.environmentId}/services`), 404);
    expectErrorBody(await call(stranger.auth, 'GET', `/project/${w.projectId}/environment/overview`), 404);
  });
});
