import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, createReadStream, createWriteStream, existsSync, fchmodSync, openSync } from 'node:fs';
import { link, readdir, rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { AppError } from '../lib/errors.ts';
import { makePrivateDirectory, PRIVATE_FILE_MODE } from '../lib/private-files.ts';
import { SLIPWAY_VERSION } from '../lib/version.ts';
import {
  backupKeyFingerprint,
  backupTimestamp,
  BACKUP_FORMAT,
  payloadStream,
  shortFingerprint,
  verifyBackupFile,
  writeBackupFile,
  type BackupHeader,
  type VerifiedBackup,
} from './db.backup-file.ts';
import { openDatabase, printableDatabaseUrl, type DatabaseTarget } from './db.client.ts';
import { KNOWN_MIGRATIONS, migrateToLatest } from './db.migrate.ts';

/**
 * Backing up and restoring the installation's own database (docs/operations.md, "Backing up and restoring"); the
 * file format is db.backup-file.ts's.
 *
 * - SQLite: the online backup API (better-sqlite3's `backup`, on a connection of its own) copies the database while
 *   the server keeps writing. After a first step of no pages, every step copies all that remain, under one read
 *   transaction: the copy is the database as of one commit, which includes every write acknowledged before the backup
 *   began (WAL: a commit is visible to every reader that starts after it). A write landing between two steps makes
 *   SQLite start over, and the next step is again the whole database.
 * - PostgreSQL: `pg_dump --format=custom`, which reads everything in one repeatable-read snapshot. It runs as a child
 *   with an argument array; the connection comes through libpq's PG* variables, the password in PGPASSWORD, never on
 *   a command line (which other accounts of the host can read). Its standard error is kept for the failure message.
 * - Restore goes only into an empty target (no database file; no tables), after checking the file whole, its format
 *   and migration level, its dialect and the key's fingerprint; then migrates to this build's latest.
 */

export interface BackupTaken {
  file: string;
  bytes: number;
  header: BackupHeader;
}

/** The oldest backups beyond `keep` among those `scheduled` names are deleted by pruneScheduledBackups. */
const SCHEDULED_BACKUP = /^slipway-scheduled-\d{8}T\d{9}Z\.backup$/;

/** `<dir>/slipway-<UTC timestamp>.backup`, or `slipway-scheduled-…` for the scheduled backups (retention counts those). */
export function backupFileName(dir: string, at: Date, kind: 'manual' | 'scheduled'): string {
  return path.join(dir, `slipway-${kind === 'scheduled' ? 'scheduled-' : ''}${backupTimestamp(at)}.backup`);
}

/** The schema a PostgreSQL URL's `options` put first in the search_path (`-c search_path=s`), or undefined. */
export function schemaOfDatabaseUrl(url: string): string | undefined {
  let options: string | null;
  try {
    options = new URL(url).searchParams.get('options');
  } catch {
    return undefined;
  }
  const value = options === null ? undefined : /(?:^|\s)-c\s*search_path=([^\s,]+)/.exec(options)?.[1];
  return value?.replace(/^"|"$/g, '');
}

/**
 * What of this process's environment a tool gets: where to find itself and its locale (as the local engine's tools do,
 * engine/local/process-supervisor.ts), never the operator's other variables — a PGPASSWORD of their shell among them.
 */
function toolEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** URL query parameters libpq knows, and the variable that carries each to pg_dump / pg_restore. */
const LIBPQ_PARAMETERS: Record<string, string> = {
  host: 'PGHOST',
  port: 'PGPORT',
  sslmode: 'PGSSLMODE',
  sslrootcert: 'PGSSLROOTCERT',
  sslcert: 'PGSSLCERT',
  sslkey: 'PGSSLKEY',
  connect_timeout: 'PGCONNECT_TIMEOUT',
  application_name: 'PGAPPNAME',
};

/** libpq's variables for a PostgreSQL URL: the password goes in PGPASSWORD, so no command line ever holds it. */
function libpqEnvironment(url: string, base: Record<string, string>): Record<string, string> {
  const parsed = new URL(url);
  const env: Record<string, string> = { ...base, PGCONNECT_TIMEOUT: '10' };
  if (parsed.hostname !== '') env.PGHOST = decodeURIComponent(parsed.hostname.replace(/^\[|\]$/g, ''));
  if (parsed.port !== '') env.PGPORT = parsed.port;
  if (parsed.username !== '') env.PGUSER = decodeURIComponent(parsed.username);
  if (parsed.password !== '') env.PGPASSWORD = decodeURIComponent(parsed.password);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (database !== '') env.PGDATABASE = database;
  for (const [name, value] of parsed.searchParams) {
    const variable = LIBPQ_PARAMETERS[name];
    if (variable !== undefined) env[variable] = value;
  }
  return env;
}

interface ToolRun {
  code: number | null;
  stderr: string;
}

/**
 * Runs a PostgreSQL client tool: `feed` writes its standard input (or it gets none), `drain` reads its standard
 * output. A tool that is not installed is refused saying so.
 */
async function runTool(
  command: string,
  args: string[],
  env: Record<string, string>,
  streams: { feed?: (stdin: NodeJS.WritableStream) => Promise<void>; drain?: (stdout: NodeJS.ReadableStream) => Promise<void> },
): Promise<ToolRun> {
  const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  // Enough for the message; a tool that prints more is cut to its last lines.
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-16_384);
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  // Awaited below, after the streams: a tool that could not start must not count as an unhandled rejection meanwhile.
  exited.catch(() => undefined);
  // Our side failing (the backup file unwritable, the disk full) stops the tool, which would otherwise wait on its pipe
  // for ever, and is the error; the tool ending first breaks the pipe, and then what it said (on stderr) is the message.
  let ownFailure: unknown;
  const stopOnFailure = (work: Promise<void>) =>
    work.catch((error: unknown) => {
      const code = (error as { code?: unknown }).code;
      if (code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE') return;
      ownFailure ??= error;
      child.kill('SIGKILL');
    });
  try {
    const work: Promise<void>[] = [];
    if (streams.feed === undefined) child.stdin.end();
    else work.push(stopOnFailure(streams.feed(child.stdin)));
    if (streams.drain === undefined) child.stdout.resume();
    else work.push(stopOnFailure(streams.drain(child.stdout)));
    await Promise.all(work);
    const code = await exited;
    if (ownFailure !== undefined) throw ownFailure;
    return { code, stderr };
  } catch (error) {
    child.kill('SIGKILL');
    if ((error as { syscall?: unknown }).syscall === `spawn ${command}`) {
      throw new AppError('unavailable', `${command} could not be run (${String((error as { code?: unknown }).code)}): install PostgreSQL's client tools on this host's PATH (the server's major version or newer)`);
    }
    throw error;
  }
}

function toolFailure(command: string, run: ToolRun, what: string): AppError {
  const said = run.stderr.trim().split('\n').slice(-3).join(' ');
  return new AppError('unavailable', `${what} failed: ${command} exited with status ${run.code ?? 'none'}${said === '' ? '' : `: ${said}`}`);
}

/** A database that cannot be reached (or refused the account), as one line naming it without its password. */
function unreachable(url: string, error: unknown): AppError {
  let message = error instanceof Error ? error.message : String(error);
  const password = new URL(url).password;
  if (password !== '') message = message.replaceAll(decodeURIComponent(password), '***');
  return new AppError('unavailable', `cannot use the database ${printableDatabaseUrl(url)}: ${message}`);
}

function applied(rows: Array<{ name: string }>): string[] {
  return rows.map((row) => row.name).sort();
}

/** A private, empty file at `file` for SQLite to write into (it would create one with the umask's mode). */
function makeEmptyPrivateFile(file: string): void {
  const descriptor = openSync(file, 'wx', PRIVATE_FILE_MODE);
  try {
    fchmodSync(descriptor, PRIVATE_FILE_MODE);
  } finally {
    closeSync(descriptor);
  }
}

/** The most pages one step of the backup API copies (its maximum): the whole database under one read transaction. */
const ALL_PAGES = 0x7fffffff;

async function takeSqliteBackup(target: Extract<DatabaseTarget, { dialect: 'sqlite' }>, file: string, header: Omit<BackupHeader, 'migrations' | 'schema'>): Promise<BackupTaken> {
  if (target.file === ':memory:' || !existsSync(target.file)) {
    throw new AppError('not_found', `there is no database at ${target.file} to back up (SLIPWAY_DATA_DIR names the server's data directory)`);
  }
  makePrivateDirectory(path.dirname(file));
  const snapshot = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.sqlite.tmp`;
  makeEmptyPrivateFile(snapshot);
  try {
    // Read-write, as the server opens it: a read-only connection cannot open a WAL database whose -shm is missing.
    const source = new SqliteDatabase(target.file, { fileMustExist: true });
    try {
      source.pragma('busy_timeout = 5000');
      await source.backup(snapshot, { progress: () => ALL_PAGES });
    } finally {
      source.close();
    }
    const copy = new SqliteDatabase(snapshot, { fileMustExist: true });
    let migrations: string[];
    try {
      migrations = applied(copy.prepare<[], { name: string }>('select name from kysely_migration').all());
    } catch {
      throw new AppError('bad_request', `the database at ${target.file} holds no Slipway data (no migration was ever applied)`);
    } finally {
      copy.close();
    }
    const full: BackupHeader = { ...header, migrations, schema: null };
    const bytes = await writeBackupFile(file, full, async (write) => {
      for await (const chunk of createReadStream(snapshot)) await write(chunk as Buffer);
    });
    return { file, bytes, header: full };
  } finally {
    await rm(snapshot, { force: true });
  }
}

async function takePostgresBackup(
  target: Extract<DatabaseTarget, { dialect: 'postgres' }>,
  file: string,
  header: Omit<BackupHeader, 'migrations' | 'schema'>,
): Promise<BackupTaken> {
  const schema = target.schema ?? schemaOfDatabaseUrl(target.url);
  const database = openDatabase({ ...target, maxConnections: 1 });
  let migrations: string[];
  try {
    migrations = applied((await sql<{ name: string }>`select name from kysely_migration`.execute(database.db)).rows);
  } catch (error) {
    if ((error as { code?: unknown }).code !== '42P01') throw unreachable(target.url, error);
    throw new AppError('bad_request', `the database ${printableDatabaseUrl(target.url)} holds no Slipway data (no migration was ever applied)`);
  } finally {
    await database.close();
  }
  const full: BackupHeader = { ...header, migrations, schema: schema ?? null };
  const args = ['--format=custom', '--no-owner', '--no-privileges', '--no-password', ...(schema === undefined ? [] : [`--schema=${schema}`])];
  let run: ToolRun | undefined;
  const bytes = await writeBackupFile(file, full, async (write) => {
    run = await runTool('pg_dump', args, libpqEnvironment(target.url, toolEnvironment()), {
      drain: async (stdout) => {
        for await (const chunk of stdout) await write(chunk as Buffer);
      },
    });
    if (run.code !== 0) throw toolFailure('pg_dump', run, `backing up ${printableDatabaseUrl(target.url)}`);
  });
  return { file, bytes, header: full };
}

export interface BackupRequest {
  target: DatabaseTarget;
  secretKey: Buffer;
  /** The file to write; refused when it exists. */
  file: string;
  now: Date;
}

/** Writes a backup of the database `target` names to `file`. */
export async function takeBackup(request: BackupRequest): Promise<BackupTaken> {
  const header = {
    format: BACKUP_FORMAT,
    created_at: request.now.toISOString(),
    dialect: request.target.dialect,
    slipway_version: SLIPWAY_VERSION,
    key_fingerprint: backupKeyFingerprint(request.secretKey),
  };
  return request.target.dialect === 'sqlite'
    ? takeSqliteBackup(request.target, request.file, header)
    : takePostgresBackup(request.target, request.file, header);
}

/** Deletes the oldest scheduled backups in `dir` beyond the newest `keep`; answers the files deleted. */
export async function pruneScheduledBackups(dir: string, keep: number): Promise<string[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => SCHEDULED_BACKUP.test(name)).sort();
  const doomed = names.slice(0, Math.max(0, names.length - keep)).map((name) => path.join(dir, name));
  for (const file of doomed) await rm(file, { force: true });
  return doomed;
}

export interface RestoreRequest {
  target: DatabaseTarget;
  secretKey: Buffer;
  /** Says how to give the right key, in the refusal of a key whose fingerprint differs. */
  keyHint: string;
  file: string;
}

function checkRestorable(backup: VerifiedBackup, request: RestoreRequest): void {
  const { header, file } = backup;
  const known = new Set(KNOWN_MIGRATIONS);
  const unknown = header.migrations.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new AppError(
      'bad_request',
      `${file} was taken at a migration level this Slipway does not know (${unknown.slice(0, 3).join(', ')}${unknown.length > 3 ? ', …' : ''}): restore it with Slipway ${header.slipway_version} or later`,
    );
  }
  if (header.dialect !== request.target.dialect) {
    throw new AppError(
      'bad_request',
      header.dialect === 'sqlite'
        ? `${file} is a backup of an SQLite installation: restore it with SLIPWAY_DATABASE_URL unset, into an empty SLIPWAY_DATA_DIR`
        : `${file} is a backup of a PostgreSQL installation: restore it with SLIPWAY_DATABASE_URL naming an empty database`,
    );
  }
  const configured = backupKeyFingerprint(request.secretKey);
  if (configured !== header.key_fingerprint) {
    throw new AppError(
      'bad_request',
      `${file} was taken under another secret key (fingerprint ${shortFingerprint(header.key_fingerprint)}…) than the one configured (${shortFingerprint(configured)}…): ` +
        `its secrets would not open; ${request.keyHint}`,
    );
  }
}

async function restoreSqlite(backup: VerifiedBackup, target: Extract<DatabaseTarget, { dialect: 'sqlite' }>): Promise<void> {
  const present = ['', '-wal', '-journal'].map((suffix) => `${target.file}${suffix}`).find((candidate) => existsSync(candidate));
  if (present !== undefined) {
    throw new AppError('conflict', `the data directory ${path.dirname(target.file)} already holds a database (${present}): restore only into an empty data directory (a new SLIPWAY_DATA_DIR)`);
  }
  makePrivateDirectory(path.dirname(target.file));
  const temporary = `${target.file}.${process.pid}.${randomBytes(6).toString('hex')}.restore.tmp`;
  makeEmptyPrivateFile(temporary);
  try {
    await pipeline(payloadStream(backup), createWriteStream(temporary, { flags: 'r+' }));
    const copy = new SqliteDatabase(temporary, { fileMustExist: true });
    try {
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new AppError('bad_request', `${backup.file} holds a damaged SQLite database (${String(check)})`);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError('bad_request', `${backup.file} does not hold an SQLite database (${(error as Error).message})`);
    } finally {
      copy.close();
    }
    // A link, unlike a rename, fails when a database appeared under the name meanwhile: it is never replaced.
    await link(temporary, target.file).catch((error: unknown) => {
      if ((error as { code?: unknown }).code === 'EEXIST') throw new AppError('conflict', `a database appeared at ${target.file} while restoring: restore only into an empty data directory`);
      throw error;
    });
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

const SYSTEM_SCHEMAS = "('pg_catalog', 'information_schema')";

async function restorePostgres(backup: VerifiedBackup, target: Extract<DatabaseTarget, { dialect: 'postgres' }>): Promise<void> {
  const shown = printableDatabaseUrl(target.url);
  const targetSchema = target.schema ?? schemaOfDatabaseUrl(target.url);
  const backedUpSchema = backup.header.schema;
  if (backedUpSchema !== null && backedUpSchema !== targetSchema) {
    throw new AppError(
      'bad_request',
      `${backup.file} holds the schema ${backedUpSchema}: restore it with SLIPWAY_DATABASE_URL naming that schema (?options=-c%20search_path%3D${backedUpSchema}), as the installation it came from did`,
    );
  }
  const database = openDatabase({ ...target, maxConnections: 1 });
  try {
    await sql`select 1`.execute(database.db).catch((error: unknown) => {
      throw unreachable(target.url, error);
    });
    // A backup of one schema needs that schema free; a backup of a whole database, a database without any table.
    const tables =
      backedUpSchema === null
        ? (await sql<{ schema: string; count: number }>`select table_schema as schema, count(*)::int as count from information_schema.tables
            where table_schema not in ${sql.raw(SYSTEM_SCHEMAS)} and table_schema not like 'pg_%' group by table_schema`.execute(database.db)).rows
        : (await sql<{ schema: string; count: number }>`select table_schema as schema, count(*)::int as count from information_schema.tables
            where table_schema = ${backedUpSchema} group by table_schema`.execute(database.db)).rows;
    const first = tables[0];
    if (first !== undefined) {
      throw new AppError('conflict', `the database ${shown} is not empty (${first.count} table(s) in schema ${first.schema}): restore only into an empty database`);
    }
    if (backedUpSchema !== null) {
      // pg_restore creates the schema; an empty one made beforehand goes (RESTRICT: anything in it and this fails).
      try {
        await sql`drop schema if exists ${sql.id(backedUpSchema)} restrict`.execute(database.db);
      } catch {
        throw new AppError('conflict', `the schema ${backedUpSchema} of ${shown} is not empty: restore only into an empty schema`);
      }
    }
  } finally {
    await database.close();
  }
  const env = libpqEnvironment(target.url, toolEnvironment());
  const databaseName = env.PGDATABASE ?? env.PGUSER ?? 'postgres';
  // One transaction: a restore that fails leaves the database as empty as it was.
  const args = ['--no-owner', '--no-privileges', '--no-password', '--single-transaction', '--exit-on-error', `--dbname=${databaseName}`];
  const run = await runTool('pg_restore', args, env, { feed: (stdin) => pipeline(payloadStream(backup), stdin) });
  if (run.code !== 0) throw toolFailure('pg_restore', run, `restoring into ${shown}`);
}

/**
 * Restores the backup `file` into the empty target, then migrates it to this build's latest. Refused, before anything
 * is written: a file that is not a complete Slipway backup, of a newer format or migration level, of the other
 * dialect, taken under another key, or a target that is not empty.
 */
export async function restoreBackup(request: RestoreRequest): Promise<BackupHeader> {
  const backup = await verifyBackupFile(request.file);
  checkRestorable(backup, request);
  if (request.target.dialect === 'sqlite') await restoreSqlite(backup, request.target);
  else await restorePostgres(backup, request.target);
  const database = openDatabase(request.target);
  try {
    await migrateToLatest(database.db, database.dialect);
  } finally {
    await database.close();
  }
  return backup.header;
}
