import { existsSync } from 'node:fs';
import type { Config } from '../config.ts';
import { databaseTargetOf, openDatabase, printableDatabaseUrl, type Database } from '../db/db.client.ts';
import { migrateToLatest } from '../db/db.migrate.ts';

/**
 * The database the operator's commands (`slipway admin …`) work on directly: the server's, chosen by the same
 * SLIPWAY_DATABASE_URL and SLIPWAY_DATA_DIR (whose default config.ts makes the same for `npm start` and `npx slipway`),
 * opened and migrated as the server does. Each command first names it on standard error — and says so when it has
 * just been created, since an SQLite file that was not there is rarely the installation the operator meant.
 */

export type OperatorDatabaseConfig = Pick<Config, 'databaseUrl' | 'dataDir'>;

/** The line naming the database: its file or its URL without password; `created` when the file was not there. */
export function operatorDatabaseLine(config: OperatorDatabaseConfig, created: boolean): string {
  const target = databaseTargetOf(config);
  if (target.dialect === 'postgres') return `slipway: using the database ${printableDatabaseUrl(target.url)}\n`;
  return created
    ? `slipway: using the database ${target.file}, created now: none was there (SLIPWAY_DATA_DIR names the server's data directory)\n`
    : `slipway: using the database ${target.file}\n`;
}

/** Runs `work` on the operator's database, named first through `say` (standard error), and closes it afterwards. */
export async function withOperatorDatabase<T>(
  config: OperatorDatabaseConfig,
  work: (database: Database) => Promise<T>,
  say: (line: string) => void = (line) => process.stderr.write(line),
): Promise<T> {
  const target = databaseTargetOf(config);
  say(operatorDatabaseLine(config, target.dialect === 'sqlite' && !existsSync(target.file)));
  const database = openDatabase(target);
  try {
    await migrateToLatest(database.db, database.dialect);
    return await work(database);
  } finally {
    await database.close();
  }
}
