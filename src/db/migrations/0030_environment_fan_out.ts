import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * An environment's action is fanned out into its services' own deployments once (modules/deployments
 * deployments.dispatch.ts). When that happened is recorded on the action's deployment record, so any worker, in any
 * process, after any restart, knows not to ask again (it was an in-memory set of the process that ran the job).
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema.alterTable('environment_deployments').addColumn('services_requested_at', types.timestamp).execute();
}
