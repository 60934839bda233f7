import type { Queryable } from '../db/db.schema.ts';
import type { Clock } from '../lib/clock.ts';
import { enqueueJobUnlessPending, SCHEDULE_SERIAL_KEY_PREFIX, type ClaimedJob, type JobRequest } from './job-queue.ts';
import type { JobHandler } from './job-worker.ts';

/**
 * Scheduled work: the installation's periodic tasks (invoicing, retention sweeps, DNS re-checks) as jobs on the
 * durable queue, so each runs once per installation whatever the number of replicas, and only in processes that run
 * a job worker. A schedule `<name>` is the job kind `schedule.<name>` under the serial key `schedule:<name>`; a run's
 * payload holds the instant it was due (`dueAt`), which retries do not move.
 *
 *   nothing pending ──ensure (a worker process starts)──▶ QUEUED, due now (atStart) or one interval from now
 *   QUEUED ──due, claimed──▶ RUNNING ──work done──▶ SUCCEEDED, and the next run QUEUED in the same transaction
 *                              ├──work threw, attempts left──▶ QUEUED (the queue's backoff; same dueAt)
 *                              ├──work threw, attempts spent──▶ FAILED; giveUp enqueues the next run
 *                              └──its worker died──▶ QUEUED again, or FAILED + the next run (the queue's recovery)
 *   the next run is due at dueAt + k × interval, the first such instant after the run began (k = 1 unless far behind)
 *
 * Why so:
 * - One pending run per schedule and installation. A unique partial index over QUEUED and RUNNING jobs of `schedule:`
 *   serial keys (migration 0029) makes "ensure" a single insert-if-absent statement: replicas starting together leave
 *   one run on SQLite (one writer at a time) and on PostgreSQL (an insert meeting a concurrent one waits for its
 *   outcome, then does nothing). A running run counts as pending, so nothing else can be added meanwhile and the run
 *   enqueues its own successor with its completion, in one transaction: a crash between the two would otherwise leave
 *   no next run, or, once recovered and run again, two.
 * - No drift: the next run is due one interval after the previous one was due, not after it ended. An installation
 *   far behind (stopped for a day, a clock moved) does not run every missed run: each task catches up on everything
 *   in one run (the last period's invoices, whatever expired, every pending domain), so the missed ones are skipped —
 *   those missed before the run began: one that came due while it worked covers what it did not, and runs next.
 * - "At start" means the installation's start, not each replica's: ensure makes a run due now only when the schedule
 *   has none pending (the first start, or a run lost to a crash between FAILED and its giveUp). A replica joining a
 *   running installation adds nothing; a new interval takes effect from the run after the pending one.
 * - A failed run is retried by the queue like any job, and even a run that failed for good leaves its successor.
 * - Tasks must be safe to repeat: a run whose worker died starts over.
 */

/** A periodic task of the installation: every `intervalMs`, or on a calendar. */
export type ScheduledWork = {
  /** `billing` runs as jobs of kind `schedule.billing` under the serial key `schedule:billing`. */
  name: string;
  /** Whether an installation with no run pending runs it at once (a sweep catching up) or one interval later. */
  atStart: boolean;
  run(): Promise<unknown>;
} & (
  | { intervalMs: number }
  | {
      /**
       * On a calendar (a cron expression: the installation's backups): the first instant it is due strictly after
       * `instant`. The runs follow it with the interval's rules: missed runs are skipped, one due while a run works runs next.
       */
      nextDueAfter(instant: number): number;
    }
);

export interface JobSchedules {
  /** The handlers of the schedules' job kinds, for the worker. */
  handlers: ReadonlyArray<readonly [string, JobHandler]>;
  /** Makes sure every schedule has a run pending; a worker process calls it before it starts. */
  ensure(): Promise<void>;
}

interface SchedulePayload {
  dueAt: string;
}

export function scheduleJobKind(name: string): string {
  return `schedule.${name}`;
}

export function scheduleSerialKey(name: string): string {
  return `${SCHEDULE_SERIAL_KEY_PREFIX}${name}`;
}

/** The first instant `dueAt + k × intervalMs` (k ≥ 1) after `now`: the next run, missed ones skipped. */
export function nextDueAt(dueAt: number, intervalMs: number, now: number): number {
  const behind = Math.max(0, now - dueAt);
  return dueAt + intervalMs * (Math.floor(behind / intervalMs) + 1);
}

/** The run after one due at `dueAt`, the first due after `now` (on a calendar: its first instant after both). */
function dueAfter(work: ScheduledWork, dueAt: number, now: number): number {
  return 'intervalMs' in work ? nextDueAt(dueAt, work.intervalMs, now) : work.nextDueAfter(Math.max(dueAt, now));
}

export function createJobSchedules(deps: { db: Queryable; clock: Clock; schedules: readonly ScheduledWork[] }): JobSchedules {
  const { db, clock } = deps;
  const names = new Set<string>();
  for (const work of deps.schedules) {
    if (names.has(work.name)) throw new Error(`two schedules are named ${work.name}`);
    if ('intervalMs' in work && (!Number.isFinite(work.intervalMs) || work.intervalMs <= 0)) throw new Error(`the interval of schedule ${work.name} must be positive`);
    names.add(work.name);
  }

  function runOf(work: ScheduledWork, dueAt: number): JobRequest & { serialKey: string } {
    const due = new Date(dueAt).toISOString();
    const payload: SchedulePayload = { dueAt: due };
    // Each run is a trace of its own (docs/operations.md, "Traces"), not a child of the run or request before it.
    return { kind: scheduleJobKind(work.name), serialKey: scheduleSerialKey(work.name), payload: { ...payload }, runAt: due, traceContext: null };
  }

  /**
   * The run after `job`, skipping those due by `now`: for a run that worked, the instant it started, so that a run
   * coming due while it worked (on a long run, or a clock moved meanwhile) is not skipped — the work covered only what
   * was there when it began.
   */
  function nextRunAfter(work: ScheduledWork, job: ClaimedJob, now = clock.now().getTime()): JobRequest & { serialKey: string } {
    const dueAt = typeof job.payload.dueAt === 'string' ? Date.parse(job.payload.dueAt) : Number.NaN;
    // A run without a readable due time (written by hand) counts as due now.
    return runOf(work, dueAfter(work, Number.isNaN(dueAt) ? now : dueAt, now));
  }

  const handlers = deps.schedules.map((work): readonly [string, JobHandler] => [
    scheduleJobKind(work.name),
    {
      async run(job) {
        const startedAt = clock.now().getTime();
        await work.run();
        return { next: nextRunAfter(work, job, startedAt) };
      },
      async giveUp(job) {
        await enqueueJobUnlessPending(db, clock, nextRunAfter(work, job));
      },
    },
  ]);

  return {
    handlers,
    async ensure() {
      const now = clock.now().getTime();
      for (const work of deps.schedules) {
        await enqueueJobUnlessPending(db, clock, runOf(work, work.atStart ? now : dueAfter(work, now, now)));
      }
    },
  };
}
