import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDialectConfig } from 'kysely';
import type pg from 'pg';
import { makePrivateDirectory, makePrivateFile, narrowPrivateFile } from '../lib/private-files.ts';
import { withCommitParticipants } from './db.commit-participants.ts';
import { namePreparedStatements } from './db.pg-statements.ts';
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
      /** Parameterised queries as named, server-side prepared statements (db.pg-statements.ts); on unless false. */
      preparedStatements?: boolean;
    };

export interface Database {
  db: Kysely<DB>;
  dialect: DialectName;
  close(): Promise<void>;
  /**
   * PostgreSQL only: a new connection outside the pool (not yet connected), for the change signals' LISTEN
   * (db.signals.ts), and the schema the installation lives in.
   */
  listenerConnection?: { connect(): Promise<pg.Client>; schema?: string | undefined };
}

const PG_TIMESTAMPTZ_OID = 1184;
const PG_TIMESTAMP_OID = 1114;
const PG_INT8_OID = 20;

/**
 * Both dialects hand timestamps to the code as ISO-8601 strings with milliseconds and 64-bit counts as numbers,
 * so repositories never branch on the dialect to read a row.
 */
const UTC_TIMESTAMPTZ_TEXT = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;

/**
 * Sessions run in UTC (see openPostgres), so a timestamptz arrives as `2026-11-22 18:54:57.713+00` and is
 * reformatted as text; going through Date costs about eight times as much and a list answer carries hundreds.
 */
function isoFromUtcText(value: string): string {
  const match = UTC_TIMESTAMPTZ_TEXT.exec(value);
  if (match === null) return new Date(value).toISOString();
  return `${match[1]}T${match[2]}.${(match[3] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
}

function pgTypeParser(types: typeof pg.types, oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (oid === PG_TIMESTAMPTZ_OID) return isoFromUtcText;
  if (oid === PG_TIMESTAMP_OID) return (value) => new Date(`${value}Z`).toISOString();
  if (oid === PG_INT8_OID) return (value) => Number(value);
  return types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown;
}

/** Distinct SQL texts kept prepared; the application has a few hundred at most. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew; preparing costs several times what running a point query does (measured: 62 µs
 * against 12 µs for the token lookup). Statements are therefore kept by SQL text (least recently used first out)
 * and reused, unless one is still busy iterating, in which case a fresh one serves this call. SQLite re-prepares a
 * kept statement by itself when a migration changes the schema.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDialectConfig['database'] {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      const kept = statements.get(sql);
      if (kept !== undefined && !kept.busy) {
        statements.delete(sql);
        statements.set(sql, kept);
        return kept;
      }
      const statement = sqlite.prepare(sql);
      if (kept === undefined) {
        if (statements.size >= STATEMENT_CACHE_SIZE) {
          const oldest = statements.keys().next().value;
          if (oldest !== undefined) statements.delete(oldest);
        }
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/**
 * The database holds token hashes and sealed secrets: its files are this account's alone. The directory is created
 * 0700 when missing and the database file 0600 before SQLite opens it. SQLite creates the -wal, -shm (and -journal)
 * files itself, with the mode of the database file (its unix VFS copies it, so every account that may open the
 * database may open its journal): created from a 0600 database they are 0600 from their first byte, which no chmod
 * after the fact could promise. Files an older version left 0644 are narrowed here too.
 */
function makeDatabaseFilesPrivate(file: string): void {
  makePrivateDirectory(path.dirname(file));
  makePrivateFile(file);
  for (const companion of ['-wal', '-shm', '-journal']) narrowPrivateFile(`${file}${companion}`);
}

function openSqlite(file: string): Database {
  if (file !== ':memory:') makeDatabaseFilesPrivate(file);
  const sqlite = new SqliteDatabase(file);
  // WAL lets readers proceed during a write; NORMAL sync is durable across application crashes in WAL mode.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<DB>({ dialect: withCommitParticipants(new SqliteDialect({ database: withStatementCache(sqlite) })) });
  return {
    db,
    dialect: 'sqlite',
    close: () => db.destroy(),
  };
}

function openPostgres(target: Extract<DatabaseTarget, { dialect: 'postgres' }>): Database {
  // The driver loads with the first query: an installation on SQLite never loads it.
  const pool = async (): Promise<pg.Pool> => {
    const { default: postgres } = await import('pg');
    const created = new postgres.Pool({
      connectionString: target.url,
      max: target.maxConnections ?? 10,
      types: { getTypeParser: (oid: number, format?: 'text' | 'binary') => pgTypeParser(postgres.types, oid, format) } as pg.CustomTypesConfig,
      options: target.schema === undefined ? '-c timezone=UTC' : `-c timezone=UTC -c search_path=${target.schema}`,
    });
    // An idle connection the server ends (a restart, a failover, an administrator's terminate, an idle timeout) is
    // reported here and dropped from the pool, which opens a new one for the next query; unheard, the event would end
    // the process. A query in flight on a connection that ends fails with its own error.
    created.on('error', () => undefined);
    if (target.preparedStatements !== false) namePreparedStatements(created);
    return created;
  };
  const db = new Kysely<DB>({ dialect: withCommitParticipants(new PostgresDialect({ pool })) });
  return {
    db,
    dialect: 'postgres',
    close: () => db.destroy(),
    listenerConnection: {
      schema: target.schema,
      async connect() {
        const { default: postgres } = await import('pg');
        return new postgres.Client({ connectionString: target.url, options: target.schema === undefined ? '-c timezone=UTC' : `-c timezone=UTC -c search_path=${target.schema}` });
      },
    },
  };
}

/** The database a configuration names: PostgreSQL when a URL is set, else the embedded file under the data dir. */
export function databaseTargetOf(config: { databaseUrl: string | undefined; dataDir: string; databasePreparedStatements?: boolean }): DatabaseTarget {
  return config.databaseUrl === undefined
    ? { dialect: 'sqlite', file: path.join(config.dataDir, 'slipway.db') }
    : { dialect: 'postgres', url: config.databaseUrl, preparedStatements: config.databasePreparedStatements ?? true };
}

/** A PostgreSQL URL as it may be printed (logs, the operator's commands): no password, no query (whose parameters may carry one). */
export function printableDatabaseUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.username === '' ? '' : `${url.username}@`}${url.host}${url.pathname}`;
  } catch {
    return 'SLIPWAY_DATABASE_URL';
  }
}

export function openDatabase(target: DatabaseTarget): Database {
  return target.dialect === 'sqlite' ? openSqlite(target.file) : openPostgres(target);
}
