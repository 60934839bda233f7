import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/db.client.ts';
import { migrateToLatest } from '../../src/db/db.migrate.ts';
import { newId } from '../../src/lib/ids.ts';

/**
 * The databases every suite runs on: SQLite always, PostgreSQL too when SLIPWAY_TEST_DATABASE_URL is set (CI sets
 * it). Each PostgreSQL database lives in its own schema, dropped afterwards, so suites never see each other's rows.
 */
export type TestDialect = 'sqlite' | 'postgres';

const POSTGRES_URL = process.env.SLIPWAY_TEST_DATABASE_URL;

export const TEST_DIALECTS: TestDialect[] = POSTGRES_URL === undefined || POSTGRES_URL === '' ? ['sqlite'] : ['sqlite', 'postgres'];

export interface TestDatabase {
  database: Database;
  /** Drops everything the database held. */
  dispose(): Promise<void>;
}

export async function openTestDatabase(dialect: TestDialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const database = openDatabase({ dialect: 'sqlite', file: ':memory:' });
    await migrateToLatest(database.db, database.dialect);
    return { database, dispose: () => database.close() };
  }
  const url = POSTGRES_URL as string;
  const schema = `test_${newId().replaceAll('-', '')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  const database = openDatabase({ dialect: 'postgres', url, schema, maxConnections: 5 });
  await migrateToLatest(database.db, database.dialect);
  return {
    database,
    async dispose() {
      await database.close();
      const cleanup = new pg.Client({ connectionString: url });
      await cleanup.connect();
      try {
        await cleanup.query(`DROP SCHEMA ${schema} CASCADE`);
      } finally {
        await cleanup.end();
      }
    },
  };
}
