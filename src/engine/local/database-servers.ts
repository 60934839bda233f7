import { chownSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { base62Encode } from '../../lib/crypto.ts';
import { findFreePort } from '../../lib/free-port.ts';
import { baseEnvironment, type ProcessSpec, type ProcessSupervisor } from './process-supervisor.ts';
import { DEFAULT_RESTART_POLICY } from './supervised-process.ts';
import type { RunAs } from './run-command.ts';
import { unprivilegedUser } from './system-user.ts';

/**
 * Local database servers: one real server process per database service (PostgreSQL, MariaDB for MYSQL, Redis), on a
 * port of its own, with generated credentials, its data in a directory the caller gives (kept across agent
 * restarts), run by the process supervisor (restart on crash, re-adoption, stop leaving nothing behind).
 *
 * Layout of a server directory (`spec.dataDir`, one per database service):
 *   slipway-server.json   the manifest: engine, port, user and database name chosen at initialisation (no password)
 *   data/                 the engine's data directory
 *   data.init/            a data directory being initialised; renamed to data/ only once complete, so an agent
 *                         killed during initialisation leaves a leftover that the next start discards, never a
 *                         half-initialised server
 * The password is never written in clear by Slipway: PostgreSQL keeps a SCRAM verifier, MariaDB its hash, Redis a
 * SHA-256 in its ACL; the caller keeps the sealed credentials and passes them on every start.
 *
 * The credentials are fixed at initialisation: starting an existing server with other credentials does not change
 * them (the readiness check fails, and the start with it, saying so).
 */
export type LocalDatabaseEngine = 'POSTGRESQL' | 'MYSQL' | 'REDIS';

export interface DatabaseCredentials {
  username: string;
  password: string;
}

export interface DatabaseServerSpec {
  engine: LocalDatabaseEngine;
  /** The supervisor's name for the server process (unique per agent), e.g. `database-<serviceId>`. */
  name: string;
  /** The server's own directory; created if missing. */
  dataDir: string;
  credentials: DatabaseCredentials;
  /** The database created for the service (PostgreSQL, MYSQL); Redis has numbered databases and ignores it. */
  databaseName: string;
  /** The port at initialisation; a free one is chosen when absent. Later starts keep the port of the manifest. */
  port?: number;
}

export interface DatabaseConnection {
  engine: LocalDatabaseEngine;
  host: string;
  port: number;
  username: string;
  password: string;
  /** The database name; for Redis, "0". */
  database: string;
  /** The connection URI an application uses (what PLATFORM_DATABASE_<NAME>_CONNECTION_URI carries). */
  uri: string;
}

/** Where the engines' programs are; each defaults to the Debian packages' locations. */
export interface DatabaseBinaries {
  /** Holds initdb and postgres. Default: the newest /usr/lib/postgresql/<version>/bin, else /usr/local/bin. */
  postgresBinDir?: string;
  mariadbd?: string;
  mariadbInstallDb?: string;
  redisServer?: string;
}

/** What an engine's module gives the orchestration below. */
export interface DatabaseEngineContext {
  spec: DatabaseServerSpec;
  serverDir: string;
  /** The final data directory (`<serverDir>/data`). */
  dataPath: string;
  host: string;
  port: number;
  runAs: RunAs | undefined;
  binaries: DatabaseBinaries;
}

export interface DatabaseEngineDefinition {
  engine: LocalDatabaseEngine;
  /** The system accounts to run the server as when the agent is root, in order of preference. */
  systemUsers: readonly string[];
  /** Creates a complete data directory at `initPath` (later renamed to ctx.dataPath) with user and database. */
  initialize(ctx: DatabaseEngineContext, initPath: string): Promise<void>;
  /** How to run the server; its readiness check authenticates with the credentials. */
  process(ctx: DatabaseEngineContext): Pick<ProcessSpec, 'command' | 'readiness' | 'stopSignal' | 'signalGroup'>;
  /** Idempotent set-up once the server answers (e.g. the database, when missing). */
  afterReady?(ctx: DatabaseEngineContext): Promise<void>;
  /** The database name a connection reports. */
  database(ctx: DatabaseEngineContext): string;
  uri(connection: Omit<DatabaseConnection, 'uri'>): string;
}

interface Manifest {
  engine: LocalDatabaseEngine;
  port: number;
  host: string;
  username: string;
  databaseName: string;
  initializedAt: string;
}

const MANIFEST = 'slipway-server.json';
const USERNAME_PATTERN = /^[a-z_][a-z0-9_]{0,31}$/;
const DATABASE_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;
/** Generated passwords are base62; this keeps any caller's password out of SQL quoting and config syntax issues. */
const PASSWORD_PATTERN = /^[A-Za-z0-9._~-]{12,128}$/;
const LOWER_ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Fresh credentials for a database service: a user name valid on every engine and a 32-character base62 password. */
export function generateDatabaseCredentials(): DatabaseCredentials {
  const suffix = [...randomBytes(10)].map((byte) => LOWER_ALPHANUMERIC[byte % LOWER_ALPHANUMERIC.length]).join('');
  return { username: `u${suffix}`, password: base62Encode(randomBytes(24), 33).slice(0, 32) };
}

/** A database or role name derived from a service name: lower-case letters, digits and `_`, starting with a letter. */
export function databaseIdentifier(name: string): string {
  const cleaned = name.toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^[^a-z]+/, '').slice(0, 63);
  return cleaned === '' ? 'app' : cleaned;
}

export function validateDatabaseSpec(spec: DatabaseServerSpec): void {
  if (!USERNAME_PATTERN.test(spec.credentials.username)) throw new Error('a database user name is 1–32 lower-case letters, digits or _, starting with a letter or _');
  if (!PASSWORD_PATTERN.test(spec.credentials.password)) throw new Error('a database password is 12–128 characters among letters, digits and . _ ~ -');
  if (!DATABASE_NAME_PATTERN.test(spec.databaseName)) throw new Error('a database name is 1–63 lower-case letters, digits or _, starting with a letter or _');
}

/** Writes through a temporary file, fsyncs it, renames it into place and fsyncs the directory (Linux semantics). */
function writeFileDurably(path: string, content: string): void {
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  const directory = openSync(dirname(path), 'r');
  try {
    fsyncSync(directory);
  } finally {
    closeSync(directory);
  }
}

function chownTo(path: string, runAs: RunAs | undefined): void {
  if (runAs !== undefined) chownSync(path, runAs.uid, runAs.gid);
}

export interface LocalDatabaseServersOptions {
  supervisor: ProcessSupervisor;
  engines: readonly DatabaseEngineDefinition[];
  binaries?: DatabaseBinaries;
  /** The address servers listen on (and connections name). */
  host?: string;
  /** Overrides the account servers run as when the agent is root. */
  runAs?: RunAs;
  startTimeoutMs?: number;
}

export class LocalDatabaseServers {
  private readonly engines: Map<LocalDatabaseEngine, DatabaseEngineDefinition>;
  private readonly host: string;

  private readonly options: LocalDatabaseServersOptions;
  constructor(options: LocalDatabaseServersOptions) {
    this.options = options;
    this.engines = new Map(options.engines.map((definition) => [definition.engine, definition]));
    this.host = options.host ?? '127.0.0.1';
  }

  private definition(engine: LocalDatabaseEngine): DatabaseEngineDefinition {
    const definition = this.engines.get(engine);
    if (definition === undefined) throw new Error(`no local engine runs ${engine} databases`);
    return definition;
  }

  private readManifest(serverDir: string): Manifest | undefined {
    try {
      return JSON.parse(readFileSync(join(serverDir, MANIFEST), 'utf8')) as Manifest;
    } catch {
      return undefined;
    }
  }

  /**
   * Initialises the server on first use, starts it (or re-adopts the one a previous agent left running) and resolves
   * with its connection once it accepts the credentials and the database exists. Idempotent: a server already
   * RUNNING under this supervisor is left as it is.
   */
  async start(spec: DatabaseServerSpec): Promise<DatabaseConnection> {
    validateDatabaseSpec(spec);
    const definition = this.definition(spec.engine);
    const runAs = this.options.runAs ?? unprivilegedUser(definition.systemUsers);
    const serverDir = spec.dataDir;
    // Parents get the default mode (the server's account must pass through them); the server's own dir is private.
    mkdirSync(dirname(serverDir), { recursive: true });
    mkdirSync(serverDir, { recursive: true, mode: 0o700 });
    chownTo(serverDir, runAs);
    const dataPath = join(serverDir, 'data');
    let manifest = this.readManifest(serverDir);
    if (manifest !== undefined && manifest.engine !== spec.engine) {
      throw new Error(`${serverDir} holds a ${manifest.engine} server, not ${spec.engine}`);
    }
    if (manifest !== undefined && manifest.username !== spec.credentials.username) {
      throw new Error(`${serverDir} was initialised for the user ${manifest.username}: a server's credentials are fixed at initialisation`);
    }
    if (manifest === undefined || !existsSync(dataPath)) {
      const port = spec.port ?? (await findFreePort(this.host));
      const ctx = this.context(spec, serverDir, dataPath, port, runAs);
      const initPath = join(serverDir, 'data.init');
      rmSync(initPath, { recursive: true, force: true });
      rmSync(dataPath, { recursive: true, force: true });
      mkdirSync(initPath, { mode: 0o700 });
      chownTo(initPath, runAs);
      await definition.initialize(ctx, initPath);
      renameSync(initPath, dataPath);
      manifest = { engine: spec.engine, port, host: this.host, username: spec.credentials.username, databaseName: spec.databaseName, initializedAt: new Date().toISOString() };
      // Durable before the server ever starts: a manifest lost to a power cut after the application wrote data
      // would make the next start take the server for a half-initialised one and discard that data.
      writeFileDurably(join(serverDir, MANIFEST), JSON.stringify(manifest, null, 2));
    }
    const ctx = this.context(spec, serverDir, dataPath, manifest.port, runAs);
    // A retried start of a running server (the agent retries a job) answers with its connection again.
    const current = this.options.supervisor.state(spec.name);
    if (current === undefined || current.status === 'STOPPED' || current.status === 'FAILED') {
      await this.options.supervisor.start(this.processSpec(definition, ctx));
    } else if (current.status !== 'RUNNING') {
      throw new Error(`${spec.name} is ${current.status}${current.message === undefined ? '' : `: ${current.message}`}`);
    }
    await definition.afterReady?.(ctx);
    return this.connection(definition, ctx);
  }

  /** Re-adopts a server a previous agent left running; undefined when none runs (call start). */
  async adopt(spec: DatabaseServerSpec): Promise<DatabaseConnection | undefined> {
    validateDatabaseSpec(spec);
    const definition = this.definition(spec.engine);
    const manifest = this.readManifest(spec.dataDir);
    if (manifest === undefined) return undefined;
    const runAs = this.options.runAs ?? unprivilegedUser(definition.systemUsers);
    const ctx = this.context(spec, spec.dataDir, join(spec.dataDir, 'data'), manifest.port, runAs);
    const state = await this.options.supervisor.adopt(this.processSpec(definition, ctx));
    return state === undefined ? undefined : this.connection(definition, ctx);
  }

  /** Stops the server process; the data stays for the next start. */
  async stop(name: string): Promise<void> {
    await this.options.supervisor.stop(name);
  }

  /** Stops the server and deletes its data: the database service was deleted. */
  async destroy(spec: Pick<DatabaseServerSpec, 'name' | 'dataDir'>): Promise<void> {
    await this.options.supervisor.stop(spec.name);
    rmSync(spec.dataDir, { recursive: true, force: true });
  }

  private context(spec: DatabaseServerSpec, serverDir: string, dataPath: string, port: number, runAs: RunAs | undefined): DatabaseEngineContext {
    return { spec, serverDir, dataPath, host: this.host, port, runAs, binaries: this.options.binaries ?? {} };
  }

  private processSpec(definition: DatabaseEngineDefinition, ctx: DatabaseEngineContext): ProcessSpec {
    return {
      name: ctx.spec.name,
      cwd: ctx.serverDir,
      env: baseEnvironment(),
      ...definition.process(ctx),
      startTimeoutMs: this.options.startTimeoutMs ?? 60_000,
      stopTimeoutMs: 30_000,
      restart: DEFAULT_RESTART_POLICY,
      ...(ctx.runAs === undefined ? {} : { runAs: ctx.runAs }),
    };
  }

  private connection(definition: DatabaseEngineDefinition, ctx: DatabaseEngineContext): DatabaseConnection {
    const connection = {
      engine: ctx.spec.engine,
      host: ctx.host,
      port: ctx.port,
      username: ctx.spec.credentials.username,
      password: ctx.spec.credentials.password,
      database: definition.database(ctx),
    };
    return { ...connection, uri: definition.uri(connection) };
  }
}

/** `scheme://user:password@host:port/path`, each part percent-encoded. */
export function connectionUri(scheme: string, connection: Omit<DatabaseConnection, 'uri'>, path: string): string {
  const host = connection.host.includes(':') ? `[${connection.host}]` : connection.host;
  return `${scheme}://${encodeURIComponent(connection.username)}:${encodeURIComponent(connection.password)}@${host}:${connection.port}${path}`;
}
