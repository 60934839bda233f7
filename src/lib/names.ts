/**
 * The comparison key of a user-given name: Unicode-normalised and case-folded, so "Acme" and "ACME" are the
 * same name. Unique indexes are on this key, which keeps uniqueness identical on SQLite and PostgreSQL.
 */
export function nameKey(name: string): string {
  return name.normalize('NFC').trim().toLowerCase();
}

/** A name as stored: normalised and without surrounding white space. */
export function cleanName(name: string): string {
  return name.normalize('NFC').trim();
}
