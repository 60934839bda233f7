import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Environments (issue 8 part 1) and their deployment history. An environment belongs to a project and runs on a
 * cluster of the same organization; its name is unique within the project. Deleting the project, the cluster or
 * the organization removes its environments, and removing an environment removes its history (and, through their
 * own foreign keys, whatever later modules keep per environment).
 *
 * History is read newest first, a page at a time, by (environment_id, id): ids are UUIDv7, ordered by creation.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('environments')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('project_id', 'varchar(36)', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('cluster_id', 'varchar(36)', (c) => c.notNull().references('clusters.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('mode', 'varchar(16)', (c) => c.notNull())
    .addColumn('status', 'varchar(24)', (c) => c.notNull())
    .addColumn('config_revision', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('deployed_revision', 'integer')
    .addColumn('last_deployment_id', 'varchar(36)')
    .addColumn('last_updated_by', 'varchar(36)')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('environments_project_name_key', ['project_id', 'name_key'])
    .execute();
  await db.schema.createIndex('environments_cluster_id').on('environments').column('cluster_id').execute();

  await db.schema
    .createTable('environment_deployments')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('environment_id', 'varchar(36)', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('action', 'varchar(16)', (c) => c.notNull())
    .addColumn('status', 'varchar(24)', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('origin', 'varchar(24)', (c) => c.notNull())
    .addColumn('triggered_by', 'text', (c) => c.notNull())
    .addColumn('job_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('config_revision', 'integer', (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addColumn('finished_at', types.timestamp)
    .execute();
  await db.schema
    .createIndex('environment_deployments_environment_id')
    .on('environment_deployments')
    .columns(['environment_id', 'id'])
    .execute();
}
