import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * How a deployed service's workload is doing, as its cluster's agent last said (docs/agent-protocol.md,
 * "Workload health"): RUNNING, RESTARTING after a crash (with the number of restarts and the reason) or FAILED. Kept
 * beside the service's state, which says where its last action stands; each new deployment starts it afresh.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema.alterTable('service_runtime').addColumn('workload_health', 'varchar(16)').execute();
  await db.schema.alterTable('service_runtime').addColumn('workload_restarts', 'integer').execute();
  await db.schema.alterTable('service_runtime').addColumn('workload_message', 'text').execute();
  await db.schema.alterTable('service_runtime').addColumn('workload_reported_at', types.timestamp).execute();
}
