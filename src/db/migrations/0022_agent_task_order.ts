import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * The order in which a cluster's agent is offered its tasks: the order of the requests they carry out, not of their
 * dispatch (action jobs run several at a time, so dispatch order is a race). An environment's action fans out into
 * its services' actions, databases first; their tasks reach the agent in that order, the environment's own after.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema.alterTable('agent_tasks').addColumn('requested_at', types.timestamp).execute();
  await db.schema.createIndex('agent_tasks_offer_order').on('agent_tasks').columns(['cluster_id', 'status', 'requested_at']).execute();
}
