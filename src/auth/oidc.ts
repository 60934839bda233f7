import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { AppError, unauthenticated } from '../lib/errors.ts';

/**
 * Verifies user JWTs from the trusted OIDC issuer: discovery document → jwks_uri → the issuer's keys, cached and
 * fetched again when they grow old or when a token names a key id they lack (key rotation). Signature, `exp`,
 * `nbf`, `iss` and `aud` are all checked; only asymmetric algorithms are accepted.
 */
export interface VerifiedIdentity {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  picture: string | null;
}

export interface OidcVerifierOptions {
  issuer: string;
  audience: string;
  /** How long a discovery or JWKS request may take. */
  timeoutMs?: number;
}

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

function stringClaim(payload: JWTPayload, name: string): string | null {
  const value = payload[name];
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * Whether a fetch failed on a pooled keep-alive connection the server had just closed (it reset it, or the socket
 * ended as the request went out): the request never reached the server, and a GET on a new connection is safe.
 */
function staleConnection(error: unknown): boolean {
  const code = ((error as { cause?: { code?: unknown } }).cause?.code ?? '') as string;
  return error instanceof TypeError && ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(code);
}

async function fetchJson(url: string | URL, timeoutMs: number): Promise<unknown> {
  const signal = AbortSignal.timeout(timeoutMs);
  const get = () => fetch(url, { signal, headers: { accept: 'application/json' } });
  const response = await get().catch((error: unknown) => {
    if (staleConnection(error)) return get();
    throw error;
  });
  if (!response.ok) throw new Error(`${String(url)} answered ${response.status}`);
  return response.json();
}

async function discoverJwksUri(issuer: string, timeoutMs: number): Promise<URL> {
  const document = (await fetchJson(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, timeoutMs)) as {
    issuer?: unknown;
    jwks_uri?: unknown;
  };
  if (document.issuer !== issuer) throw new Error('discovery document names a different issuer');
  if (typeof document.jwks_uri !== 'string') throw new Error('discovery document has no jwks_uri');
  return new URL(document.jwks_uri);
}

/** The issuer's keys could not be fetched: the token can be neither accepted nor refused. */
class KeysUnavailable extends Error {}

/** Keys older than this are fetched again before use. */
const KEYS_MAX_AGE_MS = 600_000;
/**
 * At most one fetch per this period is caused by tokens naming unknown key ids (or retries a failed refresh), so
 * tokens with made-up key ids cannot make Slipway hammer the identity provider.
 */
const REFETCH_COOLDOWN_MS = 30_000;

/**
 * The issuer's key set. Unlike a plain cooldown after every fetch, the first token signed with a newly rotated key
 * triggers a fetch even right after a scheduled one, so a rotation is honoured at once; only fetches caused by
 * unknown key ids are rate-limited. Keys that have grown old keep verifying while the provider is unreachable.
 */
function createIssuerKeys(issuer: string, timeoutMs: number): JWTVerifyGetKey {
  let jwksUri: Promise<URL> | undefined;
  let current: { keys: ReturnType<typeof createLocalJWKSet>; fetchedAt: number } | undefined;
  let pending: Promise<ReturnType<typeof createLocalJWKSet>> | undefined;
  let lastUnknownKeyFetch = Number.NEGATIVE_INFINITY;
  let lastFailedFetch = Number.NEGATIVE_INFINITY;

  function discover(): Promise<URL> {
    if (jwksUri === undefined) {
      const discovery = discoverJwksUri(issuer, timeoutMs);
      // A failed discovery is not kept: the next fetch tries again.
      discovery.catch(() => {
        if (jwksUri === discovery) jwksUri = undefined;
      });
      jwksUri = discovery;
    }
    return jwksUri;
  }

  function fetchKeys(): Promise<ReturnType<typeof createLocalJWKSet>> {
    pending ??= (async () => {
      try {
        const keys = createLocalJWKSet((await fetchJson(await discover(), timeoutMs)) as JSONWebKeySet);
        current = { keys, fetchedAt: Date.now() };
        return keys;
      } catch (error) {
        lastFailedFetch = Date.now();
        throw new KeysUnavailable('the identity provider keys cannot be fetched', { cause: error });
      } finally {
        pending = undefined;
      }
    })();
    return pending;
  }

  async function keysToUse(now: number): Promise<ReturnType<typeof createLocalJWKSet>> {
    if (current === undefined) return fetchKeys();
    if (now - current.fetchedAt >= KEYS_MAX_AGE_MS && now - lastFailedFetch >= REFETCH_COOLDOWN_MS) {
      const stale = current.keys;
      return fetchKeys().catch(() => stale);
    }
    return current.keys;
  }

  return async function issuerKey(header, token) {
    const now = Date.now();
    const keys = await keysToUse(now);
    try {
      return await keys(header, token);
    } catch (error) {
      if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
      // A fetch under way, or finished since these keys were read, may hold the key: a burst of tokens signed
      // with a freshly rotated key waits for one fetch instead of being refused by the cooldown.
      const newer = pending ?? (current !== undefined && current.keys !== keys ? Promise.resolve(current.keys) : undefined);
      if (newer !== undefined) return (await newer)(header, token);
      if (now - lastUnknownKeyFetch < REFETCH_COOLDOWN_MS) throw error;
      lastUnknownKeyFetch = now;
      return (await fetchKeys())(header, token);
    }
  };
}

function rejection(error: unknown): AppError {
  if (error instanceof joseErrors.JWTExpired) return unauthenticated('the token has expired');
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    return unauthenticated(`the token's ${error.claim} claim is not accepted`);
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey) return unauthenticated('the token is signed with an unknown key');
  return unauthenticated('the token is not a valid signed JWT of the trusted issuer');
}

export function createOidcVerifier(options: OidcVerifierOptions): (jwt: string) => Promise<VerifiedIdentity> {
  const keys = createIssuerKeys(options.issuer, options.timeoutMs ?? 5000);

  return async function verifyUserJwt(jwt: string): Promise<VerifiedIdentity> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(jwt, keys, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: ALGORITHMS,
        clockTolerance: 5,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (error) {
      if (error instanceof KeysUnavailable) {
        throw new AppError('unavailable', 'the identity provider cannot be reached to verify the token');
      }
      throw rejection(error);
    }
    return {
      issuer: options.issuer,
      subject: payload.sub as string,
      email: stringClaim(payload, 'email'),
      emailVerified: payload.email_verified === true,
      name: stringClaim(payload, 'name'),
      picture: stringClaim(payload, 'picture'),
    };
  };
}
