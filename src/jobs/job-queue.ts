import { sql, type Kysely, type Selectable } from 'kysely';
import type { DialectName } from '../db/db.client.ts';
import type { DB, JobsTable, Queryable } from '../db/db.schema.ts';
import { readJson, writeJson } from '../db/db.json.ts';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { activeTraceparent } from '../lib/tracing.ts';

/**
 * The durable job queue: jobs are rows in the application's own database, written in the same transaction as the
 * state change that asks for them, so a committed request always has its job and a rolled-back one never does.
 *
 *   QUEUED ──claim──▶ RUNNING ──complete──▶ SUCCEEDED (optionally enqueuing a follow-up job in the same transaction)
 *     ▲                 │  ├──fail (attempts left)──▶ QUEUED (run_at = now + backoff)
 *     │                 │  ├──fail (no attempts left)──▶ FAILED
 *     │                 │  └──defer──▶ QUEUED (run_at given, or now when woken while running; the attempt is not counted)
 *     └──stale heartbeat (the worker died)──┘          QUEUED ──cancel──▶ CANCELLED
 *
 * Claiming is one `UPDATE … WHERE id = (SELECT … LIMIT 1) RETURNING *`: atomic on SQLite (one writer) and, with
 * `FOR UPDATE SKIP LOCKED` on PostgreSQL, safe across processes without two workers ever taking one job. A job is
 * eligible only when it is the oldest unfinished job of its serial key, so jobs of one resource run one at a time
 * and in the order they were asked for, whichever worker takes them (ids are UUIDv7, ordered by creation).
 */

export type JobStatus = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
export type JobRow = Selectable<JobsTable>;

export interface JobRequest {
  kind: string;
  payload: Record<string, unknown>;
  /** Jobs with the same key run one at a time, oldest first (e.g. `cluster:<id>`). */
  serialKey?: string;
  maxAttempts?: number;
  /** Not before this instant (ISO-8601); now when absent. */
  runAt?: string;
  /**
   * The trace the job's runs continue (a W3C traceparent): when absent, the span active where it is enqueued (a
   * request's, a job run's); null starts none (a schedule's next run is not part of the previous run's trace).
   */
  traceContext?: string | null;
}

export interface ClaimedJob {
  id: string;
  kind: string;
  payload: Record<string, unknown>;
  serialKey: string | null;
  /** 1 on the first run; counts runs that ended in failure or a crash, not deferrals. */
  attempt: number;
  maxAttempts: number;
  /** The W3C traceparent its run's span continues (lib/tracing.ts); absent or null: a trace of its own. */
  traceContext?: string | null;
}

export const DEFAULT_MAX_ATTEMPTS = 5;

/** Serial keys with this prefix have at most one job queued or running (migration 0029_job_schedules). */
export const SCHEDULE_SERIAL_KEY_PREFIX = 'schedule:';

export async function enqueueJob(db: Queryable, clock: Clock, request: JobRequest): Promise<string> {
  const row = newJobRow(clock, request);
  await db.insertInto('jobs').values(row).execute();
  return row.id;
}

/**
 * Enqueues unless the request's serial key already has a job queued or running; answers the new job's id, or
 * undefined when there was one. Only for `schedule:<name>` keys, whose pending job a unique partial index keeps single
 * (migration 0029): the insert and the check are one statement, so callers racing from any number of processes leave
 * exactly one job. Other keys have no such index and would always be inserted.
 */
export async function enqueueJobUnlessPending(db: Queryable, clock: Clock, request: JobRequest & { serialKey: string }): Promise<string | undefined> {
  if (!request.serialKey.startsWith(SCHEDULE_SERIAL_KEY_PREFIX)) throw new Error(`no pending-job index covers serial key ${request.serialKey}`);
  const row = newJobRow(clock, request);
  const result = await db
    .insertInto('jobs')
    .values(row)
    .onConflict((conflict) => conflict.doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n ? row.id : undefined;
}

function newJobRow(clock: Clock, request: JobRequest) {
  const now = clock.now().toISOString();
  return {
    id: newId(),
    kind: request.kind,
    payload: writeJson(request.payload),
    serial_key: request.serialKey ?? null,
    status: 'QUEUED',
    max_attempts: request.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    run_at: request.runAt ?? now,
    claimed_by: null,
    heartbeat_at: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    finished_at: null,
    trace_context: request.traceContext === undefined ? (activeTraceparent() ?? null) : request.traceContext,
  };
}

function claimed(row: JobRow): ClaimedJob {
  return {
    id: row.id,
    kind: row.kind,
    payload: readJson<Record<string, unknown>>(row.payload),
    serialKey: row.serial_key,
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
    traceContext: row.trace_context,
  };
}

/** Takes the next eligible job of the given kinds for `workerId`, or answers undefined when none is due. */
export async function claimNextJob(
  db: Queryable,
  dialect: DialectName,
  clock: Clock,
  workerId: string,
  kinds: readonly string[],
): Promise<ClaimedJob | undefined> {
  if (kinds.length === 0) return undefined;
  const now = clock.now().toISOString();
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const nowValue = dialect === 'postgres' ? sql`cast(${now} as timestamptz)` : sql`${now}`;
  const result = await sql<JobRow>`
    update jobs
       set status = 'RUNNING', attempts = attempts + 1, claimed_by = ${workerId},
           heartbeat_at = ${nowValue}, updated_at = ${nowValue}, woken = 0
     where id = (
       select candidate.id from jobs candidate
        where candidate.status = 'QUEUED'
          and candidate.run_at <= ${nowValue}
          and candidate.kind in (${sql.join(kinds)})
          and not exists (
            select 1 from jobs earlier
             where candidate.serial_key is not null
               and earlier.serial_key = candidate.serial_key
               and earlier.status in ('QUEUED', 'RUNNING')
               and (earlier.status = 'RUNNING' or earlier.id < candidate.id))
        order by candidate.run_at, candidate.id
        limit 1
        ${lock})
       and status = 'QUEUED'
    returning *`.execute(db);
  const row = result.rows[0];
  return row === undefined ? undefined : claimed(row);
}

/** Records that `workerId` still works on the job; false when the job is no longer its own (it was recovered). */
export async function heartbeatJob(db: Queryable, clock: Clock, jobId: string, workerId: string): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ heartbeat_at: clock.now().toISOString() })
    .where('id', '=', jobId)
    .where('claimed_by', '=', workerId)
    .where('status', '=', 'RUNNING')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function completeJob(db: Queryable, clock: Clock, jobId: string, workerId: string): Promise<boolean> {
  const now = clock.now().toISOString();
  const result = await db
    .updateTable('jobs')
    .set({ status: 'SUCCEEDED', finished_at: now, updated_at: now, last_error: null })
    .where('id', '=', jobId)
    .where('claimed_by', '=', workerId)
    .where('status', '=', 'RUNNING')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Completes the job and enqueues `next` (a schedule's next run) in one transaction: both happen, or neither when the
 * job is no longer this worker's (it was recovered and runs again, and that run asks for its own follow-up).
 */
export async function completeJobWithNext(db: Kysely<DB>, clock: Clock, jobId: string, workerId: string, next: JobRequest): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await completeJob(trx, clock, jobId, workerId))) return false;
    await enqueueJob(trx, clock, next);
    return true;
  });
}

/** A failed run: back to the queue at `retryAt`, or FAILED for good when `retryAt` is undefined. */
export async function failJobRun(
  db: Queryable,
  clock: Clock,
  jobId: string,
  workerId: string,
  error: string,
  retryAt: string | undefined,
): Promise<boolean> {
  const now = clock.now().toISOString();
  const result = await db
    .updateTable('jobs')
    .set(
      retryAt === undefined
        ? { status: 'FAILED', finished_at: now, updated_at: now, last_error: error, claimed_by: null }
        : { status: 'QUEUED', run_at: retryAt, updated_at: now, last_error: error, claimed_by: null, heartbeat_at: null },
    )
    .where('id', '=', jobId)
    .where('claimed_by', '=', workerId)
    .where('status', '=', 'RUNNING')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Puts a job back to wait for something outside it (an operator's report); the run does not count as an attempt. A
 * job woken while it ran (expediteJob) waited for something that already happened: it is runnable at once.
 */
export async function deferJob(db: Queryable, clock: Clock, jobId: string, workerId: string, runAt: string): Promise<boolean> {
  const now = clock.now().toISOString();
  const result = await db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'QUEUED',
      run_at: runAt,
      updated_at: now,
      claimed_by: null,
      heartbeat_at: null,
      attempts: eb('attempts', '-', 1),
    }))
    .where('id', '=', jobId)
    .where('claimed_by', '=', workerId)
    .where('status', '=', 'RUNNING')
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return false;
  // A wake-up that came while it ran (or since the update above, which expediteJob then handled itself).
  await db.updateTable('jobs').set({ run_at: now, woken: 0 }).where('id', '=', jobId).where('status', '=', 'QUEUED').where('woken', '=', 1).execute();
  return true;
}

/**
 * Makes a deferred job runnable now: what it waited for happened (an agent settled its task); true then, and workers
 * should look. A job still running (it dispatched the task and has not deferred yet) is marked woken, so that its
 * deferral ends at once; an ended job is left alone. False for both: no worker needs to look.
 */
export async function expediteJob(db: Queryable, clock: Clock, jobId: string): Promise<boolean> {
  const now = clock.now().toISOString();
  const result = await db
    .updateTable('jobs')
    .set({ run_at: now, updated_at: now })
    .where('id', '=', jobId)
    .where('status', '=', 'QUEUED')
    .where('run_at', '>', now)
    .executeTakeFirst();
  if (result.numUpdatedRows > 0n) return true;
  await db.updateTable('jobs').set({ woken: 1 }).where('id', '=', jobId).where('status', '=', 'RUNNING').execute();
  return false;
}

/** Cancels a job that no worker has taken yet; false when it already runs or ended. */
export async function cancelQueuedJob(db: Queryable, clock: Clock, jobId: string): Promise<boolean> {
  const now = clock.now().toISOString();
  const result = await db
    .updateTable('jobs')
    .set({ status: 'CANCELLED', finished_at: now, updated_at: now })
    .where('id', '=', jobId)
    .where('status', '=', 'QUEUED')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The jobs of these serial keys not finished yet (queued, or running), oldest first. */
export async function listUnfinishedJobIds(db: Queryable, serialKeys: readonly string[]): Promise<string[]> {
  if (serialKeys.length === 0) return [];
  const rows = await db
    .selectFrom('jobs')
    .select('id')
    .where('serial_key', 'in', [...serialKeys])
    .where('status', 'in', ['QUEUED', 'RUNNING'])
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}

export function findJob(db: Queryable, jobId: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
}

/**
 * Jobs whose worker stopped heartbeating (it crashed or was killed) go back to the queue, or to FAILED when their
 * attempts are spent; the failed ones are returned so their handlers can settle what the job was driving.
 * `runningHere` are the calling worker's own runs, never taken from it.
 */
export async function recoverStaleJobs(db: Queryable, clock: Clock, staleBefore: string, runningHere: ReadonlySet<string> = new Set()): Promise<ClaimedJob[]> {
  const now = clock.now().toISOString();
  const stale = await db
    .selectFrom('jobs')
    .selectAll()
    .where('status', '=', 'RUNNING')
    .where('heartbeat_at', '<', staleBefore)
    .execute();
  const exhausted: ClaimedJob[] = [];
  // The caller's own runs are alive, however old their heartbeat (the clock jumped, the process paused).
  for (const row of stale.filter((job) => !runningHere.has(job.id))) {
    const giveUp = row.attempts >= row.max_attempts;
    const result = await db
      .updateTable('jobs')
      .set(
        giveUp
          ? { status: 'FAILED', finished_at: now, updated_at: now, claimed_by: null, last_error: 'the worker running this job stopped responding' }
          : { status: 'QUEUED', run_at: now, updated_at: now, claimed_by: null, heartbeat_at: null, last_error: 'the worker running this job stopped responding' },
      )
      .where('id', '=', row.id)
      .where('status', '=', 'RUNNING')
      .where('heartbeat_at', '=', row.heartbeat_at)
      .executeTakeFirst();
    if (giveUp && result.numUpdatedRows > 0n) exhausted.push(claimed(row));
  }
  return exhausted;
}

/** Exponential backoff with ±20 % jitter: base, 2×base, 4×base, … capped at `maxMs`. */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential * (0.8 + 0.4 * random()));
}
