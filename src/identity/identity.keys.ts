import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import type { DB } from '../db/db.schema.ts';
import { isUniqueViolation } from '../db/db.errors.ts';
import { isoTimestamp, type Clock } from '../lib/clock.ts';

/**
 * The built-in provider's keys, kept in the database so every replica signs and publishes the same ones and a
 * restart does not invalidate tokens. Signing keys rotate: the newest active key signs; a retired key stays in
 * the JWKS for `RETIRED_KEY_PUBLISHED_MS`, longer than any token it signed lives, so those tokens keep verifying.
 */
export const SIGNING_ALGORITHM = 'RS256';

/** Longest lifetime of a token the provider signs (access and ID tokens: one hour), with a margin for clock skew. */
export const RETIRED_KEY_PUBLISHED_MS = 2 * 3600 * 1000;

export interface IdentityKeys {
  /** Private JWKs, the signing key first; the provider publishes their public halves. */
  signing: JWK[];
  /** Cookie-signing secrets, the newest first. */
  cookie: string[];
}

async function newSigningKey(): Promise<{ id: string; material: string }> {
  const { privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { modulusLength: 2048, extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { id: kid, material: JSON.stringify({ ...jwk, kid, alg: SIGNING_ALGORITHM, use: 'sig' }) };
}

async function insertKey(db: Kysely<DB>, clock: Clock, use: 'sig' | 'cookie', key: { id: string; material: string }): Promise<void> {
  await db.insertInto('identity_keys').values({ ...key, use, created_at: isoTimestamp(clock), retired_at: null }).execute();
}

/**
 * Reads the keys, creating the first signing key and cookie secret on first start. Two replicas starting together
 * may each create one; both are then active and published, which is harmless.
 */
export async function loadIdentityKeys(db: Kysely<DB>, clock: Clock): Promise<IdentityKeys> {
  const publishedSince = new Date(clock.now().getTime() - RETIRED_KEY_PUBLISHED_MS).toISOString();
  const rows = await db
    .selectFrom('identity_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', publishedSince)]))
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  const active = rows.filter((row) => row.use === 'sig' && row.retired_at === null);
  const retired = rows.filter((row) => row.use === 'sig' && row.retired_at !== null);
  const cookie = rows.filter((row) => row.use === 'cookie').map((row) => row.material);
  if (active.length === 0 || cookie.length === 0) {
    try {
      if (active.length === 0) await insertKey(db, clock, 'sig', await newSigningKey());
      if (cookie.length === 0) await insertKey(db, clock, 'cookie', { id: `cookie-${randomBytes(8).toString('hex')}`, material: randomBytes(32).toString('base64url') });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    return loadIdentityKeys(db, clock);
  }
  return { signing: [...active, ...retired].map((row) => JSON.parse(row.material) as JWK), cookie };
}

/** Makes a new signing key the one that signs; the previous ones stay published until their tokens have expired. */
export async function rotateSigningKey(db: Kysely<DB>, clock: Clock): Promise<string> {
  const key = await newSigningKey();
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('identity_keys').set({ retired_at: isoTimestamp(clock) }).where('use', '=', 'sig').where('retired_at', 'is', null).execute();
    await trx.insertInto('identity_keys').values({ ...key, use: 'sig', created_at: isoTimestamp(clock), retired_at: null }).execute();
  });
  return key.id;
}

/** Identifies a key set, to tell whether another replica (or a rotation) changed it. */
export function keySetFingerprint(keys: IdentityKeys): string {
  return [...keys.signing.map((key) => `${key.kid ?? ''}`), ...keys.cookie].join(',');
}
