import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * The built-in identity provider (DESIGN.md §5): local accounts, the keys it signs tokens with, and the protocol
 * state of the OpenID Connect library (sessions, grants, codes, device codes, tokens), so every replica shares it
 * and a restart signs nobody out.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('local_accounts')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    // Lower-cased, so one mailbox is one account whatever case it was typed in.
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text')
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('email_verified_at', types.timestamp)
    // SHA-256 (hex) of the pending verification secret; the secret itself travels only in the link.
    .addColumn('verification_hash', 'varchar(64)', (c) => c.unique())
    .addColumn('verification_expires_at', types.timestamp)
    // Password guessing: after MAX_FAILED_SIGN_INS wrong passwords in a row the account refuses sign-in for a while.
    .addColumn('failed_sign_ins', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('locked_until', types.timestamp)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('identity_keys')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    // `sig`: a private JWK the provider signs with; `cookie`: a secret its cookies are signed with.
    .addColumn('use', 'varchar(16)', (c) => c.notNull())
    .addColumn('material', 'text', (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    // Set when a newer key took over signing; the key stays published until tokens it signed have expired.
    .addColumn('retired_at', types.timestamp)
    .execute();

  await db.schema
    .createTable('oidc_records')
    .addColumn('model', 'varchar(64)', (c) => c.notNull())
    .addColumn('id', 'varchar(255)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'varchar(255)')
    .addColumn('user_code', 'varchar(255)')
    .addColumn('uid', 'varchar(255)')
    .addColumn('expires_at', types.timestamp)
    .addColumn('consumed_at', types.timestamp)
    .addPrimaryKeyConstraint('oidc_records_pkey', ['model', 'id'])
    .execute();
  await db.schema.createIndex('oidc_records_grant_id').on('oidc_records').column('grant_id').execute();
  await db.schema.createIndex('oidc_records_user_code').on('oidc_records').columns(['model', 'user_code']).execute();
  await db.schema.createIndex('oidc_records_uid').on('oidc_records').columns(['model', 'uid']).execute();
}
