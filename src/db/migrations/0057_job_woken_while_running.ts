import type { Kysely } from 'kysely';

/**
 * A job can be woken while it still runs: an agent settles the task a job dispatched before the job has deferred
 * itself to wait for it. `woken` (0/1) remembers that wake-up, so the deferral that follows makes the job runnable
 * at once instead of sleeping until its recheck (jobs/job-queue.ts, expediteJob and deferJob).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('woken', 'integer', (column) => column.notNull().defaultTo(0)).execute();
}
