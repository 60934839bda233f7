import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../src/agent/agent.client.ts';
import type { AgentTask } from '../src/protocol/agent-protocol.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { createBareRepository, startGitServer, type TestGitServer } from './support/git-server.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * A service's deploy brings along the services its variables need that were never deployed (issue 21, item 5):
 * an application whose DATABASE_URL aliases a database's built-in deploys that database in the same request, the
 * database first, and the agent is offered the database's task before the application's. Needs are followed through
 * the needed services' own variables; a needed service its user stopped stays stopped, with a warning; a needed
 * service that cannot be deployed refuses the whole request, and nothing is written. Over the real agent protocol of
 * an enrolled cluster; the applications' repositories are real ones on the test git server.
 */

let gitRoot = '';
let gitServer: TestGitServer;

beforeAll(async () => {
  gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-dependencies-'));
  await createBareRepository(gitRoot, 'shop', { main: ['Dockerfile'] });
  gitServer = await startGitServer({ root: gitRoot, privateRepositories: {} });
});

afterAll(async () => {
  await gitServer.close();
  await rm(gitRoot, { recursive: true, force: true });
});

interface StatusView {
  state: string;
  message: string | null;
  deployment_request_id: string | null;
}

interface LogLine {
  message: string;
  stream: string;
}

describeEachDatabase(
  'deploying a service with the services its variables need',
  (ctx) => {
    let baseUrl = '';

    async function listen(): Promise<string> {
      if (baseUrl === '') {
        await ctx().app.listen({ port: 0, host: '127.0.0.1' });
        baseUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
      }
      return baseUrl;
    }

    interface World {
      owner: TestUser;
      environmentId: string;
      client: AgentClient;
    }

    async function call(w: World, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) {
      return ctx().call(w.owner.auth, { method, url, ...(payload === undefined ? {} : { payload }) });
    }

    async function created(w: World, url: string, payload: Record<string, unknown>): Promise<string> {
      const response = await call(w, 'POST', url, payload);
      expect(response.statusCode, response.body).toBe(201);
      return response.json<{ id: string }>().id;
    }

    async function world(): Promise<World> {
      const url = await listen();
      const { owner, organizationId } = await ctx().signUpWithOrganization();
      const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
      const project = await ctx().call(owner.auth, { method: 'POST', url: `/organization/${organizationId}/project`, payload: { name: uniqueName('project') } });
      expect(project.statusCode, project.body).toBe(200);
      const environment = await ctx().call(owner.auth, {
        method: 'POST',
        url: `/project/${project.json<{ id: string }>().id}/environment`,
        payload: { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' },
      });
      expect(environment.statusCode, environment.body).toBe(201);
      return { owner, environmentId: environment.json<{ id: string }>().id, client: createAgentClient({ controlPlaneUrl: url, credential, retryBaseMs: 20 }) };
    }

    function application(w: World, name: string): Promise<string> {
      return created(w, `/environment/${w.environmentId}/application`, {
        name,
        git_repository: { url: gitServer.urlOf('shop'), provider: 'GITHUB', branch: 'main' },
        ports: [{ internal_port: 8080, publicly_accessible: false }],
        healthchecks: {},
      });
    }

    function database(w: World, name: string): Promise<string> {
      return created(w, `/environment/${w.environmentId}/database`, { name, type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' });
    }

    function variable(w: World, applicationId: string, key: string, value: string): Promise<string> {
      return created(w, `/application/${applicationId}/environmentVariable`, { key, value });
    }

    async function status(w: World, noun: 'application' | 'database', id: string): Promise<StatusView> {
      const response = await call(w, 'GET', `/${noun}/${id}/status`);
      expect(response.statusCode, response.body).toBe(200);
      return response.json<StatusView>();
    }

    async function logOf(w: World, noun: 'application' | 'database', id: string): Promise<string[]> {
      const response = await call(w, 'GET', `/${noun}/${id}/log`);
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{ results: LogLine[] }>().results.map((line) => line.message);
    }

    async function deploymentRows(serviceIds: string[]) {
      return ctx().database.db.selectFrom('service_deployments').select(['service_id', 'created_at', 'triggered_by', 'status']).where('service_id', 'in', serviceIds).execute();
    }

    /** Leases (everything offered at each poll) until `count` tasks arrived or it gives up: what the agent is offered next. */
    async function leaseTasks(w: World, count: number): Promise<AgentTask[]> {
      const tasks: AgentTask[] = [];
      for (let round = 0; round < 20 && tasks.length < count; round++) tasks.push(...(await w.client.leaseTasks(1)).tasks);
      return tasks;
    }

    async function nextTask(w: World): Promise<AgentTask> {
      const [task, ...more] = await leaseTasks(w, 1);
      expect(more).toEqual([]);
      if (task === undefined) throw new Error('no task was offered');
      return task;
    }

    async function settle(w: World, task: AgentTask, events: Array<'take' | 'built' | 'succeed'>): Promise<void> {
      let seq = task.last_report_seq;
      for (const event of events) {
        seq += 1;
        await w.client.reportProgress(task.id, { lease_id: task.lease_id, seq, event });
      }
    }

    it('deploys a never-deployed database its DATABASE_URL aliases in the same request, and the agent gets the database first', async () => {
      const w = await world();
      const webId = await application(w, 'web');
      const databaseId = await database(w, 'main-db');
      const bystanderId = await database(w, 'reports');
      await variable(w, webId, 'DATABASE_URL', '$PLATFORM_DATABASE_MAIN_DB_CONNECTION_URI');

      const deploy = await call(w, 'POST', `/application/${webId}/deploy`, {});
      expect(deploy.statusCode, deploy.body).toBe(202);
      const queued = deploy.json<StatusView>();
      expect(queued.state).toBe('QUEUED');
      const brought = 'also deploying database main-db (never deployed; web needs it: DATABASE_URL → PLATFORM_DATABASE_MAIN_DB_CONNECTION_URI)';
      expect(queued.message).toBe(`deploy queued: waiting for the cluster's agent to take it; ${brought}`);
      expect(await logOf(w, 'application', webId)).toContain(brought);

      // The database was asked for in the same transaction, by the same user, with a record saying why.
      const database_ = await status(w, 'database', databaseId);
      expect(database_.state).toBe('QUEUED');
      expect(database_.message).toBe(
        "deploy queued: waiting for the cluster's agent to take it; deployed with application web: web needs it (DATABASE_URL → PLATFORM_DATABASE_MAIN_DB_CONNECTION_URI) and it was never deployed",
      );
      const rows = await deploymentRows([webId, databaseId, bystanderId]);
      expect(rows.map((row) => row.service_id).sort()).toEqual([webId, databaseId].sort());
      expect(new Set(rows.map((row) => row.created_at)).size).toBe(1);
      expect(new Set(rows.map((row) => row.triggered_by)).size).toBe(1);
      // A database nothing refers to is left alone.
      expect((await status(w, 'database', bystanderId)).state).toBe('READY');

      // The agent is offered the database, and nothing else while it starts; then the application.
      const first = await nextTask(w);
      expect(first).toMatchObject({ subject_type: 'SERVICE', subject_id: databaseId, action: 'deploy' });
      expect((await w.client.leaseTasks(1)).tasks).toEqual([]);
      await settle(w, first, ['take', 'built', 'succeed']);
      const second = await nextTask(w);
      expect(second).toMatchObject({ subject_type: 'SERVICE', subject_id: webId, action: 'deploy' });
      await settle(w, second, ['take', 'built', 'succeed']);
      expect((await status(w, 'database', databaseId)).state).toBe('DEPLOYED');
      expect((await status(w, 'application', webId)).state).toBe('DEPLOYED');

      // Deployed now: a redeploy of the application brings nothing along.
      const redeploy = await call(w, 'POST', `/application/${webId}/redeploy`);
      expect(redeploy.statusCode, redeploy.body).toBe(202);
      expect(redeploy.json<StatusView>().message).toBe("redeploy queued: waiting for the cluster's agent to take it");
      expect((await status(w, 'database', databaseId)).state).toBe('DEPLOYED');
    });

    it('follows needs through the needed services, and deploys databases before the applications', async () => {
      const w = await world();
      const frontId = await application(w, 'front');
      const apiId = await application(w, 'api');
      const databaseId = await database(w, 'orders');
      await variable(w, frontId, 'API_HOST', '$PLATFORM_APPLICATION_API_HOSTNAME');
      await variable(w, apiId, 'ORDERS_HOST', '$PLATFORM_DATABASE_ORDERS_HOST');
      // Only an alias says a service uses another's built-in: every service sees them all.
      await variable(w, frontId, 'GREETING', 'hello');

      const deploy = await call(w, 'POST', `/application/${frontId}/deploy`, {});
      expect(deploy.statusCode, deploy.body).toBe(202);
      expect(deploy.json<StatusView>().message).toBe(
        "deploy queued: waiting for the cluster's agent to take it; " +
          'also deploying application api (never deployed; front needs it: API_HOST → PLATFORM_APPLICATION_API_HOSTNAME); ' +
          'also deploying database orders (never deployed; api needs it: ORDERS_HOST → PLATFORM_DATABASE_ORDERS_HOST)',
      );
      for (const [noun, id] of [['application', apiId], ['database', databaseId]] as const) expect((await status(w, noun, id)).state).toBe('QUEUED');

      // The database's task is offered first, alone; then the two applications.
      const first = await nextTask(w);
      expect(first.subject_id).toBe(databaseId);
      expect((await w.client.leaseTasks(1)).tasks).toEqual([]);
      await settle(w, first, ['take', 'built', 'succeed']);
      const applications = await leaseTasks(w, 2);
      expect(applications.map((task) => task.subject_id).sort()).toEqual([frontId, apiId].sort());
    });

    it('leaves a needed service its user stopped as it is, and says so', async () => {
      const w = await world();
      const webId = await application(w, 'web');
      const databaseId = await database(w, 'main');
      await variable(w, webId, 'DATABASE_URL', '$PLATFORM_DATABASE_MAIN_CONNECTION_URI');

      expect((await call(w, 'POST', `/database/${databaseId}/deploy`, {})).statusCode).toBe(202);
      await settle(w, await nextTask(w), ['take', 'built', 'succeed']);
      expect((await call(w, 'POST', `/database/${databaseId}/stop`)).statusCode).toBe(202);
      await settle(w, await nextTask(w), ['take', 'succeed']);
      expect((await status(w, 'database', databaseId)).state).toBe('STOPPED');
      const databaseDeployments = (await deploymentRows([databaseId])).length;

      const deploy = await call(w, 'POST', `/application/${webId}/deploy`, {});
      expect(deploy.statusCode, deploy.body).toBe(202);
      const warning = 'warning: database main is stopped and stays so; web needs it (DATABASE_URL → PLATFORM_DATABASE_MAIN_CONNECTION_URI): deploy it to start it again';
      expect(deploy.json<StatusView>().message).toBe(`deploy queued: waiting for the cluster's agent to take it; ${warning}`);
      expect(await logOf(w, 'application', webId)).toContain(warning);
      expect((await status(w, 'database', databaseId)).state).toBe('STOPPED');
      expect(await deploymentRows([databaseId])).toHaveLength(databaseDeployments);
    });

    it('refuses the whole deploy when a needed service cannot be deployed, naming it, and writes nothing', async () => {
      const w = await world();
      const frontId = await application(w, 'front');
      const apiId = await application(w, 'api');
      const databaseId = await database(w, 'legacy');
      await variable(w, frontId, 'API_HOST', '$PLATFORM_APPLICATION_API_HOSTNAME');
      await variable(w, apiId, 'LEGACY_HOST', '$PLATFORM_DATABASE_LEGACY_HOST');
      // The database goes: api's alias now names nothing, so api cannot be deployed.
      expect((await call(w, 'DELETE', `/database/${databaseId}`)).statusCode).toBe(204);

      const refused = expectErrorBody(await call(w, 'POST', `/application/${frontId}/deploy`, {}), 400);
      expect(refused.message).toBe(
        'cannot deploy application api, which front needs (API_HOST → PLATFORM_APPLICATION_API_HOSTNAME) and which was never deployed: ' +
          'alias(es) naming no variable here: LEGACY_HOST → $PLATFORM_DATABASE_LEGACY_HOST',
      );
      expect(await deploymentRows([frontId, apiId])).toEqual([]);
      expect(await ctx().database.db.selectFrom('service_runtime').select('service_id').where('service_id', 'in', [frontId, apiId]).execute()).toEqual([]);
      for (const id of [frontId, apiId]) expect((await status(w, 'application', id)).state).toBe('READY');
    });
  },
  { gitAllowPrivateHosts: true },
);
