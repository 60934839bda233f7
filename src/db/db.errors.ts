import { conflict } from '../lib/errors.ts';

/**
 * Recognises a unique-constraint violation from either driver, so a concurrent duplicate insert becomes a
 * conflict instead of an internal error (SQLite: SQLITE_CONSTRAINT_UNIQUE / PRIMARYKEY; PostgreSQL: 23505).
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A row referenced by a foreign key does not exist (or was deleted concurrently). */
export function isForeignKeyViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/**
 * Runs a write whose one expected failure is a unique key already taken (a name, a pending invitation, …) and
 * answers that failure as a conflict with the given message; the database decides, so concurrent writers of one
 * key get exactly one success.
 */
export async function uniqueOrConflict<T>(write: () => Promise<T>, message: string): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(message);
    throw error;
  }
}
