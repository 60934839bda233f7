import { join } from 'node:path';
import { LOCAL_DATABASE_ENGINES, localDatabaseEngine, noLocalEngineMessage } from './database-engines.ts';
import { databaseIdentifier } from './database-servers.ts';
import type { ServiceSpec } from './local-driver.spec.ts';
import type { DatabaseRecord } from './local-driver.state.ts';
import { baseEnvironment, type ProcessSpec } from './process-supervisor.ts';
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
