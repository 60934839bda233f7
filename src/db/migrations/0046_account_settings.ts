import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * What a person sets on their own account (editAccountInformation, docs/service-extras.md "Account"): the e-mail they
 * want to be written to, which may differ from the one their identity provider vouches for. One row per person who
 * set something; without one the account answers the identity's e-mail. Kept apart from `users`, whose rows follow
 * the identity provider's tokens.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('account_settings')
    .addColumn('user_id', 'varchar(36)', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('communication_email', 'text', (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
}
