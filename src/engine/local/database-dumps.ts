import { chmodSync, existsSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { defaultPostgresBinDir } from './database-postgresql.ts';
import type { LocalDatabaseEngine } from './database-servers.ts';
import type { ServiceRecord } from './local-driver.state.ts';
import { baseEnvironment } from './process-supervisor.ts';
import { runCommand } from './run-command.ts';

/**
 * Backups of the local driver's database servers (docs/database-backups.md): a dump taken over TCP, with the engine's
 * own client tool, from the server the driver runs for a database service on this host.
 *
 *   POSTGRESQL  pg_dump --format=custom (restorable with pg_restore), the password in PGPASSWORD
 *   MYSQL       mariadb-dump --single-transaction of the service's database (plain SQL), the password in MYSQL_PWD
 *   REDIS       redis-cli --rdb: the server streams a point-in-time RDB snapshot, the password in REDISCLI_AUTH
 *
 * Where the server listens is the driver's business: it is read from the driver's own record of the service
 * (`<stateDir>/services/<serviceId>.json`, local-driver.state.ts), which holds no secret; the password comes from the
 * caller (the control plane keeps the sealed credentials). Passwords never reach argv (`ps` shows argv to every user).
 * The dump is written beside its destination and renamed into place once complete: a failed or interrupted dump
 * leaves no file that looks like a backup.
 */

export interface LocalDatabaseDumpRequest {
  /** The local agent's state directory (`<dataDir>/agent` for `slipway server`). */
  stateDir: string;
  serviceId: string;
  /** The service's password (the server's user and database names are in the driver's record). */
  password: string;
  /** The file to write; its directory exists. */
  destination: string;
  /** Past this the dump is killed and fails. */
  timeoutMs?: number;
}

export interface LocalDatabaseDump {
  engine: LocalDatabaseEngine;
  sizeBytes: number;
}

/** Where the shared PostgreSQL server (SLIPWAY_LOCAL_POSTGRES_URL) is, for databases the driver put there. */
export interface LocalDatabaseDumpOptions {
  externalPostgresUrl?: string | undefined;
  /** The directory with pg_dump; default: the one with the local engine's postgres. */
  postgresBinDir?: string;
}

const DEFAULT_TIMEOUT_MS = 30 * 60_000;

/** The file name suffix of a dump of each engine. */
export const DUMP_SUFFIX: Record<LocalDatabaseEngine, string> = { POSTGRESQL: 'dump', MYSQL: 'sql', REDIS: 'rdb' };

/** The driver's record of the service, read without creating anything (the worker may run where no agent ever did). */
function serviceRecordOf(stateDir: string, serviceId: string): ServiceRecord | undefined {
  if (!/^[0-9a-f-]{36}$/.test(serviceId)) return undefined;
  const file = join(stateDir, 'services', `${serviceId}.json`);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ServiceRecord;
  } catch {
    return undefined;
  }
}

export function createLocalDatabaseDumps(options: LocalDatabaseDumpOptions = {}) {
  return {
    /** Dumps the database; throws an Error whose message says what the operator or user can do. */
    async dump(request: LocalDatabaseDumpRequest): Promise<LocalDatabaseDump> {
      const record = serviceRecordOf(request.stateDir, request.serviceId);
      const database = record?.database;
      if (record === undefined || database === undefined) {
        throw new Error('the database does not run on this host: its local agent has no record of it (deploy it, or back it up from the host its agent runs on)');
      }
      if (!record.running || database.port === undefined) throw new Error(`database ${record.name} is stopped: deploy it before backing it up`);
      let host = '127.0.0.1';
      if (database.mode === 'EXTERNAL') {
        const url = options.externalPostgresUrl;
        if (url === undefined || url === '') throw new Error('the database is on the shared PostgreSQL server, which is no longer configured (SLIPWAY_LOCAL_POSTGRES_URL)');
        host = new URL(url).hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
      }
      const partial = `${request.destination}.partial`;
      const env = baseEnvironment();
      let command: string[];
      switch (database.engine) {
        case 'POSTGRESQL':
          env.PGPASSWORD = request.password;
          env.PGCONNECT_TIMEOUT = '10';
          command = [join(options.postgresBinDir ?? defaultPostgresBinDir(), 'pg_dump'), '--no-password', '--format=custom', `--host=${host}`, `--port=${database.port}`,
            `--username=${database.username}`, `--dbname=${database.databaseName}`, `--file=${partial}`];
          break;
        case 'MYSQL':
          env.MYSQL_PWD = request.password;
          command = ['mariadb-dump', '--no-defaults', '--protocol=TCP', `--host=${host}`, `--port=${database.port}`, `--user=${database.username}`,
            '--single-transaction', '--routines', '--events', '--triggers', `--result-file=${partial}`, '--databases', database.databaseName];
          break;
        case 'REDIS':
          env.REDISCLI_AUTH = request.password;
          command = ['redis-cli', '-h', host, '-p', String(database.port), '--user', database.username, '--no-auth-warning', '--rdb', partial];
          break;
      }
      try {
        const result = await runCommand({ command, cwd: dirname(request.destination), env, timeoutMs: request.timeoutMs ?? DEFAULT_TIMEOUT_MS });
        if (result.code !== 0) {
          const reason = result.timedOut ? 'timed out' : `exit ${result.code ?? result.signal ?? '?'}`;
          // The tools' last lines say why (refused login, server gone); they never contain the password.
          throw new Error(`${command[0]?.split('/').pop() ?? 'the dump'} failed (${reason}): ${result.tail.trim().split('\n').slice(-3).join(' ')}`);
        }
        const sizeBytes = statSync(partial).size;
        if (sizeBytes === 0) throw new Error('the dump is empty');
        // The tools create their file with the process's umask: a backup is readable by the server's account only.
        chmodSync(partial, 0o600);
        renameSync(partial, request.destination);
        return { engine: database.engine, sizeBytes };
      } finally {
        rmSync(partial, { force: true });
      }
    },
  };
}

export type LocalDatabaseDumps = ReturnType<typeof createLocalDatabaseDumps>;
