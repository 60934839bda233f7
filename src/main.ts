import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import closeWithGrace from 'close-with-grace';
import { AppsPortInUseError, HttpsPortUnusableError } from './agent/local-agent.ts';
import { buildApp } from './app.ts';
import { loadConfigOrExit, type Config, type SecretKeySource } from './config.ts';
import { databaseTargetOf, openDatabase, printableDatabaseUrl, type Database } from './db/db.client.ts';
import { migrateToLatest } from './db/db.migrate.ts';
import { MetricsAddressUnusableError } from './http/metrics.ts';
import { tightenPrivateDirectory, UnsafePermissionsError } from './lib/private-files.ts';
import { loadOrCreateKeyFile } from './lib/secret-box.ts';
import { startTracing } from './lib/tracing.ts';
import { SLIPWAY_VERSION } from './lib/version.ts';

/**
 * Start-up failures the operator fixes with a setting (a port in use, a data directory this account cannot use, a
 * database that cannot be reached) end the process as an invalid configuration does (config.ts loadConfigOrExit):
 * one line on stderr naming what failed and the variable to change, exit status 2, no stack trace. Anything else
 * thrown while starting is a bug and keeps its stack.
 */
function exitCannotStart(message: string): never {
  process.stderr.write(`slipway: cannot start: ${oneLine(message)}\n`);
  process.exit(2);
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** An error's own words; a connection refused on every address of a name is an AggregateError without a message. */
function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message !== '') return error.message;
  if (error instanceof AggregateError && error.errors.length > 0) return [...new Set(error.errors.map(causeOf))].join('; ');
  return codeOf(error) ?? error.name;
}

/** File-system errors that mean this account cannot use the data directory (or something under it). */
const DATA_DIRECTORY_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EISDIR', 'ENOSPC', 'EDQUOT', 'ELOOP', 'ENAMETOOLONG', 'EEXIST']);
/** SQLite's word for a database file it cannot open, read or write. */
const SQLITE_FILE_CODE = /^SQLITE_(CANTOPEN|READONLY|PERM|IOERR|FULL|NOTADB)/;

function dataDirectoryProblem(config: Config, error: unknown, anyPath: boolean): string | undefined {
  const code = codeOf(error);
  if (code === undefined) return undefined;
  const fileSystem = DATA_DIRECTORY_CODES.has(code) && (error as { syscall?: unknown }).syscall !== undefined;
  const underDataDir = (file: unknown) => typeof file === 'string' && (file === config.dataDir || file.startsWith(`${config.dataDir}${path.sep}`));
  if (!(fileSystem && (anyPath || underDataDir((error as { path?: unknown }).path))) && !(anyPath && SQLITE_FILE_CODE.test(code))) return undefined;
  return `the data directory ${config.dataDir} cannot be used (${causeOf(error)}): make it readable and writable by this account, or choose another with SLIPWAY_DATA_DIR`;
}

/** Connecting failed: nothing answers, the name does not resolve, the server refuses the account or the database. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE']);
const CONNECTION_SQLSTATES = /^(08...|28...|3D000|57P03|53300)$/;

function databaseProblem(config: Config, error: unknown): string | undefined {
  const url = config.databaseUrl;
  if (url === undefined) return undefined;
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : '';
  const connecting =
    (code !== undefined && (NETWORK_CODES.has(code) || CONNECTION_SQLSTATES.test(code))) ||
    /^Connection terminated|SSL|certificate/i.test(message);
  if (!connecting) return undefined;
  let cause = causeOf(error);
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password !== '') cause = cause.replaceAll(password, '***');
  } catch {
    // An unparsable URL never got this far (config.ts validates it).
  }
  return `the database ${printableDatabaseUrl(url)} cannot be reached (${cause}): check it, or set another with SLIPWAY_DATABASE_URL`;
}

/** `127.0.0.1:8080`, `[::1]:8080`. */
function addressOf(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function listenProblem(config: Config, error: unknown): string | undefined {
  const address = addressOf(config.host, config.port);
  switch (codeOf(error)) {
    case 'EADDRINUSE':
      return `the API port ${address} is in use: choose another with SLIPWAY_PORT`;
    case 'EACCES':
      return `the API port ${address} may not be listened on by this account: choose another with SLIPWAY_PORT`;
    case 'EADDRNOTAVAIL':
      return `the API address ${address} is not an address of this host: choose another with SLIPWAY_HOST`;
    default:
      return undefined;
  }
}

/**
 * The data directory, made safe before anything in it is used: the directory narrowed to this account (it is ours),
 * the key loaded — refused when other accounts could read or write its file —, and the database opened with private
 * files. What the operator must fix ends the process with one line and exit status 2, as an invalid configuration
 * does (config.ts loadConfigOrExit), before any port is listened on.
 */
function openDataDirectoryOrExit(config: Config): { database: Database; secretKey: SecretKeySource } {
  try {
    tightenPrivateDirectory(config.dataDir);
    const secretKey: SecretKeySource = config.secretKey.kind === 'file' ? { kind: 'value', key: loadOrCreateKeyFile(config.secretKey.file) } : config.secretKey;
    return { secretKey, database: openDatabase(databaseTargetOf(config)) };
  } catch (error) {
    if (error instanceof UnsafePermissionsError) {
      process.stderr.write(`slipway: refusing to start: ${error.message}\n`);
      process.exit(2);
    }
    const problem = dataDirectoryProblem(config, error, true);
    if (problem === undefined) throw error;
    exitCannotStart(problem);
  }
}

/**
 * The server process: config → data directory → database → migrations → HTTP. SIGTERM/SIGINT stop accepting
 * connections, let in-flight requests finish (up to 10 s), then close the database.
 */
export async function runServer(config: Config): Promise<void> {
  const { database, secretKey } = openDataDirectoryOrExit(config);
  try {
    await migrateToLatest(database.db, database.dialect);
  } catch (error) {
    const problem = database.dialect === 'postgres' ? databaseProblem(config, error) : dataDirectoryProblem(config, error, true);
    if (problem === undefined) throw error;
    exitCannotStart(problem);
  }
  // Before the app is built: its request hooks and the worker's spans need the tracer (docs/operations.md, "Traces").
  const tracing =
    config.tracing === undefined
      ? undefined
      : await startTracing({ tracesUrl: config.tracing.tracesUrl, serviceName: config.tracing.serviceName ?? 'slipway', serviceVersion: SLIPWAY_VERSION });
  const staleAfterMs = config.jobStaleAfterSeconds * 1000;
  const app = await buildApp({
    config: { ...config, secretKey },
    database,
    jobs: {
      run: config.runJobs,
      staleAfterMs,
      heartbeatIntervalMs: Math.min(5_000, staleAfterMs / 5),
      ...(config.fallbackPollMs === undefined ? {} : { pollIntervalMs: config.fallbackPollMs }),
    },
    ...(config.fallbackPollMs === undefined ? {} : { agents: { pollMs: config.fallbackPollMs } }),
  }).catch((error: unknown) => {
    const problem = dataDirectoryProblem(config, error, false) ?? databaseProblem(config, error);
    if (problem === undefined) throw error;
    exitCannotStart(problem);
  });

  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'stopping after an uncaught error');
    else app.log.info({ signal }, 'stopping: draining in-flight requests');
    await app.close();
    await database.close();
    // The spans of the last requests and jobs are exported before the process ends.
    await tracing?.shutdown();
  });

  // The worker already runs (and the local agent, when its port is the problem): they stop as on SIGTERM, for at
  // most 10 s, before the process ends.
  const stopAndExit = async (problem: string): Promise<never> => {
    process.stderr.write(`slipway: cannot start: ${oneLine(problem)}\n`);
    await Promise.race([app.close().then(() => database.close()).then(() => tracing?.shutdown()), sleep(10_000, undefined, { ref: false })]).catch(() => undefined);
    process.exit(2);
  };
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    const problem = listenProblem(config, error);
    if (problem === undefined) throw error;
    await stopAndExit(problem);
  }
  // The separate metrics listener (SLIPWAY_METRICS_ADDRESS), when asked for: an address in use ends the start.
  await app.startMetricsListener().catch(async (error: unknown) => {
    if (!(error instanceof MetricsAddressUnusableError)) throw error;
    await stopAndExit(error.message);
  });
  // After the API listens: the engine's start (the apps proxy, the sandbox probe, taking workloads over) is not
  // on the path of the first answer (docs/decisions.md, "Runtime").
  try {
    await app.startLocalAgent();
  } catch (error) {
    const problem = error instanceof AppsPortInUseError || error instanceof HttpsPortUnusableError ? error.message : dataDirectoryProblem(config, error, false);
    if (problem === undefined) throw error;
    await stopAndExit(problem);
  }
  app.log.info({ database: database.dialect }, 'slipway is serving');
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  await runServer(loadConfigOrExit());
}
