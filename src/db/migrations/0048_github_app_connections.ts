import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * GitHub App connections (docs/git-providers.md): one row per organization that connected an installation of the
 * GitHub App; reconnecting replaces it, disconnecting deletes it, and it goes with its organization. The setup's
 * OAuth code is not stored.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('github_app_connections')
    .addColumn('organization_id', 'varchar(36)', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('installation_id', 'varchar(20)', (c) => c.notNull())
    .addColumn('connected_by_user_id', 'varchar(36)', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
}
