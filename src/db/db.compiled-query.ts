import type { Compilable, CompiledQuery } from 'kysely';
import type { Queryable } from './db.schema.ts';

/**
 * A query of the request path that Kysely would otherwise build and compile again on every request (the token lookup
 * of every authenticated request): `build` runs once per database handle with a stand-in for the one parameter, and
 * each call then executes the compiled SQL with the real value in the stand-in's place. Building and compiling cost
 * more than an indexed SQLite read (docs/benchmarks.md, issue 26).
 *
 * Each handle keeps its own compilation, as SQLite and PostgreSQL write their SQL differently; a transaction is a
 * handle of its own (compiled at its first use, forgotten with it).
 */
const STAND_IN = '\u0000compiled-query-parameter';

export function compiledOnce<Row>(build: (db: Queryable, parameter: string) => Compilable<Row>): (db: Queryable, parameter: string) => Promise<Row[]> {
  const compiled = new WeakMap<Queryable, { query: CompiledQuery<Row>; position: number }>();

  function compile(db: Queryable): { query: CompiledQuery<Row>; position: number } {
    const query = build(db, STAND_IN).compile();
    const position = query.parameters.indexOf(STAND_IN);
    // A value the builder put somewhere else (in the SQL text, or twice) would leave a stale parameter behind.
    if (position === -1 || query.parameters.lastIndexOf(STAND_IN) !== position || query.sql.includes(STAND_IN)) {
      throw new Error(`compiledOnce: the parameter must be bound exactly once in ${query.sql}`);
    }
    const entry = { query, position };
    compiled.set(db, entry);
    return entry;
  }

  return async (db, parameter) => {
    const { query, position } = compiled.get(db) ?? compile(db);
    const parameters = [...query.parameters];
    parameters[position] = parameter;
    const result = await db.executeQuery<Row>({ ...query, parameters });
    return result.rows;
  };
}
