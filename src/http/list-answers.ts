import type { FastifyReply } from 'fastify';

/**
 * Serialized answers of unpaged lists, kept by one replica under the revision the database counts for them
 * (db.list-revisions.ts). An unpaged list costs in proportion to its bytes — reading every row, serializing, encoding
 * (10,000 projects: 2.4 MB, about 25 ms of CPU on this machine, docs/benchmarks.md) — while it changes far less
 * often than it is read. A request whose revision is the one an answer was kept under is answered with those bytes;
 * any other revision builds the answer again, serializes it with the route's own response schema (`reply.serialize`:
 * exactly what the uncached route would send) and keeps it instead.
 *
 * Correct across replicas because the revision lives in the database and moves in the writing transaction: the
 * caller reads it before the rows, so an answer is never older than its revision, and a write through any replica is
 * a new revision for all of them. Bounded: past `maxBytes` the least recently used answers go.
 */
export interface ListAnswers {
  send(reply: FastifyReply, key: string, revision: string, build: () => Promise<unknown>): Promise<FastifyReply>;
  /** Bytes kept now (for tests and metrics). */
  keptBytes(): number;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Below this an answer is cheaper to build than to hold: it is sent without being kept. */
const SMALLEST_KEPT_BYTES = 8 * 1024;

export function createListAnswers(maxBytes: number): ListAnswers {
  // Insertion order is recency: a hit moves its entry to the end, eviction takes from the front.
  const kept = new Map<string, { revision: string; body: Buffer }>();
  let bytes = 0;

  function forget(key: string): void {
    const entry = kept.get(key);
    if (entry === undefined) return;
    kept.delete(key);
    bytes -= entry.body.byteLength;
  }

  function keep(key: string, revision: string, body: Buffer): void {
    forget(key);
    if (body.byteLength < SMALLEST_KEPT_BYTES || body.byteLength > maxBytes) return;
    kept.set(key, { revision, body });
    bytes += body.byteLength;
    for (const [oldest] of kept) {
      if (bytes <= maxBytes) break;
      forget(oldest);
    }
  }

  return {
    async send(reply, key, revision, build) {
      const entry = kept.get(key);
      if (entry !== undefined && entry.revision === revision) {
        kept.delete(key);
        kept.set(key, entry);
        return reply.type(JSON_CONTENT_TYPE).send(entry.body);
      }
      // The route's response schema serializes to text (fast-json-stringify).
      const body = Buffer.from(reply.serialize(await build()) as string);
      keep(key, revision, body);
      return reply.type(JSON_CONTENT_TYPE).send(body);
    },
    keptBytes: () => bytes,
  };
}
