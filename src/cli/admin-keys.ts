import { rotateSigningKey } from '../identity/identity.keys.ts';
import { systemClock } from '../lib/clock.ts';
import { withOperatorDatabase, type OperatorDatabaseConfig } from './admin-database.ts';

/**
 * `slipway admin rotate-signing-key`: works on the database directly, like bootstrap. Every replica reads the
 * keys on each identity-provider request, so the new key signs from the next token on, everywhere.
 */
export function rotateInstallationSigningKey(config: OperatorDatabaseConfig): Promise<string> {
  return withOperatorDatabase(config, (database) => rotateSigningKey(database.db, systemClock));
}
