import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Database backups (docs/database-backups.md): one row per backup asked of a database service, its file kept under
 * the data directory (`file_name` relative to `<dataDir>/backups/<service id>/`). Names are unique per database (by
 * name key). A row goes with its database (and organization); its file is removed by removeDatabaseBackup, and the
 * files of a deleted database by the next backup job's sweep.
 *
 * Deployment build usage reports (docs/service-insights.md): the CSV of one deployment execution's services and
 * durations, kept until it expires or is deleted through its delete_report_url; it goes with its environment.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('database_backups')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('service_id', 'varchar(36)', (c) => c.notNull().references('services.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('engine', 'varchar(16)', (c) => c.notNull())
    .addColumn('state', 'varchar(32)', (c) => c.notNull())
    .addColumn('failure', 'text')
    .addColumn('file_name', 'text')
    .addColumn('size_bytes', 'bigint')
    .addColumn('job_id', 'varchar(36)')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addColumn('finished_at', types.timestamp)
    .addUniqueConstraint('database_backups_name', ['service_id', 'name_key'])
    .execute();

  await db.schema
    .createTable('deployment_build_usage_reports')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('environment_id', 'varchar(36)', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('execution_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('csv', 'text', (c) => c.notNull())
    .addColumn('expires_at', types.timestamp, (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deployment_build_usage_reports_expiry').on('deployment_build_usage_reports').column('expires_at').execute();
}
