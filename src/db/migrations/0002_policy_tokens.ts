import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/** Organization policy API tokens: a Rego policy decides each of their requests (SPEC.md, DESIGN.md §5). */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('policy_tokens')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', types.nameKey, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('opa_policy', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('token_start', 'text', (c) => c.notNull())
    .addColumn('creator_user_id', 'varchar(36)', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('creator_name', 'text')
    .addColumn('expires_at', types.timestamp)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .addUniqueConstraint('policy_tokens_organization_name_key', ['organization_id', 'name_key'])
    .execute();
}
