import rateLimit from '@fastify/rate-limit';
import type { Database } from '../db/db.client.ts';
import { AppError } from '../lib/errors.ts';
import type { FastifyTypeBox } from './fastify.types.ts';
import { connectRateLimitRedis, postgresRateLimitStore } from './rate-limit.stores.ts';

/** The prefix of the rate limit's keys in Redis (one per caller, expiring with its window). */
export const RATE_LIMIT_REDIS_PREFIX = 'slipway-rate-limit:';

export interface RateLimitOptions {
  perMinute: number;
  /** Where the counts live (rate-limit.stores.ts): Redis when given, else PostgreSQL's table, else this process. */
  redisUrl?: string | undefined;
  database: Pick<Database, 'db' | 'dialect'>;
}

/**
 * Requests per minute per caller (an API or policy token, a person, or the client address when no credential was
 * presented), counted by all replicas together (rate-limit.stores.ts). Answers carry the IETF draft
 * `RateLimit-Limit/Remaining/Reset` headers; over the limit the answer is 429 with `Retry-After` and the usual error
 * body. Counting runs after authentication and before authorization (refused requests count too), so a caller is one
 * caller whichever address it comes from. A shared store that fails lets requests through (`skipOnError`).
 */
export async function installRateLimit(app: FastifyTypeBox, options: RateLimitOptions): Promise<void> {
  const redis = options.redisUrl === undefined ? undefined : await connectRateLimitRedis(options.redisUrl, app.log);
  if (redis !== undefined) {
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
  }
  const store =
    redis !== undefined
      ? { redis, nameSpace: RATE_LIMIT_REDIS_PREFIX }
      : options.database.dialect === 'postgres'
        ? { store: postgresRateLimitStore(options.database.db, app.log) }
        : {};
  await app.register(rateLimit, {
    global: true,
    max: options.perMinute,
    timeWindow: 60_000,
    hook: 'preParsing',
    enableDraftSpec: true,
    skipOnError: true,
    ...store,
    keyGenerator: (request) => {
      const principal = request.principal;
      if (principal === undefined) return `address:${request.ip}`;
      return principal.kind === 'user' ? `user:${principal.userId}` : `${principal.kind}:${principal.tokenId}`;
    },
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `too many requests: at most ${context.max} a minute; retry in ${context.after}`),
  });
}
