import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { isUniqueViolation } from '../../db/db.errors.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { AppError, conflict } from '../../lib/errors.ts';
import {
  completeIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  deleteIdempotencyKey,
  findIdempotencyKey,
  insertIdempotencyKey,
  type IdempotencyKeyRow,
} from './idempotency.repo.ts';

/**
 * `Idempotency-Key` for POST requests (DESIGN.md §4), as a small state machine per (caller, key):
 *
 *   (none) ──claim──▶ PENDING ──answer < 500──▶ DONE    replays of the same request get the kept answer
 *                        │     ──answer with a secret──▶ SECRET  replays get 409: a secret is shown once, never kept
 *                        └──answer ≥ 500, or abandoned for 60 s──▶ (none)  the client may retry
 *
 * A retry must be the same request (method, path, body); another request under the same key is refused (422).
 * A second request while the first is still running gets 409. Keys are kept for 24 hours.
 */
export interface IdempotencyDeps {
  db: Kysely<DB>;
  clock: Clock;
}

export type IdempotencyClaim =
  | { kind: 'proceed' }
  | { kind: 'replay'; status: number; contentType: string; body: string }
  | { kind: 'refuse'; error: AppError };

export interface IdempotentAnswer {
  status: number;
  contentType: string;
  body: string;
  /** The answer carries a secret shown once (`Cache-Control: no-store`): it is not kept. */
  secret: boolean;
}

const KEEP_MS = 24 * 60 * 60 * 1000;
const ABANDONED_AFTER_MS = 60 * 1000;
const SERVER_ERROR = 500;

export function createIdempotencyService(deps: IdempotencyDeps) {
  const { db, clock } = deps;

  function answerFor(row: IdempotencyKeyRow, requestHash: string, nowMs: number): IdempotencyClaim | undefined {
    if (row.request_hash !== requestHash) {
      return {
        kind: 'refuse',
        error: new AppError('unprocessable', 'this Idempotency-Key was used for a different request; use a new key for a new request'),
      };
    }
    if (row.state === 'DONE' && row.status !== null && row.body !== null) {
      return { kind: 'replay', status: row.status, contentType: row.content_type ?? 'application/json', body: row.body };
    }
    if (row.state === 'SECRET') {
      return {
        kind: 'refuse',
        error: conflict('a request with this Idempotency-Key already succeeded; its answer held a secret that is shown only once'),
      };
    }
    if (nowMs - Date.parse(row.created_at) < ABANDONED_AFTER_MS) {
      return { kind: 'refuse', error: conflict('a request with this Idempotency-Key is still in progress') };
    }
    return undefined;
  }

  async function claim(scopeHash: string, requestHash: string): Promise<IdempotencyClaim> {
    const now = clock.now();
    const nowIso = now.toISOString();
    const existing = await findIdempotencyKey(db, scopeHash);
    if (existing !== undefined) {
      if (existing.expires_at > nowIso) {
        const answer = answerFor(existing, requestHash, now.getTime());
        if (answer !== undefined) return answer;
      }
      // Expired, or a claim abandoned by a request that never answered: free it, once, for this request.
      await deleteIdempotencyKey(db, scopeHash, existing.created_at);
    }
    try {
      await insertIdempotencyKey(db, {
        scope_hash: scopeHash,
        request_hash: requestHash,
        state: 'PENDING',
        status: null,
        content_type: null,
        body: null,
        created_at: nowIso,
        expires_at: new Date(now.getTime() + KEEP_MS).toISOString(),
      });
    } catch (error) {
      if (isUniqueViolation(error)) return { kind: 'refuse', error: conflict('a request with this Idempotency-Key is still in progress') };
      throw error;
    }
    return { kind: 'proceed' };
  }

  async function record(scopeHash: string, answer: IdempotentAnswer): Promise<void> {
    if (answer.status >= SERVER_ERROR) {
      const row = await findIdempotencyKey(db, scopeHash);
      if (row !== undefined) await deleteIdempotencyKey(db, scopeHash, row.created_at);
      return;
    }
    await completeIdempotencyKey(
      db,
      scopeHash,
      answer.secret
        ? { state: 'SECRET', status: answer.status, content_type: null, body: null }
        : { state: 'DONE', status: answer.status, content_type: answer.contentType, body: answer.body },
    );
  }

  return {
    claim,
    record,
    removeExpired: () => deleteExpiredIdempotencyKeys(db, isoTimestamp(clock)),
  };
}

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;
