import { Counter, Gauge, Histogram } from 'prom-client';
import type { Queryable } from '../db/db.schema.ts';
import type { Clock } from '../lib/clock.ts';
import { LONG_WORK_BUCKETS_SECONDS, type MetricsRegistry } from '../lib/metrics-registry.ts';

/**
 * The job queue's series. Runs are counted by the worker that ran them (each process its own); the queue's depth and
 * the age of its oldest due job are read from the `jobs` table at scrape time, so every replica reports the same
 * installation-wide figures (aggregate them with `max`, not `sum`).
 */

/**
 * How a run ended: `succeeded`, `retried` (failed, back in the queue with backoff), `failed` (failed for good) or
 * `deferred` (waiting for something outside the job, e.g. an agent's report; not an attempt).
 */
export type JobRunOutcome = 'succeeded' | 'retried' | 'failed' | 'deferred';

/** What the worker records of each run (job-worker.ts). */
export interface JobRunMetrics {
  jobRunFinished(kind: string, outcome: JobRunOutcome, seconds: number): void;
}

/** Registers the queue's series on `registry`; answers the recorder the worker is given. */
export function registerJobMetrics(registry: MetricsRegistry, db: Queryable, clock: Clock): JobRunMetrics {
  const runs = new Counter({
    name: 'slipway_job_runs_total',
    help: 'Job runs by kind and outcome (succeeded, retried, failed, deferred), counted by the worker that ran them.',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'slipway_job_run_duration_seconds',
    help: 'How long one run of a job took, by kind and outcome.',
    labelNames: ['kind', 'outcome'],
    buckets: LONG_WORK_BUCKETS_SECONDS,
    registers: [registry],
  });
  // Kinds seen once stay reported (at 0) afterwards: an alert sees an empty queue rather than a missing series.
  const depthSeen = new Set<string>();
  new Gauge({
    name: 'slipway_job_queue_depth',
    help: 'Jobs in the queue by kind and status (QUEUED: waiting, including those whose run_at is still ahead; RUNNING: claimed by a worker).',
    labelNames: ['kind', 'status'],
    registers: [registry],
    async collect() {
      // One range scan of the (status, run_at) index; finished jobs are never read.
      const rows = await db
        .selectFrom('jobs')
        .select(['kind', 'status', (eb) => eb.fn.countAll<number | string>().as('jobs')])
        .where('status', 'in', ['QUEUED', 'RUNNING'])
        .groupBy(['kind', 'status'])
        .execute();
      this.reset();
      for (const key of depthSeen) {
        const [kind = '', status = ''] = key.split('\n');
        this.set({ kind, status }, 0);
      }
      for (const row of rows) {
        depthSeen.add(`${row.kind}\n${row.status}`);
        this.set({ kind: row.kind, status: row.status }, Number(row.jobs));
      }
    },
  });
  const ageSeen = new Set<string>();
  new Gauge({
    name: 'slipway_job_queue_oldest_due_age_seconds',
    help: 'By kind, how long the oldest QUEUED job that is due (run_at reached) has waited for a worker since it became due; 0 when none waits.',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      const now = clock.now();
      const rows = await db
        .selectFrom('jobs')
        .select(['kind', (eb) => eb.fn.min('run_at').as('oldest')])
        .where('status', '=', 'QUEUED')
        .where('run_at', '<=', now.toISOString())
        .groupBy('kind')
        .execute();
      this.reset();
      for (const kind of ageSeen) this.set({ kind }, 0);
      for (const row of rows) {
        ageSeen.add(row.kind);
        const oldest = row.oldest === null ? now.getTime() : Date.parse(String(row.oldest));
        this.set({ kind: row.kind }, Math.max(0, (now.getTime() - oldest) / 1000));
      }
    },
  });
  return {
    jobRunFinished(kind, outcome, seconds) {
      runs.inc({ kind, outcome });
      durations.observe({ kind, outcome }, seconds);
    },
  };
}

