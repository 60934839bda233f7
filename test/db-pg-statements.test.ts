import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/db/db.client.ts';
import { namePreparedStatements } from '../src/db/db.pg-statements.ts';
import type { DB } from '../src/db/db.schema.ts';
import { newId } from '../src/lib/ids.ts';
import { TEST_DIALECTS } from './support/databases.ts';

/**
 * Named prepared statements on PostgreSQL (src/db/db.pg-statements.ts), on a real server: a parameterised query is
 * prepared once per connection; a table changed under a kept `select *` (another replica's migration) is prepared
 * again — at once outside a transaction, after one failed transaction inside one; the setting turns it off; only so
 * many texts get a name.
 */

const POSTGRES_URL = process.env.SLIPWAY_TEST_DATABASE_URL ?? '';

interface Scratch {
  schema: string;
  database: Database;
}

describe.runIf(TEST_DIALECTS.includes('postgres'))('prepared statements on PostgreSQL', () => {
  const opened: Scratch[] = [];
  const pools: pg.Pool[] = [];

  async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  /** A database of one connection in a schema of its own, so what that connection prepared can be asked of it. */
  async function scratch(preparedStatements?: boolean): Promise<Scratch> {
    const schema = `test_${newId().replaceAll('-', '')}`;
    await admin((client) => client.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.things (id integer primary key, name text not null); INSERT INTO ${schema}.things VALUES (1, 'one'), (2, 'two')`));
    const database = openDatabase({ dialect: 'postgres', url: POSTGRES_URL, schema, maxConnections: 1, ...(preparedStatements === undefined ? {} : { preparedStatements }) });
    const created = { schema, database };
    opened.push(created);
    return created;
  }

  /** What the pool's only connection holds prepared (asked without parameters, so the question itself is not). */
  async function prepared(db: Kysely<DB>): Promise<string[]> {
    const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements order by prepare_time`.execute(db);
    return rows.map((row) => row.statement);
  }

  function thing(db: Kysely<DB>, id: number) {
    return sql<Record<string, unknown>>`select * from things where id = ${id}`.execute(db).then((result) => result.rows[0]);
  }

  afterEach(async () => {
    for (const { schema, database } of opened.splice(0)) {
      await database.close();
      await admin((client) => client.query(`DROP SCHEMA ${schema} CASCADE`));
    }
    for (const pool of pools.splice(0)) await pool.end();
  });

  it('prepares a parameterised query once on its connection and runs it from there; begin, commit and plain SQL stay unnamed', async () => {
    const { database } = await scratch();
    expect(await thing(database.db, 1)).toEqual({ id: 1, name: 'one' });
    await database.db.transaction().execute(async (trx) => {
      expect(await thing(trx, 2)).toEqual({ id: 2, name: 'two' });
    });
    expect(await thing(database.db, 1)).toEqual({ id: 1, name: 'one' });
    expect(await prepared(database.db)).toEqual(['select * from things where id = $1']);
  });

  it('prepares a statement again once a migration changed its result: at once outside a transaction, after one failed transaction inside', async () => {
    const { schema, database } = await scratch();
    expect(await thing(database.db, 1)).toEqual({ id: 1, name: 'one' });

    // Another replica adds a column: the kept statement's `*` no longer matches the table.
    await admin((client) => client.query(`ALTER TABLE ${schema}.things ADD COLUMN colour text NOT NULL DEFAULT 'red'`));
    expect(await thing(database.db, 1)).toEqual({ id: 1, name: 'one', colour: 'red' });

    await admin((client) => client.query(`ALTER TABLE ${schema}.things ADD COLUMN size integer NOT NULL DEFAULT 3`));
    const inTransaction = () => database.db.transaction().execute((trx) => thing(trx, 2));
    await expect(inTransaction()).rejects.toMatchObject({ kind: 'unavailable', message: expect.stringContaining('send it again') });
    expect(await inTransaction()).toEqual({ id: 2, name: 'two', colour: 'red', size: 3 });
    // Each change left the statement under a new name; the connection is healthy for everything else.
    expect(await prepared(database.db)).toHaveLength(3);
    expect(await database.db.selectFrom('things' as never).select(sql<number>`count(*)::int`.as('count')).executeTakeFirst()).toEqual({ count: 2 });
  });

  it('prepares nothing when the installation turns it off (SLIPWAY_DATABASE_PREPARED_STATEMENTS=false)', async () => {
    const { database } = await scratch(false);
    expect(await thing(database.db, 1)).toEqual({ id: 1, name: 'one' });
    expect(await thing(database.db, 2)).toEqual({ id: 2, name: 'two' });
    expect(await prepared(database.db)).toEqual([]);
  });

  it('names at most so many texts (lists of ids compile to one text per length); the rest run unnamed and answer alike', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    pools.push(pool);
    namePreparedStatements(pool, { maxTexts: 2 });
    // The (text, values) form Kysely sends on a client of the pool.
    const client = await pool.connect();
    try {
      const answers = [];
      for (const ids of [[1], [1, 2], [1, 2, 3], [1, 2, 3, 4], [5]]) {
        const list = ids.map((_, index) => `$${index + 1}`).join(', ');
        const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from unnest(array[${list}]::int[])`, ids);
        answers.push(rows[0]?.n);
      }
      expect(answers).toEqual([1, 2, 3, 4, 1]);
      const { rows } = await client.query<{ statement: string }>('select statement from pg_prepared_statements order by prepare_time');
      expect(rows.map((row) => row.statement)).toEqual(['select count(*)::int as n from unnest(array[$1]::int[])', 'select count(*)::int as n from unnest(array[$1, $2]::int[])']);
    } finally {
      client.release();
    }
  });
});
