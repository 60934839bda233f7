import { randomBytes } from 'node:crypto';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Database } from '../src/db/db.client.ts';
import { RATE_LIMIT_REDIS_PREFIX } from '../src/http/rate-limit.ts';
import { newId } from '../src/lib/ids.ts';
import { createClustersService } from '../src/modules/clusters/clusters.service.ts';
import { SERVICE_ACTION_JOB } from '../src/modules/deployments/deployments.requests.ts';
import { WEBHOOK_DELIVERY_JOB } from '../src/modules/webhooks/webhooks.service.ts';
import { runSlipway, startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';

/**
 * Issue 26 part 2: several `slipway server` processes on one PostgreSQL database behave as one installation. Real
 * child processes on a scratch database of their own (dropped afterwards):
 * - the rate limit is counted by all replicas together, in PostgreSQL's table and in Redis;
 * - a job enqueued by a replica that runs no worker starts at once on another's, and the agent task it dispatches
 *   reaches a long-poll waiting on the first: replicas whose fallback polls are far longer than the test's deadlines
 *   can only have been woken by the change signals (LISTEN/NOTIFY);
 * - a live log followed on one replica receives a line reported to another, through the signal;
 * - a replica `kill -9`ed while a job of its runs: another process takes the job over once its heartbeat is stale,
 *   and it completes exactly once; every create the killed replica acknowledged is in the database.
 * PostgreSQL only: one process owns an SQLite database, so there is nothing to share there.
 */

const POSTGRES_URL = process.env.SLIPWAY_TEST_DATABASE_URL;
const ON_POSTGRES = POSTGRES_URL !== undefined && POSTGRES_URL !== '';
/** A fallback poll far beyond every deadline below: a wake-up seen in time came from a signal. */
const NO_POLL_MS = '300000';
const SECRET_KEY = randomBytes(32).toString('hex');
const REDIS_URL = 'redis://127.0.0.1:6379/11';
/** Generous: the machine is shared; outcomes are asserted, never durations. */
const DEADLINE = { timeout: 60_000, interval: 100 };

async function onPostgres<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.href;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function call(server: SlipwayServer, auth: string, method: string, path: string, payload?: unknown): Promise<Answer> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: auth, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

async function created(server: SlipwayServer, auth: string, path: string, payload: unknown, status: number): Promise<string> {
  const answer = await call(server, auth, 'POST', path, payload);
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  return answer.body.id as string;
}

/** A streamed answer read as it arrives; `close()` destroys the request so its connection ends for certain. */
function follow(url: string, headers: Record<string, string>): Promise<{ status: number; text(): string; close(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const request = get(url, { headers }, (response) => {
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('error', () => undefined);
      const closed = new Promise<void>((done) => request.on('close', done));
      resolve({
        status: response.statusCode ?? 0,
        text: () => text,
        async close() {
          request.destroy();
          await closed;
        },
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
  });
}

/**
 * A webhook receiver that holds the first delivery open (its sender's job stays RUNNING) and answers every later
 * one 200: what it counts says how many runs reached it and how many were answered.
 */
async function startHoldingReceiver() {
  const held: ServerResponse[] = [];
  let received = 0;
  let answered = 0;
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      if (received === 1) {
        held.push(response);
        return;
      }
      answered += 1;
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received: () => received,
    answered: () => answered,
    async close() {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const TITLE = ON_POSTGRES ? 'replicas on one PostgreSQL database' : 'replicas on one PostgreSQL database (skipped: SLIPWAY_TEST_DATABASE_URL is not set)';

describe.skipIf(!ON_POSTGRES)(TITLE, () => {
  const scratchName = `replicas_${newId().replaceAll('-', '')}`;
  const adminUrl = ON_POSTGRES ? databaseUrl(POSTGRES_URL as string, 'postgres') : '';
  const scratchUrl = ON_POSTGRES ? databaseUrl(POSTGRES_URL as string, scratchName) : '';
  const servers: SlipwayServer[] = [];
  let database: Database;
  let organizationId: string;
  let auth: string;

  /** Every replica shares the database and the secret key; the local agent stays off. */
  async function replica(env: Record<string, string>): Promise<SlipwayServer> {
    const server = await startSlipwayServer('postgres', {
      SLIPWAY_DATABASE_URL: scratchUrl,
      SLIPWAY_SECRET_KEY: SECRET_KEY,
      SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
      SLIPWAY_JOB_STALE_AFTER_SECONDS: '6',
      ...env,
    });
    servers.push(server);
    return server;
  }

  async function closeAll(list: SlipwayServer[]): Promise<void> {
    await Promise.all(list.map((server) => server.close()));
    for (const server of list) servers.splice(servers.indexOf(server), 1);
  }

  beforeAll(async () => {
    await onPostgres(adminUrl, (client) => client.query(`CREATE DATABASE ${scratchName}`));
    const bootstrap = await runSlipway(['admin', 'bootstrap', '--email', 'ops@example.com', '--organization', 'Acme', '--json'], {
      SLIPWAY_DATABASE_URL: scratchUrl,
      SLIPWAY_SECRET_KEY: SECRET_KEY,
      SLIPWAY_DATA_DIR: `/tmp/${scratchName}-operator`,
      SLIPWAY_LOG_LEVEL: 'silent',
    });
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    const answer = JSON.parse(bootstrap.stdout) as { organization_id: string; api_token: string };
    organizationId = answer.organization_id;
    auth = `Bearer ${answer.api_token}`;
    database = openDatabase({ dialect: 'postgres', url: scratchUrl, maxConnections: 2 });
  }, 120_000);

  afterAll(async () => {
    await closeAll([...servers]);
    await database?.close();
    if (ON_POSTGRES) await onPostgres(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${scratchName} WITH (FORCE)`));
    await import('node:fs/promises').then((fs) => fs.rm(`/tmp/${scratchName}-operator`, { recursive: true, force: true }));
  }, 120_000);

  /** Requests of one token, alternating between the replicas: the statuses in order. */
  async function alternate(replicas: SlipwayServer[], count: number): Promise<number[]> {
    const statuses: number[] = [];
    for (let index = 0; index < count; index++) {
      const server = replicas[index % replicas.length] as SlipwayServer;
      statuses.push((await call(server, auth, 'GET', `/organization/${organizationId}`)).status);
    }
    return statuses;
  }

  async function tokenWithFreshLimit(): Promise<void> {
    // Each store counts the token from zero: a token of its own per case.
    const answer = await call(servers[0] as SlipwayServer, auth, 'POST', `/organization/${organizationId}/apiToken`, { name: `limit-${newId()}`, scope: 'ADMIN' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    auth = `Bearer ${String(answer.body.token)}`;
  }

  it('counts the rate limit across replicas in PostgreSQL: N requests in all, then 429 on either', async () => {
    const pair = [await replica({ SLIPWAY_RUN_JOBS: 'false', SLIPWAY_RATE_LIMIT_PER_MINUTE: '6' }), await replica({ SLIPWAY_RUN_JOBS: 'false', SLIPWAY_RATE_LIMIT_PER_MINUTE: '6' })];
    try {
      await tokenWithFreshLimit();
      expect(await alternate(pair, 9)).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429]);
      const rows = await database.db.selectFrom('rate_limit_counters').select(['key', 'count']).execute();
      expect(rows.length).toBeGreaterThan(0);
    } finally {
      await closeAll(pair);
    }
  }, 180_000);

  it('counts the rate limit across replicas in Redis when SLIPWAY_REDIS_URL is set', async () => {
    const redis = new Redis(REDIS_URL, { lazyConnect: true });
    await redis.connect();
    const pair = [
      await replica({ SLIPWAY_RUN_JOBS: 'false', SLIPWAY_RATE_LIMIT_PER_MINUTE: '6', SLIPWAY_REDIS_URL: REDIS_URL }),
      await replica({ SLIPWAY_RUN_JOBS: 'false', SLIPWAY_RATE_LIMIT_PER_MINUTE: '6', SLIPWAY_REDIS_URL: REDIS_URL }),
    ];
    try {
      const before = await database.db.selectFrom('rate_limit_counters').select('key').execute();
      await tokenWithFreshLimit();
      expect(await alternate(pair, 9)).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429]);
      const tokenId = (await database.db.selectFrom('api_tokens').select('id').orderBy('created_at', 'desc').executeTakeFirstOrThrow()).id;
      const keys = (await redis.keys(`${RATE_LIMIT_REDIS_PREFIX}*${tokenId}`)).filter((key) => key.includes(tokenId));
      expect(keys.length).toBe(1);
      expect(Number(await redis.get(keys[0] as string))).toBe(9);
      // Redis counted: PostgreSQL's table got no row for it.
      expect((await database.db.selectFrom('rate_limit_counters').select('key').execute()).length).toBe(before.length);
      await redis.del(...keys);
    } finally {
      await closeAll(pair);
      redis.disconnect();
    }
  }, 180_000);

  it('lets requests through, with a warning, when Redis cannot be reached (fails open, never 5xx)', async () => {
    const unreachable = `redis://127.0.0.1:${await unusedPort()}/0`;
    const lone = await replica({ SLIPWAY_RUN_JOBS: 'false', SLIPWAY_RATE_LIMIT_PER_MINUTE: '2', SLIPWAY_REDIS_URL: unreachable });
    try {
      expect(await alternate([lone], 4)).toEqual([200, 200, 200, 200]);
      expect(lone.output()).toContain("the rate limit's Redis store fails");
    } finally {
      await closeAll([lone]);
    }
  }, 180_000);

  describe('an API-only replica A, a worker replica B, and C taking over after B is killed', () => {
    let a: SlipwayServer;
    let b: SlipwayServer;
    let credential: string;
    let applicationId: string;
    let deploymentId: string;
    let task: { id: string; lease_id: string; deployment_id: string };
    let receiver: Awaited<ReturnType<typeof startHoldingReceiver>>;

    beforeAll(async () => {
      receiver = await startHoldingReceiver();
      // Neither replica looks on its own within the test's deadlines: what reaches them in time was signalled.
      a = await replica({ SLIPWAY_RUN_JOBS: 'false', SLIPWAY_RATE_LIMIT_PER_MINUTE: '0', SLIPWAY_FALLBACK_POLL_MS: NO_POLL_MS });
      b = await replica({ SLIPWAY_RUN_JOBS: 'true', SLIPWAY_RATE_LIMIT_PER_MINUTE: '0', SLIPWAY_FALLBACK_POLL_MS: NO_POLL_MS });
      const owner = await database.db.selectFrom('users').select(['id', 'email']).where('email', '=', 'ops@example.com').executeTakeFirstOrThrow();
      const clusters = createClustersService({
        db: database.db,
        clock: { now: () => new Date() },
        wakeWorkers: () => undefined,
        deletePlatformConfiguration: async () => undefined,
        publicUrl: a.baseUrl,
        deploymentGate: async () => ({ allowed: true, reason: '' }),
        labelsGroups: { resolveLabelsGroups: async () => [] },
      });
      const { clusterId, enrollmentToken } = await database.db.transaction().execute((trx) =>
        clusters.createSelfManagedClusterRecords(trx, {
          organizationId,
          name: `byo-${newId().slice(-8)}`,
          description: null,
          region: 'eu-west-3',
          credentialsId: '0190f0b2-6c5e-7000-8000-000000000001',
          dnsProvider: 'PLATFORM',
          buildProvider: 'PLATFORM',
          production: false,
          createdBy: { kind: 'user', userId: owner.id, email: owner.email, name: null },
        }),
      );
      const enroll = await call(a, '', 'POST', '/operator/v1/enroll', { enrollment_token: enrollmentToken });
      expect(enroll.status, JSON.stringify(enroll.body)).toBe(200);
      credential = `Bearer ${String(enroll.body.credential)}`;
      const projectId = await created(a, auth, `/organization/${organizationId}/project`, { name: `project-${newId().slice(-8)}` }, 200);
      const environmentId = await created(a, auth, `/project/${projectId}/environment`, { name: 'staging', cluster: clusterId, mode: 'STAGING' }, 201);
      applicationId = await created(
        a,
        auth,
        `/environment/${environmentId}/application`,
        { name: 'web', git_repository: { url: 'https://github.com/acme/web', provider: 'GITHUB', branch: 'main' }, healthchecks: {} },
        201,
      );
      await created(a, auth, `/organization/${organizationId}/webhook`, { target_url: receiver.url, events: ['DEPLOYMENT_STARTED'] }, 201);
    }, 180_000);

    afterAll(async () => {
      await receiver?.close();
    });

    it('runs a job enqueued on A (no worker) on B at once, and its agent task reaches a long-poll waiting on A', async () => {
      // The agent waits on A before anything is queued; one long-poll of at most 30 s must bring the task.
      const polled = call(a, credential, 'GET', '/operator/v1/tasks?wait_seconds=30');
      await sleep(1000);
      const queued = await call(a, auth, 'POST', `/application/${applicationId}/deploy`, {});
      expect(queued.status, JSON.stringify(queued.body)).toBe(202);
      deploymentId = queued.body.deployment_request_id as string;
      const answer = await polled;
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const tasks = answer.body.tasks as Array<typeof task>;
      expect(tasks.map((t) => t.deployment_id)).toEqual([deploymentId]);
      task = tasks[0] as typeof task;
      // Dispatching the task was the job's work, and only B runs a worker; the job then waits for the task (deferred).
      // The task is visible to the agent from the dispatch's commit, a moment before the job has deferred itself.
      await vi.waitFor(async () => {
        const job = await database.db.selectFrom('jobs').select(['status', 'claimed_by']).where('kind', '=', SERVICE_ACTION_JOB).executeTakeFirstOrThrow();
        expect(job).toEqual({ status: 'QUEUED', claimed_by: null });
      }, DEADLINE);
    }, 120_000);

    it('streams a line reported to A to a follower of the live log on B, through the signal', async () => {
      const stream = await follow(`${b.baseUrl}/application/${applicationId}/log?follow=true`, { authorization: auth, accept: 'text/event-stream' });
      try {
        expect(stream.status).toBe(200);
        const took = await call(a, credential, 'POST', `/operator/v1/tasks/${task.id}/progress`, { lease_id: task.lease_id, seq: 1, event: 'take' });
        expect(took.status, JSON.stringify(took.body)).toBe(200);
        // Wait until the follower has read what was there, so the next line can only come by a wake-up.
        await vi.waitFor(() => expect(stream.text()).toContain(deploymentId), DEADLINE);
        await sleep(500);
        const marker = `line-from-a-${newId()}`;
        const logged = await call(a, credential, 'POST', `/operator/v1/tasks/${task.id}/logs`, {
          lease_id: task.lease_id,
          lines: [{ seq: 1, at: new Date().toISOString(), stream: 'stdout', line: marker }],
        });
        expect(logged.status, JSON.stringify(logged.body)).toBe(200);
        await vi.waitFor(() => expect(stream.text()).toContain(marker), DEADLINE);
      } finally {
        await stream.close();
      }
    }, 120_000);

    it('takes over a job of B killed -9 while it runs, once its heartbeat is stale, and completes it exactly once; loses no acknowledged create', async () => {
      // `take` published DEPLOYMENT_STARTED: B's worker delivers it, and the receiver holds the delivery open.
      await vi.waitFor(() => expect(receiver.received()).toBe(1), DEADLINE);
      const running = await database.db
        .selectFrom('jobs')
        .select(['id', 'status', 'claimed_by'])
        .where('kind', '=', WEBHOOK_DELIVERY_JOB)
        .executeTakeFirstOrThrow();
      expect(running.status).toBe('RUNNING');
      const killedWorker = running.claimed_by;

      // Creates on B until it dies: each one it acknowledged must survive.
      const acknowledged: string[] = [];
      let creating = true;
      const creates = (async () => {
        while (creating) {
          try {
            const answer = await call(b, auth, 'POST', `/organization/${organizationId}/project`, { name: `acked-${newId()}` });
            if (answer.status === 200) acknowledged.push(answer.body.id as string);
          } catch {
            return;
          }
        }
      })();
      await vi.waitFor(() => expect(acknowledged.length).toBeGreaterThanOrEqual(5), DEADLINE);
      await b.crash();
      creating = false;
      await creates;

      // C: a third process with a worker (and the default fallback poll, which also looks for stale jobs).
      await replica({ SLIPWAY_RUN_JOBS: 'true', SLIPWAY_RATE_LIMIT_PER_MINUTE: '0' });
      await vi.waitFor(async () => {
        const job = await database.db.selectFrom('jobs').select(['status', 'claimed_by']).where('id', '=', running.id).executeTakeFirstOrThrow();
        expect(job.status).toBe('SUCCEEDED');
        expect(job.claimed_by).not.toBe(killedWorker);
      }, { timeout: 120_000, interval: 250 });
      // Two runs reached the receiver (B's, cut off, and C's), one was answered; nothing runs it again.
      expect(receiver.received()).toBe(2);
      expect(receiver.answered()).toBe(1);
      await sleep(3000);
      expect(receiver.received()).toBe(2);
      expect(
        await database.db.selectFrom('jobs').select('id').where('kind', '=', WEBHOOK_DELIVERY_JOB).where('status', 'in', ['QUEUED', 'RUNNING']).execute(),
      ).toEqual([]);

      // Periodic work: B and C both ran a worker, yet each schedule has one pending run and no due time ran twice.
      const scheduleRuns = await database.db.selectFrom('jobs').select(['serial_key', 'status', 'payload']).where('serial_key', 'like', 'schedule:%').execute();
      const pending = scheduleRuns.filter((run) => run.status === 'QUEUED' || run.status === 'RUNNING').map((run) => run.serial_key);
      expect(pending.length).toBeGreaterThan(0);
      expect(new Set(pending).size).toBe(pending.length);
      const runs = scheduleRuns.map((run) => `${run.serial_key} ${JSON.stringify(run.payload)}`);
      expect(new Set(runs).size).toBe(runs.length);

      const stored = await database.db.selectFrom('projects').select('id').where('id', 'in', acknowledged).execute();
      expect(stored.map((row) => row.id).sort()).toEqual([...acknowledged].sort());
    }, 240_000);
  });
});

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
