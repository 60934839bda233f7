import type { Config } from '../config.ts';
import { databaseTargetOf, openDatabase } from '../db/db.client.ts';
import { migrateToLatest } from '../db/db.migrate.ts';
import { rotateSigningKey } from '../identity/identity.keys.ts';
import { systemClock } from '../lib/clock.ts';

/**
 * `slipway admin rotate-signing-key`: works on the database directly, like bootstrap. Every replica reads the
 * keys on each identity-provider request, so the new key signs from the next token on, everywhere.
 */
export async function rotateInstallationSigningKey(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<string> {
  const database = openDatabase(databaseTargetOf(config));
  try {
    await migrateToLatest(database.db, database.dialect);
    return await rotateSigningKey(database.db, systemClock);
  } finally {
    await database.close();
  }
}
