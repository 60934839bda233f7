import { hostname } from 'node:os';
import type { Database } from '../db/db.client.ts';
import { outsideCommitParticipants } from '../db/db.commit-participants.ts';
import type { ChangeSignals } from '../db/db.signals.ts';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { failActiveSpan, inSpan, outsideTrace } from '../lib/tracing.ts';
import type { JobRunMetrics, JobRunOutcome } from './job-metrics.ts';
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
  /** Counts each run by kind and outcome, with its duration (job-metrics.ts); none when absent. */
  metrics?: JobRunMetrics;
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
 * How the modules that enqueue work wake the workers after their commit, without needing the worker itself: it is
 * built last, from every module's handlers. With change signals (db.signals.ts) a wake-up reaches the worker of every
 * process sharing the database (a job enqueued by an API-only replica starts at once elsewhere); without, this
 * process's only. Until it is connected (and where this process runs no worker) a wake-up does nothing here: a worker
 * polls anyway.
 */
export interface WorkerWakeup {
  wake(): void;
  connect(worker: Pick<JobWorker, 'wake'>): void;
}

/** The signal channel of "a job was enqueued or became due": its payload is empty. */
export const JOBS_SIGNAL_CHANNEL = 'jobs';

export function createWorkerWakeup(signals?: Pick<ChangeSignals, 'publish' | 'subscribe'>): WorkerWakeup {
  let connected: Pick<JobWorker, 'wake'> | undefined;
  signals?.subscribe(JOBS_SIGNAL_CHANNEL, () => connected?.wake());
  return {
    wake: () => (signals === undefined ? connected?.wake() : signals.publish(JOBS_SIGNAL_CHANNEL, '')),
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
  /** The jobs this worker is running now: alive whatever their heartbeat says (a clock jump, a long pause). */
  const runningJobIds = new Set<string>();
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
    const started = performance.now();
    let ended: JobRunOutcome = 'failed';
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
      ended = outcome !== undefined && 'deferUntil' in outcome ? 'deferred' : 'succeeded';
    } catch (error) {
      failActiveSpan(error);
      const message = error instanceof Error ? error.message : String(error);
      const retry = job.attempt < job.maxAttempts;
      const retryAt = retry ? new Date(clock.now().getTime() + retryDelayMs(job.attempt, retryBaseMs, retryMaxMs)).toISOString() : undefined;
      if (retry) ended = 'retried';
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
      options.metrics?.jobRunFinished(job.kind, ended, (performance.now() - started) / 1000);
    }
  }

  async function recoverIfDue(): Promise<void> {
    const now = clock.now().getTime();
    if (now - lastRecovery < Math.min(staleAfterMs, 5_000)) return;
    lastRecovery = now;
    const exhausted = await recoverStaleJobs(database.db, clock, new Date(now - staleAfterMs).toISOString(), runningJobIds);
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
          // Each run is a span of the trace the job was enqueued in (docs/operations.md, "Traces").
          const attributes = { 'slipway.job.kind': job.kind, 'slipway.job.id': job.id, 'slipway.job.attempt': job.attempt };
          runningJobIds.add(job.id);
          const task: Promise<void> = inSpan(`job ${job.kind}`, { parent: job.traceContext, role: 'consumer', attributes }, () => runJob(job)).finally(() => {
            runningJobIds.delete(job.id);
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
      // would otherwise ride on the job's transactions, and what they enqueue would join the request's trace).
      if (running) outsideCommitParticipants(() => outsideTrace(() => void loop()));
    },
    async stop() {
      running = false;
      if (timer !== undefined) clearTimeout(timer);
      while (looping) await new Promise((resolve) => setTimeout(resolve, 5));
      await Promise.allSettled([...inFlight]);
    },
  };
}
