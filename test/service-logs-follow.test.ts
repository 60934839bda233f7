import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { newId } from '../src/lib/ids.ts';
import type { LogEvent } from '../src/modules/deployments/deployments.logs.ts';
import { createDeploymentsService } from '../src/modules/deployments/deployments.service.ts';
import type { StoredService } from '../src/modules/services/services.kinds.ts';
import { liveTimersSetBy } from './support/live-timers.ts';
import { enrolledCluster } from './support/agent-cluster.ts';
import { arriving as arrivingAnswer, type Arriving as ArrivingAnswer } from './support/arriving-stream.ts';
import { expectErrorBody } from './support/error-body.ts';
import { describeEachDatabase, startTestApp, uniqueName, type TestUser } from './support/test-app.ts';

/**
 * Issue 21 part 2, runtime logs that follow: `GET /application/{id}/log?follow=true` streams the service's output
 * without end — the running deployment's workload output after it settled, the next deployment announced and
 * followed from its first line — over real HTTP connections, resumable with the cursor of its last event; the
 * filters since, tail, instance and stream, and 400s naming the field for bad values; plain text answers; and many
 * streams opened and dropped leave no timer, socket or listener behind. The agent is the real agent protocol of a
 * self-managed cluster (its task reports and its workload log endpoint).
 */

interface LogLine {
  id: string;
  created_at: string;
  message: string;
  deployment_id: string;
  stream: string;
  seq: number;
  pod_name?: string;
}

interface StreamItem extends Partial<LogLine> {
  type: string;
  cursor?: string;
  action?: string;
  state?: string | null;
}

interface AgentTask {
  id: string;
  deployment_id: string;
  lease_id: string;
}

/** NDJSON items, one a line (a text/event-stream answer is read with `text()` instead). */
function ndjsonItems(text: string): StreamItem[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as StreamItem);
}

type Arriving = ArrivingAnswer<StreamItem>;

function arriving(url: string, headers: Record<string, string>): Promise<Arriving> {
  return arrivingAnswer(url, headers, ndjsonItems);
}

/** How long a poll waits for what a follower shows: it notices other replicas' lines and new deployments by polling. */
const SOON = { timeout: 10_000 };

describeEachDatabase('service logs that follow', (ctx) => {
  interface World {
    owner: TestUser;
    applicationId: string;
    credential: string;
  }

  async function post(auth: string, url: string, payload?: Record<string, unknown>) {
    return ctx().call(auth, { method: 'POST', url, ...(payload === undefined ? {} : { payload }) });
  }

  async function created(auth: string, url: string, payload: Record<string, unknown>, status = 201): Promise<string> {
    const response = await post(auth, url, payload);
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
    return { owner, applicationId, credential };
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

  /** Queues a deploy; the agent takes it and, unless `settle` is false, carries it to DEPLOYED. Answers its id. */
  async function deploy(w: World, settle = true): Promise<{ deploymentId: string; succeed(): Promise<void> }> {
    const queued = await post(w.owner.auth, `/application/${w.applicationId}/deploy`, {});
    expect(queued.statusCode, queued.body).toBe(202);
    const deploymentId = queued.json<{ deployment_request_id: string }>().deployment_request_id;
    const task = await leaseTask(w, deploymentId);
    let seq = 0;
    const report = async (event: string) => {
      seq += 1;
      const response = await post(`Bearer ${w.credential}`, `/operator/v1/tasks/${task.id}/progress`, { lease_id: task.lease_id, seq, event });
      expect(response.statusCode, response.body).toBe(200);
    };
    await report('take');
    const built = await post(`Bearer ${w.credential}`, `/operator/v1/tasks/${task.id}/logs`, {
      lease_id: task.lease_id,
      lines: [{ seq: 1, at: new Date().toISOString(), stream: 'stdout', line: `build of ${deploymentId}` }],
    });
    expect(built.statusCode, built.body).toBe(200);
    await report('built');
    const succeed = async () => report('succeed');
    if (settle) await succeed();
    return { deploymentId, succeed };
  }

  /** What the running workload prints, sent as the agent sends it after the deployment settled. */
  async function workloadPrints(w: World, lines: Array<{ line: string; stream?: string; instance?: string; at?: string }>): Promise<void> {
    const response = await post(`Bearer ${w.credential}`, `/operator/v1/workloads/${w.applicationId}/logs`, {
      lines: lines.map((line) => ({ at: line.at ?? new Date().toISOString(), stream: line.stream ?? 'stdout', line: line.line, ...(line.instance === undefined ? {} : { instance: line.instance }) })),
    });
    expect(response.statusCode, response.body).toBe(200);
  }

  async function baseUrl(): Promise<string> {
    const app = ctx().app;
    if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 });
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }

  async function open(w: World, query: string, accept: string, headers: Record<string, string> = {}): Promise<Arriving> {
    return arriving(`${await baseUrl()}/application/${w.applicationId}/log${query}`, { authorization: w.owner.auth, accept, ...headers });
  }

  async function listed(w: World, query: string): Promise<LogLine[]> {
    const response = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/log${query}` });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ results: LogLine[] }>().results;
  }

  it('keeps following after DEPLOYED: the workload output, the next deployment announced and followed, and resumes after its cursor', async () => {
    const w = await world();
    const first = await deploy(w);
    const stream = await open(w, '?follow=true', 'application/x-ndjson');
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^application\/x-ndjson/);
    const messages = () => stream.items().filter((item) => item.type === 'log').map((item) => item.message);

    // The settled deployment's log, and no end: the stream goes on.
    await expect.poll(messages, SOON).toContain('DEPLOYING → DEPLOYED');
    expect(messages()).toContain(`build of ${first.deploymentId}`);
    await workloadPrints(w, [{ line: 'GET / 200', instance: 'web.first' }]);
    await expect.poll(messages, SOON).toContain('GET / 200');
    const runtimeLine = stream.items().find((item) => item.message === 'GET / 200');
    expect(runtimeLine).toMatchObject({ deployment_id: first.deploymentId, stream: 'stdout', pod_name: 'web.first' });
    expect(stream.items().some((item) => item.type === 'end')).toBe(false);

    // A new deployment: announced, then its own lines from the first; the running one still prints meanwhile.
    const second = await deploy(w, false);
    await expect.poll(() => stream.items().find((item) => item.type === 'deployment'), SOON).toMatchObject({ deployment_id: second.deploymentId, action: 'DEPLOY' });
    await expect.poll(messages, SOON).toContain(`build of ${second.deploymentId}`);
    const marker = stream.items().findIndex((item) => item.type === 'deployment');
    const requested = stream.items().findIndex((item) => item.deployment_id === second.deploymentId && item.seq === 1);
    expect(marker).toBeLessThan(requested);
    await workloadPrints(w, [{ line: 'old instance still serving' }]);
    await expect.poll(messages, SOON).toContain('old instance still serving');
    expect(stream.items().find((item) => item.message === 'old instance still serving')?.deployment_id).toBe(first.deploymentId);
    await second.succeed();
    await workloadPrints(w, [{ line: 'new instance serving', instance: 'web.second' }]);
    await expect.poll(messages, SOON).toContain('new instance serving');
    expect(stream.items().find((item) => item.message === 'new instance serving')).toMatchObject({ deployment_id: second.deploymentId, pod_name: 'web.second' });

    // The reader leaves; lines printed meanwhile come first when it resumes after its last event's cursor.
    const last = stream.items().at(-1);
    expect(last?.cursor).toMatch(/^[0-9a-f-]{36}:\d+(,[0-9a-f-]{36}:\d+)*$/);
    await stream.close();
    await workloadPrints(w, [{ line: 'printed while nobody read' }]);
    const followed = await open(w, `?follow=true&cursor=${encodeURIComponent(last?.cursor as string)}`, 'text/event-stream');
    await expect.poll(() => followed.text(), SOON).toContain('printed while nobody read');
    const events = followed.text().split('\n\n').filter((event) => event.trim() !== '');
    expect(events[0]).toMatch(/^id: [0-9a-f-]{36}:\d+(,[0-9a-f-]{36}:\d+)*\nevent: log\ndata: /);
    expect(events[0]).toContain('printed while nobody read');
    expect(followed.text()).not.toContain('new instance serving');
    // The same with Last-Event-ID, as an EventSource reconnects.
    const reconnected = await open(w, '?follow=true', 'text/event-stream', { 'last-event-id': last?.cursor as string });
    await expect.poll(() => reconnected.text(), SOON).toContain('printed while nobody read');
    expect(reconnected.text()).not.toContain('new instance serving');
    await Promise.all([followed.close(), reconnected.close()]);
  });

  it('appends a task batch once when the agent sends it several times at once (a resend while the first is in flight)', async () => {
    const w = await world();
    const queued = await post(w.owner.auth, `/application/${w.applicationId}/deploy`, {});
    expect(queued.statusCode, queued.body).toBe(202);
    const deploymentId = queued.json<{ deployment_request_id: string }>().deployment_request_id;
    const task = await leaseTask(w, deploymentId);
    const at = new Date().toISOString();
    const batch = { lease_id: task.lease_id, lines: Array.from({ length: 50 }, (_, index) => ({ seq: index + 1, at, stream: 'stdout', line: `build line ${index + 1}` })) };
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(`Bearer ${w.credential}`, `/operator/v1/tasks/${task.id}/logs`, batch)));
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers.reduce((sum, answer) => sum + answer.json<{ accepted: number }>().accepted, 0)).toBe(50);
    const built = (await listed(w, `?deploymentId=${deploymentId}`)).filter((line) => line.message.startsWith('build line'));
    expect(built.map((line) => line.message)).toEqual(Array.from({ length: 50 }, (_, index) => `build line ${index + 1}`));
  });

  it('numbers a later batch after an earlier one whose resends were answered first (the agent moves on when a resend returns)', async () => {
    const w = await world();
    const queued = await post(w.owner.auth, `/application/${w.applicationId}/deploy`, {});
    expect(queued.statusCode, queued.body).toBe(202);
    const deploymentId = queued.json<{ deployment_request_id: string }>().deployment_request_id;
    const task = await leaseTask(w, deploymentId);
    const at = new Date().toISOString();
    const batchOf = (first: number) => ({ lease_id: task.lease_id, lines: Array.from({ length: 100 }, (_, index) => ({ seq: first + index, at, stream: 'stdout', line: `build line ${first + index}` })) });
    const send = (batch: ReturnType<typeof batchOf>) => post(`Bearer ${w.credential}`, `/operator/v1/tasks/${task.id}/logs`, batch);
    // Each round: the batch sent three times at once, and the next batch as soon as the first of those answers, as an
    // agent whose request timed out resends it and then goes on. Whatever answered first, the earlier lines come first.
    for (let round = 0; round < 5; round += 1) {
      const first = 1 + round * 200;
      const resends = [send(batchOf(first)), send(batchOf(first)), send(batchOf(first))];
      const next = Promise.race(resends).then(() => send(batchOf(first + 100)));
      const answers = await Promise.all([...resends, next]);
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200]);
    }
    const built: LogLine[] = [];
    for (let page = await listed(w, `?deploymentId=${deploymentId}`); page.length > 0; page = await listed(w, `?deploymentId=${deploymentId}&after=${page.at(-1)?.seq ?? 0}`)) {
      built.push(...page.filter((line) => line.message.startsWith('build line')));
    }
    expect(built.map((line) => line.message)).toEqual(Array.from({ length: 1000 }, (_, index) => `build line ${index + 1}`));
  });

  it("keeps a first deployment's workload output that arrives before its success report with that deployment", async () => {
    const w = await world();
    // The agent started the workload and saw it answer; its output is sent before the report that makes it DEPLOYED.
    const first = await deploy(w, false);
    await workloadPrints(w, [{ line: 'listening on 8080', instance: 'web.first' }]);
    await first.succeed();
    await workloadPrints(w, [{ line: 'GET / 200', instance: 'web.first' }]);
    const lines = await listed(w, '');
    expect(lines.filter((line) => line.stream === 'stdout' && line.pod_name === 'web.first').map((line) => [line.message, line.deployment_id])).toEqual([
      ['listening on 8080', first.deploymentId],
      ['GET / 200', first.deploymentId],
    ]);
  });

  it('numbers the lines of writers appending at once one after another: none refused, none lost, seqs without a gap', async () => {
    const w = await world();
    const { deploymentId } = await deploy(w);
    const before = await listed(w, '');
    // Ten batches of the workload's output at the same time (an agent with several instances), each its own request.
    await Promise.all(
      Array.from({ length: 10 }, (_, batch) => workloadPrints(w, Array.from({ length: 50 }, (_, index) => ({ line: `batch ${batch} line ${index}`, instance: `web.${batch}` })))),
    );
    const lines: LogLine[] = [];
    for (let page = await listed(w, ''); page.length > 0; page = await listed(w, `?after=${page.at(-1)?.seq ?? 0}`)) lines.push(...page);
    expect(lines.every((line) => line.deployment_id === deploymentId)).toBe(true);
    expect(lines.map((line) => line.seq)).toEqual(Array.from({ length: before.length + 500 }, (_, index) => index + 1));
    for (let batch = 0; batch < 10; batch += 1) {
      // Each batch's lines together and in order, whichever turn it got.
      const own = lines.filter((line) => line.pod_name === `web.${batch}`);
      expect(own.map((line) => line.message)).toEqual(Array.from({ length: 50 }, (_, index) => `batch ${batch} line ${index}`));
      expect(own.at(-1)!.seq - own[0]!.seq).toBe(49);
    }
  });

  it('filters by since, tail, instance and stream, listed and followed, and answers 400 naming the field for bad values', async () => {
    const w = await world();
    const { deploymentId } = await deploy(w);
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await workloadPrints(w, [
      { line: 'an old line', at: hourAgo, instance: 'web.a' },
      { line: 'from a', instance: 'web.a' },
      { line: 'from b', instance: 'web.b', stream: 'stderr' },
      { line: 'from a again', instance: 'web.a' },
    ]);
    const all = await listed(w, '');
    expect(all.map((line) => line.message)).toEqual(expect.arrayContaining(['an old line', 'from a', 'from b', 'from a again']));
    expect((await listed(w, '?tail=2')).map((line) => line.message)).toEqual(['from b', 'from a again']);
    expect((await listed(w, '?tail=0'))).toEqual([]);
    expect((await listed(w, '?instance=web.a')).map((line) => line.message)).toEqual(['an old line', 'from a', 'from a again']);
    expect((await listed(w, '?stream=stderr')).map((line) => line.message)).toEqual(['from b']);
    expect((await listed(w, '?stream=stdout&stream=stderr')).every((line) => line.stream !== 'system')).toBe(true);
    expect((await listed(w, '?stream=system')).every((line) => line.stream === 'system')).toBe(true);
    expect((await listed(w, '?since=10m&instance=web.a')).map((line) => line.message)).toEqual(['from a', 'from a again']);
    expect((await listed(w, `?since=${encodeURIComponent(new Date(Date.now() - 7_200_000).toISOString())}&instance=web.a`)).map((line) => line.message)).toHaveLength(3);
    expect(await listed(w, `?since=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}&instance=web.a`)).toEqual([]);
    expect((await listed(w, `?deploymentId=${deploymentId}&tail=1&stream=stdout`)).map((line) => line.message)).toEqual(['from a again']);

    // Followed: the last line of stdout before following, then the new ones that pass the filter.
    const stream = await open(w, '?follow=true&tail=1&stream=stdout', 'application/x-ndjson');
    await expect.poll(() => stream.items().map((item) => item.message), SOON).toEqual(['from a again']);
    await workloadPrints(w, [
      { line: 'an error', stream: 'stderr' },
      { line: 'an answer', stream: 'stdout' },
    ]);
    await expect.poll(() => stream.items().map((item) => item.message), SOON).toEqual(['from a again', 'an answer']);
    await stream.close();

    const refused = async (query: string, field: string, accept = 'application/json') => {
      const response = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/log${query}`, headers: { accept } });
      const body = expectErrorBody(response, 400);
      expect(body.details?.map((detail) => detail.field), `${query}: ${response.body}`).toContain(field);
    };
    await refused('?since=yesterday', '/since');
    await refused('?since=10x', '/since');
    await refused('?since=2026-13-45', '/since');
    await refused('?tail=-1', '/tail');
    await refused('?tail=1001', '/tail');
    await refused('?tail=many', '/tail');
    await refused('?stream=debug', '/stream/0');
    await refused('?instance=', '/instance');
    await refused('?follow=maybe', '/follow');
    await refused('?after=99999999999', '/after');
    await refused('?follow=true', '/follow');
    await refused('?follow=true&cursor=not-a-cursor', '/cursor', 'application/x-ndjson');
    await refused(`?follow=true&cursor=${newId()}:3`, '/cursor', 'application/x-ndjson');
    await refused(`?follow=true&deploymentId=${deploymentId}`, '/deploymentId', 'text/event-stream');
    await refused('?follow=true&after=2', '/after', 'text/plain');
    await refused('?follow=true&since=soon', '/since', 'text/plain');
    // A resumption point too large for the column is no deployment's line: not a 500.
    const huge = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/log`, headers: { accept: 'application/x-ndjson', 'last-event-id': '99999999999' } });
    expect(huge.statusCode).toBe(200);
  });

  it('answers plain text: the stored lines, and a followed stream of lines', async () => {
    const w = await world();
    const first = await deploy(w);
    const stored = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/log?stream=stdout`, headers: { accept: 'text/plain' } });
    expect(stored.statusCode).toBe(200);
    expect(stored.headers['content-type']).toMatch(/^text\/plain/);
    expect(stored.body).toMatch(new RegExp(`^\\S+Z \\[stdout\\] build of ${first.deploymentId}\\n$`));

    const stream = await open(w, '?follow=true&tail=0', '*/*');
    expect(stream.contentType).toMatch(/^text\/plain/);
    await workloadPrints(w, [{ line: 'hello from the workload' }]);
    await expect.poll(() => stream.text(), SOON).toMatch(/^\S+Z \[stdout\] hello from the workload\n$/);
    const second = await deploy(w, false);
    await expect.poll(() => stream.text(), SOON).toContain(`-- deployment ${second.deploymentId} (DEPLOY) began at `);
    await expect.poll(() => stream.text(), SOON).toContain(`[stdout] build of ${second.deploymentId}\n`);
    await stream.close();
  });

  it('keeps colour codes (ESC) and tabs in stored lines; other control characters become spaces', async () => {
    const w = await world();
    await deploy(w);
    await workloadPrints(w, [{ line: '\u001b[31mred\u001b[0m\tdone\u0007\r' }]);
    const stored = await ctx().call(w.owner.auth, { method: 'GET', url: `/application/${w.applicationId}/log?stream=stdout&tail=1` });
    expect(stored.statusCode, stored.body).toBe(200);
    expect(stored.json<{ results: LogLine[] }>().results.map((line) => line.message)).toEqual(['\u001b[31mred\u001b[0m\tdone  ']);
  });

  it('leaves no timer, socket or listener behind when many followers come and go', async () => {
    const w = await world();
    await deploy(w);
    const timers = liveTimersSetBy(/\bat nextChange \(.*\/deployments\.logs\.ts/);
    const connections = () => new Promise<number>((resolve, reject) => ctx().app.server.getConnections((error, count) => (error === null ? resolve(count) : reject(error))));
    const formats = ['application/x-ndjson', 'text/event-stream', 'text/plain'];
    for (let round = 0; round < 3; round++) {
      const readers = await Promise.all(Array.from({ length: 20 }, (_, index) => open(w, '?follow=true', formats[index % formats.length] as string)));
      expect(readers.map((reader) => reader.status)).toEqual(readers.map(() => 200));
      await workloadPrints(w, [{ line: `round ${round}` }]);
      await expect.poll(() => readers.every((reader) => reader.text().includes(`round ${round}`)), SOON).toBe(true);
      await expect.poll(timers.live, SOON).toBeGreaterThanOrEqual(readers.length);
      await Promise.all(readers.map((reader) => reader.close()));
    }
    // Each follower waits on one timer and its deployments' wake-ups; the readers gone, so are they (not after a poll).
    await expect.poll(timers.live, { timeout: 5000 }).toBe(0);
    timers.stop();
    await expect.poll(connections, { timeout: 5000 }).toBe(0);
  });

  it('sends heartbeats while nothing is printed, and ends as soon as the reader leaves', async () => {
    const w = await world();
    await deploy(w);
    const { db } = ctx().database;
    const services = {
      findService: async (id: string) => (id === w.applicationId ? ({ id, kind: 'APPLICATION' } as StoredService) : undefined),
      listEnvironmentServices: async () => [],
    };
    const deployments = createDeploymentsService({
      db,
      clock: ctx().clock,
      services,
      environments: { findEnvironmentSummary: async () => undefined, deploymentStateOf: async () => undefined, moveDeploymentState: async () => false },
      clusters: { findClusterSummary: async () => undefined },
      variables: { resolveForDeployment: async () => Promise.reject(new Error('not used')), explain: async () => Promise.reject(new Error('not used')) },
      deploymentGate: async () => undefined,
      metering: { resourceRunning: async () => undefined, resourceStopped: async () => undefined },
    });
    const follow = (timing: { pollMs: number; heartbeatMs: number }) => {
      const left = new AbortController();
      const events: LogEvent[] = [];
      const seen = { heartbeats: 0, opened: false };
      const ended = deployments.followServiceLog(
        'APPLICATION',
        w.applicationId,
        { follow: true, tail: 0 },
        {
          signal: left.signal,
          opened: () => void (seen.opened = true),
          emit: async (batch) => void events.push(...batch),
          heartbeat: async () => void (seen.heartbeats += 1),
        },
        timing,
      );
      return { left, events, seen, ended };
    };

    // Quiet: heartbeats, the lines when they come, heartbeats again.
    const quiet = follow({ pollMs: 10, heartbeatMs: 30 });
    await expect.poll(() => quiet.seen.heartbeats, SOON).toBeGreaterThanOrEqual(3);
    await workloadPrints(w, [{ line: 'tick' }]);
    await expect.poll(() => quiet.events.map((event) => (event.type === 'log' ? event.line.message : event.type)), SOON).toEqual(['tick']);
    const beatsBefore = quiet.seen.heartbeats;
    await expect.poll(() => quiet.seen.heartbeats, SOON).toBeGreaterThan(beatsBefore);
    quiet.left.abort();
    await expect(quiet.ended).resolves.toMatchObject({ state: null });

    // A follower between two polls a minute apart ends when its reader leaves, not at its next poll.
    const waiting = follow({ pollMs: 60_000, heartbeatMs: 60_000 });
    await expect.poll(() => waiting.seen.opened, SOON).toBe(true);
    const leftAt = Date.now();
    waiting.left.abort();
    await expect(waiting.ended).resolves.toMatchObject({ state: null });
    expect(Date.now() - leftAt).toBeLessThan(5000);
  });

  it('ends its followed streams when the server shuts down, without an end event, so readers resume elsewhere', async () => {
    const app = await startTestApp(ctx().dialect);
    let closed = false;
    try {
      const { owner, organizationId } = await app.signUpWithOrganization();
      const { clusterId } = await enrolledCluster(app, organizationId, owner);
      const made = async (url: string, payload: Record<string, unknown>) => {
        const response = await app.call(owner.auth, { method: 'POST', url, payload });
        expect(response.statusCode, response.body).toBeLessThan(300);
        return response.json<{ id: string }>().id;
      };
      const projectId = await made(`/organization/${organizationId}/project`, { name: uniqueName('project') });
      const environmentId = await made(`/project/${projectId}/environment`, { name: uniqueName('env'), cluster: clusterId, mode: 'STAGING' });
      const applicationId = await made(`/environment/${environmentId}/application`, {
        name: 'web',
        git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' },
        healthchecks: {},
      });
      await app.app.listen({ host: '127.0.0.1', port: 0 });
      const port = (app.app.server.address() as AddressInfo).port;
      // Never deployed: the stream waits for the first deployment, and would wait for ever.
      const waiting = await arriving(`http://127.0.0.1:${port}/application/${applicationId}/log?follow=true`, { authorization: owner.auth, accept: 'application/x-ndjson' });
      expect(waiting.status).toBe(200);
      // Closing waits for open connections: it returns only because the stream was ended.
      await app.close();
      closed = true;
      await waiting.ended;
      expect(waiting.items().filter((item) => item.type !== 'heartbeat')).toEqual([]);
    } finally {
      if (!closed) await app.close();
    }
  });
});
