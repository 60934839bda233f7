import { base62Crc32, constantTimeEqual, randomBase62, sha256Hex } from '../lib/crypto.ts';
import { badRequest } from '../lib/errors.ts';

/**
 * Token format: `<prefix><43 base62 chars of 32 random bytes><6 base62 chars of the CRC-32 of the random part>`.
 * The kind prefix tells which table to look in (`slw_` API tokens, `slwp_` policy tokens, `slwe_` one-time cluster
 * operator enrollment tokens, `slwo_` enrolled operators' credentials); the checksum lets a
 * mistyped or truncated token be refused without a database read and lets secret scanners recognise ours.
 * Only the SHA-256 of the whole value is stored.
 */
export const TOKEN_PREFIXES = { api: 'slw_', policy: 'slwp_', enrollment: 'slwe_', operator: 'slwo_' } as const;
export type TokenKind = keyof typeof TOKEN_PREFIXES;

const RANDOM_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const BODY_PATTERN = /^[0-9A-Za-z]+$/;

export interface MintedToken {
  value: string;
  hash: string;
  /** Prefix plus the first random characters: enough to recognise the token, useless to guess it. */
  start: string;
}

export function mintToken(kind: TokenKind): MintedToken {
  const random = randomBase62(32, RANDOM_LENGTH);
  const value = `${TOKEN_PREFIXES[kind]}${random}${base62Crc32(random)}`;
  return { value, hash: hashToken(value), start: value.slice(0, TOKEN_PREFIXES[kind].length + 6) };
}

export function hashToken(value: string): string {
  return sha256Hex(value);
}

/** The kind of a well-formed token with a valid checksum, or undefined for anything else. */
export function recogniseToken(value: string): TokenKind | undefined {
  // No prefix starts another (`slw_` vs `slwp_`: the fourth character differs), so the first match is the kind.
  const kind = (Object.keys(TOKEN_PREFIXES) as TokenKind[]).find((k) => value.startsWith(TOKEN_PREFIXES[k]));
  if (kind === undefined) return undefined;
  const body = value.slice(TOKEN_PREFIXES[kind].length);
  if (body.length !== RANDOM_LENGTH + CHECKSUM_LENGTH || !BODY_PATTERN.test(body)) return undefined;
  const random = body.slice(0, RANDOM_LENGTH);
  return body.slice(RANDOM_LENGTH) === base62Crc32(random) ? kind : undefined;
}

/**
 * The `expires_at` a client asked for, as stored (UTC with milliseconds), or null for a token that does not
 * expire. Refused: an instant not in the future, and a date-time the schema accepts but no instant matches (RFC
 * 3339 allows a leap second, `23:59:60`, which JavaScript dates cannot represent).
 */
export function requestedExpiry(value: string | null | undefined, now: string): string | null {
  if (value === undefined || value === null) return null;
  const time = Date.parse(value);
  if (Number.isNaN(time)) {
    throw badRequest('expires_at names no instant', [{ field: '/expires_at', message: 'must be a date-time without a leap second' }]);
  }
  const expiresAt = new Date(time).toISOString();
  if (expiresAt <= now) throw badRequest('expires_at is in the past', [{ field: '/expires_at', message: 'must be in the future' }]);
  return expiresAt;
}

/**
 * Whether a stored token, found by the hash of a presented value, answers for it: the hashes match (compared in
 * constant time) and it has not expired at `now`.
 */
export function storedTokenIsLive(row: { token_hash: string; expires_at: string | null } | undefined, hash: string, now: string): boolean {
  return row !== undefined && constantTimeEqual(row.token_hash, hash) && (row.expires_at === null || row.expires_at > now);
}
