import { hostname } from 'node:os';
import type { Database } from '../db/db.client.ts';
import { outsideCommitParticipants } from '../db/db.commit-participants.ts';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import {
  claimNextJob,
  completeJob,
  completeJobWithNext,
  deferJob,
  failJobRun,
  heartbeatJob,
  recoverStaleJobs,
  retryDelayMs,
  type ClaimedJob,
  type JobRequest,
} from './job-queue.ts';

/**
 * Runs jobs from the queue: claims what is due (up to `concurrency` at once), keeps each claim alive with
 * heartbeats while its handler runs, and records the outcome. Any number of workers, in any number of processes,
 * may share one PostgreSQL database; each also returns the jobs of crashed workers to the queue.
 *
 * A handler either returns (done), returns `{ next }` (done, and `next` is enqueued in the transaction that records
 * it: a schedule's next run, job-schedules.ts), returns `{ deferUntil }` (waiting for something outside the job, e.g.
 * an operator's report; not an attempt), or throws: the job is retried with backoff until its attempts are spent, then
 * `giveUp` lets the handler settle what it was driving (a cluster goes to its error state). Handlers must be safe to
 * run again after a crash: a recovered job starts over from whatever state its previous run left.
 */

export type JobOutcome = void | { deferUntil: Date } | { next: JobRequest };

export interface JobHandler {
  run(job: ClaimedJob): Promise<JobOutcome>;
  /** Called once when the job has failed for good (attempts spent, or its worker died on the last attempt). */
  giveUp?(job: ClaimedJob, error: string): Promise<void>;
  /**
   * `debug` for a handler whose failures are someone else's to mend and that logs what matters of them itself (a
   * webhook receiver that is down: the webhooks module says once that it fails); the worker logs each failed run at
   * warn otherwise.
   */
  failureLogLevel?: 'warn' | 'debug';
}

export interface JobWorkerOptions {
  database: Database;
  clock: Clock;
  handlers: ReadonlyMap<string, JobHandler>;
  concurrency?: number;
  /** How often an idle worker looks for due jobs it was not woken for (jobs enqueued by other processes). */
  pollIntervalMs?: number;
  heartbeatIntervalMs?: number;
  /** A RUNNING job whose heartbeat is older than this is taken to belong to a dead worker. */
  staleAfterMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  workerId?: string;
  log?: { error(object: object, message: string): void; warn(object: object, message: string): void; debug?(object: object, message: string): void };
}

export interface JobWorker {
  readonly workerId: string;
  start(): void;
  /** Looks for work now (called after a transaction that enqueued a job commits). */
  wake(): void;
  /** Stops claiming and waits for the jobs in flight. */
  stop(): Promise<void>;
}

/**
 * How the modules that enqueue work wake the process's worker after their commit, without needing the worker itself:
 * it is built last, from every module's handlers. Until it is connected (and where this process runs no worker) a
 * wake-up does nothing: a worker polls anyway.
 */
export interface WorkerWakeup {
  wake(): void;
  connect(worker: Pick<JobWorker, 'wake'>): void;
}

export function createWorkerWakeup(): WorkerWakeup {
  let connected: Pick<JobWorker, 'wake'> | undefined;
  return {
    wake: () => connected?.wake(),
    connect(worker) {
      connected = worker;
    },
  };
}

export function createJobWorker(options: JobWorkerOptions): JobWorker {
  const { database, clock, handlers } = options;
  const concurrency = options.concurrency ?? 4;
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 5_000;
  const staleAfterMs = options.staleAfterMs ?? 60_000;
  const retryBaseMs = options.retryBaseMs ?? 2_000;
  const retryMaxMs = options.retryMaxMs ?? 300_000;
  const workerId = options.workerId ?? `${hostname()}:${process.pid}:${newId()}`;
  const kinds = [...handlers.keys()];
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let looping = false;
  let wakeRequested = false;
  let timer: NodeJS.Timeout | undefined;
  let lastRecovery = 0;

  function reportError(error: unknown, message: string): void {
    options.log?.error({ err: error }, message);
  }

  async function runJob(job: ClaimedJob): Promise<void> {
    const handler = handlers.get(job.kind);
    const beat = setInterval(() => {
      heartbeatJob(database.db, clock, job.id, workerId).catch((error: unknown) => reportError(error, 'job heartbeat failed'));
    }, heartbeatIntervalMs);
    beat.unref();
    try {
      if (handler === undefined) throw new Error(`no handler for job kind ${job.kind}`);
      const outcome = await handler.run(job);
      if (outcome === undefined) {
        await completeJob(database.db, clock, job.id, workerId);
      } else if ('next' in outcome) {
        await completeJobWithNext(database.db, clock, job.id, workerId, outcome.next);
      } else {
        await deferJob(database.db, clock, job.id, workerId, outcome.deferUntil.toISOString());
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const retry = job.attempt < job.maxAttempts;
      const retryAt = retry ? new Date(clock.now().getTime() + retryDelayMs(job.attempt, retryBaseMs, retryMaxMs)).toISOString() : undefined;
      const failure = { job: job.id, kind: job.kind, attempt: job.attempt, retry };
      if (handler?.failureLogLevel === 'debug') options.log?.debug?.(failure, `job failed: ${message}`);
      else options.log?.warn(failure, `job failed: ${message}`);
      const recorded = await failJobRun(database.db, clock, job.id, workerId, message, retryAt).catch((e: unknown) => {
        reportError(e, 'recording a job failure failed');
        return false;
      });
      if (recorded && !retry) await handler?.giveUp?.(job, message).catch((e: unknown) => reportError(e, 'job giveUp failed'));
    } finally {
      clearInterval(beat);
    }
  }

  async function recoverIfDue(): Promise<void> {
    const now = clock.now().getTime();
    if (now - lastRecovery < Math.min(staleAfterMs, 5_000)) return;
    lastRecovery = now;
    const exhausted = await recoverStaleJobs(database.db, clock, new Date(now - staleAfterMs).toISOString());
    for (const job of exhausted) {
      await handlers.get(job.kind)?.giveUp?.(job, 'the worker running this job stopped responding');
    }
  }

  /** Claims until the queue has nothing due or the worker is full; re-runs when woken meanwhile. */
  async function loop(): Promise<void> {
    if (looping) {
      wakeRequested = true;
      return;
    }
    looping = true;
    try {
      do {
        wakeRequested = false;
        await recoverIfDue();
        while (running && inFlight.size < concurrency) {
          const job = await claimNextJob(database.db, database.dialect, clock, workerId, kinds);
          if (job === undefined) break;
          const task: Promise<void> = runJob(job).finally(() => {
            inFlight.delete(task);
            // A finished job may unblock the next one of its serial key.
            if (running) void loop();
          });
          inFlight.add(task);
        }
      } while (wakeRequested && running);
    } catch (error) {
      reportError(error, 'claiming jobs failed');
    } finally {
      looping = false;
    }
  }

  function schedule(): void {
    if (!running) return;
    timer = setTimeout(() => {
      void loop().finally(schedule);
    }, pollIntervalMs);
    timer.unref();
  }

  return {
    workerId,
    start() {
      if (running) return;
      running = true;
      void loop();
      schedule();
    },
    wake() {
      // Requests wake the worker after their commit: the runs must not carry the request's context (its audit event
      // would otherwise ride on the job's transactions).
      if (running) outsideCommitParticipants(() => void loop());
    },
    async stop() {
      running = false;
      if (timer !== undefined) clearTimeout(timer);
      while (looping) await new Promise((resolve) => setTimeout(resolve, 5));
      await Promise.allSettled([...inFlight]);
    },
  };
}
