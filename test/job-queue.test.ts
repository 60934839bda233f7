import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Database, type DatabaseTarget } from '../src/db/db.client.ts';
import { migrateToLatest } from '../src/db/db.migrate.ts';
import {
  claimNextJob,
  completeJob,
  completeJobWithNext,
  deferJob,
  enqueueJob,
  expediteJob,
  enqueueJobUnlessPending,
  failJobRun,
  findJob,
  heartbeatJob,
  recoverStaleJobs,
  retryDelayMs,
} from '../src/jobs/job-queue.ts';
import { createJobWorker, type JobHandler } from '../src/jobs/job-worker.ts';
import { newId } from '../src/lib/ids.ts';
import { openTestDatabase, TEST_DIALECTS, type TestDatabase } from './support/databases.ts';
import { TestClock } from './support/test-app.ts';

/**
 * The durable job queue (issue 7 part 1, DESIGN.md §2) on each real database: enqueue inside the caller's
 * transaction, atomic claims, one job at a time per serial key in request order, retries with backoff until
 * FAILED, deferral without spending attempts, heartbeats, recovery of a dead worker's claim — and then the same
 * with real worker processes sharing one database, one of them killed with SIGKILL in the middle of a job.
 */

const POSTGRES_URL = process.env.SLIPWAY_TEST_DATABASE_URL;
const WORKER_SCRIPT = path.resolve('test/support/job-worker-process.ts');

/** Probes every 25 ms until `probe` yields a value (`undefined`: not yet); at the deadline it fails naming `what`. */
function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await probe();
      expect(value, `timed out waiting for ${what}`).toBeDefined();
      return value as T;
    },
    { timeout: timeoutMs, interval: 25 },
  );
}

describe('retry backoff', () => {
  it('doubles from the base, stays within ±20 %, and is capped', () => {
    expect(retryDelayMs(1, 1000, 60_000, () => 0.5)).toBe(1000);
    expect(retryDelayMs(2, 1000, 60_000, () => 0.5)).toBe(2000);
    expect(retryDelayMs(4, 1000, 60_000, () => 0.5)).toBe(8000);
    expect(retryDelayMs(20, 1000, 60_000, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(3, 1000, 60_000, () => 0)).toBe(3200);
    expect(retryDelayMs(3, 1000, 60_000, () => 1)).toBe(4800);
  });
});

for (const dialect of TEST_DIALECTS) {
  describe(`job queue [${dialect}]`, () => {
    let testDatabase: TestDatabase;
    let database: Database;
    const clock = new TestClock();

    beforeAll(async () => {
      testDatabase = await openTestDatabase(dialect);
      database = testDatabase.database;
    });
    afterAll(async () => testDatabase.dispose());

    it('writes a job only when the enqueuing transaction commits', async () => {
      const kept = await database.db.transaction().execute((trx) => enqueueJob(trx, clock, { kind: 'k.commit', payload: { a: 1 } }));
      expect((await findJob(database.db, kept))?.status).toBe('QUEUED');
      let rolledBack = '';
      await expect(
        database.db.transaction().execute(async (trx) => {
          rolledBack = await enqueueJob(trx, clock, { kind: 'k.commit', payload: {} });
          throw new Error('the request failed');
        }),
      ).rejects.toThrow('the request failed');
      expect(await findJob(database.db, rolledBack)).toBeUndefined();
    });

    it('runs jobs of one serial key one at a time in request order, others beside them', async () => {
      const kind = `k.serial.${newId()}`;
      const first = await enqueueJob(database.db, clock, { kind, payload: {}, serialKey: 'cluster:a' });
      const second = await enqueueJob(database.db, clock, { kind, payload: {}, serialKey: 'cluster:a' });
      const other = await enqueueJob(database.db, clock, { kind, payload: {}, serialKey: 'cluster:b' });
      const a = await claimNextJob(database.db, database.dialect, clock, 'w1', [kind]);
      const b = await claimNextJob(database.db, database.dialect, clock, 'w2', [kind]);
      const none = await claimNextJob(database.db, database.dialect, clock, 'w3', [kind]);
      expect([a?.id, b?.id, none]).toEqual([first, other, undefined]);
      expect(a?.attempt).toBe(1);
      expect(await completeJob(database.db, clock, first, 'w1')).toBe(true);
      expect((await claimNextJob(database.db, database.dialect, clock, 'w3', [kind]))?.id).toBe(second);
    });

    it('claims only due jobs of the kinds asked for, and each job once under concurrent claims', async () => {
      const kind = `k.claim.${newId()}`;
      await enqueueJob(database.db, clock, { kind, payload: {}, runAt: new Date(clock.now().getTime() + 60_000).toISOString() });
      expect(await claimNextJob(database.db, database.dialect, clock, 'w', [kind])).toBeUndefined();
      expect(await claimNextJob(database.db, database.dialect, clock, 'w', ['k.other'])).toBeUndefined();
      const ids = await Promise.all(Array.from({ length: 20 }, () => enqueueJob(database.db, clock, { kind, payload: {} })));
      const claims = await Promise.all(Array.from({ length: 30 }, (_, i) => claimNextJob(database.db, database.dialect, clock, `w${i}`, [kind])));
      const claimed = claims.filter((c) => c !== undefined).map((c) => c.id);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(claimed.sort()).toEqual([...ids].sort());
    });

    it('retries a failing run at its backoff time, then marks it FAILED; a deferral spends no attempt', async () => {
      const kind = `k.retry.${newId()}`;
      const id = await enqueueJob(database.db, clock, { kind, payload: {}, maxAttempts: 2 });
      const run1 = await claimNextJob(database.db, database.dialect, clock, 'w', [kind]);
      expect(await deferJob(database.db, clock, id, 'w', clock.now().toISOString())).toBe(true);
      const run2 = await claimNextJob(database.db, database.dialect, clock, 'w', [kind]);
      expect([run1?.attempt, run2?.attempt]).toEqual([1, 1]);
      const retryAt = new Date(clock.now().getTime() + 5_000).toISOString();
      expect(await failJobRun(database.db, clock, id, 'w', 'boom', retryAt)).toBe(true);
      expect(await claimNextJob(database.db, database.dialect, clock, 'w', [kind])).toBeUndefined();
      clock.advance(5_000);
      const run3 = await claimNextJob(database.db, database.dialect, clock, 'w', [kind]);
      expect(run3?.attempt).toBe(2);
      expect(await failJobRun(database.db, clock, id, 'w', 'boom again', undefined)).toBe(true);
      expect(await findJob(database.db, id)).toMatchObject({ status: 'FAILED', attempts: 2, last_error: 'boom again' });
    });

    it('wakes a deferred job at once, and a job woken while it still runs ends its next deferral at once', async () => {
      const kind = `k.wake.${newId()}`;
      const later = () => new Date(clock.now().getTime() + 30_000).toISOString();
      const id = await enqueueJob(database.db, clock, { kind, payload: {} });
      await claimNextJob(database.db, database.dialect, clock, 'w', [kind]);
      expect(await deferJob(database.db, clock, id, 'w', later())).toBe(true);
      expect(await claimNextJob(database.db, database.dialect, clock, 'w', [kind])).toBeUndefined();
      expect(await expediteJob(database.db, clock, id)).toBe(true);
      expect((await claimNextJob(database.db, database.dialect, clock, 'w', [kind]))?.id).toBe(id);
      // The task it dispatched settles before the run defers: the deferral that follows must not sleep 30 s.
      expect(await expediteJob(database.db, clock, id)).toBe(false);
      expect(await deferJob(database.db, clock, id, 'w', later())).toBe(true);
      expect((await claimNextJob(database.db, database.dialect, clock, 'w', [kind]))?.id).toBe(id);
      // The wake-up is spent: the next deferral waits its time again.
      expect(await deferJob(database.db, clock, id, 'w', later())).toBe(true);
      expect(await claimNextJob(database.db, database.dialect, clock, 'w', [kind])).toBeUndefined();
      expect(await expediteJob(database.db, clock, id)).toBe(true);
    });

    it('completes a job and enqueues its follow-up in one transaction: both, or neither', async () => {
      const kind = `k.next.${newId()}`;
      const serialKey = `schedule:test-${newId()}`;
      const id = await enqueueJob(database.db, clock, { kind, payload: {} });
      await claimNextJob(database.db, database.dialect, clock, 'w1', [kind]);
      const next = { kind: `${kind}.next`, payload: { n: 2 }, serialKey };
      // Not this worker's job (it was recovered and taken by another): nothing happens.
      expect(await completeJobWithNext(database.db, clock, id, 'w2', next)).toBe(false);
      expect(await database.db.selectFrom('jobs').select('id').where('serial_key', '=', serialKey).execute()).toEqual([]);
      expect((await findJob(database.db, id))?.status).toBe('RUNNING');
      // A follow-up that cannot be enqueued (its schedule has a run pending already) leaves the job unfinished.
      const pending = await enqueueJobUnlessPending(database.db, clock, { kind: `${kind}.next`, payload: {}, serialKey });
      expect(pending).toBeDefined();
      await expect(completeJobWithNext(database.db, clock, id, 'w1', next)).rejects.toThrow();
      expect((await findJob(database.db, id))?.status).toBe('RUNNING');
      await database.db.updateTable('jobs').set({ status: 'CANCELLED' }).where('id', '=', pending ?? '').execute();
      expect(await completeJobWithNext(database.db, clock, id, 'w1', next)).toBe(true);
      expect((await findJob(database.db, id))?.status).toBe('SUCCEEDED');
      const followUps = await database.db.selectFrom('jobs').select(['kind', 'status', 'payload']).where('serial_key', '=', serialKey).where('status', '=', 'QUEUED').execute();
      expect(followUps.map((row) => [row.kind, row.status, typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload])).toEqual([
        [`${kind}.next`, 'QUEUED', { n: 2 }],
      ]);
    });

    it('returns a dead worker\'s job to the queue; the dead worker can no longer heartbeat or complete it', async () => {
      const kind = `k.stale.${newId()}`;
      const id = await enqueueJob(database.db, clock, { kind, payload: {} });
      await claimNextJob(database.db, database.dialect, clock, 'dead', [kind]);
      expect(await recoverStaleJobs(database.db, clock, new Date(clock.now().getTime() - 1_000).toISOString())).toEqual([]);
      expect((await findJob(database.db, id))?.status).toBe('RUNNING');
      clock.advance(2_000);
      await recoverStaleJobs(database.db, clock, new Date(clock.now().getTime() - 1_000).toISOString());
      expect((await findJob(database.db, id))?.status).toBe('QUEUED');
      const again = await claimNextJob(database.db, database.dialect, clock, 'alive', [kind]);
      expect(again).toMatchObject({ id, attempt: 2 });
      expect(await heartbeatJob(database.db, clock, id, 'dead')).toBe(false);
      expect(await completeJob(database.db, clock, id, 'dead')).toBe(false);
      expect(await completeJob(database.db, clock, id, 'alive')).toBe(true);
    });

    it('runs handlers in a worker: retries until success, gives up after the last attempt and says so once', async () => {
      const failingKind = `k.worker.fail.${newId()}`;
      const flakyKind = `k.worker.flaky.${newId()}`;
      let flakyRuns = 0;
      const givenUp: string[] = [];
      const worker = createJobWorker({
        database,
        clock,
        pollIntervalMs: 10,
        retryBaseMs: 5,
        handlers: new Map<string, JobHandler>([
          [failingKind, { run: async () => Promise.reject(new Error('always')), giveUp: async (job, error) => void givenUp.push(`${job.id}:${error}`) }],
          [
            flakyKind,
            {
              run: async () => {
                flakyRuns += 1;
                if (flakyRuns < 3) throw new Error('not yet');
              },
            },
          ],
        ]),
      });
      worker.start();
      try {
        const failing = await enqueueJob(database.db, clock, { kind: failingKind, payload: {}, maxAttempts: 3 });
        const flaky = await enqueueJob(database.db, clock, { kind: flakyKind, payload: {} });
        worker.wake();
        const failed = await until('the failing job to fail', async () => {
          const row = await findJob(database.db, failing);
          return row?.status === 'FAILED' ? row : undefined;
        });
        expect(failed.attempts).toBe(3);
        const succeeded = await until('the flaky job to succeed', async () => {
          const row = await findJob(database.db, flaky);
          return row?.status === 'SUCCEEDED' ? row : undefined;
        });
        expect(succeeded.attempts).toBe(3);
        expect(givenUp).toEqual([`${failing}:always`]);
      } finally {
        await worker.stop();
      }
    });
  });
}

interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

interface SharedDatabase {
  env: Record<string, string>;
  database: Database;
  dispose(): Promise<void>;
}

async function sharedDatabase(dialect: 'sqlite' | 'postgres', dir: string): Promise<SharedDatabase> {
  if (dialect === 'sqlite') {
    const file = path.join(dir, 'jobs.db');
    const database = openDatabase({ dialect: 'sqlite', file });
    await migrateToLatest(database.db, database.dialect);
    return { env: { JOB_DB_DIALECT: 'sqlite', JOB_DB_FILE: file }, database, dispose: () => database.close() };
  }
  const url = POSTGRES_URL as string;
  const schema = `test_${newId().replaceAll('-', '')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const target: DatabaseTarget = { dialect: 'postgres', url, schema, maxConnections: 4 };
  const database = openDatabase(target);
  await migrateToLatest(database.db, database.dialect);
  return {
    env: { JOB_DB_DIALECT: 'postgres', JOB_DB_URL: url, JOB_DB_SCHEMA: schema },
    database,
    async dispose() {
      await database.close();
      const cleanup = new pg.Client({ connectionString: url });
      await cleanup.connect();
      await cleanup.query(`DROP SCHEMA ${schema} CASCADE`);
      await cleanup.end();
    },
  };
}

async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [WORKER_SCRIPT], { env: { PATH: process.env.PATH, ...env } });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await until('the worker process to start', async () => (output.includes('ready') ? true : undefined));
  return { child, output: () => output, exited };
}

async function stopWorker(worker: WorkerProcess): Promise<void> {
  if (worker.child.exitCode === null && worker.child.signalCode === null) {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
}

interface RecordLine {
  job: string;
  worker: string;
  resource: string;
  seq: number;
  start: number;
  end: number;
  attempt: number;
}

const PROCESS_DIALECTS: Array<'sqlite' | 'postgres'> = TEST_DIALECTS;

for (const dialect of PROCESS_DIALECTS) {
  describe(`job queue across worker processes [${dialect}]`, () => {
    let dir: string;
    let shared: SharedDatabase;
    let logFile: string;
    const clock = new TestClock();

    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'slipway-jobs-'));
      shared = await sharedDatabase(dialect, dir);
      logFile = path.join(dir, 'log.jsonl');
      await writeFile(logFile, '');
    });
    afterAll(async () => {
      await shared.dispose();
      await rm(dir, { recursive: true, force: true });
    });

    async function records(): Promise<RecordLine[]> {
      return (await readFile(logFile, 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as RecordLine);
    }

    it('two workers share the queue: every job runs exactly once, each resource\'s jobs never overlap and keep their order', async () => {
      const env = { ...shared.env, JOB_LOG_FILE: logFile };
      const workers = [await startWorker({ ...env, JOB_WORKER_ID: 'one' }), await startWorker({ ...env, JOB_WORKER_ID: 'two' })];
      try {
        const ids: string[] = [];
        for (let seq = 0; seq < 20; seq++) {
          for (const resource of ['r1', 'r2', 'r3', 'r4', 'r5', 'r6']) {
            ids.push(await enqueueJob(shared.database.db, clock, { kind: 'test.record', payload: { resource, seq, sleepMs: 3 }, serialKey: resource }));
          }
        }
        await until(
          'every job to succeed',
          async () => {
            const left = await shared.database.db.selectFrom('jobs').select('id').where('status', '!=', 'SUCCEEDED').execute();
            return left.length === 0 ? true : undefined;
          },
          60_000,
        ).catch(async (error: unknown) => {
          const rows = await shared.database.db.selectFrom('jobs').select(['status', 'claimed_by', 'last_error']).execute();
          throw new Error(`${String(error)}: ${JSON.stringify(rows.slice(0, 5))} ${workers.map((w) => w.output()).join('\n')}`);
        });
        const lines = await records();
        expect(lines.map((l) => l.job).sort()).toEqual([...ids].sort());
        expect(new Set(lines.map((l) => l.worker))).toEqual(new Set(['one', 'two']));
        for (const resource of ['r1', 'r2', 'r3', 'r4', 'r5', 'r6']) {
          const runs = lines.filter((l) => l.resource === resource).sort((x, y) => x.start - y.start);
          expect(runs.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i));
          for (let i = 1; i < runs.length; i++) expect((runs[i] as RecordLine).start).toBeGreaterThanOrEqual((runs[i - 1] as RecordLine).end);
        }
      } finally {
        for (const worker of workers) await stopWorker(worker);
      }
    }, 90_000);

    it('a worker killed with SIGKILL mid-job: another worker recovers the claim after the heartbeat goes stale and runs it', async () => {
      const env = { ...shared.env, JOB_LOG_FILE: logFile, JOB_STALE_AFTER_MS: '800' };
      const doomed = await startWorker({ ...env, JOB_WORKER_ID: 'doomed' });
      const id = await enqueueJob(shared.database.db, clock, { kind: 'test.hang', payload: {}, serialKey: 'hang' });
      const behind = await enqueueJob(shared.database.db, clock, { kind: 'test.record', payload: { resource: 'hang', seq: 1, sleepMs: 0 }, serialKey: 'hang' });
      await until('the job to start', async () => (doomed.output().includes(`started ${id}`) ? true : undefined));
      doomed.child.kill('SIGKILL');
      await doomed.exited;
      expect((await findJob(shared.database.db, id))?.status).toBe('RUNNING');

      const survivor = await startWorker({ ...env, JOB_WORKER_ID: 'survivor' });
      try {
        // The survivor takes the job back after 800 ms without a heartbeat; test.hang hangs again on its second
        // attempt, so the survivor is killed in turn and a third worker (after its heartbeat stales) gets attempt 3.
        await until('the survivor to take the job over', async () => (survivor.output().includes(`started ${id}`) ? true : undefined));
        const row = await findJob(shared.database.db, id);
        expect(row).toMatchObject({ status: 'RUNNING', claimed_by: 'survivor', attempts: 2 });
        expect((await findJob(shared.database.db, behind))?.status).toBe('QUEUED');
      } finally {
        survivor.child.kill('SIGKILL');
        await survivor.exited;
      }
      await shared.database.db.updateTable('jobs').set({ max_attempts: 2 }).where('id', '=', id).execute();
      const last = await startWorker({ ...env, JOB_WORKER_ID: 'last' });
      try {
        const failed = await until('the job to fail for good after its last attempt died', async () => {
          const row = await findJob(shared.database.db, id);
          return row?.status === 'FAILED' ? row : undefined;
        });
        expect(failed.last_error).toMatch(/stopped responding/);
        const next = await until('the next job of the serial key to run', async () => {
          const row = await findJob(shared.database.db, behind);
          return row?.status === 'SUCCEEDED' ? row : undefined;
        });
        expect(next.claimed_by).toBe('last');
      } finally {
        await stopWorker(last);
      }
    }, 90_000);
  });
}
