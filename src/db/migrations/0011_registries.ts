import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Container registries, Helm repositories, labels groups and annotations groups: organization resources that
 * services (and clusters) refer to. Registry and repository credentials are sealed (lib/secret-box.ts) in
 * `secret_envelope`; `config` holds only what may be shown (user names, regions, credential ids).
 * aws_credentials_id has no foreign key: the cloud credentials table belongs to another module, which resolves it.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('container_registries')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('config', types.json, (c) => c.notNull())
    .addColumn('secret_envelope', 'text')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('container_registries_organization_name_key', ['organization_id', 'name_key'])
    .execute();

  await db.schema
    .createTable('helm_repositories')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('skip_tls_verification', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('config', types.json, (c) => c.notNull())
    .addColumn('secret_envelope', 'text')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('helm_repositories_organization_name_key', ['organization_id', 'name_key'])
    .execute();

  await db.schema
    .createTable('labels_groups')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('labels', types.json, (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('labels_groups_organization_name_key', ['organization_id', 'name_key'])
    .execute();

  await db.schema
    .createTable('annotations_groups')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('annotations', types.json, (c) => c.notNull())
    .addColumn('scopes', types.json, (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('annotations_groups_organization_name_key', ['organization_id', 'name_key'])
    .execute();
}
