import rateLimit from '@fastify/rate-limit';
import { AppError } from '../lib/errors.ts';
import type { FastifyTypeBox } from './fastify.types.ts';

/**
 * Requests per minute per caller (an API or policy token, a person, or the client address when no credential was
 * presented), counted per replica. Answers carry the IETF draft `RateLimit-Limit/Remaining/Reset` headers; over the
 * limit the answer is 429 with `Retry-After` and the usual error body. Counting runs after authentication and
 * before authorization (refused requests count too), so a caller is one caller whichever address it comes from.
 */
export async function installRateLimit(app: FastifyTypeBox, perMinute: number): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: perMinute,
    timeWindow: 60_000,
    hook: 'preParsing',
    enableDraftSpec: true,
    keyGenerator: (request) => {
      const principal = request.principal;
      if (principal === undefined) return `address:${request.ip}`;
      return principal.kind === 'user' ? `user:${principal.userId}` : `${principal.kind}:${principal.tokenId}`;
    },
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `too many requests: at most ${context.max} a minute; retry in ${context.after}`),
  });
}
