import { sql, type Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/**
 * Membership: whether a user's e-mail was verified by their identity provider (only a verified address may accept
 * an invitation), invitations, and the outbox that keeps outgoing mail when no SMTP relay is configured.
 */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  // An integer flag rather than a boolean: SQLite has no boolean type and its driver cannot bind one.
  await db.schema
    .alterTable('users')
    .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('invitations')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    /** The address in lower case: one pending invitation per address, whatever its spelling. */
    .addColumn('email_key', types.nameKey, (c) => c.notNull())
    .addColumn('role_id', 'varchar(36)', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addColumn('inviter_user_id', 'varchar(36)', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('inviter_name', 'text', (c) => c.notNull())
    /** PENDING until accepted (ACCEPTED); EXPIRED is computed from expires_at and the clock, never stored. */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('expires_at', types.timestamp, (c) => c.notNull())
    .addColumn('accepted_by_user_id', 'varchar(36)', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('accepted_at', types.timestamp)
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('updated_at', types.timestamp, (c) => c.notNull())
    .execute();
  // At most one pending invitation per (organization, address): concurrent duplicate invitations collide here.
  await db.schema
    .createIndex('invitations_pending_email_key')
    .on('invitations')
    .columns(['organization_id', 'email_key'])
    .unique()
    .where(sql<boolean>`status = 'PENDING'`)
    .execute();

  await db.schema
    .createTable('outbox')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text', (c) => c.notNull())
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .execute();
}
