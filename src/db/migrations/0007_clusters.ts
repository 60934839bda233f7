import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * The durable job queue (src/jobs/) and clusters: their state machine's current state, locks and operator
 * enrollments.
 *
 * A job is eligible when it is QUEUED, due, and the oldest unfinished job of its serial key (one action at a time per
 * cluster); the (status, run_at) and (serial_key, status) indexes serve the claim query on both dialects.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('kind', 'varchar(64)', (c) => c.notNull())
    .addColumn('payload', types.json, (c) => c.notNull())
    .addColumn('serial_key', 'text')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('run_at', types.timestamp, (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('heartbeat_at', types.timestamp)
    .addColumn('last_error', 'text')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addColumn('finished_at', types.timestamp)
    .execute();
  await db.schema.createIndex('jobs_status_run_at').on('jobs').columns(['status', 'run_at']).execute();
  await db.schema.createIndex('jobs_serial_key_status').on('jobs').columns(['serial_key', 'status']).execute();

  await db.schema
    .createTable('clusters')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('cloud_provider', 'varchar(16)', (c) => c.notNull())
    .addColumn('kubernetes', 'varchar(24)', (c) => c.notNull())
    .addColumn('instance_type', 'text')
    .addColumn('min_running_nodes', 'integer', (c) => c.notNull())
    .addColumn('max_running_nodes', 'integer', (c) => c.notNull())
    .addColumn('disk_size', 'integer', (c) => c.notNull())
    .addColumn('production', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('credentials_id', 'varchar(36)')
    .addColumn('dns_provider', 'text')
    .addColumn('build_provider', 'text')
    .addColumn('settings', types.json, (c) => c.notNull())
    .addColumn('version', 'varchar(16)', (c) => c.notNull())
    .addColumn('status', 'varchar(24)', (c) => c.notNull())
    .addColumn('status_message', 'text')
    .addColumn('is_deployed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('config_revision', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('deployed_revision', 'integer')
    .addColumn('last_execution_id', 'varchar(36)')
    .addColumn('last_deployment_date', types.timestamp)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('clusters_organization_name_key', ['organization_id', 'name_key'])
    .execute();

  await db.schema
    .createTable('cluster_locks')
    .addColumn('cluster_id', 'varchar(36)', (c) => c.primaryKey().references('clusters.id').onDelete('cascade'))
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('owner_name', 'text', (c) => c.notNull())
    .addColumn('ttl_in_days', 'integer')
    .addColumn('locked_at', types.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('cluster_operator_enrollments')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('cluster_id', 'varchar(36)', (c) => c.notNull().references('clusters.id').onDelete('cascade'))
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('expires_at', types.timestamp, (c) => c.notNull())
    .addColumn('used_at', types.timestamp)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .execute();

  // What an enrolled operator holds: its credential (hashed) and what it last reported.
  await db.schema
    .createTable('cluster_operators')
    .addColumn('cluster_id', 'varchar(36)', (c) => c.primaryKey().references('clusters.id').onDelete('cascade'))
    .addColumn('credential_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('reported_status', 'varchar(24)')
    .addColumn('kubernetes_version', 'varchar(16)')
    .addColumn('reported_at', types.timestamp)
    .addColumn('enrolled_at', types.timestamp, (c) => c.notNull())
    .execute();
}
