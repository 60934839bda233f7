import { chownSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { connectionUri, type DatabaseEngineContext, type DatabaseEngineDefinition } from './database-servers.ts';
import { baseEnvironment } from './process-supervisor.ts';
import { runCommand } from './run-command.ts';

/**
 * POSTGRESQL: `initdb` creates the cluster with the service's user as its superuser (SCRAM password, the only
 * authentication accepted, TCP only: no Unix socket), `postgres` runs it in the foreground under the supervisor
 * (pg_ctl would daemonise it away from the supervisor), SIGINT is its fast shutdown. The service's database is
 * created once the server answers, if missing.
 */

/** The directory with initdb and postgres: the newest Debian version, else /usr/local/bin. */
export function defaultPostgresBinDir(): string {
  try {
    const versions = readdirSync('/usr/lib/postgresql').filter((entry) => /^\d+$/.test(entry)).sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return `/usr/lib/postgresql/${versions[0]}/bin`;
  } catch {
    /* no Debian layout: fall through */
  }
  return '/usr/local/bin';
}

function binDir(ctx: DatabaseEngineContext): string {
  return ctx.binaries.postgresBinDir ?? defaultPostgresBinDir();
}

async function withClient<T>(ctx: DatabaseEngineContext, database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const { default: postgres } = await import('pg');
  const client = new postgres.Client({
    host: ctx.host,
    port: ctx.port,
    user: ctx.spec.credentials.username,
    password: ctx.spec.credentials.password,
    database,
    connectionTimeoutMillis: 1_000,
  });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export const postgresqlEngine: DatabaseEngineDefinition = {
  engine: 'POSTGRESQL',
  systemUsers: ['postgres'],

  async initialize(ctx, initPath) {
    // initdb reads the password from a file, never from argv (visible to every user in `ps`).
    const passwordFile = join(ctx.serverDir, 'initdb.pw');
    writeFileSync(passwordFile, ctx.spec.credentials.password, { mode: 0o600 });
    if (ctx.runAs !== undefined) chownSync(passwordFile, ctx.runAs.uid, ctx.runAs.gid);
    try {
      const asUser = ctx.runAs === undefined ? {} : { runAs: ctx.runAs };
      const initdb = join(binDir(ctx), 'initdb');
      const result = await runCommand({
        command: [initdb, '-D', initPath, '-U', ctx.spec.credentials.username, `--pwfile=${passwordFile}`,
          '--auth-host=scram-sha-256', '--auth-local=scram-sha-256', '-E', 'UTF8', '--no-locale', '--no-instructions', '--no-sync'],
        cwd: ctx.serverDir,
        env: baseEnvironment(),
        timeoutMs: 120_000,
        ...asUser,
      });
      if (result.code !== 0) throw new Error(`initdb failed (${result.timedOut ? 'timed out' : `exit ${result.code}`}):\n${result.tail}`);
      // initdb's own durability step fsyncs each of its ~1,000 files one by one; one syncfs of the filesystem gives
      // the same guarantee in about half the time (measured: 6 s → 3 s on a loaded 2-core host). Where `sync -f` is
      // missing, initdb --sync-only does it initdb's way.
      const synced = await runCommand({ command: ['sync', '-f', initPath], cwd: ctx.serverDir, env: baseEnvironment(), timeoutMs: 120_000 }).catch(() => undefined);
      if (synced?.code !== 0) {
        const fallback = await runCommand({ command: [initdb, '--sync-only', '-D', initPath], cwd: ctx.serverDir, env: baseEnvironment(), timeoutMs: 120_000, ...asUser });
        if (fallback.code !== 0) throw new Error(`initdb --sync-only failed (exit ${fallback.code}):\n${fallback.tail}`);
      }
    } finally {
      rmSync(passwordFile, { force: true });
    }
  },

  process(ctx) {
    return {
      command: [join(binDir(ctx), 'postgres'), '-D', ctx.dataPath, '-p', String(ctx.port), '-h', ctx.host, '-k', ''],
      stopSignal: 'SIGINT',
      // The postmaster stops its backends itself; signalling them directly would cancel their work mid-way.
      signalGroup: false,
      readiness: {
        kind: 'probe',
        description: `PostgreSQL login on ${ctx.host}:${ctx.port}`,
        probe: () => withClient(ctx, 'postgres', async (client) => (await client.query('SELECT 1')).rowCount === 1),
      },
    };
  },

  async afterReady(ctx) {
    await withClient(ctx, 'postgres', async (client) => {
      const existing = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [ctx.spec.databaseName]);
      // The name is validated ([a-z_][a-z0-9_]*), so quoting it as an identifier is enough.
      if (existing.rowCount === 0) await client.query(`CREATE DATABASE "${ctx.spec.databaseName}"`);
    });
  },

  database: (ctx) => ctx.spec.databaseName,
  uri: (connection) => connectionUri('postgresql', connection, `/${encodeURIComponent(connection.database)}`),
};
