import type { AddressInfo } from 'node:net';
import { expect, it, vi } from 'vitest';
import { createAgentClient, enrollAgent } from '../src/agent/agent.client.ts';
import type { AgentTask } from '../src/protocol/agent-protocol.ts';
import { Value } from 'typebox/value';
import { startAgent, type RunningAgent } from '../src/agent/agent.runtime.ts';
import type { AgentDriver } from '../src/protocol/agent-driver.ts';
import { ServiceDeploymentSpec } from '../src/protocol/agent-protocol.ts';
import { expireAgentTaskLeases } from '../src/modules/agents/agents.repo.ts';
import { clusterWithEnrollmentToken } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * The agent protocol end to end on a listening server: a real agent runtime (src/agent/) enrolls with the cluster's
 * one-time token, heartbeats, leases an environment's deploy by long-poll and drives it to DEPLOYED — its database's
 * deploy through a scripted driver (a test double standing for a real driver, which the local driver's suites
 * exercise), the environment's own task by the runtime alone.
 */

interface EnvironmentStatus {
  state: string;
  message?: string | null;
}

/** A driver that runs databases as a real one would, with log lines and a build phase, or fails when told to. */
function scriptedDriver(script: { failWith?: string } = {}): AgentDriver & { performed: AgentTask[]; specs: ServiceDeploymentSpec[] } {
  const performed: AgentTask[] = [];
  const specs: ServiceDeploymentSpec[] = [];
  const refuse = async () => {
    throw new Error('the scripted driver only deploys');
  };
  return {
    name: 'scripted',
    serviceKinds: ['DATABASE'],
    performed,
    specs,
    async deploy(session, spec) {
      performed.push(session.task);
      specs.push(spec);
      session.log('stdout', `building ${session.task.subject_id}`);
      session.log('stderr', 'a warning');
      if (script.failWith !== undefined) throw new Error(script.failWith);
      await session.built();
    },
    stop: refuse,
    teardown: refuse,
  };
}

describeEachDatabase(
  'the agent protocol',
  (ctx) => {
    let baseUrl = '';
    const running: RunningAgent[] = [];

    async function listen(): Promise<string> {
      if (baseUrl === '') {
        await ctx().app.listen({ port: 0, host: '127.0.0.1' });
        baseUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
      }
      return baseUrl;
    }

    function clusterWithEnrollment(organizationId: string, owner: TestUser) {
      return clusterWithEnrollmentToken(ctx(), organizationId, owner);
    }

    /** An organization with an enrolled cluster and an environment on it (and a database in it, for a driver to run). */
    async function world(options: { withDatabase?: boolean } = {}) {
      const url = await listen();
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId, enrollmentToken } = await clusterWithEnrollment(organizationId, owner);
      const { credential } = await enrollAgent(url, enrollmentToken);
      const project = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('p') } });
      const projectId = project.json<{ id: string }>().id;
      const environment = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/project/${projectId}/environment`,
        payload: { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' },
      });
      expect(environment.statusCode, environment.body).toBe(201);
      const environmentId = environment.json<{ id: string }>().id;
      const databaseId = options.withDatabase === true ? await addDatabase(owner, environmentId) : undefined;
      return {
        owner,
        databaseId,
        organizationId,
        clusterId,
        credential,
        projectId,
        environmentId,
        client: createAgentClient({ controlPlaneUrl: url, credential, retryBaseMs: 20 }),
      };
    }

    async function addDatabase(owner: TestUser, environmentId: string): Promise<string> {
      const database = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/environment/${environmentId}/database`,
        payload: { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' },
      });
      expect(database.statusCode, database.body).toBe(201);
      return database.json<{ id: string }>().id;
    }

    async function environmentStatus(auth: string, environmentId: string): Promise<EnvironmentStatus> {
      return (await ctx().call(auth, { method: 'GET', url: `/environment/${environmentId}/status` })).json<EnvironmentStatus>();
    }

    async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
      return vi.waitFor(
        async () => {
          const value = await read();
          if (!done(value)) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(value)}`);
          return value;
        },
        { timeout: 10_000, interval: 25 },
      );
    }

    async function deploy(auth: string, environmentId: string): Promise<void> {
      const response = await ctx().call(auth, { method: 'POST', url: `/environment/${environmentId}/deploy` });
      expect(response.statusCode, response.body).toBe(202);
    }

    /** Waits for the dispatching job to put the deploy into the cluster's mailbox. */
    async function dispatched(environmentId: string) {
      const row = await eventually(
        () => ctx().database.db.selectFrom('agent_tasks').selectAll().where('subject_id', '=', environmentId).orderBy('id', 'desc').executeTakeFirst(),
        (candidate) => candidate !== undefined,
        'the task to be dispatched',
      );
      if (row === undefined) throw new Error('unreachable: eventually returned no task');
      return row;
    }

    it('enrolls, heartbeats and drives a queued deploy to DEPLOYED; the job that dispatched it finishes', async () => {
      const { owner, organizationId, clusterId, environmentId, databaseId, client } = await world({ withDatabase: true });
      const before = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${clusterId}/agent` });
      expect(before.json()).toMatchObject({ connected: false, reachable: false, open_tasks: 0 });

      await deploy(owner.auth, environmentId);
      const waiting = await environmentStatus(owner.auth, environmentId);
      expect(waiting.state).toBe('QUEUED');
      expect(waiting.message).toContain("waiting for the cluster's agent");

      const driver = scriptedDriver();
      const agent = startAgent({ client, driver, version: '1.0.0-test', pollWaitSeconds: 1 });
      running.push(agent);
      const deployed = await eventually(() => environmentStatus(owner.auth, environmentId), (status) => status.state === 'DEPLOYED', 'DEPLOYED');
      expect(deployed.state).toBe('DEPLOYED');
      // The driver ran the database; the environment's own task needed none (the runtime took, built and settled it).
      expect(driver.performed).toHaveLength(1);
      expect(driver.performed[0]).toMatchObject({ subject_type: 'SERVICE', subject_id: databaseId, action: 'deploy', attempt: 1 });
      // What the control plane produced is what the protocol's schema, which every driver parses with, says.
      expect(Value.Errors(ServiceDeploymentSpec, driver.specs[0])).toEqual([]);
      expect(driver.specs[0]).toMatchObject({ service: { id: databaseId, kind: 'DATABASE', name: 'orders' }, database: { type: 'POSTGRESQL', database_name: expect.any(String) } });

      // The task is closed by the same report, just after the environment's move (agents.service reportProgress).
      const taskRow = () => ctx().database.db.selectFrom('agent_tasks').selectAll().where('subject_id', '=', environmentId).executeTakeFirstOrThrow();
      await expect.poll(async () => (await taskRow()).status, { timeout: 5_000, interval: 25 }).toBe('DONE');
      const task = await taskRow();
      expect(task).toMatchObject({ status: 'DONE', outcome: 'SUCCEEDED', last_report_seq: 3 });
      const job = await eventually(
        () => ctx().database.db.selectFrom('jobs').selectAll().where('id', '=', task.job_id).executeTakeFirstOrThrow(),
        (row) => row.status === 'SUCCEEDED',
        'the dispatching job to finish',
      );
      expect(job.status).toBe('SUCCEEDED');

      const status = await ctx().call(owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${clusterId}/agent` });
      expect(status.json()).toMatchObject({ connected: true, reachable: true, agent_version: '1.0.0-test', driver: 'scripted', open_tasks: 0 });
      const history = await ctx().call(owner.auth, { method: 'GET', url: `/environment/${environmentId}/deploymentHistoryV2` });
      expect(JSON.stringify(history.json())).toContain('DEPLOYED');
      await agent.stop();
    });

    it('runs the tasks it holds side by side, up to its concurrency', async () => {
      const { owner, clusterId, projectId, environmentId, client } = await world({ withDatabase: true });
      const environmentIds = [environmentId];
      for (const name of [uniqueName('env'), uniqueName('env')]) {
        const more = await ctx().call(owner.auth, { method: 'POST', url: `/project/${projectId}/environment`, payload: { name, cluster: clusterId, mode: 'STAGING' } });
        const moreId = more.json<{ id: string }>().id;
        environmentIds.push(moreId);
        await addDatabase(owner, moreId);
      }
      for (const id of environmentIds) await deploy(owner.auth, id);
      for (const id of environmentIds) await dispatched(id);

      // Each database's deploy holds until a second one runs beside it (or 3 s pass): serially, none would ever see another.
      let inFlight = 0;
      let most = 0;
      const release: Array<() => void> = [];
      const driver: AgentDriver = {
        ...scriptedDriver(),
        name: 'gated',
        async deploy(session) {
          inFlight += 1;
          most = Math.max(most, inFlight);
          if (inFlight >= 2) for (const open of release.splice(0)) open();
          else {
            await new Promise<void>((resolve) => {
              release.push(resolve);
              setTimeout(resolve, 3_000);
            });
          }
          await session.built();
          inFlight -= 1;
        },
      };
      const agent = startAgent({ client, driver, version: '1.0.0-test', pollWaitSeconds: 1, concurrency: 2 });
      running.push(agent);
      for (const id of environmentIds) await eventually(() => environmentStatus(owner.auth, id), (status) => status.state === 'DEPLOYED', `${id} DEPLOYED`);
      expect(most).toBe(2);
      await agent.stop();
    });

    it('reports a driver failure as the action failing, with its reason', async () => {
      const { owner, environmentId, databaseId, client } = await world({ withDatabase: true });
      await deploy(owner.auth, environmentId);
      const agent = startAgent({ client, driver: scriptedDriver({ failWith: 'npm run build exited with 1' }), version: '1.0.0-test', pollWaitSeconds: 1 });
      running.push(agent);
      const databaseStatus = async () => (await ctx().call(owner.auth, { method: 'GET', url: `/database/${databaseId ?? ''}/status` })).json<EnvironmentStatus>();
      // It failed before its build phase ended: a build error, saying why.
      const failed = await eventually(databaseStatus, (status) => status.state.endsWith('_ERROR'), 'an error state');
      expect(failed.state).toBe('BUILD_ERROR');
      expect(failed.message).toContain('npm run build exited with 1');
      // The task is closed by the same report, just after the service's move (agents.service reportProgress).
      const outcome = async () => (await ctx().database.db.selectFrom('agent_tasks').select('outcome').where('subject_id', '=', databaseId ?? '').executeTakeFirstOrThrow()).outcome;
      await expect.poll(outcome, { timeout: 5_000, interval: 25 }).toBe('FAILED');
      await agent.stop();
    });

    it('applies a retried report once, refuses a skipped sequence, a lost lease, another cluster and a bad credential', async () => {
      const { owner, organizationId, environmentId, client, credential } = await world();
      await deploy(owner.auth, environmentId);
      await dispatched(environmentId);
      const [task] = (await client.leaseTasks(1)).tasks;
      if (task === undefined) throw new Error('no task leased');

      const take = { lease_id: task.lease_id, seq: 1, event: 'take' as const };
      expect(await client.reportProgress(task.id, take)).toMatchObject({ applied: true, subject_status: 'BUILDING' });
      expect(await client.reportProgress(task.id, take)).toMatchObject({ applied: false, subject_status: 'BUILDING' });

      const url = `/operator/v1/tasks/${task.id}/progress`;
      const auth = `Bearer ${credential}`;
      const skipped = await ctx().call(auth, { method: 'POST', url, payload: { lease_id: task.lease_id, seq: 5, event: 'built' } });
      expectErrorBody(skipped, 400);
      const stolen = await ctx().call(auth, { method: 'POST', url, payload: { lease_id: '0190f0b2-6c5e-7000-8000-00000000abcd', seq: 2, event: 'built' } });
      expect(expectErrorBody(stolen, 409).message).toContain('no longer leased');
      const badEvent = await ctx().call(auth, { method: 'POST', url, payload: { lease_id: task.lease_id, seq: 2, event: 'explode' } });
      expectErrorBody(badEvent, 400);
      // An event the state table has no move for from BUILDING: 409, and the sequence number stays unused.
      const impossible = await ctx().call(auth, { method: 'POST', url, payload: { lease_id: task.lease_id, seq: 2, event: 'cancel_done' } });
      expectErrorBody(impossible, 409);

      const logs = await client.appendLogs(task.id, {
        lease_id: task.lease_id,
        lines: [{ seq: 1, at: new Date().toISOString(), stream: 'stdout', line: 'x' }],
      }).catch((error: Error) => error);
      expect(logs).toBeInstanceOf(Error);
      expect((logs as Error).message).toContain('keep no logs');

      const spec = await ctx().call(auth, { method: 'GET', url: `/operator/v1/tasks/${task.id}/spec?lease_id=${task.lease_id}` });
      expect(expectErrorBody(spec, 404).message).toContain('no spec');
      expectErrorBody(await ctx().call(auth, { method: 'GET', url: `/operator/v1/tasks/${task.id}/spec?lease_id=0190f0b2-6c5e-7000-8000-00000000abcd` }), 409);
      expectErrorBody(await ctx().call(undefined, { method: 'GET', url: '/operator/v1/tasks?wait_seconds=0' }), 401);
      expectErrorBody(await ctx().call('Bearer slwo_not-a-real-credential', { method: 'GET', url: '/operator/v1/tasks?wait_seconds=0' }), 401);
      expectErrorBody(await ctx().call(`Bearer ${owner.jwt}`, { method: 'GET', url: '/operator/v1/tasks?wait_seconds=0' }), 401);
      expectErrorBody(await ctx().call(auth, { method: 'GET', url: '/operator/v1/tasks?wait_seconds=99' }), 400);

      const other = await world();
      expectErrorBody(await ctx().call(`Bearer ${other.credential}`, { method: 'GET', url: `/operator/v1/tasks/${task.id}` }), 404);
      expectErrorBody(await ctx().call(other.owner.auth, { method: 'GET', url: `/organization/${organizationId}/cluster/${other.clusterId}/agent` }), 404);

      await client.reportProgress(task.id, { lease_id: task.lease_id, seq: 2, event: 'built' });
      await client.reportProgress(task.id, { lease_id: task.lease_id, seq: 3, event: 'succeed' });
      expect((await environmentStatus(owner.auth, environmentId)).state).toBe('DEPLOYED');
      const late = await ctx().call(auth, { method: 'POST', url, payload: { lease_id: task.lease_id, seq: 4, event: 'fail' } });
      expect(expectErrorBody(late, 409).message).toContain('already ended');
    });

    it('validates an operator request only once its caller is authenticated, and checks an enrollment token without using it up', async () => {
      const { owner, organizationId, credential } = await world();
      const auth = `Bearer ${credential}`;
      // What answers 401 without the credential (route-security's sweep) is validated, field by field, with it.
      const heartbeat = expectErrorBody(await ctx().call(auth, { method: 'POST', url: '/operator/v1/heartbeat', payload: { unexpected: 1 } }), 400);
      expect(heartbeat.details).toContainEqual({ field: '/unexpected', message: 'is not an allowed field' });
      expectErrorBody(await ctx().call(auth, { method: 'GET', url: '/operator/v1/tasks/not-a-uuid' }), 400);
      expect(expectErrorBody(await ctx().call(auth, { method: 'POST', url: '/operator/v1/report', payload: {} }), 400).details).toContainEqual({ field: '/status', message: 'is required' });

      // A live enrollment token beside a field enrollment does not take: 400, and the token was only checked, not used.
      const { enrollmentToken } = await clusterWithEnrollment(organizationId, owner);
      const enroll = (payload: Record<string, unknown>) => ctx().call(undefined, { method: 'POST', url: '/operator/v1/enroll', payload });
      expect(expectErrorBody(await enroll({ enrollment_token: enrollmentToken, unexpected: 1 }), 400).details).toEqual([{ field: '/unexpected', message: 'is not an allowed field' }]);
      const enrolled = await enroll({ enrollment_token: enrollmentToken });
      expect(enrolled.statusCode, enrolled.body).toBe(200);
      // Used once, it is a wrong credential: refused before the body is validated.
      const replay = expectErrorBody(await enroll({ enrollment_token: enrollmentToken, unexpected: 1 }), 401);
      expect(replay.message).toBe('enrollment token is invalid, expired or already used');
      expect(replay.details).toBeUndefined();
    });

    it('offers a task again once its lease runs out, and the old holder is refused', async () => {
      const { owner, environmentId, client } = await world();
      await deploy(owner.auth, environmentId);
      await dispatched(environmentId);
      const [first] = (await client.leaseTasks(0)).tasks;
      if (first === undefined) throw new Error('no task leased');
      expect((await client.leaseTasks(0)).tasks).toHaveLength(0);
      await client.reportProgress(first.id, { lease_id: first.lease_id, seq: 1, event: 'take' });

      ctx().clock.advance(61_000);
      const [again] = (await client.leaseTasks(0)).tasks;
      expect(again).toMatchObject({ id: first.id, attempt: 2, last_report_seq: 1 });
      expect(again?.lease_id).not.toBe(first.lease_id);
      const stale = await client.reportProgress(first.id, { lease_id: first.lease_id, seq: 2, event: 'built' }).catch((error: Error) => error);
      expect((stale as Error).message).toContain('no longer leased');
      if (again === undefined) throw new Error('unreachable');
      // The new holder starts over: the take its predecessor reported is acknowledged, not refused.
      const retaken = await client.reportProgress(again.id, { lease_id: again.lease_id, seq: 2, event: 'take' });
      expect(retaken).toMatchObject({ applied: true, subject_status: 'BUILDING' });
      await client.reportProgress(again.id, { lease_id: again.lease_id, seq: 3, event: 'built' });
      await client.reportProgress(again.id, { lease_id: again.lease_id, seq: 4, event: 'succeed' });
      expect((await environmentStatus(owner.auth, environmentId)).state).toBe('DEPLOYED');
    });

    it('refuses a repeated take on a first lease, where nothing explains it', async () => {
      const { owner, environmentId, client } = await world();
      await deploy(owner.auth, environmentId);
      await dispatched(environmentId);
      const [task] = (await client.leaseTasks(0)).tasks;
      if (task === undefined) throw new Error('no task leased');
      await client.reportProgress(task.id, { lease_id: task.lease_id, seq: 1, event: 'take' });
      const repeated = await client.reportProgress(task.id, { lease_id: task.lease_id, seq: 2, event: 'take' }).catch((error: Error) => error);
      expect(repeated).toMatchObject({ status: 409 });
    });

    it('offers the tasks of a restarted sole agent again at once (what the in-process agent does at start)', async () => {
      const { owner, environmentId, clusterId, client } = await world();
      await deploy(owner.auth, environmentId);
      await dispatched(environmentId);
      const [held] = (await client.leaseTasks(0)).tasks;
      expect(held).toBeDefined();
      expect((await client.leaseTasks(0)).tasks).toHaveLength(0);
      await expireAgentTaskLeases(ctx().database.db, [clusterId], ctx().clock.now().toISOString());
      ctx().clock.advance(1);
      const [again] = (await client.leaseTasks(0)).tasks;
      expect(again).toMatchObject({ id: held?.id, attempt: 2 });
      expect((await environmentStatus(owner.auth, environmentId)).state).toBe('QUEUED');
    });

    it('withdraws the task of a deploy canceled while queued, so no agent ever receives it', async () => {
      const { owner, environmentId, client } = await world();
      await deploy(owner.auth, environmentId);
      const task = await dispatched(environmentId);
      const cancel = await ctx().call(owner.auth, { method: 'POST', url: `/environment/${environmentId}/cancelDeployment` });
      expect(cancel.statusCode, cancel.body).toBe(202);
      expect((await environmentStatus(owner.auth, environmentId)).state).toBe('CANCELED');
      expect((await client.leaseTasks(0)).tasks).toHaveLength(0);
      const ended = await ctx().database.db.selectFrom('agent_tasks').selectAll().where('id', '=', task.id).executeTakeFirstOrThrow();
      expect(ended).toMatchObject({ status: 'DONE', outcome: 'CANCELED' });
    });

    it('ends the job and withdraws the task of a deploy canceled while its job was running (the job could not be withdrawn)', async () => {
      const { owner, environmentId, client } = await world();
      await deploy(owner.auth, environmentId);
      const task = await dispatched(environmentId);
      const { db } = ctx().database;
      // The race, written directly: the cancel closed the deployment while the job ran, so the job was left waiting.
      const closedAt = new Date().toISOString();
      await db.updateTable('environment_deployments').set({ status: 'CANCELED', finished_at: closedAt }).where('id', '=', task.deployment_id).execute();
      await db.updateTable('environments').set({ status: 'CANCELED' }).where('id', '=', environmentId).execute();
      await db.updateTable('jobs').set({ run_at: closedAt }).where('id', '=', task.job_id).where('status', '=', 'QUEUED').execute();
      const job = await eventually(
        () => db.selectFrom('jobs').selectAll().where('id', '=', task.job_id).executeTakeFirstOrThrow(),
        (row) => row.status === 'SUCCEEDED',
        'the job to end',
      );
      expect(job.status).toBe('SUCCEEDED');
      expect(await db.selectFrom('agent_tasks').selectAll().where('id', '=', task.id).executeTakeFirstOrThrow()).toMatchObject({ status: 'DONE', outcome: 'CANCELED' });
      expect((await client.leaseTasks(0)).tasks).toHaveLength(0);
      // The environment's next action is dispatched: its serial key is free again.
      await deploy(owner.auth, environmentId);
      const next = await eventually(
        () => db.selectFrom('agent_tasks').selectAll().where('subject_id', '=', environmentId).where('status', '=', 'PENDING').executeTakeFirst(),
        (row) => row !== undefined,
        'the next deploy to be dispatched',
      );
      expect(next?.deployment_id).not.toBe(task.deployment_id);
    });

    it('shows a cluster whose agent went silent as unreachable', async () => {
      const { owner, organizationId, clusterId, client } = await world();
      await client.heartbeat({ agent_version: '1.0.0-test', driver: 'scripted', started_at: new Date().toISOString() });
      const url = `/organization/${organizationId}/cluster/${clusterId}/agent`;
      expect((await ctx().call(owner.auth, { method: 'GET', url })).json()).toMatchObject({ connected: true, reachable: true });
      ctx().clock.advance(46_000);
      expect((await ctx().call(owner.auth, { method: 'GET', url })).json()).toMatchObject({ connected: true, reachable: false });
    });

    it('answers a long-poll as soon as work is dispatched, not at the end of its wait', async () => {
      const { owner, environmentId, client } = await world();
      const polling = client.leaseTasks(20);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await deploy(owner.auth, environmentId);
      const { tasks } = await polling;
      expect(tasks.map((task) => task.subject_id)).toEqual([environmentId]);
    });

    it('never leases one task to two agents polling at once', async () => {
      const { owner, clusterId, environmentId, client, credential } = await world();
      const project = (await ctx().call(owner.auth, { method: 'GET', url: `/environment/${environmentId}` })).json<{ project: { id: string } }>().project.id;
      const environments = [environmentId];
      for (let i = 0; i < 5; i += 1) {
        const created = await ctx().call(owner.auth, { method: 'POST', url: `/project/${project}/environment`, payload: { name: uniqueName('env'), cluster: clusterId } });
        environments.push(created.json<{ id: string }>().id);
      }
      for (const id of environments) await deploy(owner.auth, id);
      for (const id of environments) await dispatched(id);
      const second = createAgentClient({ controlPlaneUrl: await listen(), credential, retryBaseMs: 20 });
      const leased = await Promise.all([client.leaseTasks(0), second.leaseTasks(0), client.leaseTasks(0), second.leaseTasks(0)]);
      const ids = leased.flatMap((answer) => answer.tasks.map((task) => task.subject_id));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeLessThanOrEqual(environments.length);
      const rest = [...(await client.leaseTasks(0)).tasks, ...(await client.leaseTasks(0)).tasks].map((task) => task.subject_id);
      expect([...ids, ...rest].sort()).toEqual([...environments].sort());
    });

    it('cleans up its agents', async () => {
      await Promise.all(running.map((agent) => agent.stop()));
    });
  },
  { agents: { heartbeatIntervalMs: 15_000, leaseMs: 60_000, pollMs: 100, recheckMs: 30_000 } },
);
