import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { ScheduledWork } from '../jobs/job-schedules.ts';
import { hmacSha256Hex, sha256Hex } from '../lib/crypto.ts';
import { badRequest } from '../lib/errors.ts';
import type { IdempotencyService } from '../modules/idempotency/idempotency.service.ts';
import type { FastifyTypeBox } from './fastify.types.ts';

/**
 * `Idempotency-Key: <1–255 visible ASCII characters>` on an authenticated POST makes a retry safe: the same caller
 * sending the same request under the same key gets the first answer again (marked `Idempotent-Replayed: true`)
 * instead of a second effect. The state machine lives in modules/idempotency; this file only ties it to the request
 * life cycle: claim after validation (an invalid request is never kept), record when the answer is sent.
 */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyScope: string | undefined;
  }
}

function callerOf(principal: Principal): string {
  return principal.kind === 'user' ? `user:${principal.userId}` : `${principal.kind}:${principal.tokenId}`;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Kept answers expire after a day; they are cleared at start and hourly, never on the request path. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** Clearing expired keys, a schedule of the installation (src/jobs/job-schedules.ts); expired keys are ignored anyway. */
export function idempotencySweepSchedule(idempotency: Pick<IdempotencyService, 'removeExpired'>): ScheduledWork {
  return { name: 'idempotency-sweep', intervalMs: SWEEP_INTERVAL_MS, atStart: true, run: () => idempotency.removeExpired() };
}

/**
 * `fingerprintKey` keys the digest of each request body that is kept for a day: bodies may carry short secrets (a card
 * number and cvv, a token), which a plain SHA-256 would give away to anyone reading the table.
 */
export function installIdempotency(app: FastifyTypeBox, idempotency: Pick<IdempotencyService, 'claim' | 'record'>, fingerprintKey: Buffer): void {
  app.decorateRequest('idempotencyScope', undefined);

  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'POST' || request.principal === undefined) return;
    const key = headerValue(request.headers['idempotency-key']);
    if (key === undefined) return;
    if (!KEY_PATTERN.test(key)) {
      throw badRequest('invalid Idempotency-Key header', [{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }]);
    }
    const scope = sha256Hex(`${callerOf(request.principal)}\n${key}`);
    const fingerprint = hmacSha256Hex(fingerprintKey, `${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`);
    const claim = await idempotency.claim(scope, fingerprint);
    if (claim.kind === 'refuse') throw claim.error;
    if (claim.kind === 'replay') {
      return reply.code(claim.status).header('idempotent-replayed', 'true').type(claim.contentType).send(claim.body);
    }
    request.idempotencyScope = scope;
    return undefined;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const scope = request.idempotencyScope;
    if (scope === undefined) return payload;
    request.idempotencyScope = undefined;
    const cacheControl = String(reply.getHeader('cache-control') ?? '');
    await idempotency.record(scope, {
      status: reply.statusCode,
      contentType: String(reply.getHeader('content-type') ?? 'application/json'),
      body: typeof payload === 'string' ? payload : '',
      secret: cacheControl.includes('no-store') || typeof payload !== 'string',
    });
    return payload;
  });
}
