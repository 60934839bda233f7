import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { DB } from './db.schema.ts';

export type DialectName = 'sqlite' | 'postgres';

export type DatabaseTarget =
  | { dialect: 'sqlite'; file: string }
  | {
      dialect: 'postgres';
      url: string;
      /** Schema to use as search_path (tests isolate each suite in its own schema). */
      schema?: string;
      maxConnections?: number;
    };

export interface Database {
  db: Kysely<DB>;
  dialect: DialectName;
  close(): Promise<void>;
}

const PG_TIMESTAMPTZ_OID = 1184;
const PG_TIMESTAMP_OID = 1114;
const PG_INT8_OID = 20;

/**
 * Both dialects hand timestamps to the code as ISO-8601 strings with milliseconds and 64-bit counts as numbers,
 * so repositories never branch on the dialect to read a row.
 */
function pgTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (oid === PG_TIMESTAMPTZ_OID || oid === PG_TIMESTAMP_OID) {
    return (value) => new Date(oid === PG_TIMESTAMP_OID ? `${value}Z` : value).toISOString();
  }
  if (oid === PG_INT8_OID) return (value) => Number(value);
  return pg.types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown;
}

function openSqlite(file: string): Database {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  // WAL lets readers proceed during a write; NORMAL sync is durable across application crashes in WAL mode.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    db,
    dialect: 'sqlite',
    close: () => db.destroy(),
  };
}

function openPostgres(target: Extract<DatabaseTarget, { dialect: 'postgres' }>): Database {
  const pool = new pg.Pool({
    connectionString: target.url,
    max: target.maxConnections ?? 10,
    types: { getTypeParser: pgTypeParser } as pg.CustomTypesConfig,
    ...(target.schema === undefined ? {} : { options: `-c search_path=${target.schema}` }),
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    close: () => db.destroy(),
  };
}

/** The database a configuration names: PostgreSQL when a URL is set, else the embedded file under the data dir. */
export function databaseTargetOf(config: { databaseUrl: string | undefined; dataDir: string }): DatabaseTarget {
  return config.databaseUrl === undefined
    ? { dialect: 'sqlite', file: path.join(config.dataDir, 'slipway.db') }
    : { dialect: 'postgres', url: config.databaseUrl };
}

export function openDatabase(target: DatabaseTarget): Database {
  return target.dialect === 'sqlite' ? openSqlite(target.file) : openPostgres(target);
}
