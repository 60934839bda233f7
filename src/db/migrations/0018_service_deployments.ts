import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Service deployments (issue 8 part 5, docs/service-deployments.md).
 *
 *   - `service_runtime`: one row per service that was ever asked to act, holding its state-machine state
 *     (services.states.ts), its newest deployment record and the one that last reached DEPLOYED (whose snapshot is
 *     what runs). A service without a row is READY and NEVER_DEPLOYED; the services module's create writes nothing here.
 *   - `service_deployments`: one record per action (deploy, redeploy, stop, restart), newest read first by
 *     (service_id, id) — ids are UUIDv7 — with what the deployment carries: the service's settings and the resolved
 *     variable snapshot (secrets as sealed envelopes, never plaintext) and their hashes (OUT_OF_DATE compares them).
 *   - `service_deployment_logs`: the lines of each deployment in order (seq), from the control plane and the agent.
 *
 * Removing a service removes its runtime row, its records and their lines.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('service_runtime')
    .addColumn('service_id', 'varchar(36)', (c) => c.primaryKey().references('services.id').onDelete('cascade'))
    .addColumn('status', 'varchar(24)', (c) => c.notNull())
    .addColumn('last_deployment_id', 'varchar(36)')
    .addColumn('deployed_deployment_id', 'varchar(36)')
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('service_deployments')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('service_id', 'varchar(36)', (c) => c.notNull().references('services.id').onDelete('cascade'))
    .addColumn('action', 'varchar(16)', (c) => c.notNull())
    .addColumn('status', 'varchar(24)', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('origin', 'varchar(24)', (c) => c.notNull())
    .addColumn('triggered_by', 'text', (c) => c.notNull())
    .addColumn('job_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('git_commit_id', 'varchar(64)')
    .addColumn('image_tag', 'varchar(128)')
    .addColumn('settings_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('variables_hash', 'varchar(64)')
    .addColumn('snapshot', types.json, (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addColumn('finished_at', types.timestamp)
    .execute();
  await db.schema.createIndex('service_deployments_service_id').on('service_deployments').columns(['service_id', 'id']).execute();

  await db.schema
    .createTable('service_deployment_logs')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('deployment_id', 'varchar(36)', (c) => c.notNull().references('service_deployments.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('stream', 'varchar(16)', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('logged_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('service_deployment_logs_deployment_seq', ['deployment_id', 'seq'])
    .execute();
}
