import { sql } from 'kysely';
import type { DialectName } from './db.client.ts';
import type { Queryable } from './db.schema.ts';

/**
 * Serialises, until each commits or rolls back, the transactions that take the same key: for a check-then-write that
 * two concurrent transactions would otherwise both pass (at most N rows, no alias cycle). SQLite runs one write
 * transaction at a time already; PostgreSQL takes a transaction-scoped advisory lock on the key's hash, so no row is
 * locked and no module locks another's rows. Keys are namespaced by their owner (`variables:<projectId>`).
 */
export async function lockUntilCommit(trx: Queryable, dialect: DialectName, key: string): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
}
