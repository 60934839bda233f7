import type { Selectable } from 'kysely';
import type { IdempotencyKeysTable, Queryable } from '../../db/db.schema.ts';

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;

export function findIdempotencyKey(db: Queryable, scopeHash: string): Promise<IdempotencyKeyRow | undefined> {
  return db.selectFrom('idempotency_keys').selectAll().where('scope_hash', '=', scopeHash).executeTakeFirst();
}

export async function insertIdempotencyKey(db: Queryable, row: IdempotencyKeyRow): Promise<void> {
  await db.insertInto('idempotency_keys').values(row).execute();
}

export async function completeIdempotencyKey(
  db: Queryable,
  scopeHash: string,
  answer: Pick<IdempotencyKeyRow, 'state' | 'status' | 'content_type' | 'body'>,
): Promise<void> {
  await db.updateTable('idempotency_keys').set(answer).where('scope_hash', '=', scopeHash).execute();
}

/** Removes one key, only while it is in the given state (a claim someone else already replaced stays). */
export async function deleteIdempotencyKey(db: Queryable, scopeHash: string, createdAt: string): Promise<boolean> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('scope_hash', '=', scopeHash)
    .where('created_at', '=', createdAt)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function deleteExpiredIdempotencyKeys(db: Queryable, now: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).execute();
}
