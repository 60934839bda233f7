import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TaskCanceled, type TaskSession } from '../../protocol/agent-driver.ts';
import { LOCAL_DATABASE_ENGINES, localDatabaseEngine, noLocalEngineMessage } from './database-engines.ts';
import { databaseIdentifier, type DatabaseServerSpec, type LocalDatabaseServers } from './database-servers.ts';
import { dropExternalPostgres, provisionExternalPostgres } from './external-postgres.ts';
import type { InternalEndpoint, InternalForwarding } from './internal-addresses.ts';
import type { ServiceSpec } from './local-driver.spec.ts';
import type { DatabaseRecord, ServiceRecord, ServiceRecords } from './local-driver.state.ts';
import { baseEnvironment, type ProcessSpec, type ProcessSupervisor } from './process-supervisor.ts';
import { DEFAULT_RESTART_POLICY } from './supervised-process.ts';
import { unprivilegedUser } from './system-user.ts';

/**
 * Database services in the local driver: where a database of a spec lives (a server of its own under
 * `<stateDir>/databases/<serviceId>`, or the shared PostgreSQL server), and how a new agent takes a running server over.
 */

/** What the driver records of a database service; throws the reason when its type has no local engine. */
export function databaseRecordOf(spec: ServiceSpec, stateDir: string, externalPostgresUrl: string | undefined): DatabaseRecord {
  const database = spec.database;
  if (database === undefined) throw new Error(`the deployment spec of database ${spec.name} has no database section`);
  if (externalPostgresUrl !== undefined && externalPostgresUrl !== '' && database.type === 'POSTGRESQL') {
    return { engine: 'POSTGRESQL', mode: 'EXTERNAL', processName: '', dataDir: '', username: database.username, databaseName: database.databaseName, port: undefined };
  }
  const engine = localDatabaseEngine(database.type);
  if (engine === undefined) throw new Error(noLocalEngineMessage(database.type));
  return {
    engine,
    mode: 'LOCAL',
    processName: `database-${spec.serviceId}`,
    dataDir: join(stateDir, 'databases', spec.serviceId),
    username: database.username,
    // Redis has numbered databases; the name only has to pass the servers' checks.
    databaseName: engine === 'REDIS' ? databaseIdentifier(database.databaseName) : database.databaseName,
    // Its server's manifest keeps the port it was first given (database-servers.ts); a new server gets a free one.
    port: undefined,
  };
}

/**
 * The supervisor's spec of a running local server, to re-adopt it after an agent restart. It is the spec
 * LocalDatabaseServers starts the server with (engine command, environment, timeouts, account), so the supervisor's
 * fingerprint matches, except for the readiness check: the engines' checks log in with the password, which is never
 * on disk, so the server's port answering is what lets the new agent take it over. The next deployment of the
 * database starts it with its credentials and checks them again.
 */
export function adoptableServerProcess(record: DatabaseRecord): ProcessSpec | undefined {
  const definition = LOCAL_DATABASE_ENGINES.find((candidate) => candidate.engine === record.engine);
  if (definition === undefined || record.port === undefined) return undefined;
  const runAs = unprivilegedUser(definition.systemUsers);
  const ctx = {
    spec: { engine: record.engine, name: record.processName, dataDir: record.dataDir, credentials: { username: record.username, password: '' }, databaseName: record.databaseName },
    serverDir: record.dataDir,
    dataPath: join(record.dataDir, 'data'),
    host: '127.0.0.1',
    port: record.port,
    runAs,
    binaries: {},
  };
  return {
    name: record.processName,
    cwd: record.dataDir,
    env: baseEnvironment(),
    ...definition.process(ctx),
    readiness: { kind: 'tcp', port: record.port },
    startTimeoutMs: 60_000,
    stopTimeoutMs: 30_000,
    restart: DEFAULT_RESTART_POLICY,
    ...(runAs === undefined ? {} : { runAs }),
  };
}

export interface LocalDatabaseServicesDeps {
  stateDir: string;
  externalPostgresUrl: string | undefined;
  records: ServiceRecords;
  /** The driver's maps: process name → its service, and → the task starting it (local-driver.ts). */
  owners: Map<string, string>;
  deploying: Map<string, TaskSession>;
  supervisor: ProcessSupervisor;
  servers: LocalDatabaseServers;
  internalAddresses: InternalForwarding;
  /** The service's own address and declared ports on this host (local-placement.ts). */
  internalEndpointOf(spec: ServiceSpec): { address: string; ports: number[] } | undefined;
  logInternalEndpoint(session: TaskSession, spec: ServiceSpec, endpoint: InternalEndpoint | undefined): void;
  note(serviceId: string, line: string): void;
}

/**
 * The local driver's DATABASE services: a server of its own (started, stopped, destroyed, taken over after an agent
 * restart), or a role and a database on the shared PostgreSQL server; either way reached inside the environment on
 * an address of its own at its declared port, forwarded to where it really listens.
 */
export function createLocalDatabaseServices(deps: LocalDatabaseServicesDeps) {
  const { stateDir, records, owners, deploying, servers, internalAddresses, internalEndpointOf, logInternalEndpoint } = deps;

  async function deployDatabase(session: TaskSession, spec: ServiceSpec): Promise<void> {
    const record = databaseRecordOf(spec, stateDir, deps.externalPostgresUrl);
    const credentials = { username: record.username, password: spec.database?.password ?? '' };
    // Nothing to build: the server (or the shared server's database) is what this deployment starts.
    if (!(await session.built())) throw new TaskCanceled();
    if (record.mode === 'EXTERNAL') {
      const connection = await provisionExternalPostgres(deps.externalPostgresUrl ?? '', { credentials, databaseName: record.databaseName });
      session.log('system', `database ${connection.database} and role ${connection.username} are ready on ${connection.host}:${connection.port}`);
      const placed = { ...record, port: connection.port, internal: internalEndpointOf(spec) };
      await exposeDatabase(placed, spec.serviceId, (line) => session.log('system', line));
      logInternalEndpoint(session, spec, placed.internal);
      records.write({ serviceId: spec.serviceId, kind: 'DATABASE', name: spec.name, running: true, database: placed });
      return;
    }
    const serverSpec: DatabaseServerSpec = {
      engine: record.engine,
      name: record.processName,
      dataDir: record.dataDir,
      credentials,
      databaseName: record.databaseName,
      ...(record.port === undefined ? {} : { port: record.port }),
    };
    owners.set(record.processName, spec.serviceId);
    deploying.set(record.processName, session);
    try {
      // Servers run as the engine's account when the agent is root: it must pass through this directory.
      mkdirSync(join(stateDir, 'databases'), { recursive: true, mode: 0o711 });
      if (session.task.action === 'restart') await servers.stop(record.processName);
      const connection = await servers.start(serverSpec);
      session.log('system', `${record.engine} listens on ${connection.host}:${connection.port}`);
      const placed = { ...record, port: connection.port, internal: internalEndpointOf(spec) };
      await exposeDatabase(placed, spec.serviceId, (line) => session.log('system', line));
      logInternalEndpoint(session, spec, placed.internal);
      records.write({ serviceId: spec.serviceId, kind: 'DATABASE', name: spec.name, running: true, database: placed });
    } finally {
      deploying.delete(record.processName);
    }
  }

  /**
   * Serves the database's declared port on its own address, forwarding to where it really listens: its server's port
   * on this host, or the shared server's when that is on this host too (a shared server elsewhere cannot be stood in
   * for here: the deployment's log says so).
   */
  async function exposeDatabase(record: DatabaseRecord, serviceId: string, log: (line: string) => void): Promise<void> {
    if (record.internal === undefined || record.port === undefined) return;
    if (record.mode === 'EXTERNAL' && !sharedServerIsLocal()) {
      log(`the shared PostgreSQL server is not on this host, so ${record.internal.address} does not lead to it; connect to the shared server itself`);
      return;
    }
    for (const line of await internalAddresses.expose(serviceId, record.internal, record.port)) log(line);
  }

  function sharedServerIsLocal(): boolean {
    const url = deps.externalPostgresUrl;
    if (url === undefined || url === '') return false;
    const host = new URL(url).hostname;
    return host === '' || host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  }

  async function stopDatabase(serviceId: string, record: DatabaseRecord): Promise<void> {
    await internalAddresses.remove(serviceId);
    if (record.mode === 'LOCAL') await servers.stop(record.processName);
  }

  async function destroyDatabase(serviceId: string, record: DatabaseRecord): Promise<void> {
    await internalAddresses.remove(serviceId);
    if (record.mode === 'EXTERNAL') {
      if (deps.externalPostgresUrl === undefined || deps.externalPostgresUrl === '') throw new Error('the database is on the shared PostgreSQL server, which is no longer configured (SLIPWAY_LOCAL_POSTGRES_URL)');
      await dropExternalPostgres(deps.externalPostgresUrl, { databaseName: record.databaseName, username: record.username });
      return;
    }
    await servers.destroy({ name: record.processName, dataDir: record.dataDir });
    owners.delete(record.processName);
  }

  /** After an agent restart: takes a running server over, and serves its address again. */
  async function recover(record: ServiceRecord, database: DatabaseRecord): Promise<void> {
    if (database.mode === 'LOCAL') {
      const processSpec = adoptableServerProcess(database);
      owners.set(database.processName, record.serviceId);
      const adopted = processSpec === undefined ? undefined : await deps.supervisor.adopt(processSpec);
      if (adopted === undefined) {
        owners.delete(database.processName);
        deps.note(record.serviceId, `the ${database.engine} server of ${record.name} was not running when the agent started; deploy it again to start it`);
        return;
      }
    }
    await exposeDatabase(database, record.serviceId, (line) => deps.note(record.serviceId, line));
  }

  return { deploy: deployDatabase, stop: stopDatabase, destroy: destroyDatabase, recover };
}
