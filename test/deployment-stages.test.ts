import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../src/agent/agent.client.ts';
import { placeInDefaultStages } from '../src/db/migrations/0038_deployment_stages.ts';
import type { AgentTask } from '../src/protocol/agent-protocol.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Deployment stages (issue 24 part 3, docs/deployment-stages.md): the default layout (DATABASE DEFAULT, then SERVICE
 * DEFAULT) every environment and service gets, the stage operations with their 400/404/409s and organization
 * isolation, and the order an environment's deploy really follows over the agent protocol: the tasks of a later
 * stage reach the mailbox after, and are offered only after, those of the earlier ones — reversed when the stages are.
 */

interface StageView {
  id: string;
  name: string;
  description: string;
  deployment_order: number;
  environment: { id: string };
  services: Array<{ id: string; service_id: string; service_type: string; is_skipped: boolean }>;
}

describeEachDatabase('deployment stages', (ctx) => {
  let baseUrl = '';

  async function listen(): Promise<string> {
    if (baseUrl === '') {
      await ctx().app.listen({ port: 0, host: '127.0.0.1' });
      baseUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
    }
    return baseUrl;
  }

  async function call(auth: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) {
    return ctx().call(auth, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async function ok<T>(auth: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, status = 200): Promise<T> {
    const response = await call(auth, method, url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<T>();
  }

  interface World {
    owner: TestUser;
    organizationId: string;
    projectId: string;
    environmentId: string;
    /** Two applications (one kind: only their stages order them) and a database. */
    xId: string;
    yId: string;
    databaseId: string;
    client: AgentClient;
  }

  async function world(): Promise<World> {
    const url = await listen();
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
    const projectId = (await ok<{ id: string }>(owner.auth, 'POST', `/organization/${organizationId}/project`, { name: uniqueName('project') })).id;
    const environmentId = (await ok<{ id: string }>(owner.auth, 'POST', `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId }, 201)).id;
    const application = async (name: string) =>
      (
        await ok<{ id: string }>(
          owner.auth,
          'POST',
          `/environment/${environmentId}/application`,
          { name, git_repository: { url: `https://github.com/acme/${name}`, provider: 'GITHUB' }, healthchecks: {} },
          201,
        )
      ).id;
    const xId = await application('x');
    const yId = await application('y');
    const databaseId = (await ok<{ id: string }>(owner.auth, 'POST', `/environment/${environmentId}/database`, { name: 'orders', type: 'POSTGRESQL', version: '16', mode: 'CONTAINER' }, 201)).id;
    return { owner, organizationId, projectId, environmentId, xId, yId, databaseId, client: createAgentClient({ controlPlaneUrl: url, credential, retryBaseMs: 20 }) };
  }

  const stagesOf = async (w: World, environmentId = w.environmentId) =>
    (await ok<{ results: StageView[] }>(w.owner.auth, 'GET', `/environment/${environmentId}/deploymentStage`)).results;
  const layout = (stages: StageView[]) => stages.map((stage) => [stage.name, stage.deployment_order, stage.services.map((service) => service.service_id).sort()]);
  const createStage = (w: World, name: string, environmentId = w.environmentId) => ok<StageView>(w.owner.auth, 'POST', `/environment/${environmentId}/deploymentStage`, { name });
  const attach = (w: World, stageId: string, serviceId: string, body: Record<string, unknown> = {}) =>
    ok<{ results: StageView[] }>(w.owner.auth, 'PUT', `/deploymentStage/${stageId}/service/${serviceId}`, body);

  /** The service tasks in the cluster's mailbox, in the order they were put there. */
  async function mailbox(w: World): Promise<string[]> {
    const rows = await ctx()
      .database.db.selectFrom('agent_tasks')
      .select(['subject_id', 'subject_type'])
      .where('organization_id', '=', w.organizationId)
      .where('subject_type', '=', 'SERVICE')
      .where('status', '!=', 'DONE')
      .orderBy('id')
      .execute();
    return rows.map((row) => row.subject_id);
  }

  /** Leases one task, waiting for the dispatch to put it into the mailbox. */
  async function leaseOne(w: World): Promise<AgentTask> {
    for (let round = 0; round < 100; round++) {
      const [task] = (await w.client.leaseTasks(1)).tasks;
      if (task !== undefined) return task;
    }
    throw new Error('no task offered');
  }

  async function settle(w: World, task: AgentTask): Promise<void> {
    let seq = task.last_report_seq;
    for (const event of ['take', 'built', 'succeed'] as const) {
      seq += 1;
      await w.client.reportProgress(task.id, { lease_id: task.lease_id, seq, event });
    }
  }

  /**
   * Carries an environment action out: leases and settles its tasks one at a time, checking at each step that nothing
   * else is offered meanwhile; answers the subjects in the order they were offered.
   */
  async function carryOut(w: World, count: number, whileOpen?: (task: AgentTask) => Promise<void>): Promise<string[]> {
    const order: string[] = [];
    for (let index = 0; index < count; index++) {
      const task = await leaseOne(w);
      order.push(task.subject_id);
      await whileOpen?.(task);
      // While it is open, nothing of a later stage is offered.
      expect((await w.client.leaseTasks(1)).tasks).toEqual([]);
      await settle(w, task);
    }
    return order;
  }

  it('gives every environment its default stages and every service the default stage of its kind', async () => {
    const w = await world();
    expect(layout(await stagesOf(w))).toEqual([
      ['DATABASE DEFAULT', 0, [w.databaseId]],
      ['SERVICE DEFAULT', 1, [w.xId, w.yId].sort()],
    ]);
    const [databaseStage, serviceStage] = await stagesOf(w);
    expect(serviceStage?.services.find((service) => service.service_id === w.xId)).toMatchObject({ service_type: 'APPLICATION', is_skipped: false });
    expect(serviceStage?.environment).toEqual({ id: w.environmentId });
    // A service created later lands in the default stage of its kind, even after the stages were rearranged.
    await ok(w.owner.auth, 'PUT', `/deploymentStage/${serviceStage?.id}/moveBefore/${databaseStage?.id}`);
    const cacheId = (await ok<{ id: string }>(w.owner.auth, 'POST', `/environment/${w.environmentId}/database`, { name: 'cache', type: 'REDIS', version: '7', mode: 'CONTAINER' }, 201)).id;
    expect((await ok<StageView>(w.owner.auth, 'GET', `/service/${cacheId}/deploymentStage`)).id).toBe(databaseStage?.id);
    expect((await ok<StageView>(w.owner.auth, 'GET', `/service/${w.xId}/deploymentStage`)).name).toBe('SERVICE DEFAULT');
    expect(layout(await stagesOf(w))).toEqual([
      ['SERVICE DEFAULT', 0, [w.xId, w.yId].sort()],
      ['DATABASE DEFAULT', 1, [w.databaseId, cacheId].sort()],
    ]);
    // A deleted service leaves its stage.
    expect((await call(w.owner.auth, 'DELETE', `/database/${cacheId}`)).statusCode).toBeLessThan(300);
    expect(layout(await stagesOf(w))[1]).toEqual(['DATABASE DEFAULT', 1, [w.databaseId]]);
  });

  it('places the environments and services that exist when stages arrive in the default stages (the migration)', async () => {
    const w = await world();
    const { db } = ctx().database;
    // Nothing read the new environment's stages yet: it has none, as environments had none before the migration.
    const rowsOf = () => db.selectFrom('deployment_stages').selectAll().where('environment_id', '=', w.environmentId).orderBy('deployment_order').execute();
    expect(await rowsOf()).toEqual([]);
    // A migration sees the database untyped; running it twice changes nothing.
    const untyped = db as unknown as Kysely<unknown>;
    await placeInDefaultStages(untyped);
    await placeInDefaultStages(untyped);
    const rows = await rowsOf();
    expect(rows.map((row) => [row.name, row.deployment_order, row.default_for])).toEqual([
      ['DATABASE DEFAULT', 0, 'DATABASE'],
      ['SERVICE DEFAULT', 1, 'SERVICE'],
    ]);
    const memberships = await db.selectFrom('deployment_stage_services').select(['service_id', 'stage_id']).where('stage_id', 'in', rows.map((row) => row.id)).execute();
    expect(new Map(memberships.map((row) => [row.service_id, row.stage_id]))).toEqual(
      new Map([
        [w.databaseId, rows[0]?.id],
        [w.xId, rows[1]?.id],
        [w.yId, rows[1]?.id],
      ]),
    );
    // The operations answer those very stages.
    expect((await stagesOf(w)).map((stage) => stage.id)).toEqual(rows.map((row) => row.id));
  });

  it('creates, reads, edits and deletes stages, with 400, 404 and 409 for what cannot be', async () => {
    const w = await world();
    const created = await ok<StageView>(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploymentStage`, { name: ' migrations ', description: 'schema first' });
    expect(created).toMatchObject({ name: 'migrations', description: 'schema first', deployment_order: 2, services: [], environment: { id: w.environmentId } });
    expect(await ok<StageView>(w.owner.auth, 'GET', `/deploymentStage/${created.id}`)).toEqual(created);

    // Names are unique within the environment (case-insensitively), also when two requests race.
    expectErrorBody(await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploymentStage`, { name: 'MIGRATIONS' }), 409);
    const raced = await Promise.all([1, 2, 3].map(() => call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploymentStage`, { name: 'warmup' })));
    expect(raced.map((response) => response.statusCode).sort()).toEqual([200, 409, 409]);
    expect((await stagesOf(w)).map((stage) => stage.deployment_order)).toEqual([0, 1, 2, 3]);

    // Bad bodies and ids.
    expectErrorBody(await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploymentStage`, {}), 400);
    expectErrorBody(await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploymentStage`, { name: '   ' }), 400);
    expectErrorBody(await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploymentStage`, { name: 'x', color: 'red' }), 400);
    expectErrorBody(await call(w.owner.auth, 'GET', '/deploymentStage/not-a-uuid'), 400);
    expectErrorBody(await call(w.owner.auth, 'GET', `/deploymentStage/${crypto.randomUUID()}`), 404);
    expectErrorBody(await call(w.owner.auth, 'GET', `/environment/${crypto.randomUUID()}/deploymentStage`), 404);

    // Edit: the name and the description; the description stays when left out.
    const edited = await ok<StageView>(w.owner.auth, 'PUT', `/deploymentStage/${created.id}`, { name: 'schema' });
    expect(edited).toMatchObject({ name: 'schema', description: 'schema first', deployment_order: 2 });
    expect(await ok<StageView>(w.owner.auth, 'PUT', `/deploymentStage/${created.id}`, { name: 'schema', description: null })).toMatchObject({ description: '' });
    expectErrorBody(await call(w.owner.auth, 'PUT', `/deploymentStage/${created.id}`, { name: 'warmup' }), 409);
    expectErrorBody(await call(w.owner.auth, 'PUT', `/deploymentStage/${created.id}`, { description: 'no name' }), 400);

    // Delete: a stage with services is refused (409), a default stage too (400); an empty one goes and the rest move up.
    await attach(w, created.id, w.xId);
    expectErrorBody(await call(w.owner.auth, 'DELETE', `/deploymentStage/${created.id}`), 409);
    const [databaseStage, serviceStage] = await stagesOf(w);
    await attach(w, serviceStage?.id ?? '', w.xId);
    // Default stages cannot go, even empty: new services land there.
    await attach(w, serviceStage?.id ?? '', w.databaseId);
    expectErrorBody(await call(w.owner.auth, 'DELETE', `/deploymentStage/${databaseStage?.id}`), 400);
    await attach(w, databaseStage?.id ?? '', w.databaseId);
    const spare = await createStage(w, 'spare');
    expect(layout(await stagesOf(w)).map(([name, order]) => [name, order])).toEqual([
      ['DATABASE DEFAULT', 0],
      ['SERVICE DEFAULT', 1],
      ['schema', 2],
      ['warmup', 3],
      ['spare', 4],
    ]);
    expect((await call(w.owner.auth, 'DELETE', `/deploymentStage/${created.id}`)).statusCode).toBe(204);
    expect((await ok<StageView>(w.owner.auth, 'GET', `/deploymentStage/${spare.id}`)).deployment_order).toBe(3);
    const warmup = (await stagesOf(w)).find((stage) => stage.name === 'warmup');
    expect((await call(w.owner.auth, 'DELETE', `/deploymentStage/${warmup?.id}`)).statusCode).toBe(204);
    expect((await call(w.owner.auth, 'DELETE', `/deploymentStage/${spare.id}`)).statusCode).toBe(204);
    expectErrorBody(await call(w.owner.auth, 'DELETE', `/deploymentStage/${spare.id}`), 404);
    expect(layout(await stagesOf(w))).toEqual([
      ['DATABASE DEFAULT', 0, [w.databaseId]],
      ['SERVICE DEFAULT', 1, [w.xId, w.yId].sort()],
    ]);
  });

  it('moves stages before and after others of their environment only', async () => {
    const w = await world();
    const a = await createStage(w, 'a');
    const b = await createStage(w, 'b');
    const names = (stages: StageView[]) => stages.map((stage) => stage.name);
    const moved = await ok<{ results: StageView[] }>(w.owner.auth, 'PUT', `/deploymentStage/${b.id}/moveBefore/${a.id}`);
    expect(names(moved.results)).toEqual(['DATABASE DEFAULT', 'SERVICE DEFAULT', 'b', 'a']);
    expect(moved.results.map((stage) => stage.deployment_order)).toEqual([0, 1, 2, 3]);
    const [databaseStage] = await stagesOf(w);
    expect(names((await ok<{ results: StageView[] }>(w.owner.auth, 'PUT', `/deploymentStage/${databaseStage?.id}/moveAfter/${a.id}`)).results)).toEqual([
      'SERVICE DEFAULT',
      'b',
      'a',
      'DATABASE DEFAULT',
    ]);
    expect(names((await ok<{ results: StageView[] }>(w.owner.auth, 'PUT', `/deploymentStage/${a.id}/moveBefore/${a.id}`)).results)).toEqual(names(await stagesOf(w)));
    expect((await ok<StageView>(w.owner.auth, 'GET', `/deploymentStage/${databaseStage?.id}`)).deployment_order).toBe(3);

    // Another environment's stage (same organization) is a 400; an unknown one a 404.
    const otherEnvironmentId = (
      await ok<{ id: string }>(w.owner.auth, 'POST', `/environment/${w.environmentId}/clone`, { name: uniqueName('other') }, 201)
    ).id;
    const [otherStage] = await stagesOf(w, otherEnvironmentId);
    expectErrorBody(await call(w.owner.auth, 'PUT', `/deploymentStage/${a.id}/moveBefore/${otherStage?.id}`), 400);
    expectErrorBody(await call(w.owner.auth, 'PUT', `/deploymentStage/${a.id}/moveAfter/${crypto.randomUUID()}`), 404);
    expectErrorBody(await call(w.owner.auth, 'PUT', `/deploymentStage/${a.id}/moveAfter/not-a-uuid`), 400);
  });

  it('clones the stages with the environment', async () => {
    const w = await world();
    const a = await createStage(w, 'first');
    const [databaseStage] = await stagesOf(w);
    await ok(w.owner.auth, 'PUT', `/deploymentStage/${a.id}/moveBefore/${databaseStage?.id}`);
    const cloneId = (await ok<{ id: string }>(w.owner.auth, 'POST', `/environment/${w.environmentId}/clone`, { name: uniqueName('clone') }, 201)).id;
    const cloned = await stagesOf(w, cloneId);
    expect(layout(cloned)).toEqual([
      ['first', 0, []],
      ['DATABASE DEFAULT', 1, []],
      ['SERVICE DEFAULT', 2, []],
    ]);
    expect(cloned.every((stage) => stage.environment.id === cloneId)).toBe(true);
    // The copies are the clone's own: its default stages still take its new services.
    const serviceId = (
      await ok<{ id: string }>(w.owner.auth, 'POST', `/environment/${cloneId}/application`, { name: 'z', git_repository: { url: 'https://github.com/acme/z', provider: 'GITHUB' }, healthchecks: {} }, 201)
    ).id;
    expect((await ok<StageView>(w.owner.auth, 'GET', `/service/${serviceId}/deploymentStage`)).id).toBe(cloned[2]?.id);
  });

  it('attaches a service to a stage of its own environment only, and marks it skipped', async () => {
    const w = await world();
    const a = await createStage(w, 'a');
    const answer = await attach(w, a.id, w.xId, { is_skipped: true });
    expect(answer.results.find((stage) => stage.id === a.id)?.services).toEqual([expect.objectContaining({ service_id: w.xId, service_type: 'APPLICATION', is_skipped: true })]);
    expect((await ok<StageView>(w.owner.auth, 'GET', `/service/${w.xId}/deploymentStage`)).id).toBe(a.id);
    // Without is_skipped, the flag stays; a service is in exactly one stage.
    const [, serviceStage] = await stagesOf(w);
    const back = await attach(w, serviceStage?.id ?? '', w.xId);
    const placed = back.results.flatMap((stage) => stage.services.filter((service) => service.service_id === w.xId).map((service) => [stage.name, service.is_skipped]));
    expect(placed).toEqual([['SERVICE DEFAULT', true]]);
    await attach(w, serviceStage?.id ?? '', w.xId, { is_skipped: false });

    // A service of another environment is a 400, an unknown one a 404, bad bodies 400.
    const other = await world();
    expectErrorBody(await call(w.owner.auth, 'PUT', `/deploymentStage/${a.id}/service/${crypto.randomUUID()}`, {}), 404);
    expectErrorBody(await call(w.owner.auth, 'PUT', `/deploymentStage/${a.id}/service/${w.yId}`, { is_skipped: 'yes' }), 400);
    expectErrorBody(await call(w.owner.auth, 'PUT', `/deploymentStage/${a.id}/service/${w.yId}`, { stage: 1 }), 400);
    const sibling = (await ok<{ id: string }>(w.owner.auth, 'POST', `/project/${w.projectId}/environment`, { name: uniqueName('sibling'), cluster: (await ctx().database.db.selectFrom('environments').select('cluster_id').where('id', '=', w.environmentId).executeTakeFirstOrThrow()).cluster_id }, 201)).id;
    const siblingService = (
      await ok<{ id: string }>(w.owner.auth, 'POST', `/environment/${sibling}/application`, { name: 's', git_repository: { url: 'https://github.com/acme/s', provider: 'GITHUB' }, healthchecks: {} }, 201)
    ).id;
    expectErrorBody(await call(w.owner.auth, 'PUT', `/deploymentStage/${a.id}/service/${siblingService}`, {}), 400);

    // Another organization's stages, environments and services are 404s, to its members and from theirs.
    expectErrorBody(await call(w.owner.auth, 'PUT', `/deploymentStage/${a.id}/service/${other.xId}`, {}), 404);
    expectErrorBody(await call(other.owner.auth, 'GET', `/deploymentStage/${a.id}`), 404);
    expectErrorBody(await call(other.owner.auth, 'PUT', `/deploymentStage/${a.id}`, { name: 'stolen' }), 404);
    expectErrorBody(await call(other.owner.auth, 'DELETE', `/deploymentStage/${a.id}`), 404);
    expectErrorBody(await call(other.owner.auth, 'GET', `/environment/${w.environmentId}/deploymentStage`), 404);
    expectErrorBody(await call(other.owner.auth, 'GET', `/service/${w.xId}/deploymentStage`), 404);
    expectErrorBody(await call(other.owner.auth, 'GET', `/environment/${w.environmentId}/statusesWithStages`), 404);
    const [otherStage] = await stagesOf(other);
    expectErrorBody(await call(other.owner.auth, 'PUT', `/deploymentStage/${otherStage?.id}/service/${w.xId}`, {}), 404);
    expectErrorBody(await call(other.owner.auth, 'PUT', `/deploymentStage/${otherStage?.id}/moveBefore/${a.id}`), 404);
    expect((await ok<StageView>(w.owner.auth, 'GET', `/deploymentStage/${a.id}`)).name).toBe('a');
  });

  it("carries an environment's deploy out stage after stage, in the stages' order, leaving skipped services out", async () => {
    const w = await world();
    const a = await createStage(w, 'a');
    const b = await createStage(w, 'b');
    await attach(w, a.id, w.xId);
    await attach(w, b.id, w.yId);
    // Stages: DATABASE DEFAULT [orders], SERVICE DEFAULT [], a [x], b [y].
    expect((await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/deploy`)).statusCode).toBe(202);
    const first = await carryOut(w, 3, async (task) => {
      // While x (stage a) runs, y (stage b) may already be in the mailbox, after x, but is not offered.
      if (task.subject_id === w.xId) {
        await expect.poll(() => mailbox(w), { timeout: 10_000 }).toEqual([w.xId, w.yId]);
      }
    });
    expect(first).toEqual([w.databaseId, w.xId, w.yId]);
    const environmentTask = await leaseOne(w);
    expect(environmentTask).toMatchObject({ subject_type: 'ENVIRONMENT', subject_id: w.environmentId });
    await settle(w, environmentTask);

    const statuses = await ok<{ environment: { id: string }; stages: Array<{ stage: { id: string; name: string; status?: string }; applications: Array<{ id: string }>; databases: Array<{ id: string }> }> }>(
      w.owner.auth,
      'GET',
      `/environment/${w.environmentId}/statusesWithStages`,
    );
    expect(statuses.environment.id).toBe(w.environmentId);
    expect(statuses.stages.map((entry) => [entry.stage.name, entry.stage.status, entry.applications.map((s) => s.id), entry.databases.map((s) => s.id)])).toEqual([
      ['DATABASE DEFAULT', 'DONE', [], [w.databaseId]],
      ['SERVICE DEFAULT', undefined, [], []],
      ['a', 'DONE', [w.xId], []],
      ['b', 'DONE', [w.yId], []],
    ]);

    // The environment's history shows what each stage started, as the stages were then.
    const history = await ok<{ results: Array<{ stages: Array<{ name: string; status: string; duration: string; services: Array<{ identifier: { service_id: string }; status: string }> }> }> }>(
      w.owner.auth,
      'GET',
      `/environment/${w.environmentId}/deploymentHistoryV2`,
    );
    const stagesThen = (entry: (typeof history.results)[number] | undefined) =>
      entry?.stages.map((stage) => [stage.name, stage.status, stage.services.map((service) => [service.identifier.service_id, service.status])]);
    expect(stagesThen(history.results[0])).toEqual([
      ['DATABASE DEFAULT', 'DONE', [[w.databaseId, 'DEPLOYED']]],
      ['a', 'DONE', [[w.xId, 'DEPLOYED']]],
      ['b', 'DONE', [[w.yId, 'DEPLOYED']]],
    ]);
    expect(history.results[0]?.stages[0]?.duration).toMatch(/^PT\d+\.\d{3}S$/);

    // Reversed stages reverse the order; a database moved last starts last.
    await ok(w.owner.auth, 'PUT', `/deploymentStage/${b.id}/moveBefore/${a.id}`);
    const [databaseStage] = await stagesOf(w);
    await ok(w.owner.auth, 'PUT', `/deploymentStage/${databaseStage?.id}/moveAfter/${a.id}`);
    expect((await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/redeploy`)).statusCode).toBe(202);
    expect(await carryOut(w, 3)).toEqual([w.yId, w.xId, w.databaseId]);
    await settle(w, await leaseOne(w));
    const redeployed = await ok<typeof history>(w.owner.auth, 'GET', `/environment/${w.environmentId}/deploymentHistoryV2`);
    expect(stagesThen(redeployed.results[0])?.map(([name]) => name)).toEqual(['b', 'a', 'DATABASE DEFAULT']);
    expect(stagesThen(redeployed.results[1])).toEqual(stagesThen(history.results[0]));

    // A service its stage marks skipped stays out of the environment's deploy.
    await attach(w, a.id, w.xId, { is_skipped: true });
    expect((await call(w.owner.auth, 'POST', `/environment/${w.environmentId}/redeploy`)).statusCode).toBe(202);
    expect(await carryOut(w, 2)).toEqual([w.yId, w.databaseId]);
    expect((await leaseOne(w)).subject_type).toBe('ENVIRONMENT');
  });
});
