import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.ts';
import { openDatabase, type Database } from '../src/db/db.client.ts';
import { migrateToLatest } from '../src/db/db.migrate.ts';
import type { FastifyTypeBox } from '../src/http/fastify.types.ts';
import { claimNextJob, DEFAULT_MAX_ATTEMPTS, enqueueJobUnlessPending, findJob, type JobRow } from '../src/jobs/job-queue.ts';
import { createJobSchedules, nextDueAt, scheduleJobKind, scheduleSerialKey, type ScheduledWork } from '../src/jobs/job-schedules.ts';
import { createJobWorker, type JobWorker } from '../src/jobs/job-worker.ts';
import { newId } from '../src/lib/ids.ts';
import { TEST_DIALECTS, type TestDialect } from './support/databases.ts';
import { startTestIssuer, type TestIssuer } from './support/oidc-issuer.ts';
import { TestClock } from './support/test-app.ts';

/**
 * Scheduled work on the durable queue (issue 18, part 5; src/jobs/job-schedules.ts): one pending run per schedule and
 * installation however many replicas start at once, each run followed by the next one due an interval after it was
 * due (missed runs skipped), a failing run retried and still followed, and nothing scheduled or run by a process
 * without a worker. "Replicas" are separate connections to one database: two SQLite connections to one file (as two
 * processes would open it), two PostgreSQL pools on one schema.
 */

const POSTGRES_URL = process.env.SLIPWAY_TEST_DATABASE_URL;
const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
/** The periodic tasks buildApp schedules, and whether each runs when an installation starts. */
const APP_SCHEDULES = { billing: true, 'custom-domains': false, 'organization-events-sweep': true, 'idempotency-sweep': true };

interface Replicas {
  a: Database;
  b: Database;
  dispose(): Promise<void>;
}

/** One migrated database reached through two independent connections (pools), like two replicas. */
async function openReplicas(dialect: TestDialect): Promise<Replicas> {
  if (dialect === 'sqlite') {
    const dir = await mkdtemp(path.join(tmpdir(), 'slipway-schedules-'));
    const file = path.join(dir, 'slipway.db');
    const a = openDatabase({ dialect: 'sqlite', file });
    await migrateToLatest(a.db, a.dialect);
    const b = openDatabase({ dialect: 'sqlite', file });
    return {
      a,
      b,
      async dispose() {
        await a.close();
        await b.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  const url = POSTGRES_URL as string;
  const schema = `test_${newId().replaceAll('-', '')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const a = openDatabase({ dialect: 'postgres', url, schema, maxConnections: 5 });
  await migrateToLatest(a.db, a.dialect);
  const b = openDatabase({ dialect: 'postgres', url, schema, maxConnections: 5 });
  return {
    a,
    b,
    async dispose() {
      await a.close();
      await b.close();
      const cleanup = new pg.Client({ connectionString: url });
      await cleanup.connect();
      await cleanup.query(`DROP SCHEMA ${schema} CASCADE`);
      await cleanup.end();
    },
  };
}

function runsOf(database: Database, name: string): Promise<JobRow[]> {
  return database.db.selectFrom('jobs').selectAll().where('serial_key', '=', scheduleSerialKey(name)).orderBy('id').execute();
}

async function pendingRunsOf(database: Database, name: string): Promise<JobRow[]> {
  return (await runsOf(database, name)).filter((row) => row.status === 'QUEUED' || row.status === 'RUNNING');
}

function dueAtOf(row: JobRow | undefined): string | undefined {
  if (row === undefined) return undefined;
  const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as { dueAt?: string };
  return payload.dueAt;
}

const at = (ms: number) => new Date(ms).toISOString();

describe('the next due time', () => {
  it('is one interval after the previous due time, whenever the run ended; far behind, the missed runs are skipped', () => {
    const due = Date.UTC(2026, 10, 26, 12);
    expect(nextDueAt(due, HOUR, due + 5)).toBe(due + HOUR);
    expect(nextDueAt(due, HOUR, due + HOUR - 1)).toBe(due + HOUR);
    expect(nextDueAt(due, HOUR, due + HOUR)).toBe(due + 2 * HOUR);
    expect(nextDueAt(due, HOUR, due + 3.5 * HOUR)).toBe(due + 4 * HOUR);
    // A run that started before it was due (another process's clock ahead) still waits a whole interval.
    expect(nextDueAt(due, HOUR, due - 1000)).toBe(due + HOUR);
  });
});

for (const dialect of TEST_DIALECTS) {
  describe(`job schedules [${dialect}]`, () => {
    let replicas: Replicas;
    const clock = new TestClock();
    const workers: JobWorker[] = [];

    beforeAll(async () => {
      replicas = await openReplicas(dialect);
    });
    afterAll(async () => {
      for (const worker of workers) await worker.stop();
      await replicas.dispose();
    });

    function startWorker(database: Database, schedules: readonly ScheduledWork[], options: { staleAfterMs?: number } = {}): JobWorker {
      const worker = createJobWorker({
        database,
        clock,
        handlers: new Map(createJobSchedules({ db: database.db, clock, schedules }).handlers),
        pollIntervalMs: 20,
        retryBaseMs: 5,
        retryMaxMs: 20,
        ...options,
      });
      workers.push(worker);
      worker.start();
      return worker;
    }

    it('replicas starting at once leave one pending run per schedule: due now when it runs at start, an interval later otherwise', async () => {
      const atStart = `at-start-${newId()}`;
      const later = `later-${newId()}`;
      const schedules: ScheduledWork[] = [
        { name: atStart, intervalMs: HOUR, atStart: true, run: async () => undefined },
        { name: later, intervalMs: 5 * 60_000, atStart: false, run: async () => undefined },
      ];
      const before = clock.now().getTime();
      // Ten replicas, half on each connection, all ensuring at once (each PostgreSQL pool runs five side by side).
      await Promise.all(
        Array.from({ length: 10 }, (_, index) => createJobSchedules({ db: (index % 2 === 0 ? replicas.a : replicas.b).db, clock, schedules }).ensure()),
      );
      const after = clock.now().getTime();
      const [startRuns, laterRuns] = [await runsOf(replicas.a, atStart), await runsOf(replicas.a, later)];
      expect(startRuns).toHaveLength(1);
      expect(laterRuns).toHaveLength(1);
      expect(startRuns[0]).toMatchObject({ kind: scheduleJobKind(atStart), status: 'QUEUED' });
      const startDue = Date.parse(startRuns[0]?.run_at ?? '');
      expect(startDue).toBeGreaterThanOrEqual(before);
      expect(startDue).toBeLessThanOrEqual(after);
      const laterDue = Date.parse(laterRuns[0]?.run_at ?? '');
      expect(laterDue).toBeGreaterThanOrEqual(before + 5 * 60_000);
      expect(laterDue).toBeLessThanOrEqual(after + 5 * 60_000);
      expect(dueAtOf(laterRuns[0])).toBe(laterRuns[0]?.run_at);

      // A replica starting later adds nothing, and neither does a direct insert-if-absent.
      await createJobSchedules({ db: replicas.b.db, clock, schedules }).ensure();
      const direct = await enqueueJobUnlessPending(replicas.a.db, clock, { kind: scheduleJobKind(atStart), serialKey: scheduleSerialKey(atStart), payload: {} });
      expect(direct).toBeUndefined();
      expect(await runsOf(replicas.a, atStart)).toEqual(startRuns);
      expect(await runsOf(replicas.a, later)).toEqual(laterRuns);
    });

    it('a run does the work and schedules the next one at due + interval; a replica starting while it runs adds nothing', async () => {
      const name = `steady-${newId()}`;
      let runs = 0;
      let release: () => void = () => undefined;
      let gate = new Promise<void>((resolve) => (release = resolve));
      const schedules: ScheduledWork[] = [
        {
          name,
          intervalMs: HOUR,
          atStart: true,
          run: async () => {
            runs += 1;
            await gate;
          },
        },
      ];
      await createJobSchedules({ db: replicas.a.db, clock, schedules }).ensure();
      const [first] = await runsOf(replicas.a, name);
      const due = Date.parse(dueAtOf(first) ?? '');
      startWorker(replicas.a, schedules);
      await vi.waitFor(async () => expect((await findJob(replicas.a.db, first?.id ?? ''))?.status).toBe('RUNNING'), { timeout: 10_000, interval: 10 });

      // While the run is under way it is the schedule's pending run: a replica starting now adds none.
      await createJobSchedules({ db: replicas.b.db, clock, schedules }).ensure();
      expect((await pendingRunsOf(replicas.a, name)).map((row) => row.id)).toEqual([first?.id]);

      release();
      await vi.waitFor(async () => expect((await findJob(replicas.a.db, first?.id ?? ''))?.status).toBe('SUCCEEDED'), { timeout: 10_000, interval: 10 });
      const [next, ...others] = await pendingRunsOf(replicas.a, name);
      expect(others).toEqual([]);
      expect(next).toMatchObject({ kind: scheduleJobKind(name), status: 'QUEUED', run_at: at(due + HOUR), attempts: 0 });
      expect(dueAtOf(next)).toBe(at(due + HOUR));
      expect(runs).toBe(1);

      // Three and a half hours later the pending run is long overdue: it runs once, and the next is due on the grid.
      gate = Promise.resolve();
      clock.advance(3.5 * HOUR);
      await vi.waitFor(async () => expect((await findJob(replicas.a.db, next?.id ?? ''))?.status).toBe('SUCCEEDED'), { timeout: 10_000, interval: 10 });
      const pending = await pendingRunsOf(replicas.a, name);
      expect(pending.map((row) => row.run_at)).toEqual([at(due + 4 * HOUR)]);
      expect(runs).toBe(2);
      expect(await runsOf(replicas.a, name)).toHaveLength(3);
    });

    it('a run that outlasts the next due time leaves that run due: what came due while it worked is not skipped', async () => {
      const name = `long-${newId()}`;
      let runs = 0;
      const schedules: ScheduledWork[] = [
        {
          name,
          intervalMs: HOUR,
          atStart: true,
          run: async () => {
            runs += 1;
            // The first run works past the next due time (a long invoice run, or the clock moved meanwhile).
            if (runs === 1) clock.advance(1.5 * HOUR);
          },
        },
      ];
      await createJobSchedules({ db: replicas.a.db, clock, schedules }).ensure();
      const [first] = await runsOf(replicas.a, name);
      const due = Date.parse(dueAtOf(first) ?? '');
      startWorker(replicas.a, schedules);
      // The run due an hour after the first came due while it worked: it runs at once, then the grid goes on.
      await vi.waitFor(() => expect(runs).toBe(2), { timeout: 10_000, interval: 10 });
      await vi.waitFor(async () => expect((await pendingRunsOf(replicas.a, name)).map((row) => row.run_at)).toEqual([at(due + 2 * HOUR)]), { timeout: 10_000, interval: 10 });
      const done = (await runsOf(replicas.a, name)).filter((row) => row.status === 'SUCCEEDED').map((row) => row.run_at);
      expect(done.sort()).toEqual([at(due), at(due + HOUR)]);
    });

    it('a failing run is retried by the queue, and leaves the next run scheduled whether it recovers or fails for good', async () => {
      const flaky = `flaky-${newId()}`;
      const broken = `broken-${newId()}`;
      let flakyRuns = 0;
      const schedules: ScheduledWork[] = [
        {
          name: flaky,
          intervalMs: HOUR,
          atStart: true,
          run: async () => {
            flakyRuns += 1;
            if (flakyRuns === 1) throw new Error('the payment provider is down');
          },
        },
        { name: broken, intervalMs: HOUR, atStart: true, run: async () => Promise.reject(new Error('always broken')) },
      ];
      await createJobSchedules({ db: replicas.a.db, clock, schedules }).ensure();
      const [flakyRun] = await runsOf(replicas.a, flaky);
      const [brokenRun] = await runsOf(replicas.a, broken);
      startWorker(replicas.b, schedules);

      await vi.waitFor(async () => expect(await findJob(replicas.a.db, flakyRun?.id ?? '')).toMatchObject({ status: 'SUCCEEDED', attempts: 2 }), {
        timeout: 10_000,
        interval: 10,
      });
      // The retry ran later than the run was due; the next run keeps to the schedule's own times.
      const flakyDue = Date.parse(dueAtOf(flakyRun) ?? '');
      expect((await pendingRunsOf(replicas.a, flaky)).map((row) => [row.status, row.run_at, dueAtOf(row)])).toEqual([
        ['QUEUED', at(flakyDue + HOUR), at(flakyDue + HOUR)],
      ]);

      await vi.waitFor(
        async () => expect(await findJob(replicas.a.db, brokenRun?.id ?? '')).toMatchObject({ status: 'FAILED', attempts: DEFAULT_MAX_ATTEMPTS, last_error: 'always broken' }),
        { timeout: 10_000, interval: 10 },
      );
      const brokenDue = Date.parse(dueAtOf(brokenRun) ?? '');
      await vi.waitFor(async () => expect((await pendingRunsOf(replicas.a, broken)).map((row) => [row.status, row.run_at])).toEqual([['QUEUED', at(brokenDue + HOUR)]]), {
        timeout: 10_000,
        interval: 10,
      });
    });

    it('a run whose worker died is taken over by another worker, runs once more, and schedules one next run', async () => {
      const name = `orphaned-${newId()}`;
      let runs = 0;
      const schedules: ScheduledWork[] = [{ name, intervalMs: HOUR, atStart: true, run: async () => void (runs += 1) }];
      await createJobSchedules({ db: replicas.a.db, clock, schedules }).ensure();
      const claimed = await claimNextJob(replicas.a.db, replicas.a.dialect, clock, 'died', [scheduleJobKind(name)]);
      expect(claimed).toBeDefined();
      const due = Date.parse(dueAtOf(await findJob(replicas.a.db, claimed?.id ?? '')) ?? '');
      startWorker(replicas.b, schedules, { staleAfterMs: 100 });
      await vi.waitFor(async () => expect(await findJob(replicas.a.db, claimed?.id ?? '')).toMatchObject({ status: 'SUCCEEDED', attempts: 2 }), {
        timeout: 10_000,
        interval: 10,
      });
      expect(runs).toBe(1);
      expect((await pendingRunsOf(replicas.a, name)).map((row) => row.run_at)).toEqual([at(due + HOUR)]);
    });
  });
}

describe.each(TEST_DIALECTS)('the application\'s scheduled work [%s]', (dialect) => {
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await startTestIssuer();
  });
  afterAll(async () => issuer.close());

  function startApp(database: Database, clock: TestClock, runJobs: boolean): Promise<FastifyTypeBox> {
    return buildApp({
      config: { oidc: { issuer: issuer.issuer, audience: issuer.audience }, egressIps: [], logLevel: 'silent' },
      database,
      clock,
      jobs: { pollIntervalMs: 50, retryBaseMs: 50, run: runJobs },
    });
  }

  /** An idempotency key past its expiry and an audit event older than every plan keeps events: what the sweeps remove. */
  async function leaveExpiredRows(database: Database, clock: TestClock): Promise<{ scope: string; eventId: string }> {
    const long = new Date(clock.now().getTime() - 1000 * DAY).toISOString();
    const scope = newId();
    await database.db
      .insertInto('idempotency_keys')
      .values({ scope_hash: scope, request_hash: 'x', state: 'DONE', status: 200, content_type: 'application/json', body: '{}', created_at: long, expires_at: long })
      .execute();
    const eventId = newId();
    await database.db
      .insertInto('organization_events')
      .values({
        id: eventId,
        organization_id: newId(),
        created_at: long,
        event_type: 'CREATE',
        target_type: 'PROJECT',
        target_id: null,
        target_name: null,
        sub_target_type: null,
        operation_id: 'createProject',
        change: null,
        origin: 'API',
        author_type: 'USER',
        author_id: newId(),
        triggered_by: 'someone',
        project_id: null,
        environment_id: null,
        ip: null,
        user_agent: null,
        request_id: 'r',
        status_code: 201,
        outcome: 'SUCCESS',
      })
      .execute();
    return { scope, eventId };
  }

  async function expiredRowsLeft(database: Database, left: { scope: string; eventId: string }): Promise<{ keys: number; events: number }> {
    const keys = await database.db.selectFrom('idempotency_keys').select('scope_hash').where('scope_hash', '=', left.scope).execute();
    const events = await database.db.selectFrom('organization_events').select('id').where('id', '=', left.eventId).execute();
    return { keys: keys.length, events: events.length };
  }

  it('two instances starting at once on one database schedule each task once and run the at-start ones once', async () => {
    const replicas = await openReplicas(dialect);
    const clock = new TestClock();
    const apps: FastifyTypeBox[] = [];
    try {
      const expired = await leaveExpiredRows(replicas.a, clock);
      const started = clock.now().getTime();
      apps.push(...(await Promise.all([startApp(replicas.a, clock, true), startApp(replicas.b, clock, true)])));

      // The at-start runs happen (the sweeps remove what expired; invoicing ran), each once, each followed by one run.
      await vi.waitFor(
        async () => {
          expect(await expiredRowsLeft(replicas.a, expired)).toEqual({ keys: 0, events: 0 });
          for (const [name, atStart] of Object.entries(APP_SCHEDULES)) {
            if (atStart) expect((await runsOf(replicas.a, name)).map((row) => row.status)).toEqual(['SUCCEEDED', 'QUEUED']);
          }
        },
        { timeout: 15_000, interval: 50 },
      );
      for (const [name, atStart] of Object.entries(APP_SCHEDULES)) {
        const pending = await pendingRunsOf(replicas.b, name);
        expect(pending, name).toHaveLength(1);
        const due = Date.parse(pending[0]?.run_at ?? '');
        // Both from the first run's due time (the installation's start), an hour on; DNS re-checks 5 minutes after start.
        const delay = atStart ? HOUR : 5 * 60_000;
        expect(due, name).toBeGreaterThanOrEqual(started + delay);
        expect(due, name).toBeLessThan(clock.now().getTime() + delay);
      }
      expect(await runsOf(replicas.a, 'custom-domains')).toHaveLength(1);

      // A third instance joining the running installation adds no run of its own.
      apps.push(await startApp(replicas.b, clock, true));
      for (const name of Object.keys(APP_SCHEDULES)) expect(await pendingRunsOf(replicas.a, name), name).toHaveLength(1);
    } finally {
      for (const app of apps) await app.close();
      await replicas.dispose();
    }
  });

  it('an instance without a job worker schedules nothing and runs nothing', async () => {
    const replicas = await openReplicas(dialect);
    const clock = new TestClock();
    const expired = await leaveExpiredRows(replicas.a, clock);
    const app = await startApp(replicas.a, clock, false);
    try {
      // Several poll intervals of a worker, had there been one: the sweeps would have run at start.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const scheduled = await replicas.a.db.selectFrom('jobs').select('kind').where('kind', 'like', 'schedule.%').execute();
      expect(scheduled).toEqual([]);
      expect(await expiredRowsLeft(replicas.a, expired)).toEqual({ keys: 1, events: 1 });
    } finally {
      await app.close();
      await replicas.dispose();
    }
  });
});
