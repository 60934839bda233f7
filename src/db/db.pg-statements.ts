import { createHash } from 'node:crypto';
import type pg from 'pg';
import { AppError } from '../lib/errors.ts';

/**
 * Server-side prepared statements on PostgreSQL (docs/operations.md, "Prepared statements").
 *
 * Kysely sends every query as an unnamed statement, so PostgreSQL parses and plans the same SQL text again on every
 * execution: measured on the bench:scale mix, parse and bind (which plans) were two thirds of the database's time
 * per statement. Here a query with parameters is sent under a name derived from its text: each pooled connection
 * parses it once, and after five executions PostgreSQL may keep a generic plan. Queries without parameters
 * (`begin`, `commit`, DDL) stay unnamed.
 *
 * - Names are the text's SHA-1, so one name always means one text on every connection. At most `maxTexts` texts get
 *   a name (lists of ids compile to one text per list length); the rest run unnamed, as before.
 * - A statement's result type is fixed when it is prepared. When a migration (another replica's, during a rolling
 *   upgrade) changes a table under `select *`, PostgreSQL refuses the kept statement with 0A000 "cached plan must
 *   not change result type". The text then gets a new name, so every connection prepares it again; the failed
 *   query is sent again at once unless it was inside a transaction, which that error has already aborted: that
 *   transaction fails once, as `unavailable` (503: send it again).
 */

const PLAN_RESULT_CHANGED = '0A000';
const DEFAULT_MAX_TEXTS = 1000;

type Send = (...args: unknown[]) => unknown;

interface Named {
  name: string;
  generation: number;
}

function nameOf(text: string, generation: number): string {
  return `s${createHash('sha1').update(text).digest('base64url').slice(0, 27)}_${generation}`;
}

function isPlanResultChanged(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === PLAN_RESULT_CHANGED && /cached plan must not change result type/i.test(String((error as Error).message));
}

const OPENS_TRANSACTION = /^\s*(begin|start\s+transaction)\b/i;
const ENDS_TRANSACTION = /^\s*(commit|rollback|end|abort)\s*;?\s*$/i;

/** Makes every connection `pool` opens from now on send parameterised queries as named statements. */
export function namePreparedStatements(pool: pg.Pool, options: { maxTexts?: number } = {}): void {
  const maxTexts = options.maxTexts ?? DEFAULT_MAX_TEXTS;
  const names = new Map<string, Named>();

  function namedFor(text: string): Named | undefined {
    const known = names.get(text);
    if (known !== undefined || names.size >= maxTexts) return known;
    const named = { name: nameOf(text, 0), generation: 0 };
    names.set(text, named);
    return named;
  }

  pool.on('connect', (client) => {
    const send = client.query.bind(client) as Send;
    let inTransaction = false;

    async function sendNamed(text: string, values: unknown[], named: Named): Promise<unknown> {
      try {
        return await send({ text, values, name: named.name });
      } catch (error) {
        if (!isPlanResultChanged(error)) throw error;
        if (names.get(text) === named) names.set(text, { name: nameOf(text, named.generation + 1), generation: named.generation + 1 });
        if (inTransaction) throw new AppError('unavailable', 'the database schema changed under this request (an upgrade is under way); send it again');
        return send({ text, values, name: names.get(text)?.name });
      }
    }

    // Only the (text, values) form Kysely sends is named; a callback, a config object or a Submittable (a cursor,
    // which must come back as it is, not in a promise) goes through unchanged.
    (client as unknown as { query: Send }).query = (...args: unknown[]) => {
      const [text, values] = args;
      if (args.length > 2 || typeof text !== 'string') return send(...args);
      if (!Array.isArray(values) || values.length === 0) {
        if (OPENS_TRANSACTION.test(text)) inTransaction = true;
        else if (ENDS_TRANSACTION.test(text)) inTransaction = false;
        return send(...args);
      }
      const named = namedFor(text);
      return named === undefined ? send(...args) : sendNamed(text, values, named);
    };
  });
}
