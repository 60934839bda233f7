import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { databaseTargetOf, type DatabaseTarget } from '../../src/db/db.client.ts';
import { newId } from '../../src/lib/ids.ts';
import type { TestDialect } from './databases.ts';
import { freePort } from './identity-app.ts';

/**
 * The real `slipway` executable: `slipway server` as a child process (on SQLite in a temporary data directory, or
 * on PostgreSQL in a schema of its own), and client commands run as a person would run them.
 */
export const SLIPWAY_BIN = path.resolve('bin/slipway.js');

export interface SlipwayServer {
  /** http://127.0.0.1:<port>, also its SLIPWAY_PUBLIC_URL (the built-in issuer is `${baseUrl}/oidc`). */
  baseUrl: string;
  /** Its SLIPWAY_DATA_DIR (the local agent's state is under `agent/`). */
  dataDir: string;
  /** What the process printed so far (its JSON log lines and anything on stderr), across restarts. */
  output(): string;
  /** `kill -9`: the process ends at once, with whatever it was doing. */
  crash(): Promise<void>;
  /** SIGTERM, as an operator stops it: resolves once the process exited. */
  stop(): Promise<void>;
  /** Starts the server again on the same port, data directory and database. */
  restart(): Promise<void>;
  /** Runs `slipway <args>` on the server's data directory and database, as its operator would (`admin …`). */
  operator(args: string[]): Promise<CliResult>;
  /** Where its database is, for a test that must shape what only time makes (a month gone by): openDatabase(target). */
  database: DatabaseTarget;
  close(): Promise<void>;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A PostgreSQL URL whose connections use `schema` (and UTC, as the server's own pool would set). */
function urlWithSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c timezone=UTC -c search_path=${schema}`);
  return parsed.href;
}

async function onPostgres(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * Starts `slipway server` with the built-in identity provider and `env` (e.g. SLIPWAY_SMTP_URL); resolves once it
 * listens. The local agent is off unless `env` turns it on. Only PATH and SLIPWAY_* variables reach the process, so
 * the developer's own settings cannot leak in. With `bootstrap`, `slipway admin bootstrap` runs first on the same
 * data directory and database, and its organization and ADMIN API token are answered with the server.
 */
export async function startSlipwayServer(dialect: TestDialect, env: Record<string, string>): Promise<SlipwayServer>;
export async function startSlipwayServer(
  dialect: TestDialect,
  env: Record<string, string>,
  options: { bootstrap: true },
): Promise<SlipwayServer & { organizationId: string; apiToken: string }>;
export async function startSlipwayServer(dialect: TestDialect, env: Record<string, string>, options?: { bootstrap: true }) {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'slipway-server-'));
  const postgresUrl = process.env.SLIPWAY_TEST_DATABASE_URL;
  const schema = `test_${newId().replaceAll('-', '')}`;
  const database: Record<string, string> = { SLIPWAY_DATA_DIR: dataDir };
  if (dialect === 'postgres') {
    if (postgresUrl === undefined || postgresUrl === '') throw new Error('SLIPWAY_TEST_DATABASE_URL is not set');
    await onPostgres(postgresUrl, `CREATE SCHEMA ${schema}`);
    database.SLIPWAY_DATABASE_URL = urlWithSchema(postgresUrl, schema);
  }
  let bootstrapped: { organizationId: string; apiToken: string } | undefined;
  if (options?.bootstrap === true) {
    const result = await runSlipway(['admin', 'bootstrap', '--email', 'ops@example.com', '--organization', 'Acme', '--json'], {
      ...database,
      SLIPWAY_LOG_LEVEL: 'silent',
    });
    if (result.code !== 0) throw new Error(`slipway admin bootstrap failed: ${result.stderr}`);
    const created = JSON.parse(result.stdout) as { organization_id: string; api_token: string };
    bootstrapped = { organizationId: created.organization_id, apiToken: created.api_token };
  }
  const processEnv = {
    PATH: process.env.PATH,
    HOME: dataDir,
    SLIPWAY_HOST: '127.0.0.1',
    SLIPWAY_PORT: String(port),
    SLIPWAY_PUBLIC_URL: baseUrl,
    SLIPWAY_LOG_LEVEL: 'info',
    // The local agent deploys for real: only the suites about it turn it on (SLIPWAY_LOCAL_AGENT=true in `env`),
    // and then on a free apps port, as parallel suites must not contend for one.
    SLIPWAY_LOCAL_AGENT: 'false',
    SLIPWAY_APPS_PORT: '0',
    ...database,
    ...env,
  };
  let output = '';
  let child: ChildProcess;
  let exited: Promise<number | null>;

  /** Spawns the server (again, on the same port, data directory and database) and resolves once it listens. */
  async function launch(): Promise<void> {
    const printedBefore = output.length;
    child = spawn(process.execPath, [SLIPWAY_BIN, 'server'], { env: processEnv });
    const started = child;
    exited = new Promise<number | null>((resolve) => started.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const onOutput = (chunk: Buffer) => {
        output += chunk.toString();
        // Logged once the server listens, naming the database it opened.
        const printed = output.slice(printedBefore);
        if (printed.includes(`Server listening at ${baseUrl}`) && printed.includes('slipway is serving')) resolve();
      };
      started.stdout?.on('data', onOutput);
      started.stderr?.on('data', onOutput);
      started.on('error', reject);
      void exited.then((code) => reject(new Error(`slipway server exited (${code}) before listening:\n${output}`)));
    });
  }

  try {
    await launch();
  } catch (error) {
    // A server that never listened leaves nothing behind either.
    child!.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
    if (dialect === 'postgres' && postgresUrl !== undefined) await onPostgres(postgresUrl, `DROP SCHEMA ${schema} CASCADE`);
    throw error;
  }
  return {
    ...bootstrapped,
    baseUrl,
    dataDir,
    output: () => output,
    async crash() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
    restart: launch,
    operator: (args: string[]) => runSlipway(args, { ...database, SLIPWAY_LOG_LEVEL: 'silent' }),
    database: databaseTargetOf({ databaseUrl: database.SLIPWAY_DATABASE_URL, dataDir }),
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(forced);
      }
      await rm(dataDir, { recursive: true, force: true });
      if (dialect === 'postgres' && postgresUrl !== undefined) await onPostgres(postgresUrl, `DROP SCHEMA ${schema} CASCADE`);
    },
  };
}

/** How long a command that is meant to end may run: past it, it is killed and the call fails saying what it printed. */
const COMMAND_DEADLINE_MS = 240_000;

/**
 * Runs `slipway <args>` to completion with `env` (plus PATH) and, when given, `input` on standard input. A command that
 * has not ended after COMMAND_DEADLINE_MS is a hang: it is killed and the call rejects with what it printed, so a
 * suite fails at the command that hung rather than at its own timeout, long after, without saying where.
 */
export async function runSlipway(args: string[], env: Record<string, string>, input?: string): Promise<CliResult> {
  const child = spawnSlipway(args, env);
  child.stdin?.end(input ?? '');
  let hung = false;
  const deadline = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, COMMAND_DEADLINE_MS);
  const result = await child.result.finally(() => clearTimeout(deadline));
  if (hung) throw new Error(`slipway ${args.join(' ')} had not ended after ${COMMAND_DEADLINE_MS / 1000} s; it printed:\n${result.stdout}${result.stderr}`);
  return result;
}

/** Starts `slipway <args>` without waiting, for commands that interact (login prints a code, then waits). */
export function spawnSlipway(args: string[], env: Record<string, string>): ChildProcess & { printed(): string; result: Promise<CliResult> } {
  const child = spawn(process.execPath, [SLIPWAY_BIN, ...args], { env: { PATH: process.env.PATH, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const result = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return Object.assign(child, { printed: () => stdout, result });
}

/** Resolves with what `child` printed on standard output once `pattern` matches it (or rejects when it ends first). */
export function waitForOutput(child: ReturnType<typeof spawnSlipway>, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(child.printed());
      if (match !== null) {
        child.stdout?.off('data', check);
        resolve(match);
      }
    };
    child.stdout?.on('data', check);
    void child.result.then((result) => reject(new Error(`slipway ended (${result.code}) before printing ${pattern}: ${result.stdout}${result.stderr}`)));
    check();
  });
}
