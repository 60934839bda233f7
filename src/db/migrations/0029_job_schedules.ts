import { sql, type Kysely } from 'kysely';

/**
 * Scheduled work (src/jobs/job-schedules.ts) keeps one pending run per schedule in the job queue. Replicas starting
 * together each make sure a run exists; this index is what makes that race-free on both dialects: a second QUEUED or
 * RUNNING job of one `schedule:<name>` serial key cannot exist, so an insert-if-absent (`on conflict do nothing`)
 * from every replica leaves exactly one. Other serial keys (`cluster:<id>`) keep queueing many jobs in order.
 * `substr` rather than `like`: a partial index's predicate must be deterministic, and SQLite's LIKE depends on a pragma.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('jobs_pending_schedule_key')
    .on('jobs')
    .column('serial_key')
    .unique()
    .where(sql<boolean>`status in ('QUEUED', 'RUNNING') and substr(serial_key, 1, 9) = 'schedule:'`)
    .execute();
}
