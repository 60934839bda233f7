import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LOCAL_DATABASE_ENGINES, localDatabaseEngine, noLocalEngineMessage } from '../src/engine/local/database-engines.ts';
import { dropExternalPostgres, provisionExternalPostgres } from '../src/engine/local/external-postgres.ts';
import { generateDatabaseCredentials, LocalDatabaseServers, type DatabaseConnection, type DatabaseServerSpec } from '../src/engine/local/database-servers.ts';
import { tcpExchange, tcpProbe } from '../src/engine/local/probes.ts';
import { ProcessSupervisor } from '../src/engine/local/process-supervisor.ts';
import { isProcessAlive, processGroupAlive, sendSignal } from '../src/engine/local/process-table.ts';

/**
 * Real PostgreSQL, MariaDB and Redis servers started by the local engine on free ports (the machine's own servers on
 * the standard ports are left alone), used through real clients: pg, the mariadb command-line client, raw RESP.
 * One server per engine for the whole file; each test goes on from the state the previous one left.
 */

const run = promisify(execFile);

let root: string;
let supervisor: ProcessSupervisor;
let servers: LocalDatabaseServers;

function newServers(): { supervisor: ProcessSupervisor; servers: LocalDatabaseServers } {
  const next = new ProcessSupervisor({ stateDir: path.join(root, 'agent-state'), logPollMs: 100, livenessPollMs: 100 });
  return { supervisor: next, servers: new LocalDatabaseServers({ supervisor: next, engines: LOCAL_DATABASE_ENGINES, startTimeoutMs: 30_000 }) };
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'slipway-databases-'));
  // When the tests run as root the servers run as their system accounts, which must be able to reach their dirs.
  await chmod(root, 0o711);
  ({ supervisor, servers } = newServers());
});

afterAll(async () => {
  await supervisor.stopAll();
  await rm(root, { recursive: true, force: true });
});

function spec(engine: DatabaseServerSpec['engine'], name: string): DatabaseServerSpec {
  return { engine, name, dataDir: path.join(root, 'databases', name), credentials: generateDatabaseCredentials(), databaseName: 'shop' };
}

async function postgresQuery(uri: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

async function mariadbQuery(connection: DatabaseConnection, sql: string): Promise<string> {
  const { stdout } = await run('mariadb', ['--no-defaults', '-h', connection.host, '-P', String(connection.port), '-u', connection.username, '--batch', '--skip-column-names', connection.database, '-e', sql], {
    env: { PATH: process.env.PATH ?? '', MYSQL_PWD: connection.password },
  });
  return stdout.trim();
}

function resp(...parts: string[]): string {
  return `*${parts.length}\r\n${parts.map((part) => `$${Buffer.byteLength(part)}\r\n${part}\r\n`).join('')}`;
}

/** Sends commands (AUTH first when `auth` is set) and resolves with the raw replies once `replies` lines arrived. */
async function redis(connection: DatabaseConnection, commands: string[][], replies: number, auth = true): Promise<string> {
  const all = auth ? [['AUTH', connection.username, connection.password], ...commands] : commands;
  const reply = await tcpExchange(connection.host, connection.port, Buffer.from(all.map((command) => resp(...command)).join('')), (received) => received.toString().split('\r\n').length > replies, 3_000);
  return reply?.toString() ?? '';
}

async function serverPid(name: string): Promise<number> {
  const record = JSON.parse(await readFile(path.join(root, 'agent-state', `${name}.pid.json`), 'utf8')) as { pid: number };
  return record.pid;
}

describe('local PostgreSQL server', () => {
  const pgSpec = (): DatabaseServerSpec => postgres;
  let postgres: DatabaseServerSpec;
  let connection: DatabaseConnection;

  it('initialises and starts a server on a free port with the generated credentials and the service database', async () => {
    postgres = spec('POSTGRESQL', 'db-orders');
    connection = await servers.start(pgSpec());
    expect(connection.port).not.toBe(5432);
    expect(connection.uri).toBe(`postgresql://${postgres.credentials.username}:${postgres.credentials.password}@127.0.0.1:${connection.port}/shop`);
    await postgresQuery(connection.uri, 'CREATE TABLE orders (id int PRIMARY KEY, item text)');
    await postgresQuery(connection.uri, "INSERT INTO orders VALUES (1, 'anchor')");
    expect(await postgresQuery(connection.uri, 'SELECT item FROM orders')).toEqual([{ item: 'anchor' }]);
    // A retried start answers with the same connection and the same process.
    const pid = await serverPid('db-orders');
    expect(await servers.start(pgSpec())).toEqual(connection);
    expect(await serverPid('db-orders')).toBe(pid);
    // Only the password opens it.
    await expect(postgresQuery(connection.uri.replace(postgres.credentials.password, 'wrong-password-1'), 'SELECT 1')).rejects.toThrow(/password authentication failed/);
    // No clear password was left on disk by the initialisation.
    expect(await readdir(postgres.dataDir)).toEqual(['data', 'slipway-server.json']);
    expect(await readFile(path.join(postgres.dataDir, 'slipway-server.json'), 'utf8')).not.toContain(postgres.credentials.password);
  });

  it('serves as the given server of the shared mode: a provisioned role logs in with its password (SCRAM verifier)', async () => {
    const adminUrl = connection.uri.replace(/\/shop$/, '/postgres');
    const tenant = await provisionExternalPostgres(adminUrl, { credentials: generateDatabaseCredentials(), databaseName: 'tenant' });
    expect(await postgresQuery(tenant.uri, 'SELECT current_user AS who')).toEqual([{ who: tenant.username }]);
    await expect(postgresQuery(tenant.uri.replace(tenant.password, 'wrong-password-1'), 'SELECT 1')).rejects.toThrow(/password authentication failed/);
    await dropExternalPostgres(adminUrl, { username: tenant.username, databaseName: 'tenant' });
  });

  it('restarts the server after it was killed, with its data', async () => {
    const pid = await serverPid('db-orders');
    sendSignal(pid, 'SIGKILL');
    await vi.waitFor(
      () => {
        const state = supervisor.state('db-orders');
        expect(state?.status === 'RUNNING' && state.pid !== pid, `the server running again with a new pid (killed ${pid}): last ${JSON.stringify(state)}`).toBe(true);
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(supervisor.state('db-orders')?.restarts).toBe(1);
    expect(await postgresQuery(connection.uri, 'SELECT item FROM orders')).toEqual([{ item: 'anchor' }]);
  });

  it('is re-adopted by a new agent, then stops leaving no process or port, and keeps its data for the next start', async () => {
    const pid = await serverPid('db-orders');
    supervisor.detachAll();
    ({ supervisor, servers } = newServers());
    const adopted = await servers.adopt(pgSpec());
    expect(adopted?.uri).toBe(connection.uri);
    expect(supervisor.state('db-orders')).toMatchObject({ status: 'RUNNING', pid, adopted: true });

    await servers.stop('db-orders');
    expect(processGroupAlive(pid)).toBe(false);
    expect(await tcpProbe('127.0.0.1', connection.port)).toBe(false);

    const again = await servers.start(pgSpec());
    expect(again.port).toBe(connection.port);
    expect(await postgresQuery(again.uri, 'SELECT item FROM orders')).toEqual([{ item: 'anchor' }]);
  });

  it('deletes the server and its data', async () => {
    const pid = await serverPid('db-orders');
    await servers.destroy(pgSpec());
    expect(isProcessAlive(pid)).toBe(false);
    expect(await tcpProbe('127.0.0.1', connection.port)).toBe(false);
    await expect(stat(postgres.dataDir)).rejects.toThrow(/ENOENT/);
  });
});

describe('local MariaDB server (MYSQL)', () => {
  let mysql: DatabaseServerSpec;
  let connection: DatabaseConnection;

  it('initialises and starts a server with the generated user and the service database', async () => {
    mysql = spec('MYSQL', 'db-catalog');
    connection = await servers.start(mysql);
    expect(connection.port).not.toBe(3306);
    expect(connection.uri).toBe(`mysql://${mysql.credentials.username}:${mysql.credentials.password}@127.0.0.1:${connection.port}/shop`);
    await mariadbQuery(connection, "CREATE TABLE products (id int PRIMARY KEY, name text); INSERT INTO products VALUES (1, 'rope')");
    expect(await mariadbQuery(connection, 'SELECT name FROM products')).toBe('rope');
    await expect(mariadbQuery({ ...connection, password: 'wrong-password-1' }, 'SELECT 1')).rejects.toThrow(/Access denied/);
  });

  it('stops leaving no process or port, and starts again with its data', async () => {
    const pid = await serverPid('db-catalog');
    await servers.stop('db-catalog');
    expect(processGroupAlive(pid)).toBe(false);
    expect(await tcpProbe('127.0.0.1', connection.port)).toBe(false);
    await expect(servers.start({ ...mysql, credentials: generateDatabaseCredentials() })).rejects.toThrow(/was initialised for the user .*: a server's credentials are fixed at initialisation/);
    const again = await servers.start(mysql);
    expect(again.port).toBe(connection.port);
    expect(await mariadbQuery(again, 'SELECT name FROM products')).toBe('rope');
    await servers.destroy(mysql);
    expect(await tcpProbe('127.0.0.1', connection.port)).toBe(false);
  });
});

describe('local Redis server', () => {
  let redisSpec: DatabaseServerSpec;
  let connection: DatabaseConnection;

  it('starts a server that only the generated user can use', async () => {
    redisSpec = spec('REDIS', 'cache-sessions');
    connection = await servers.start(redisSpec);
    expect(connection.port).not.toBe(6379);
    expect(connection.uri).toBe(`redis://${redisSpec.credentials.username}:${redisSpec.credentials.password}@127.0.0.1:${connection.port}`);
    expect(await redis(connection, [['SET', 'greeting', 'ahoy'], ['GET', 'greeting']], 4)).toBe('+OK\r\n+OK\r\n$4\r\nahoy\r\n');
    expect(await redis(connection, [['GET', 'greeting']], 1, false)).toMatch(/^-NOAUTH/);
    expect(await redis(connection, [['AUTH', 'default', redisSpec.credentials.password]], 1, false)).toMatch(/^-WRONGPASS/);
    const config = await readFile(path.join(redisSpec.dataDir, 'redis.conf'), 'utf8');
    expect(config).not.toContain(redisSpec.credentials.password);
  });

  it('starts with the user the control plane names every REDIS database\'s: default, with its password, and nobody without it', async () => {
    const defaultUser = { ...spec('REDIS', 'cache-default-user') };
    defaultUser.credentials = { ...defaultUser.credentials, username: 'default' };
    const started = await servers.start(defaultUser);
    try {
      expect(started.uri).toBe(`redis://default:${defaultUser.credentials.password}@127.0.0.1:${started.port}`);
      expect(await redis(started, [['SET', 'k', 'v'], ['GET', 'k']], 4)).toBe('+OK\r\n+OK\r\n$1\r\nv\r\n');
      expect(await redis(started, [['GET', 'k']], 1, false)).toMatch(/^-NOAUTH/);
      expect(await redis(started, [['AUTH', 'default', 'not-the-password']], 1, false)).toMatch(/^-WRONGPASS/);
      // A bare AUTH <password>, as clients configured with a password only send it.
      expect(await redis(started, [['AUTH', defaultUser.credentials.password], ['GET', 'k']], 3, false)).toBe('+OK\r\n$1\r\nv\r\n');
    } finally {
      await servers.destroy(defaultUser);
    }
  });

  it('keeps its data across a stop and a start (append-only file)', async () => {
    const pid = await serverPid('cache-sessions');
    await servers.stop('cache-sessions');
    expect(processGroupAlive(pid)).toBe(false);
    expect(await tcpProbe('127.0.0.1', connection.port)).toBe(false);
    const again = await servers.start(redisSpec);
    expect(await redis(again, [['GET', 'greeting']], 2)).toBe('+OK\r\n$4\r\nahoy\r\n');
    await servers.destroy(redisSpec);
  });
});

describe('database server specs', () => {
  it('maps database types to local engines; MONGODB has none and says so', () => {
    expect(['POSTGRESQL', 'MYSQL', 'REDIS', 'MONGODB'].map(localDatabaseEngine)).toEqual(['POSTGRESQL', 'MYSQL', 'REDIS', undefined]);
    expect(noLocalEngineMessage('MONGODB')).toMatch(/^MONGODB databases cannot run on the local cluster/);
  });

  it('refuses names and passwords that could break out of SQL or configuration syntax', async () => {
    const base = spec('POSTGRESQL', 'db-bad');
    await expect(servers.start({ ...base, databaseName: 'shop"; DROP' })).rejects.toThrow(/database name/);
    await expect(servers.start({ ...base, credentials: { username: 'Robert', password: base.credentials.password } })).rejects.toThrow(/user name/);
    await expect(servers.start({ ...base, credentials: { username: 'app', password: "short'" } })).rejects.toThrow(/password/);
    await expect(stat(base.dataDir)).rejects.toThrow(/ENOENT/);
  });

  it('discards a data directory whose initialisation was interrupted', async () => {
    const interrupted = spec('REDIS', 'cache-interrupted');
    const connection = await servers.start(interrupted);
    await servers.stop('cache-interrupted');
    // As if the agent died mid-initialisation: a leftover data.init/ and no manifest.
    await rm(path.join(interrupted.dataDir, 'slipway-server.json'));
    await mkdir(path.join(interrupted.dataDir, 'data.init'));
    await writeFile(path.join(interrupted.dataDir, 'data.init', 'half-written'), 'x');
    const again = await servers.start({ ...interrupted, port: connection.port });
    expect(await redis(again, [['PING']], 2)).toBe('+OK\r\n+PONG\r\n');
    expect(await readdir(interrupted.dataDir)).not.toContain('data.init');
    await servers.destroy(interrupted);
  });
});

const EXTERNAL_POSTGRES_URL = process.env.SLIPWAY_TEST_DATABASE_URL;

describe.skipIf(EXTERNAL_POSTGRES_URL === undefined || EXTERNAL_POSTGRES_URL === '')('POSTGRESQL on a given server (SLIPWAY_LOCAL_POSTGRES_URL)', () => {
  const adminUrl = EXTERNAL_POSTGRES_URL as string;
  const suffix = Date.now().toString(36);
  const first = { credentials: { ...generateDatabaseCredentials(), username: `slw_a_${suffix}` }, databaseName: `slw_orders_${suffix}` };
  const second = { credentials: { ...generateDatabaseCredentials(), username: `slw_b_${suffix}` }, databaseName: `slw_invoices_${suffix}` };

  afterAll(async () => {
    await dropExternalPostgres(adminUrl, { username: first.credentials.username, databaseName: first.databaseName });
    await dropExternalPostgres(adminUrl, { username: second.credentials.username, databaseName: second.databaseName });
  });

  it('creates a role and a database only that role may use, storing a SCRAM verifier, idempotently', async () => {
    const connection = await provisionExternalPostgres(adminUrl, first);
    const admin = new URL(adminUrl);
    expect(connection.uri).toBe(`postgresql://${first.credentials.username}:${first.credentials.password}@${admin.hostname}:${admin.port || 5432}/${first.databaseName}`);
    await postgresQuery(connection.uri, 'CREATE TABLE invoices (id int)');
    expect(await provisionExternalPostgres(adminUrl, first)).toEqual(connection);
    expect(await postgresQuery(connection.uri, 'SELECT count(*)::int AS n FROM invoices')).toEqual([{ n: 0 }]);

    const stored = await postgresQuery(adminUrl, `SELECT rolpassword FROM pg_authid WHERE rolname = '${first.credentials.username}'`) as { rolpassword: string }[];
    expect(stored[0]?.rolpassword).toMatch(/^SCRAM-SHA-256\$4096:/);

    const other = await provisionExternalPostgres(adminUrl, second);
    await expect(postgresQuery(other.uri.replace(`/${second.databaseName}`, `/${first.databaseName}`), 'SELECT 1')).rejects.toThrow(/permission denied for database/);
    await expect(provisionExternalPostgres(adminUrl, { ...second, databaseName: first.databaseName })).rejects.toThrow(/belongs to another role/);
  });

  it('drops the database and the role', async () => {
    await dropExternalPostgres(adminUrl, { username: first.credentials.username, databaseName: first.databaseName });
    expect(await postgresQuery(adminUrl, `SELECT 1 FROM pg_database WHERE datname = '${first.databaseName}'`)).toEqual([]);
    expect(await postgresQuery(adminUrl, `SELECT 1 FROM pg_roles WHERE rolname = '${first.credentials.username}'`)).toEqual([]);
  });
});
