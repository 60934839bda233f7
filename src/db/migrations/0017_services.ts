import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Services (issue 8 part 2, docs/services.md): the seven kinds share one table — common columns and the kind's
 * settings as JSON — so a name is unique per environment across kinds (two services of one environment never share
 * a hostname or a built-in variable name). A database's generated credentials are sealed (lib/secret-box.ts).
 *
 * `service_references` lists what a service's settings name in other modules (git token, container registry, Helm
 * repository, labels and annotations groups), one row each, so "which services use X" is an indexed lookup rather
 * than a scan of JSON settings; it is rewritten with the settings in the same transaction. Removing the environment
 * (hence the project or organization) removes its services, and a service its references.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('services')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('project_id', 'varchar(36)', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('environment_id', 'varchar(36)', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('kind', 'varchar(24)', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('settings', types.json, (c) => c.notNull())
    .addColumn('credentials_envelope', 'text')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('services_environment_name_key', ['environment_id', 'name_key'])
    .execute();
  await db.schema.createIndex('services_project_id').on('services').column('project_id').execute();
  await db.schema.createIndex('services_organization_id').on('services').column('organization_id').execute();

  await db.schema
    .createTable('service_references')
    .addColumn('service_id', 'varchar(36)', (c) => c.notNull().references('services.id').onDelete('cascade'))
    .addColumn('kind', 'varchar(24)', (c) => c.notNull())
    .addColumn('reference_id', 'varchar(36)', (c) => c.notNull())
    .addPrimaryKeyConstraint('service_references_pk', ['service_id', 'kind', 'reference_id'])
    .execute();
  await db.schema.createIndex('service_references_reference').on('service_references').columns(['kind', 'reference_id']).execute();
}
