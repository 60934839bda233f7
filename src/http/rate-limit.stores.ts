import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/db.schema.ts';

/**
 * Where the rate limit counts (docs/operations.md, "Running N replicas"): a count shared by every replica, so a caller
 * gets N a minute in all whichever replicas answer it, not N per replica.
 *
 * - Redis (SLIPWAY_REDIS_URL): @fastify/rate-limit's own Redis store over ioredis (one Lua script per request).
 * - PostgreSQL without Redis: one row per caller in `rate_limit_counters` (migration 0054), counted by one atomic
 *   `INSERT … ON CONFLICT DO UPDATE … RETURNING` whose window is read from the database's clock, so replicas whose
 *   clocks differ still share one window. A caller's row starts a new window when the old one has ended; rows of
 *   callers gone quiet are swept now and then by whichever replica counts.
 * - SQLite: one process, the plugin's in-memory store.
 *
 * A shared store that fails (Redis down, the database refusing) fails open: the request is let through, and the
 * outage logged as a warning once a minute at most — a limiter must never turn into an outage of the API.
 */

export interface RateLimitLog {
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

/** Logs an outage of the shared store when it begins and once a minute while it lasts, and its end. */
export function createOutageLog(log: RateLimitLog, store: string, everyMs = 60_000) {
  let failingSince: number | undefined;
  let lastLogged = 0;
  return {
    failed(error: unknown): void {
      const now = Date.now();
      failingSince ??= now;
      if (now - lastLogged < everyMs) return;
      lastLogged = now;
      const message = error instanceof Error ? error.message : String(error);
      log.warn({ store, failingSinceMs: now - failingSince }, `the rate limit's ${store} store fails (${message}): requests are let through uncounted`);
    },
    succeeded(): void {
      if (failingSince === undefined) return;
      log.info({ store, failedForMs: Date.now() - failingSince }, `the rate limit's ${store} store answers again`);
      failingSince = undefined;
      lastLogged = 0;
    },
  };
}

interface Counted {
  current: number;
  ttl: number;
}

/** Counts one request of `key` in its current window (starting one when none runs); the database's clock decides. */
export async function countRequest(db: Kysely<DB>, key: string, windowMs: number): Promise<Counted> {
  const window = sql`make_interval(secs => ${windowMs / 1000}::double precision)`;
  const result = await sql<{ count: number; ttl_ms: number }>`
    insert into rate_limit_counters as c (key, window_start, count) values (${key}, now(), 1)
    on conflict (key) do update set
      count = case when c.window_start <= now() - ${window} then 1 else c.count + 1 end,
      window_start = case when c.window_start <= now() - ${window} then now() else c.window_start end
    returning count, ceil(extract(epoch from (window_start + ${window} - now())) * 1000)::integer as ttl_ms`.execute(db);
  const row = result.rows[0];
  if (row === undefined) throw new Error('counting a request returned no row');
  return { current: Number(row.count), ttl: Math.max(0, Number(row.ttl_ms)) };
}

/** Removes the rows of callers whose window ended more than one window ago (they would start afresh anyway). */
export async function sweepRateLimitCounters(db: Kysely<DB>, windowMs: number): Promise<void> {
  await sql`delete from rate_limit_counters where window_start < now() - make_interval(secs => ${(2 * windowMs) / 1000}::double precision)`.execute(db);
}

/** The PostgreSQL store as the plugin wants it: a class it constructs itself. */
export function postgresRateLimitStore(db: Kysely<DB>, log: RateLimitLog): FastifyRateLimitStoreCtor {
  const outage = createOutageLog(log, 'PostgreSQL');
  let lastSweep = Date.now();

  function sweepIfDue(windowMs: number): void {
    const now = Date.now();
    if (now - lastSweep < windowMs) return;
    lastSweep = now;
    sweepRateLimitCounters(db, windowMs).catch((error: unknown) => outage.failed(error));
  }

  class PostgresRateLimitStore implements FastifyRateLimitStore {
    private readonly prefix: string;
    constructor(_options?: unknown, prefix = '') {
      this.prefix = prefix;
    }

    incr(key: string, callback: (error: Error | null, result?: Counted) => void, timeWindow: number): void {
      countRequest(db, `${this.prefix}${key}`, timeWindow).then(
        (counted) => {
          outage.succeeded();
          sweepIfDue(timeWindow);
          callback(null, counted);
        },
        (error: unknown) => {
          outage.failed(error);
          callback(error instanceof Error ? error : new Error(String(error)));
        },
      );
    }

    child(routeOptions: { method?: unknown; url?: unknown }): FastifyRateLimitStore {
      return new PostgresRateLimitStore(undefined, `${this.prefix}${String(routeOptions.method)}${String(routeOptions.url)}-`);
    }
  }
  return PostgresRateLimitStore;
}

/**
 * The Redis client of the rate limit: commands fail at once while Redis is unreachable (no offline queue, one
 * attempt, a second at most) rather than holding requests, and the connection is retried in the background.
 */
export async function connectRateLimitRedis(url: string, log: RateLimitLog): Promise<Redis> {
  const outage = createOutageLog(log, 'Redis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
  });
  redis.on('error', (error: unknown) => outage.failed(error));
  redis.on('ready', () => outage.succeeded());
  await redis.connect().catch((error: unknown) => outage.failed(error));
  return redis;
}
