import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../db.migrate.ts';

/** Answers kept for `Idempotency-Key` retries of POST requests (DESIGN.md §4), for 24 hours. */
export async function up(db: Kysely<unknown>, types: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    /** SHA-256 of (caller, key): the key itself is the client's and is not stored. */
    .addColumn('scope_hash', 'varchar(64)', (c) => c.primaryKey())
    /** SHA-256 of method, path and body: a retry must be the same request. */
    .addColumn('request_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('content_type', 'text')
    .addColumn('body', 'text')
    .addColumn('created_at', types.timestamp, (c) => c.notNull())
    .addColumn('expires_at', types.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_idx').on('idempotency_keys').column('expires_at').execute();
}
