import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Git tokens: credentials for git hosts, so the value is kept encrypted (AES-256-GCM envelope, lib/secret-box.ts),
 * never hashed, and never returned (DESIGN.md §5).
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('git_tokens')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('type', 'varchar(16)', (c) => c.notNull())
    .addColumn('workspace', 'text')
    .addColumn('git_api_url', 'text', (c) => c.notNull())
    .addColumn('token_envelope', 'text', (c) => c.notNull())
    .addColumn('expired_at', 'varchar(10)')
    .addColumn('creator_user_id', 'varchar(36)', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('git_tokens_organization_name_key', ['organization_id', 'name_key'])
    .execute();
}
