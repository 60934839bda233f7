import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * The agent protocol (docs/agent-protocol.md): the mailbox of work for each cluster's agent, and what each agent
 * last said of itself. A task carries one environment or service action to the cluster's agent; the job that
 * dispatched it waits until the agent settles it, so actions on one subject stay one at a time and in order.
 * A task is leased for a while at a time: an agent that goes silent loses its lease and the task is offered again.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('agent_tasks')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('cluster_id', 'varchar(36)', (c) => c.notNull().references('clusters.id').onDelete('cascade'))
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('subject_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('subject_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('deployment_id', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('action', 'varchar(16)', (c) => c.notNull())
    .addColumn('payload', types.json, (c) => c.notNull())
    .addColumn('job_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('lease_id', 'varchar(36)')
    .addColumn('leased_until', types.timestamp)
    .addColumn('leases', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_report_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_log_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('outcome', 'varchar(16)')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addColumn('finished_at', types.timestamp)
    .execute();
  await db.schema.createIndex('agent_tasks_cluster_status').on('agent_tasks').columns(['cluster_id', 'status', 'id']).execute();

  await db.schema
    .createTable('agent_presence')
    .addColumn('cluster_id', 'varchar(36)', (c) => c.primaryKey().references('clusters.id').onDelete('cascade'))
    .addColumn('agent_version', 'varchar(64)', (c) => c.notNull())
    .addColumn('driver', 'varchar(32)', (c) => c.notNull())
    .addColumn('hostname', 'text')
    .addColumn('started_at', types.timestamp, (c) => c.notNull())
    .addColumn('last_seen_at', types.timestamp, (c) => c.notNull())
    .execute();
}
