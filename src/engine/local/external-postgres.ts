import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import type pg from 'pg';
import { connectionUri, validateDatabaseSpec, type DatabaseConnection, type DatabaseCredentials } from './database-servers.ts';

/**
 * POSTGRESQL on a server Slipway is given (`SLIPWAY_LOCAL_POSTGRES_URL`, an account allowed to create roles and
 * databases) instead of a server per database: each database service gets a role of its own and a database it owns,
 * which no other role may connect to (CONNECT revoked from PUBLIC). The role's password travels and is stored as a
 * SCRAM-SHA-256 verifier computed here, so the clear password never reaches that server's statement log.
 * Names are the caller's to make unique on the shared server (a database that exists under another owner is refused).
 */
export interface ExternalPostgresDatabase {
  credentials: DatabaseCredentials;
  databaseName: string;
}

const SCRAM_ITERATIONS = 4096;

/** The verifier PostgreSQL stores for a SCRAM-SHA-256 password (RFC 5802/7677), from a fresh random salt. */
export function scramSha256Verifier(password: string): string {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, SCRAM_ITERATIONS, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${SCRAM_ITERATIONS}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

async function withAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const { default: postgres } = await import('pg');
  const client = new postgres.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates (or brings up to date) the role and the database; idempotent. */
export async function provisionExternalPostgres(adminUrl: string, database: ExternalPostgresDatabase): Promise<DatabaseConnection> {
  validateDatabaseSpec({ engine: 'POSTGRESQL', name: 'external', dataDir: '', credentials: database.credentials, databaseName: database.databaseName });
  const { username, password } = database.credentials;
  const name = database.databaseName;
  await withAdmin(adminUrl, async (client) => {
    // Identifiers are validated ([a-z_][a-z0-9_]*), so double quotes suffice; the verifier is base64 and `$`/`:` only.
    const verifier = scramSha256Verifier(password);
    const role = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [username]);
    await client.query(`${role.rowCount === 0 ? 'CREATE' : 'ALTER'} ROLE "${username}" LOGIN PASSWORD '${verifier}'`);
    const existing = await client.query<{ owner: string }>('SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1', [name]);
    const owner = existing.rows[0]?.owner;
    if (owner !== undefined && owner !== username) throw new Error(`database ${name} already exists on that server and belongs to another role`);
    if (owner === undefined) {
      // CREATE DATABASE needs the new role's membership to assign it as owner on PostgreSQL 16+.
      await client.query(`GRANT "${username}" TO CURRENT_USER`).catch(() => undefined);
      await client.query(`CREATE DATABASE "${name}" OWNER "${username}"`);
    }
    await client.query(`REVOKE CONNECT ON DATABASE "${name}" FROM PUBLIC`);
  });
  const url = new URL(adminUrl);
  const host = url.hostname === '' ? '127.0.0.1' : url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port === '' ? 5432 : Number(url.port);
  const connection = { engine: 'POSTGRESQL' as const, host, port, username, password, database: name };
  return { ...connection, uri: connectionUri('postgresql', connection, `/${encodeURIComponent(name)}`) };
}

/** Drops the database (disconnecting its sessions) and the role: the database service was deleted. */
export async function dropExternalPostgres(adminUrl: string, database: Pick<ExternalPostgresDatabase, 'databaseName'> & { username: string }): Promise<void> {
  validateDatabaseSpec({ engine: 'POSTGRESQL', name: 'external', dataDir: '', credentials: { username: database.username, password: 'x'.repeat(12) }, databaseName: database.databaseName });
  await withAdmin(adminUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${database.databaseName}" WITH (FORCE)`);
    await client.query(`DROP ROLE IF EXISTS "${database.username}"`);
  });
}
