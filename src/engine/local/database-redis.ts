import { chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../../lib/crypto.ts';
import { connectionUri, type DatabaseEngineContext, type DatabaseEngineDefinition } from './database-servers.ts';
import { tcpExchange } from './probes.ts';

/**
 * REDIS: `redis-server` with a configuration file of ours: the default user disabled (unless it is the service's), the service's user with all
 * rights and its password stored as a SHA-256 in the ACL (no clear password on disk or in argv), durability through
 * the append-only file (fsync every second, as managed Redis offerings do), no RDB snapshots. Ready when
 * `AUTH user password` + `PING` answer `+OK` and `+PONG` (a server still loading its data answers -LOADING).
 */

function configPath(ctx: DatabaseEngineContext): string {
  return join(ctx.serverDir, 'redis.conf');
}

/** RESP: an array of bulk strings. */
function respCommand(...parts: string[]): string {
  return `*${parts.length}\r\n${parts.map((part) => `$${Buffer.byteLength(part)}\r\n${part}\r\n`).join('')}`;
}

export const redisEngine: DatabaseEngineDefinition = {
  engine: 'REDIS',
  systemUsers: ['redis'],

  async initialize(ctx) {
    const { username, password } = ctx.spec.credentials;
    const config = [
      `bind ${ctx.host}`,
      `port ${ctx.port}`,
      `dir ${ctx.dataPath}`,
      'daemonize no',
      'protected-mode yes',
      'appendonly yes',
      'appendfsync everysec',
      'save ""',
      // Every REDIS database of the control plane is given the user `default` (Redis's own name for the user that
      // a bare AUTH <password> logs in as): then it is the one user, with its password. Declaring it twice (off, then
      // on) is a fatal "Duplicate user found" for Redis 7.
      ...(username === 'default' ? [] : ['user default off']),
      `user ${username} on #${sha256Hex(password)} ~* &* +@all`,
      '',
    ].join('\n');
    writeFileSync(configPath(ctx), config, { mode: 0o600 });
    if (ctx.runAs !== undefined) chownSync(configPath(ctx), ctx.runAs.uid, ctx.runAs.gid);
  },

  process(ctx) {
    const expected = '+OK\r\n+PONG\r\n';
    return {
      command: [ctx.binaries.redisServer ?? '/usr/bin/redis-server', configPath(ctx), '--port', String(ctx.port)],
      readiness: {
        kind: 'probe',
        description: `Redis AUTH and PING on ${ctx.host}:${ctx.port}`,
        probe: async () => {
          const request = Buffer.from(respCommand('AUTH', ctx.spec.credentials.username, ctx.spec.credentials.password) + respCommand('PING'));
          // Two replies, or an error (a line starting with '-') after which waiting longer would not help.
          const reply = await tcpExchange(ctx.host, ctx.port, request, (received) => {
            const text = received.toString();
            return text.split('\r\n').length > 2 || text.startsWith('-');
          });
          return reply?.toString() === expected;
        },
      },
    };
  },

  database: () => '0',
  uri: (connection) => connectionUri('redis', connection, ''),
};
