import { appendFileSync } from 'node:fs';
import { openDatabase, type DatabaseTarget } from '../../src/db/db.client.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { createJobWorker, type JobHandler } from '../../src/jobs/job-worker.ts';

/**
 * A job worker as its own process, for the queue's multi-process tests: it opens the database named by its
 * environment and runs two test job kinds —
 *   test.record  sleeps payload.sleepMs, appending `{job, worker, resource, start, end}` lines to JOB_LOG_FILE
 *   test.hang    announces `started <job id>` on stdout, then never finishes (the test kills the process)
 * It prints `ready` once it runs and stops cleanly on SIGTERM.
 */
const target: DatabaseTarget =
  process.env.JOB_DB_DIALECT === 'postgres'
    ? { dialect: 'postgres', url: process.env.JOB_DB_URL as string, schema: process.env.JOB_DB_SCHEMA as string, maxConnections: 4 }
    : { dialect: 'sqlite', file: process.env.JOB_DB_FILE as string };
const database = openDatabase(target);
const workerId = process.env.JOB_WORKER_ID as string;
const logFile = process.env.JOB_LOG_FILE as string;

const handlers = new Map<string, JobHandler>([
  [
    'test.record',
    {
      async run(job) {
        const start = Date.now();
        await new Promise((resolve) => setTimeout(resolve, Number(job.payload.sleepMs ?? 0)));
        appendFileSync(logFile, `${JSON.stringify({ job: job.id, worker: workerId, resource: job.payload.resource, seq: job.payload.seq, start, end: Date.now(), attempt: job.attempt })}\n`);
      },
    },
  ],
  [
    'test.hang',
    {
      async run(job) {
        process.stdout.write(`started ${job.id}\n`);
        await new Promise((resolve) => setTimeout(resolve, 600_000));
      },
    },
  ],
]);

const worker = createJobWorker({
  database,
  clock: systemClock,
  handlers,
  workerId,
  concurrency: 4,
  pollIntervalMs: 20,
  heartbeatIntervalMs: 100,
  staleAfterMs: Number(process.env.JOB_STALE_AFTER_MS ?? 1000),
  retryBaseMs: 20,
});
worker.start();
// The worker's own timers do not hold the process open (an HTTP server or a CLI command does that in Slipway).
const keepAlive = setInterval(() => undefined, 60_000);
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  clearInterval(keepAlive);
  void worker.stop().then(async () => {
    await database.close();
    process.exit(0);
  });
});
