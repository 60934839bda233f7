import { expect, it, vi } from 'vitest';
import { enqueueJob } from '../src/jobs/job-queue.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The cancel of an environment's deploy once it was fanned out into its services' own deployments
 * (docs/environments.md, "States and actions"): the cancel reaches each of them as that service's own cancel would —
 * one still queued ends CANCELED at once and never reaches the agent, one the agent is carrying out goes through
 * CANCELING — so nothing of the cancelled request starts afterwards and no service is left waiting for it. Driven
 * through the HTTP API and the agent protocol, on an enrolled cluster whose agent is this test.
 */

interface AgentTaskView {
  id: string;
  lease_id: string;
  subject_type: string;
  subject_id: string;
  deployment_id: string;
}

interface ServiceStatusView {
  id: string;
  state: string;
  status_details: { status: string };
}

describeEachDatabase('cancel of an environment deploy', (ctx) => {
  interface World {
    owner: TestUser;
    credential: string;
    environmentId: string;
    databaseId: string;
    applicationIds: string[];
  }

  async function call(auth: string, method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload }) });
  }

  async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
    const response = await call(auth, 'POST', url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  }

  /** An environment on an enrolled cluster with a database (first stage) and two applications (the next stage). */
  async function world(): Promise<World> {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
    const projectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
    const environmentId = await created(owner.auth, `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' });
    const databaseId = await created(owner.auth, `/environment/${environmentId}/database`, { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' });
    const applicationIds: string[] = [];
    for (const name of ['web', 'api']) {
      applicationIds.push(
        await created(owner.auth, `/environment/${environmentId}/application`, {
          name,
          git_repository: { url: `https://github.com/acme/${name}`, provider: 'GITHUB', branch: 'main' },
          healthchecks: {},
        }),
      );
    }
    return { owner, credential, environmentId, databaseId, applicationIds };
  }

  async function deployEnvironment(w: World): Promise<string> {
    const response = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploy`);
    expect(response.statusCode, response.body).toBe(202);
    return response.json<{ deployment_request_id: string }>().deployment_request_id;
  }

  /** What the cluster's agent is offered now (its lease of them). */
  async function leaseTasks(w: World): Promise<AgentTaskView[]> {
    const response = await call(`Bearer ${w.credential}`, 'GET', '/operator/v1/tasks?wait_seconds=0');
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ tasks: AgentTaskView[] }>().tasks;
  }

  async function report(w: World, task: AgentTaskView, seq: number, event: string) {
    const response = await call(`Bearer ${w.credential}`, 'POST', `/operator/v1/tasks/${task.id}/progress`, { lease_id: task.lease_id, seq, event });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ subject_status: string | null }>();
  }

  async function serviceStatus(w: World, kind: 'application' | 'database', serviceId: string): Promise<ServiceStatusView> {
    const response = await call(w.owner.auth, 'GET', `/${kind}/${serviceId}/status`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<ServiceStatusView>();
  }

  /** The newest deployment of a service, as its history shows it. */
  async function newestDeployment(w: World, kind: 'application' | 'database', serviceId: string) {
    const response = await call(w.owner.auth, 'GET', `/${kind}/${serviceId}/deploymentHistoryV2`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ results: Array<{ identifier: { deployment_request_id?: string }; status: string }> }>().results[0];
  }

  /** Waits until the environment's deploy was fanned out and the database's task is in the mailbox; leases it. */
  async function databaseTaskLeased(w: World): Promise<AgentTaskView> {
    return vi.waitFor(
      async () => {
        const tasks = await leaseTasks(w);
        expect(tasks.map((task) => task.subject_id)).toEqual([w.databaseId]);
        return tasks[0] as AgentTaskView;
      },
      { timeout: 10_000, interval: 50 },
    );
  }

  /** The environment's state with each of its services' (getEnvironmentStatuses). */
  async function statuses(w: World) {
    const response = await call(w.owner.auth, 'GET', `/environment/${w.environmentId}/statuses`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ environment: { state: string }; applications: ServiceStatusView[]; databases: ServiceStatusView[] }>();
  }

  /** The jobs that would carry out the services' deployments of this request: all ended, none left to run. */
  async function unfinishedServiceJobs(w: World): Promise<string[]> {
    const serviceIds = [w.databaseId, ...w.applicationIds];
    const rows = await ctx()
      .database.db.selectFrom('jobs')
      .select(['id', 'status'])
      .where('serial_key', 'in', serviceIds.map((id) => `service:${id}`))
      .where('status', 'in', ['QUEUED', 'RUNNING'])
      .execute();
    return rows.map((row) => row.id);
  }

  it('cancels the services still queued at once and the one being deployed at the agent\'s next step; none of them starts afterwards', async () => {
    const w = await world();
    const requestId = await deployEnvironment(w);
    const database = await databaseTaskLeased(w);
    expect(await report(w, database, 1, 'take')).toMatchObject({ subject_status: 'BUILDING' });
    // The fan-out writes the services one by one: the database's task can be leased before the last one is written.
    await vi.waitFor(
      async () => {
        for (const applicationId of w.applicationIds) expect((await serviceStatus(w, 'application', applicationId)).state).toBe('QUEUED');
      },
      { timeout: 10_000, interval: 50 },
    );

    const canceled = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/cancelDeployment`);
    expect(canceled.statusCode, canceled.body).toBe(202);
    expect(canceled.json()).toMatchObject({ state: 'CANCELED' });

    // The applications had not started: CANCELED at once, in their status and their history.
    for (const applicationId of w.applicationIds) {
      expect(await serviceStatus(w, 'application', applicationId)).toMatchObject({ state: 'CANCELED', status_details: { status: 'CANCELED' } });
      expect(await newestDeployment(w, 'application', applicationId)).toMatchObject({ status: 'CANCELED' });
    }
    // The database the agent is building is asked to stop, as its own cancel would: CANCELING until the agent stops.
    expect((await serviceStatus(w, 'database', w.databaseId)).state).toBe('CANCELING');
    expect(await report(w, database, 2, 'cancel_done')).toMatchObject({ subject_status: 'CANCELED' });
    expect((await serviceStatus(w, 'database', w.databaseId)).state).toBe('CANCELED');
    expect(await newestDeployment(w, 'database', w.databaseId)).toMatchObject({ status: 'CANCELED' });

    // Nothing of the cancelled request reaches the agent afterwards, and its jobs end.
    await vi.waitFor(async () => expect(await unfinishedServiceJobs(w)).toEqual([]), { timeout: 10_000, interval: 50 });
    expect(await leaseTasks(w)).toEqual([]);

    // The environment settles: no service is left waiting, and its queue is empty.
    const settled = await statuses(w);
    expect(settled.environment.state).toBe('CANCELED');
    expect([...settled.applications, ...settled.databases].map((status) => status.state)).toEqual(['CANCELED', 'CANCELED', 'CANCELED']);
    const queue = await call(w.owner.auth, 'GET', `/environment/${w.environmentId}/deploymentQueue`);
    expect(queue.json<{ results: unknown[] }>().results).toEqual([]);
    const request = await call(w.owner.auth, 'GET', `/environment/deploymentStatus?deploymentRequestId=${requestId}`);
    expect(request.json()).toMatchObject({ status: 'CANCELED' });

    // A new deploy of the environment goes through again.
    await deployEnvironment(w);
    await databaseTaskLeased(w);
  });

  it('cancels every queued service deployment of the request when the request is cancelled from the deployment queue', async () => {
    const w = await world();
    const requestId = await deployEnvironment(w);
    // Fanned out: every service has its deployment queued and the database's task is in the mailbox, the
    // applications' wait behind it; the agent takes none.
    await vi.waitFor(
      async () => {
        const task = await ctx().database.db.selectFrom('agent_tasks').select('id').where('subject_id', '=', w.databaseId).executeTakeFirst();
        expect(task).toBeDefined();
        expect((await serviceStatus(w, 'database', w.databaseId)).state).toBe('QUEUED');
        for (const applicationId of w.applicationIds) expect((await serviceStatus(w, 'application', applicationId)).state).toBe('QUEUED');
      },
      { timeout: 10_000, interval: 50 },
    );

    const canceled = await call(w.owner.auth, 'POST', `/deploymentQueue/${requestId}/cancelDeployment`, {});
    expect(canceled.statusCode, canceled.body).toBe(202);

    const services: Array<['database' | 'application', string]> = [['database', w.databaseId], ...w.applicationIds.map((id): ['application', string] => ['application', id])];
    for (const [kind, serviceId] of services) {
      expect(await serviceStatus(w, kind, serviceId)).toMatchObject({ state: 'CANCELED', status_details: { status: 'CANCELED' } });
      expect(await newestDeployment(w, kind, serviceId)).toMatchObject({ status: 'CANCELED' });
    }
    await vi.waitFor(async () => expect(await unfinishedServiceJobs(w)).toEqual([]), { timeout: 10_000, interval: 50 });
    expect(await leaseTasks(w)).toEqual([]);
    expect((await statuses(w)).environment.state).toBe('CANCELED');
    const queue = await call(w.owner.auth, 'GET', `/environment/${w.environmentId}/deploymentQueue`);
    expect(queue.json<{ results: unknown[] }>().results).toEqual([]);
  });

  it('asks no service anything when the cancel came while the environment\'s job was about to fan the deploy out', async () => {
    const w = await world();
    const { db } = ctx().database;
    // An earlier job of the environment's serial key holds its deploy's job back, so that the cancel comes first.
    const holder = await enqueueJob(db, ctx().clock, { kind: 'test.holds-the-environment', payload: {}, serialKey: `environment:${w.environmentId}` });
    const requestId = await deployEnvironment(w);
    const canceled = await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/cancelDeployment`);
    expect(canceled.statusCode, canceled.body).toBe(202);
    // The race, written directly: the job was running when the cancel came, so it was not withdrawn and runs on.
    const record = await db.selectFrom('environment_deployments').select('job_id').where('id', '=', requestId).executeTakeFirstOrThrow();
    await db.updateTable('jobs').set({ status: 'QUEUED', finished_at: null }).where('id', '=', record.job_id).execute();
    await db.updateTable('jobs').set({ status: 'SUCCEEDED', finished_at: new Date().toISOString() }).where('id', '=', holder).execute();
    await vi.waitFor(
      async () => expect((await db.selectFrom('jobs').select('status').where('id', '=', record.job_id).executeTakeFirstOrThrow()).status).toBe('SUCCEEDED'),
      { timeout: 10_000, interval: 50 },
    );

    expect(await db.selectFrom('service_deployments').select('id').where('environment_deployment_id', '=', requestId).execute()).toEqual([]);
    expect((await serviceStatus(w, 'database', w.databaseId)).state).toBe('READY');
    for (const applicationId of w.applicationIds) expect((await serviceStatus(w, 'application', applicationId)).state).toBe('READY');
    expect(await leaseTasks(w)).toEqual([]);
    expect((await statuses(w)).environment.state).toBe('CANCELED');
  });
});
