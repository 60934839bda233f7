import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * The audit log (docs/audit-log.md): one row per write request under an organization, written in the transaction of
 * the change when there is one. No foreign key to the organization: an organization's deletion is itself an event,
 * written in the transaction that deletes it, and the log of a deleted organization is kept until its retention ends.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('organization_events')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('event_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('target_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('target_id', 'varchar(36)')
    .addColumn('target_name', 'text')
    .addColumn('sub_target_type', 'varchar(32)')
    .addColumn('operation_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('change', 'text')
    .addColumn('origin', 'varchar(32)', (c) => c.notNull())
    .addColumn('author_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('author_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('triggered_by', 'text', (c) => c.notNull())
    .addColumn('project_id', 'varchar(36)')
    .addColumn('environment_id', 'varchar(36)')
    .addColumn('ip', 'varchar(64)')
    .addColumn('user_agent', 'text')
    .addColumn('request_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('organization_events_organization_time')
    .on('organization_events')
    .columns(['organization_id', 'created_at', 'id'])
    .execute();
}
