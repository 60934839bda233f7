import { sql, type Kysely } from 'kysely';

/**
 * Each deployment counts its log lines (`log_seq`, the seq of its last line). A writer numbers its lines by adding
 * their count to the counter in its transaction: on PostgreSQL the update locks the deployment's row until commit, so
 * two writers of one deployment (the agent's task lines, the workload's output, a transition's system line) take
 * turns instead of both reading the same last seq and one failing on the (deployment_id, seq) key; SQLite runs one
 * write transaction at a time already.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('service_deployments').addColumn('log_seq', 'integer', (column) => column.notNull().defaultTo(0)).execute();
  await sql`update service_deployments set log_seq = coalesce((select max(seq) from service_deployment_logs where service_deployment_logs.deployment_id = service_deployments.id), 0)`.execute(db);
}
