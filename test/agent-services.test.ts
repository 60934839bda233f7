import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../src/agent/agent.client.ts';
import { Value } from 'typebox/value';
import {
  AgentTaskSpec,
  EnvironmentTaskPayload,
  parseProtocol,
  ServiceDeploymentSpec,
  ServiceTaskPayload,
  ControlPlaneRefusal,
  type AgentTask,
} from '../src/protocol/agent-protocol.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * What the control plane gives and takes from an agent for services (issue 9), over the real agent protocol on a
 * listening server: an environment's action fanned out into its services' deployments (databases first), the
 * spec of a service task (git source with its token opened, database credentials and local port, routes only for
 * a public port), the runtime output of a deployed workload, the teardown of a deleted service, and rebootServices
 * restarting only the services it names.
 */

const GIT_TOKEN_VALUE = 'ghp_AgentReadsThisToken0123456789';

describeEachDatabase('services through the agent', (ctx) => {
  let baseUrl = '';

  async function listen(): Promise<string> {
    if (baseUrl === '') {
      await ctx().app.listen({ port: 0, host: '127.0.0.1' });
      baseUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
    }
    return baseUrl;
  }

  async function post(auth: string, url: string, payload?: Record<string, unknown>) {
    return ctx().call(auth, { method: 'POST', url, ...(payload === undefined ? {} : { payload }) });
  }

  async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
    const response = await post(auth, url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  }

  interface World {
    owner: TestUser;
    organizationId: string;
    projectId: string;
    environmentId: string;
    environmentName: string;
    webId: string;
    workerId: string;
    databaseId: string;
    /** The cluster's operator credential, for requests the client would not send. */
    credential: string;
    client: AgentClient;
  }

  /** An environment on an enrolled cluster with a public web application (git token), a private worker and a database. */
  async function world(): Promise<World> {
    const url = await listen();
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
    const projectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
    const environmentName = uniqueName('env');
    const environmentId = await created(owner.auth, `/project/${projectId}/environment`, { name: environmentName, cluster: clusterId, mode: 'STAGING' });
    const gitTokenId = await created(owner.auth, `/organization/${organizationId}/gitToken`, { name: uniqueName('token'), type: 'GITHUB', token: GIT_TOKEN_VALUE });
    const webId = await created(owner.auth, `/environment/${environmentId}/application`, {
      name: 'web',
      git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'release', git_token_id: gitTokenId },
      ports: [{ internal_port: 8080, publicly_accessible: true }],
      healthchecks: {},
    });
    const workerId = await created(owner.auth, `/environment/${environmentId}/application`, {
      name: 'worker',
      git_repository: { url: 'https://github.com/acme/worker', provider: 'GITHUB' },
      healthchecks: {},
    });
    const databaseId = await created(owner.auth, `/environment/${environmentId}/database`, { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' });
    return { owner, organizationId, projectId, environmentId, environmentName, webId, workerId, databaseId, credential, client: createAgentClient({ controlPlaneUrl: url, credential, retryBaseMs: 20 }) };
  }

  /**
   * Leases tasks until `count` arrived (in lease order). `carryOut` runs on each as it arrives, under its live lease:
   * the control plane offers a later stage (applications after databases, the environment last) only once the
   * earlier one settled.
   */
  async function leaseTasks(w: World, count: number, carryOut?: (task: AgentTask) => Promise<void>): Promise<AgentTask[]> {
    const tasks: AgentTask[] = [];
    for (let round = 0; round < 60 && tasks.length < count; round++) {
      const leased = (await w.client.leaseTasks(1)).tasks;
      tasks.push(...leased);
      for (const task of leased) await carryOut?.(task);
    }
    expect(tasks.length).toBe(count);
    return tasks;
  }

  async function settle(w: World, task: AgentTask, events: Array<'take' | 'built' | 'succeed' | 'fail'>): Promise<void> {
    let seq = task.last_report_seq;
    for (const event of events) {
      seq += 1;
      await w.client.reportProgress(task.id, { lease_id: task.lease_id, seq, event });
    }
  }

  /** The web application's public hostname, from its default link (listApplicationLinks). */
  async function ownHostname(w: World): Promise<string> {
    const links = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.webId}/link` });
    expect(links.statusCode, links.body).toBe(200);
    const url = links.json<{ results: Array<{ url: string }> }>().results[0]?.url;
    if (url === undefined) throw new Error(`no link: ${links.body}`);
    return new URL(url).hostname;
  }

  async function state(w: World, noun: 'application' | 'database', id: string): Promise<string> {
    return (await ctx().call(w.owner.auth, { method: 'GET', url: `/${noun}/${id}/status` })).json<{ state: string }>().state;
  }

  /** The agent is handed the teardown of each of the world's three services, and their records are gone. */
  async function expectEveryServiceTornDown(w: World): Promise<AgentTask[]> {
    const teardowns = await leaseTasks(w, 3);
    expect(teardowns.map((task) => [task.subject_type, task.action])).toEqual([
      ['SERVICE_TEARDOWN', 'delete'],
      ['SERVICE_TEARDOWN', 'delete'],
      ['SERVICE_TEARDOWN', 'delete'],
    ]);
    expect(teardowns.map((task) => task.subject_id).sort()).toEqual([w.webId, w.workerId, w.databaseId].sort());
    expect(await ctx().database.db.selectFrom('services').select('id').where('environment_id', '=', w.environmentId).execute()).toEqual([]);
    return teardowns;
  }

  /** Deploys the environment and has the agent carry out every task it fans out into; answers the tasks. */
  async function deployEnvironment(w: World): Promise<AgentTask[]> {
    expect((await post(w.owner.auth, `/environment/${w.environmentId}/deploy`)).statusCode).toBe(202);
    return leaseTasks(w, 4, (task) => settle(w, task, ['take', 'built', 'succeed']));
  }

  it("fans an environment's deploy out into its services' deployments, databases first, and each gets its spec", async () => {
    const w = await world();
    // The agent says it runs the local driver: the database's built-ins then name its address on the agent's host.
    await w.client.heartbeat({ agent_version: 'test', driver: 'local', started_at: new Date().toISOString() });
    const tasks = await deployEnvironment(w);
    const serviceTasks = tasks.filter((task) => task.subject_type === 'SERVICE');
    // The database first; the two applications then form one stage, offered in the order their tasks were dispatched.
    expect(serviceTasks[0]?.subject_id).toBe(w.databaseId);
    expect(serviceTasks.slice(1).map((task) => task.subject_id).sort()).toEqual([w.webId, w.workerId].sort());
    expect(serviceTasks.map((task) => task.action)).toEqual(['deploy', 'deploy', 'deploy']);
    expect(tasks.filter((task) => task.subject_type === 'ENVIRONMENT').map((task) => task.subject_id)).toEqual([w.environmentId]);
    for (const [noun, id] of [['application', w.webId], ['application', w.workerId], ['database', w.databaseId]] as const) expect(await state(w, noun, id)).toBe('DEPLOYED');

    const taskOf = (serviceId: string) => serviceTasks.find((task) => task.subject_id === serviceId) as AgentTask;
    const [databaseTask, webTask, workerTask] = [taskOf(w.databaseId), taskOf(w.webId), taskOf(w.workerId)];
    // The spec is the lease holder's only: after the task settled its lease is gone.
    await expect(w.client.getTaskSpec(webTask.id, webTask.lease_id)).rejects.toBeInstanceOf(ControlPlaneRefusal);

    // A redeploy of the environment redeploys every deployed service; read the specs while their leases are live.
    expect((await post(w.owner.auth, `/environment/${w.environmentId}/redeploy`)).statusCode).toBe(202);
    const specs = new Map<string, ServiceDeploymentSpec>();
    const again = (
      await leaseTasks(w, 4, async (task) => {
        // Each task's payload, and each spec exactly as it crosses the wire, is what the protocol's schemas say: what
        // the control plane produces is what every driver parses (the agent's client checks it with the same schema).
        expect(Value.Errors(task.subject_type === 'SERVICE' ? ServiceTaskPayload : EnvironmentTaskPayload, task.payload)).toEqual([]);
        if (task.subject_type === 'SERVICE') {
          const raw = await ctx().call(`Bearer ${w.credential}`, { method: 'GET', url: `/operator/v1/tasks/${task.id}/spec?lease_id=${task.lease_id}` });
          expect(raw.statusCode, raw.body).toBe(200);
          const answer = raw.json<{ spec: unknown }>();
          expect(Value.Errors(AgentTaskSpec, answer)).toEqual([]);
          expect(await w.client.getTaskSpec(task.id, task.lease_id)).toEqual(answer);
          specs.set(task.subject_id, parseProtocol(ServiceDeploymentSpec, answer.spec, 'spec'));
        }
        await settle(w, task, ['take', 'built', 'succeed']);
      })
    ).filter((task) => task.subject_type === 'SERVICE');
    expect(again[0]?.subject_id).toBe(w.databaseId);
    expect(again.map((task) => [task.subject_id, task.action]).sort()).toEqual(
      [
        [w.databaseId, 'redeploy'],
        [w.webId, 'redeploy'],
        [w.workerId, 'redeploy'],
      ].sort(),
    );
    const [database, web, worker] = [specs.get(w.databaseId), specs.get(w.webId), specs.get(w.workerId)] as [ServiceDeploymentSpec, ServiceDeploymentSpec, ServiceDeploymentSpec];

    expect(web.environment).toEqual({ id: w.environmentId, name: w.environmentName, mode: 'STAGING', project_id: w.projectId });
    expect(web.image).toBeNull();
    expect(web.git).toEqual({ url: 'https://github.com/acme/web', branch: 'release', commit_id: null, root_path: '/', credentials: { provider: 'GITHUB', token: GIT_TOKEN_VALUE } });
    // The service's own hostname, as its link names it: its names, and 8 characters that are its own.
    expect(web.routing.hostnames).toEqual([await ownHostname(w)]);
    expect(web.routing.hostnames[0]).toMatch(new RegExp(`^web-${w.environmentName}-[a-z2-7]{8}\\.localhost$`));
    // Without a public port a service is not routed.
    expect(worker.routing.hostnames).toEqual([]);
    // Inside the environment services are named by intent, whatever the driver: the internal hostname and the ports
    // they declare (a database, its engine's). Where those names lead is the driver's placement; the spec lists every
    // such name of the environment for a driver that resolves them itself.
    const webHostname = `web.${w.environmentId}.slipway.internal`;
    const ordersHostname = `orders.${w.environmentId}.slipway.internal`;
    expect(web.routing.internal).toEqual({ hostname: webHostname, ports: [8080] });
    expect(database.routing.internal).toEqual({ hostname: ordersHostname, ports: [5432] });
    expect(worker.routing.internal).toBeNull();
    const peers = [
      { service_id: w.databaseId, hostname: ordersHostname },
      { service_id: w.webId, hostname: webHostname },
    ].sort((a, b) => a.hostname.localeCompare(b.hostname));
    for (const spec of [web, worker, database]) expect([...spec.routing.peers].sort((a, b) => a.hostname.localeCompare(b.hostname))).toEqual(peers);
    expect(web.variables.find((variable) => variable.key === 'PLATFORM_APPLICATION_WEB_HOSTNAME')?.value).toBe(webHostname);
    expect(worker.variables.find((variable) => variable.key === 'PLATFORM_APPLICATION_WEB_HOSTNAME')?.value).toBe(webHostname);
    expect(worker.git?.credentials).toBeNull();
    expect(database.git).toBeNull();
    expect(database.database).toEqual({ type: 'POSTGRESQL', version: expect.any(String), username: expect.any(String), password: expect.any(String), database_name: 'orders', shared: false });
    // The application's built-ins name the same service, with the same credentials, and say which values are secret.
    const uri = web.variables.find((variable) => variable.key === 'PLATFORM_DATABASE_ORDERS_CONNECTION_URI');
    expect(uri?.value).toBe(`postgresql://${database.database?.username}:${database.database?.password}@${ordersHostname}:5432/orders`);
    expect(uri?.secret).toBe(true);
    expect(web.variables.find((variable) => variable.key === 'PLATFORM_DATABASE_ORDERS_NAME')).toMatchObject({ value: 'orders', secret: false });
    expect(databaseTask.payload).toMatchObject({ service_id: w.databaseId, service_type: 'DATABASE', environment_id: w.environmentId });
    expect(workerTask.payload).toMatchObject({ service_type: 'APPLICATION' });
  });

  it("offers an environment's deploy in stages: its databases, then the other services together, then the environment", async () => {
    const w = await world();
    const cacheId = await created(w.owner.auth, `/environment/${w.environmentId}/database`, { name: 'cache', type: 'REDIS', version: '7', mode: 'CONTAINER' });
    expect((await post(w.owner.auth, `/environment/${w.environmentId}/deploy`)).statusCode).toBe(202);
    /** Leases (up to 5 at once) until `count` tasks arrived; then looks once more and expects nothing else offered. */
    const stage = async (count: number): Promise<AgentTask[]> => {
      const tasks: AgentTask[] = [];
      for (let round = 0; round < 60 && tasks.length < count; round++) tasks.push(...(await w.client.leaseTasks(1)).tasks);
      // The next stage's tasks are in the mailbox by now or soon: none of them is offered while this one is open.
      expect((await w.client.leaseTasks(1)).tasks).toEqual([]);
      return tasks;
    };

    const databases = await stage(2);
    expect(databases.map((task) => task.subject_id).sort()).toEqual([w.databaseId, cacheId].sort());
    await settle(w, databases[0] as AgentTask, ['take', 'built', 'succeed']);
    // One database still starting holds the applications back.
    expect((await w.client.leaseTasks(1)).tasks).toEqual([]);
    await settle(w, databases[1] as AgentTask, ['take', 'built', 'succeed']);

    const applications = await stage(2);
    expect(applications.map((task) => task.subject_id).sort()).toEqual([w.webId, w.workerId].sort());
    // Both run side by side: each reports under its own live lease.
    await settle(w, applications[1] as AgentTask, ['take', 'built']);
    await settle(w, applications[0] as AgentTask, ['take', 'built', 'succeed']);
    expect((await w.client.leaseTasks(0)).tasks).toEqual([]);
    await w.client.reportProgress((applications[1] as AgentTask).id, { lease_id: (applications[1] as AgentTask).lease_id, seq: 3, event: 'succeed' });

    const [environmentTask] = await stage(1);
    expect(environmentTask).toMatchObject({ subject_type: 'ENVIRONMENT', subject_id: w.environmentId, action: 'deploy' });
    await settle(w, environmentTask as AgentTask, ['take', 'built', 'succeed']);
    expect((await ctx().call(w.owner.auth, { method: 'GET', url: `/environment/${w.environmentId}/status` })).json<{ state: string }>().state).toBe('DEPLOYED');
  });

  it('answers where its running services are reached now: a custom domain verified or removed after the deployment included', async () => {
    const w = await world();
    expectErrorBody(await post(`Bearer ${'slwo_not-a-credential'}`, '/operator/v1/routes', { service_ids: [w.webId] }), 401);
    // Not deployed yet: nothing of the environment runs on the cluster.
    expect((await w.client.resolveRoutes([w.webId, w.workerId])).routes).toEqual([]);
    await deployEnvironment(w);
    const own = await ownHostname(w);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await w.client.resolveRoutes([w.webId, w.workerId, unknown])).routes).toEqual([
      { service_id: w.webId, hostnames: [own] },
      // Deployed without a public port: running, and routed nowhere.
      { service_id: w.workerId, hostnames: [] },
    ]);

    const domain = `shop-${uniqueName('d')}.example.com`;
    const added = await post(w.owner.auth, `/application/${w.webId}/customDomain`, { domain, generate_certificate: false });
    expect(added.statusCode, added.body).toBe(201);
    // Pending its DNS check, a domain is not routed; once verified (the DNS check itself: custom-domains.test.ts), it is.
    expect((await w.client.resolveRoutes([w.webId])).routes).toEqual([{ service_id: w.webId, hostnames: [own] }]);
    await ctx().database.db.updateTable('service_custom_domains').set({ status: 'VALIDATED' }).where('service_id', '=', w.webId).execute();
    expect((await w.client.resolveRoutes([w.webId])).routes).toEqual([{ service_id: w.webId, hostnames: [own, domain] }]);
    const removed = await ctx().call(w.owner.auth, { method: 'DELETE', url: `/application/${w.webId}/customDomain/${added.json<{ id: string }>().id}` });
    expect(removed.statusCode, removed.body).toBe(204);
    expect((await w.client.resolveRoutes([w.webId])).routes).toEqual([{ service_id: w.webId, hostnames: [own] }]);

    // Another cluster's agent learns nothing of these services; ids that are not ids are refused.
    const other = await world();
    expect((await other.client.resolveRoutes([w.webId])).routes).toEqual([]);
    // (Refused only to an authenticated agent: without the credential, the same request is a 401 naming nothing.)
    expectErrorBody(await post(`Bearer ${other.credential}`, '/operator/v1/routes', { service_ids: ['not-a-uuid'] }), 400);
    expectErrorBody(await post(`Bearer ${'slwo_not-a-credential'}`, '/operator/v1/routes', { service_ids: ['not-a-uuid'] }), 401);
  });

  it('names services by their internal hostname and declared port in the built-ins, whatever the cluster', async () => {
    const w = await world();
    const resolved = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.webId}/resolvedVariables?reveal=true` });
    expect(resolved.statusCode, resolved.body).toBe(200);
    const results = resolved.json<{ results: Array<{ key: string; value: string }> }>().results;
    const valueOf = (key: string) => results.find((variable) => variable.key === key)?.value;
    expect(valueOf('PLATFORM_DATABASE_ORDERS_HOST')).toBe(`orders.${w.environmentId}.slipway.internal`);
    expect(valueOf('PLATFORM_DATABASE_ORDERS_PORT')).toBe('5432');
    expect(valueOf('PLATFORM_APPLICATION_WEB_HOSTNAME')).toBe(`web.${w.environmentId}.slipway.internal`);
    // The control plane keeps no address, port or host of a workload: placement is the driver's.
    const columns = Object.keys(await ctx().database.db.selectFrom('services').selectAll().where('id', '=', w.databaseId).executeTakeFirstOrThrow());
    expect(columns.filter((column) => /port|address/.test(column))).toEqual([]);
  });

  it("keeps a deployed workload's output with its running deployment, for its own cluster's agent only", async () => {
    const w = await world();
    // Never deployed: nothing runs that could print.
    await expect(w.client.appendWorkloadLogs(w.webId, [{ at: new Date().toISOString(), stream: 'stdout', line: 'early' }])).rejects.toMatchObject({ status: 404 });
    await deployEnvironment(w);
    await w.client.appendWorkloadLogs(w.webId, [
      { at: new Date().toISOString(), stream: 'stdout', line: 'listening on 8080' },
      { at: new Date().toISOString(), stream: 'stderr', line: 'GET / 200' },
    ]);
    const logs = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.webId}/log` });
    const lines = logs.json<{ results: Array<{ message: string; stream: string }> }>().results;
    expect(lines.slice(-2).map((line) => [line.stream, line.message])).toEqual([
      ['stdout', 'listening on 8080'],
      ['stderr', 'GET / 200'],
    ]);
    // Another cluster's agent cannot write into this service's logs.
    const other = await world();
    await expect(other.client.appendWorkloadLogs(w.webId, [{ at: new Date().toISOString(), stream: 'stdout', line: 'forged' }])).rejects.toMatchObject({ status: 404 });
    const refused = await post(`Bearer ${'slwo_not-a-credential'}`, `/operator/v1/workloads/${w.webId}/logs`, { lines: [{ at: new Date().toISOString(), stream: 'stdout', line: 'x' }] });
    expect(refused.statusCode).toBe(401);
    // The credential is checked first: a malformed path is a 401 without it, and a 400 only with it.
    expectErrorBody(await post(`Bearer ${'slwo_not-a-credential'}`, `/operator/v1/workloads/not-a-uuid/logs`, { lines: [] }), 401);
    expectErrorBody(await post(`Bearer ${w.credential}`, `/operator/v1/workloads/not-a-uuid/logs`, { lines: [] }), 400);
  });

  it("shows a crashing workload in its service's status, from its own cluster's agent only, until the next deployment", async () => {
    const w = await world();
    await expect(w.client.reportWorkloadHealth(w.webId, { health: 'RESTARTING', restarts: 1, message: 'exited with code 7' })).rejects.toMatchObject({ status: 404 });
    await deployEnvironment(w);
    const statusOf = async () =>
      (await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.webId}/status` })).json<{ state: string; message: string | null; workload: unknown }>();
    expect((await statusOf()).workload).toBeNull();
    await w.client.reportWorkloadHealth(w.webId, { health: 'RESTARTING', restarts: 2, message: 'web exited with code 7; restarting in 1000 ms' });
    const crashing = await statusOf();
    expect(crashing).toMatchObject({
      state: 'DEPLOYED',
      message: 'web exited with code 7; restarting in 1000 ms',
      workload: { health: 'RESTARTING', restarts: 2, message: 'web exited with code 7; restarting in 1000 ms' },
    });
    await w.client.reportWorkloadHealth(w.webId, { health: 'RUNNING', restarts: 2 });
    expect((await statusOf()).workload).toMatchObject({ health: 'RUNNING', restarts: 2, message: null });
    const other = await world();
    await expect(other.client.reportWorkloadHealth(w.webId, { health: 'FAILED', restarts: 9 })).rejects.toMatchObject({ status: 404 });
    const refused = await post(`Bearer ${'slwo_not-a-credential'}`, `/operator/v1/workloads/${w.webId}/health`, { health: 'FAILED', restarts: 1 });
    expect(refused.statusCode).toBe(401);
    // A redeploy starts a new instance: nothing is known of its health yet.
    await deployEnvironment(w);
    expect((await statusOf()).workload).toBeNull();
  });

  it('hands the teardown of a deleted service to the agent, which settles it', async () => {
    const w = await world();
    await deployEnvironment(w);
    const removed = await ctx().call(w.owner.auth, { method: 'DELETE', url: `/application/${w.workerId}` });
    expect(removed.statusCode, removed.body).toBe(204);
    const [teardown] = await leaseTasks(w, 1);
    expect(teardown).toMatchObject({ subject_type: 'SERVICE_TEARDOWN', subject_id: w.workerId, action: 'delete', accepts_logs: false });
    expect(teardown?.payload).toEqual({ service_id: w.workerId, service_type: 'APPLICATION', environment_id: w.environmentId, name: 'worker' });
    await expect(w.client.getTaskSpec(teardown?.id ?? '', teardown?.lease_id ?? '')).rejects.toMatchObject({ status: 404 });
    await settle(w, teardown as AgentTask, ['take', 'succeed']);
    const row = await ctx().database.db.selectFrom('agent_tasks').select(['status', 'outcome']).where('id', '=', teardown?.id ?? '').executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'DONE', outcome: 'SUCCEEDED' });
  });

  it('lists only the services to redeploy with toUpdate, and leaves workloads on the cluster with skipReconcile', async () => {
    const w = await world();
    const names = async (url: string) => (await ctx().call(w.owner.auth, { method: 'GET', url })).json<{ results: Array<{ name: string }> }>().results.map((item) => item.name).sort();
    expect(await names(`/environment/${w.environmentId}/application?toUpdate=true`)).toEqual([]);
    await deployEnvironment(w);
    expect(await names(`/environment/${w.environmentId}/application?toUpdate=true`)).toEqual([]);
    expect(await names(`/environment/${w.environmentId}/application`)).toEqual(['web', 'worker']);
    expect((await post(w.owner.auth, `/application/${w.workerId}/environmentVariable`, { key: 'QUEUE', value: 'orders' })).statusCode).toBe(201);
    expect(await names(`/environment/${w.environmentId}/application?toUpdate=true`)).toEqual(['worker']);
    expectErrorBody(await ctx().call(w.owner.auth, { method: 'GET', url: `/environment/${w.environmentId}/application?toUpdate=maybe` }), 400);

    const teardownJobs = () =>
      ctx()
        .database.db.selectFrom('jobs')
        .select('id')
        .where('kind', '=', 'service.teardown')
        .where('serial_key', 'in', [w.webId, w.workerId, w.databaseId].map((id) => `service:${id}`))
        .execute();
    expectErrorBody(await ctx().call(w.owner.auth, { method: 'DELETE', url: `/application/${w.workerId}?skipReconcile=perhaps` }), 400);
    const kept = await ctx().call(w.owner.auth, { method: 'DELETE', url: `/application/${w.workerId}?skipReconcile=true` });
    expect(kept.statusCode, kept.body).toBe(204);
    expect(await names(`/environment/${w.environmentId}/application`)).toEqual(['web']);
    const removed = await ctx().call(w.owner.auth, { method: 'DELETE', url: `/environment/${w.environmentId}?skipReconcile=true` });
    expect(removed.statusCode, removed.body).toBe(204);
    // The records are gone; nothing was handed to the agent to tear down.
    expect(await ctx().database.db.selectFrom('services').select('id').where('environment_id', '=', w.environmentId).execute()).toEqual([]);
    expect(await teardownJobs()).toEqual([]);
    expect((await w.client.leaseTasks(0)).tasks).toEqual([]);
  });

  it("hands every deployed service's teardown to the agent when their environment is deleted", async () => {
    const w = await world();
    await deployEnvironment(w);
    const removed = await ctx().call(w.owner.auth, { method: 'DELETE', url: `/environment/${w.environmentId}` });
    expect(removed.statusCode, removed.body).toBe(204);
    await expectEveryServiceTornDown(w);
  });

  it("hands every deployed service's teardown to the agent when their project is deleted, and removes its environments", async () => {
    const w = await world();
    await deployEnvironment(w);
    const removed = await ctx().call(w.owner.auth, { method: 'DELETE', url: `/project/${w.projectId}` });
    expect(removed.statusCode, removed.body).toBe(204);
    await expectEveryServiceTornDown(w);
    expect(await ctx().database.db.selectFrom('environments').select('id').where('project_id', '=', w.projectId).execute()).toEqual([]);
    expect((await ctx().call(w.owner.auth, { method: 'GET', url: `/project/${w.projectId}` })).statusCode).toBe(404);
  });

  it("deletes an organization at once for every caller, hands its services' teardowns to the agent, and purges it once they settled", async () => {
    const w = await world();
    await deployEnvironment(w);
    const token = await ctx().createApiToken(w.owner.auth, w.organizationId, { name: uniqueName('token'), scope: 'ADMIN' });
    const { name } = (await ctx().call(w.owner.auth, { method: 'GET', url: `/organization/${w.organizationId}` })).json<{ name: string }>();
    const organizationRow = () => ctx().database.db.selectFrom('organizations').select(['id', 'deleted_at']).where('id', '=', w.organizationId).executeTakeFirst();

    const removed = await ctx().call(w.owner.auth, { method: 'DELETE', url: `/organization/${w.organizationId}` });
    expect(removed.statusCode, removed.body).toBe(204);
    // Gone for every caller at once: its owner finds nothing, its token no longer authenticates, its name is free.
    expectErrorBody(await ctx().call(w.owner.auth, { method: 'GET', url: `/organization/${w.organizationId}` }), 404);
    expectErrorBody(await ctx().call(w.owner.auth, { method: 'GET', url: `/project/${w.projectId}` }), 404);
    expectErrorBody(await ctx().call(w.owner.auth, { method: 'DELETE', url: `/organization/${w.organizationId}` }), 404);
    const listed = await ctx().call(w.owner.auth, { method: 'GET', url: '/organization' });
    expect(listed.json<{ results: Array<{ id: string }> }>().results.map((organization) => organization.id)).not.toContain(w.organizationId);
    expectErrorBody(await ctx().call(`Token ${token}`, { method: 'GET', url: `/organization/${w.organizationId}/project` }), 401);
    const again = await ctx().call(w.owner.auth, { method: 'POST', url: '/organization', payload: { name } });
    expect(again.statusCode, again.body).toBe(201);

    // Its cluster's agent still takes the teardowns; the row (and so the cluster) stays until they settled.
    const teardowns = await expectEveryServiceTornDown(w);
    expect((await organizationRow())?.deleted_at).toEqual(expect.any(String));
    const [last, ...others] = teardowns;
    for (const task of others) await settle(w, task, ['take', 'succeed']);
    // One teardown still under way: the purge waits for it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await organizationRow()).toBeDefined();
    await settle(w, last as AgentTask, ['take', 'succeed']);
    await ctx().organizationPurged(w.organizationId);
    expect(await ctx().database.db.selectFrom('clusters').select('id').where('organization_id', '=', w.organizationId).execute()).toEqual([]);
  });

  it('refuses to delete an organization while an agent works on one of its services, and deletes nothing', async () => {
    const w = await world();
    expect((await post(w.owner.auth, `/environment/${w.environmentId}/deploy`)).statusCode).toBe(202);
    const [first] = await leaseTasks(w, 1);
    await settle(w, first as AgentTask, ['take']);
    const refused = await ctx().call(w.owner.auth, { method: 'DELETE', url: `/organization/${w.organizationId}` });
    expectErrorBody(refused, 409);
    expect((await ctx().call(w.owner.auth, { method: 'GET', url: `/organization/${w.organizationId}` })).statusCode).toBe(200);
    expect((await ctx().call(w.owner.auth, { method: 'GET', url: `/environment/${w.environmentId}` })).statusCode).toBe(200);
  });

  it('refuses to delete a project while an agent works on one of its environments, and deletes nothing', async () => {
    const w = await world();
    expect((await post(w.owner.auth, `/environment/${w.environmentId}/deploy`)).statusCode).toBe(202);
    // The agent takes the first stage (the database) and has not settled it.
    const [first] = await leaseTasks(w, 1);
    await settle(w, first as AgentTask, ['take']);
    const refused = await ctx().call(w.owner.auth, { method: 'DELETE', url: `/project/${w.projectId}` });
    expect(refused.statusCode, refused.body).toBe(409);
    expect((await ctx().call(w.owner.auth, { method: 'GET', url: `/project/${w.projectId}` })).statusCode).toBe(200);
    expect((await ctx().call(w.owner.auth, { method: 'GET', url: `/environment/${w.environmentId}` })).statusCode).toBe(200);
  });

  it('restarts only the services rebootServices names, and stops only deployed ones', async () => {
    const w = await world();
    await deployEnvironment(w);
    const reboot = await post(w.owner.auth, `/environment/${w.environmentId}/service/restart-service`, { application_ids: [w.webId] });
    expect(reboot.statusCode, reboot.body).toBe(202);
    const restart = await leaseTasks(w, 2, (task) => settle(w, task, ['take', 'succeed']));
    expect(restart.map((task) => [task.subject_type, task.subject_id, task.action])).toEqual([
      ['SERVICE', w.webId, 'restart'],
      ['ENVIRONMENT', w.environmentId, 'restart'],
    ]);

    // A database added after the deploy was never deployed: the environment's stop leaves it alone.
    const cacheId = await created(w.owner.auth, `/environment/${w.environmentId}/database`, { name: 'cache', type: 'REDIS', version: '7', mode: 'CONTAINER' });
    expect((await post(w.owner.auth, `/environment/${w.environmentId}/stop`)).statusCode).toBe(202);
    const stops = await leaseTasks(w, 4, (task) => settle(w, task, ['take', 'succeed']));
    expect(stops.map((task) => [task.subject_id, task.action])).toEqual([
      [w.databaseId, 'stop'],
      [w.webId, 'stop'],
      [w.workerId, 'stop'],
      [w.environmentId, 'stop'],
    ]);
    expect(stops.some((task) => task.subject_id === cacheId)).toBe(false);
  });
});
