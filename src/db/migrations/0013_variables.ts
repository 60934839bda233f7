import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Environment variables and secrets of the PROJECT, ENVIRONMENT and service scopes (SPEC.md "Environment variable
 * scopes and behaviour"). One table, because a name is one thing in a scope: a variable or a secret, never both
 * (both would land in one process environment). `owner_id` is the project, environment or service the row is scoped
 * to, and a name is unique per owner (case-sensitive, as environment variable names are).
 *
 * A secret's value is only in `value_envelope` (AES-256-GCM, lib/secret-box.ts); `value` holds plain values alone.
 * Rows go with their project or environment through the foreign keys; service-scoped rows carry the service id
 * without a foreign key until services exist, and are removed by the services module through the variables service.
 * Names are not normalised (no name_key): `Path` and `PATH` are two variables, as in a process environment.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('variables')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('project_id', 'varchar(36)', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('environment_id', 'varchar(36)', (c) => c.references('environments.id').onDelete('cascade'))
    .addColumn('service_id', 'varchar(36)')
    .addColumn('owner_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('scope', 'varchar(24)', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('is_secret', 'integer', (c) => c.notNull())
    .addColumn('variable_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('value', 'text')
    .addColumn('value_envelope', 'text')
    .addColumn('alias_of', 'text')
    .addColumn('mount_path', 'text')
    .addColumn('description', 'text')
    .addColumn('enable_interpolation_in_file', 'integer')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('variables_owner_key', ['owner_id', 'key'])
    .execute();
  await db.schema.createIndex('variables_project_id').on('variables').column('project_id').execute();
  await db.schema.createIndex('variables_environment_id').on('variables').column('environment_id').execute();

  // Bumped by every write to a project's variables, in the writing transaction: resolvers keep a project's rows in
  // memory and reread them only when this number moved (one point read instead of a thousand rows per resolution).
  await db.schema
    .createTable('variable_revisions')
    .addColumn('project_id', 'varchar(36)', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('revision', 'integer', (c) => c.notNull())
    .execute();
}
