import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Cloud provider credentials (docs/cloud-credentials.md). What may be shown (access key id, role ARN, project ids)
 * is kept in `public_fields`; what may not (secret access keys, passwords, service-account keys) is one JSON object
 * sealed with the secret box (AES-256-GCM, lib/secret-box.ts) in `secret_envelope`, never returned.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('cloud_credentials')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('cloud_provider', 'varchar(16)', (c) => c.notNull())
    .addColumn('kind', 'varchar(48)', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('public_fields', types.json, (c) => c.notNull())
    .addColumn('secret_envelope', 'text')
    .addColumn('creator_user_id', 'varchar(36)', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('cloud_credentials_organization_name_key', ['organization_id', 'name_key'])
    .execute();
}
