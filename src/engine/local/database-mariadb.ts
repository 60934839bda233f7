import { join } from 'node:path';
import { type DatabaseEngineContext, type DatabaseEngineDefinition, connectionUri } from './database-servers.ts';
import { tcpExchange } from './probes.ts';
import { baseEnvironment } from './process-supervisor.ts';
import { runCommand } from './run-command.ts';

/**
 * MYSQL, served by MariaDB: `mariadb-install-db` creates the system tables, then `mariadbd --bootstrap` (no network,
 * statements on stdin, so the password is never in argv or in a file) creates the service's user — all privileges,
 * from any host, as a managed database's admin user has — and its database. `mariadbd` then runs in the foreground,
 * its log on stderr. Ready when the server sends the protocol's greeting on a new TCP connection.
 */

/** Unix sockets have a path limit of 108 bytes; a deep data dir gets its socket in the temp dir instead. */
function socketPath(ctx: DatabaseEngineContext): string {
  const inDir = join(ctx.serverDir, 'mariadbd.sock');
  return inDir.length < 100 ? inDir : join(process.env.TMPDIR ?? '/tmp', `slipway-mariadbd-${ctx.port}.sock`);
}

function sqlString(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** The first packet of the MySQL protocol: 3 bytes length, 1 byte sequence, then protocol version 10. */
function isGreeting(packet: Buffer): boolean {
  return packet.length >= 5 && packet[4] === 0x0a;
}

export const mariadbEngine: DatabaseEngineDefinition = {
  engine: 'MYSQL',
  systemUsers: ['mysql'],

  async initialize(ctx, initPath) {
    const asUser = ctx.runAs === undefined ? {} : { runAs: ctx.runAs };
    const install = await runCommand({
      command: [ctx.binaries.mariadbInstallDb ?? '/usr/bin/mariadb-install-db', '--no-defaults', `--datadir=${initPath}`,
        '--auth-root-authentication-method=socket', '--skip-test-db'],
      cwd: ctx.serverDir,
      env: baseEnvironment(),
      timeoutMs: 120_000,
      ...asUser,
    });
    if (install.code !== 0) throw new Error(`mariadb-install-db failed (exit ${install.code}):\n${install.tail}`);
    const { username, password } = ctx.spec.credentials;
    const user = `${sqlString(username)}@'%'`;
    const bootstrap = await runCommand({
      command: [ctx.binaries.mariadbd ?? '/usr/sbin/mariadbd', '--no-defaults', '--bootstrap', `--datadir=${initPath}`],
      cwd: ctx.serverDir,
      env: baseEnvironment(),
      timeoutMs: 120_000,
      // --bootstrap runs without grant tables; FLUSH PRIVILEGES loads them so account statements work.
      input: [
        'FLUSH PRIVILEGES;',
        `CREATE USER ${user} IDENTIFIED BY ${sqlString(password)};`,
        `GRANT ALL PRIVILEGES ON *.* TO ${user} WITH GRANT OPTION;`,
        `CREATE DATABASE IF NOT EXISTS \`${ctx.spec.databaseName}\`;`,
        '',
      ].join('\n'),
      ...asUser,
    });
    if (bootstrap.code !== 0) throw new Error(`mariadbd --bootstrap failed (exit ${bootstrap.code}):\n${bootstrap.tail}`);
  },

  process(ctx) {
    return {
      command: [ctx.binaries.mariadbd ?? '/usr/sbin/mariadbd', '--no-defaults', `--datadir=${ctx.dataPath}`, `--port=${ctx.port}`,
        `--bind-address=${ctx.host}`, `--socket=${socketPath(ctx)}`, `--pid-file=${join(ctx.serverDir, 'mariadbd.pid')}`,
        '--skip-name-resolve'],
      readiness: {
        kind: 'probe',
        description: `MariaDB greeting on ${ctx.host}:${ctx.port}`,
        probe: async () => {
          const packet = await tcpExchange(ctx.host, ctx.port, undefined, (received) => received.length >= 5);
          return packet !== undefined && isGreeting(packet);
        },
      },
    };
  },

  database: (ctx) => ctx.spec.databaseName,
  uri: (connection) => connectionUri('mysql', connection, `/${encodeURIComponent(connection.database)}`),
};
