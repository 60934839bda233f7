import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Custom roles (docs/roles.md). A custom role is a `roles` row of kind CUSTOM plus its definition: the
 * organization-level permission and the per-environment-type permissions of projects it does not list
 * (`custom_roles`), one row per project it lists (`custom_role_projects`) and one per cluster (`custom_role_clusters`).
 * Deleting a project or a cluster drops its rows; deleting the role drops them all.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('custom_roles')
    .addColumn('role_id', 'varchar(36)', (c) => c.primaryKey().references('roles.id').onDelete('cascade'))
    .addColumn('description', 'text')
    .addColumn('organization_permission', 'varchar(16)', (c) => c.notNull())
    .addColumn('development', 'varchar(16)', (c) => c.notNull())
    .addColumn('preview', 'varchar(16)', (c) => c.notNull())
    .addColumn('staging', 'varchar(16)', (c) => c.notNull())
    .addColumn('production', 'varchar(16)', (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('custom_role_projects')
    .addColumn('role_id', 'varchar(36)', (c) => c.notNull().references('custom_roles.role_id').onDelete('cascade'))
    .addColumn('project_id', 'varchar(36)', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('is_admin', 'integer', (c) => c.notNull())
    .addColumn('development', 'varchar(16)', (c) => c.notNull())
    .addColumn('preview', 'varchar(16)', (c) => c.notNull())
    .addColumn('staging', 'varchar(16)', (c) => c.notNull())
    .addColumn('production', 'varchar(16)', (c) => c.notNull())
    .addPrimaryKeyConstraint('custom_role_projects_pkey', ['role_id', 'project_id'])
    .execute();
  await db.schema.createIndex('custom_role_projects_project').on('custom_role_projects').column('project_id').execute();

  await db.schema
    .createTable('custom_role_clusters')
    .addColumn('role_id', 'varchar(36)', (c) => c.notNull().references('custom_roles.role_id').onDelete('cascade'))
    .addColumn('cluster_id', 'varchar(36)', (c) => c.notNull().references('clusters.id').onDelete('cascade'))
    .addColumn('permission', 'varchar(16)', (c) => c.notNull())
    .addPrimaryKeyConstraint('custom_role_clusters_pkey', ['role_id', 'cluster_id'])
    .execute();
  await db.schema.createIndex('custom_role_clusters_cluster').on('custom_role_clusters').column('cluster_id').execute();
}
