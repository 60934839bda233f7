import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openTestDatabase } from './support/databases.ts';

const POSTGRES_URL = process.env.SLIPWAY_TEST_DATABASE_URL;
const ON_POSTGRES = POSTGRES_URL !== undefined && POSTGRES_URL !== '';

/**
 * The connection pool on PostgreSQL (src/db/db.client.ts): the server ending an idle connection (a restart, a
 * failover, an administrator's pg_terminate_backend) must cost that connection only. Unheard, the pool's error event
 * ended the process: this suite then fails with an unhandled error.
 */
describe.skipIf(!ON_POSTGRES)('the PostgreSQL pool', () => {
  it('survives the server ending its idle connections, and answers the next query on a new one', async () => {
    const test = await openTestDatabase('postgres');
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(test.database.db);
      const idle = rows[0]?.pid;
      expect(idle).toBeGreaterThan(0);
      const terminated = await admin.query<{ done: boolean }>('select pg_terminate_backend($1) as done', [idle]);
      expect(terminated.rows[0]?.done).toBe(true);
      // The idle client hears its end asynchronously.
      await sleep(200);
      const again = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(test.database.db);
      expect(again.rows[0]?.pid).not.toBe(idle);
    } finally {
      await admin.end();
      await test.dispose();
    }
  });
});
