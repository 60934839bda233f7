import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { createChangeSignals } from '../src/db/db.signals.ts';
import { newId } from '../src/lib/ids.ts';
import { createOrganizationChangesService } from '../src/modules/organization-changes/organization-changes.service.ts';
import { createOrganizationChanges } from '../src/modules/organization-changes/organization-changes.signals.ts';
import { liveTimersSetBy } from './support/live-timers.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { arriving as arrivingAnswer, type Arriving as ArrivingAnswer } from './support/arriving-stream.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, startTestApp, uniqueName, type TestApp, type TestUser } from './support/test-app.ts';

/**
 * Issue 20, states pushed to open pages: `GET /organization/{id}/changes` streams "look again" events (ids only) over
 * real HTTP connections. A deploy carried out over the real agent protocol tells its service's moves, a cluster's
 * action and its agent's first heartbeat tell the cluster's; a member of another organization cannot open the stream
 * and a caller restricted to one project (a custom role's token, a policy token) hears nothing of the other; a quiet
 * stream heartbeats; a stream ends when its reader leaves (nothing of it stays) and when the server closes; on PostgreSQL a change written
 * through a second app on the same schema reaches a stream of the first (the change signals, LISTEN/NOTIFY).
 */

interface Change {
  type: 'service' | 'environment' | 'cluster';
  id: string;
  environment_id?: string;
  project_id?: string;
}

interface AgentTask {
  id: string;
  deployment_id: string;
  lease_id: string;
}

/** The `data:` of each event, as changes (heartbeat comments and other fields aside). */
function changesOf(text: string): Change[] {
  return text
    .split('\n\n')
    .flatMap((block) => block.split('\n').filter((line) => line.startsWith('data: ')))
    .map((line) => JSON.parse(line.slice('data: '.length)) as Change);
}

type Arriving = ArrivingAnswer<Change>;

function arriving(url: string, headers: Record<string, string>): Promise<Arriving> {
  return arrivingAnswer(url, headers, changesOf);
}

const SOON = { timeout: 15_000 };

describeEachDatabase('organization changes, pushed', (ctx) => {
  interface World {
    owner: TestUser;
    organizationId: string;
    projectId: string;
    environmentId: string;
    applicationId: string;
    clusterId: string;
    credential: string;
  }

  async function post(auth: string, url: string, payload?: Record<string, unknown>, app: TestApp = ctx()) {
    return app.call(auth, { method: 'POST', url, ...(payload === undefined ? {} : { payload }) });
  }

  async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
    const response = await post(auth, url, payload);
    expect(response.statusCode, response.body).toBe(status);
    return response.json<{ id: string }>().id;
  }

  async function application(auth: string, projectId: string, clusterId: string): Promise<{ environmentId: string; applicationId: string }> {
    const environmentId = await created(auth, `/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' });
    const applicationId = await created(auth, `/environment/${environmentId}/application`, {
      name: 'web',
      git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' },
      healthchecks: {},
    });
    return { environmentId, applicationId };
  }

  async function world(): Promise<World> {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
    const projectId = await created(owner.auth, `/organization/${organizationId}/project`, { name: uniqueName('project') }, 200);
    return { owner, organizationId, projectId, clusterId, credential, ...(await application(owner.auth, projectId, clusterId)) };
  }

  async function leaseTask(w: World, deploymentId: string): Promise<AgentTask> {
    for (let attempt = 0; attempt < 40; attempt++) {
      const response = await ctx().call(`Bearer ${w.credential}`, { method: 'GET', url: '/operator/v1/tasks?wait_seconds=1' });
      expect(response.statusCode, response.body).toBe(200);
      const task = response.json<{ tasks: AgentTask[] }>().tasks.find((candidate) => candidate.deployment_id === deploymentId);
      if (task !== undefined) return task;
    }
    throw new Error(`no task was dispatched for deployment ${deploymentId}`);
  }

  /** Queues a deploy of `applicationId`; the agent takes it and carries it to DEPLOYED. */
  async function deploy(w: World, applicationId = w.applicationId): Promise<void> {
    const queued = await post(w.owner.auth, `/application/${applicationId}/deploy`, {});
    expect(queued.statusCode, queued.body).toBe(202);
    const task = await leaseTask(w, queued.json<{ deployment_request_id: string }>().deployment_request_id);
    let seq = 0;
    for (const event of ['take', 'built', 'succeed']) {
      seq += 1;
      const response = await post(`Bearer ${w.credential}`, `/operator/v1/tasks/${task.id}/progress`, { lease_id: task.lease_id, seq, event });
      expect(response.statusCode, response.body).toBe(200);
    }
  }

  async function baseUrl(app: TestApp = ctx()): Promise<string> {
    if (!app.app.server.listening) await app.app.listen({ host: '127.0.0.1', port: 0 });
    return `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
  }

  async function open(auth: string, organizationId: string, app: TestApp = ctx()): Promise<Arriving> {
    const stream = await arriving(`${await baseUrl(app)}/organization/${organizationId}/changes`, { authorization: auth, accept: 'text/event-stream' });
    expect(stream.status, stream.text()).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    return stream;
  }

  it("tells a deploy's service moves, ids only, as the agent reports them", async () => {
    const w = await world();
    const stream = await open(w.owner.auth, w.organizationId);
    try {
      await deploy(w);
      const about = () => stream.items().filter((change) => change.id === w.applicationId);
      await expect.poll(() => about().length, SOON).toBeGreaterThanOrEqual(1);
      expect(about()[0]).toEqual({ type: 'service', id: w.applicationId, environment_id: w.environmentId, project_id: w.projectId });
      // Another organization's deploy, then an environment's own state moved by its deploy: the stream tells the latter only.
      const other = await world();
      await deploy(other);
      const environmentDeploy = await post(w.owner.auth, `/environment/${w.environmentId}/deploy`);
      expect(environmentDeploy.statusCode, environmentDeploy.body).toBe(202);
      await expect
        .poll(() => stream.items().find((change) => change.type === 'environment'), SOON)
        .toEqual({ type: 'environment', id: w.environmentId, environment_id: w.environmentId, project_id: w.projectId });
      expect(stream.items().every((change) => change.id !== other.applicationId && change.id !== other.clusterId)).toBe(true);
    } finally {
      await stream.close();
    }
  });

  it("tells a service created, cloned or deleted as a change of its environment, whose page lists its services", async () => {
    const w = await world();
    const stream = await open(w.owner.auth, w.organizationId);
    try {
      const environmentChange = { type: 'environment', id: w.environmentId, environment_id: w.environmentId, project_id: w.projectId };
      const told = () => stream.items().filter((change) => change.type === 'environment' && change.id === w.environmentId).length;
      // On PostgreSQL signals arrive through LISTEN/NOTIFY, in commit order, a moment after the commit: the world's own
      // application may still be on its way as the stream opens. A service created in another environment, once told,
      // is a barrier: what committed before it has been told too.
      const barrier = await application(w.owner.auth, w.projectId, w.clusterId);
      await expect.poll(() => stream.items().some((change) => change.type === 'environment' && change.id === barrier.environmentId), SOON).toBe(true);
      const before = told();
      expect(before).toBeLessThanOrEqual(1);
      const workerId = await created(w.owner.auth, `/environment/${w.environmentId}/container`, {
        name: 'worker',
        image_name: 'acme/worker',
        tag: '1.0',
        registry_id: await created(w.owner.auth, `/organization/${w.organizationId}/containerRegistry`, { name: uniqueName('hub'), kind: 'DOCKER_HUB', url: 'https://docker.io' }, 201),
        healthchecks: {},
      });
      await expect.poll(told, SOON).toBe(before + 1);
      expect(stream.items().find((change) => change.type === 'environment' && change.id === w.environmentId)).toEqual(environmentChange);
      await created(w.owner.auth, `/application/${w.applicationId}/clone`, { name: 'web-copy', environment_id: w.environmentId }, 202);
      await expect.poll(told, SOON).toBe(before + 2);
      const removed = await ctx().call(w.owner.auth, { method: 'DELETE', url: `/container/${workerId}` });
      expect(removed.statusCode, removed.body).toBe(204);
      await expect.poll(told, SOON).toBe(before + 3);
      // Never as a change of the service itself: a page showing it would read it again and find it gone.
      expect(stream.items().some((change) => change.id === workerId)).toBe(false);
    } finally {
      await stream.close();
    }
  });

  it("tells a cluster's action and its agent's first heartbeat", async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    await ctx().allowLocalClusters(organizationId);
    const stream = await open(owner.auth, organizationId);
    try {
      const localId = await created(owner.auth, `/organization/${organizationId}/cluster`, { name: uniqueName('local'), region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
      const deployed = await post(owner.auth, `/organization/${organizationId}/cluster/${localId}/deploy`);
      expect(deployed.statusCode, deployed.body).toBeLessThan(300);
      await expect.poll(() => stream.items().filter((change) => change.id === localId).length, SOON).toBeGreaterThanOrEqual(1);
      expect(stream.items().find((change) => change.id === localId)).toEqual({ type: 'cluster', id: localId });

      const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
      expect(stream.items().some((change) => change.id === clusterId)).toBe(false);
      const beat = await post(`Bearer ${credential}`, '/operator/v1/heartbeat', { agent_version: '1.0.0', driver: 'local', started_at: new Date().toISOString() });
      expect(beat.statusCode, beat.body).toBe(200);
      await expect.poll(() => stream.items().find((change) => change.id === clusterId), SOON).toEqual({ type: 'cluster', id: clusterId });
    } finally {
      await stream.close();
    }
  });

  it('sends a caller restricted to one project nothing of another, and refuses bad callers with the error body', async () => {
    const w = await world();
    const otherProjectId = await created(w.owner.auth, `/organization/${w.organizationId}/project`, { name: uniqueName('other') }, 200);
    const hidden = await application(w.owner.auth, otherProjectId, w.clusterId);
    const roleId = await created(w.owner.auth, `/organization/${w.organizationId}/customRole`, {
      name: uniqueName('viewer-of-one'),
      description: 'Looks at one project',
      project_permissions: [{ project_id: w.projectId, permissions: [{ environment_type: 'STAGING', permission: 'VIEWER' }] }],
    });
    const roleToken = `Bearer ${await ctx().createApiToken(w.owner.auth, w.organizationId, { name: uniqueName('one-project'), role_id: roleId })}`;
    const policy = [
      'package agent',
      '',
      'default allow := false',
      '',
      'allow if input.operation_id == "streamOrganizationChanges"',
      '',
      `allow if input.params.projectId == "${w.projectId}"`,
      '',
    ].join('\n');
    const policyAnswer = await post(w.owner.auth, `/organization/${w.organizationId}/policyApiToken`, { name: uniqueName('policy'), opa_policy: policy });
    expect(policyAnswer.statusCode, policyAnswer.body).toBe(201);
    const policyToken = `Bearer ${policyAnswer.json<{ token: string }>().token}`;

    const streams = await Promise.all([open(w.owner.auth, w.organizationId), open(roleToken, w.organizationId), open(policyToken, w.organizationId)]);
    try {
      await deploy(w, hidden.applicationId);
      await deploy(w);
      for (const stream of streams) await expect.poll(() => stream.items().some((change) => change.id === w.applicationId), SOON).toBe(true);
      const [everything, byRole, byPolicy] = streams.map((stream) => stream.items().map((change) => change.id)) as [string[], string[], string[]];
      // The hidden project's deploy came first: a stream that would send it has sent it by now.
      expect(everything).toContain(hidden.applicationId);
      expect(byRole).not.toContain(hidden.applicationId);
      expect(byPolicy).not.toContain(hidden.applicationId);
    } finally {
      await Promise.all(streams.map((stream) => stream.close()));
    }

    const url = `/organization/${w.organizationId}/changes`;
    const stranger = await ctx().signUpWithOrganization();
    expectErrorBody(await ctx().call(undefined, { method: 'GET', url, headers: { accept: 'text/event-stream' } }), 401);
    expectErrorBody(await ctx().call(stranger.owner.auth, { method: 'GET', url, headers: { accept: 'text/event-stream' } }), 404);
    const notAStream = expectErrorBody(await ctx().call(w.owner.auth, { method: 'GET', url, headers: { accept: 'application/json' } }), 400);
    expect(notAStream.details).toEqual([{ field: '/accept', message: 'needs Accept: text/event-stream' }]);
    // Without Accept, or with */* alone, the stream is not opened either: it never ends, and such a caller did not ask for one.
    expectErrorBody(await ctx().call(w.owner.auth, { method: 'GET', url }), 400);
    expectErrorBody(await ctx().call(w.owner.auth, { method: 'GET', url, headers: { accept: '*/*' } }), 400);
  });

  it('leaves no timer, socket or listener behind when readers come and go', async () => {
    const w = await world();
    const timers = liveTimersSetBy(/\bat nextChange \(.*\/organization-changes\.service\.ts/);
    const connections = () => new Promise<number>((resolve, reject) => ctx().app.server.getConnections((error, count) => (error === null ? resolve(count) : reject(error))));
    for (let round = 0; round < 2; round++) {
      const readers = await Promise.all(Array.from({ length: 10 }, () => open(w.owner.auth, w.organizationId)));
      await deploy(w);
      await expect.poll(() => readers.every((reader) => reader.items().some((change) => change.id === w.applicationId)), SOON).toBe(true);
      await expect.poll(timers.live, SOON).toBeGreaterThanOrEqual(readers.length);
      await Promise.all(readers.map((reader) => reader.close()));
    }
    await expect.poll(timers.live, { timeout: 5000 }).toBe(0);
    timers.stop();
    await expect.poll(connections, { timeout: 5000 }).toBe(0);
  });

  it('sends heartbeats while nothing changes, and ends as soon as the reader leaves', async () => {
    const signals = createChangeSignals(ctx().database);
    try {
      const service = createOrganizationChangesService({
        changes: createOrganizationChanges(signals),
        grantsAt: async () => undefined,
        placementOf: { service: async () => undefined, environment: async () => undefined },
        policyVerdict: async () => ({ allow: false, reason: 'not asked' }),
        heartbeatMs: 30,
      });
      const left = new AbortController();
      const seen = { heartbeats: 0, opened: false };
      const ended = service.followOrganizationChanges({ kind: 'user', userId: newId(), email: null, name: null }, newId(), {
        signal: left.signal,
        opened: () => void (seen.opened = true),
        emit: async () => undefined,
        heartbeat: async () => void (seen.heartbeats += 1),
      });
      await expect.poll(() => seen.heartbeats, SOON).toBeGreaterThanOrEqual(3);
      expect(seen.opened).toBe(true);
      left.abort();
      await expect(ended).resolves.toBeUndefined();
    } finally {
      await signals.close();
    }
  });

  it('ends its streams when the server shuts down', async () => {
    const app = await startTestApp(ctx().dialect);
    let closed = false;
    try {
      const { owner, organizationId } = await app.signUpWithOrganization();
      const stream = await open(owner.auth, organizationId, app);
      // Closing waits for open connections: it returns only because the stream was ended.
      await app.close();
      closed = true;
      await stream.ended;
      expect(stream.items()).toEqual([]);
    } finally {
      if (!closed) await app.close();
    }
  });

  it('hears a change written through another app on the same database (PostgreSQL: another replica)', async ({ skip }) => {
    if (ctx().dialect !== 'postgres') skip('one process owns an SQLite database');
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, credential } = await enrolledCluster(ctx(), organizationId, owner);
    const replica = await buildApp({
      config: { oidc: { issuer: ctx().issuer.issuer, audience: ctx().issuer.audience }, egressIps: [], logLevel: 'silent' },
      database: ctx().database,
      clock: ctx().clock,
      jobs: { run: false },
    });
    const stream = await open(owner.auth, organizationId);
    try {
      // The agent's first heartbeat reaches the replica: no job, no worker, only its transaction's signal can tell the stream.
      const beat = await replica.inject({
        method: 'POST',
        url: '/operator/v1/heartbeat',
        headers: { authorization: `Bearer ${credential}` },
        payload: { agent_version: '1.0.0', driver: 'local', started_at: new Date().toISOString() },
      });
      expect(beat.statusCode, beat.body).toBe(200);
      await expect.poll(() => stream.items().find((change) => change.id === clusterId), SOON).toEqual({ type: 'cluster', id: clusterId });
    } finally {
      await stream.close();
      await replica.close();
    }
  });
});
