import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { AppError, unauthenticated } from '../lib/errors.ts';

/**
 * Verifies user JWTs from the trusted OIDC issuer: discovery document → jwks_uri → a remote key set that jose
 * caches and refetches when a token names an unknown key id (key rotation). Signature, `exp`, `nbf`, `iss` and
 * `aud` are all checked; only asymmetric algorithms are accepted.
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

async function discoverJwksUri(issuer: string, timeoutMs: number): Promise<URL> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`discovery answered ${response.status}`);
  const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  if (document.issuer !== issuer) throw new Error('discovery document names a different issuer');
  if (typeof document.jwks_uri !== 'string') throw new Error('discovery document has no jwks_uri');
  return new URL(document.jwks_uri);
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
  const timeoutMs = options.timeoutMs ?? 5000;
  let keySet: Promise<JWTVerifyGetKey> | undefined;

  function getKeySet(): Promise<JWTVerifyGetKey> {
    keySet ??= discoverJwksUri(options.issuer, timeoutMs).then((uri) =>
      createRemoteJWKSet(uri, { timeoutDuration: timeoutMs, cooldownDuration: 30_000, cacheMaxAge: 600_000 }),
    );
    // A failed discovery is not cached: the next request tries again.
    keySet.catch(() => {
      keySet = undefined;
    });
    return keySet;
  }

  return async function verifyUserJwt(jwt: string): Promise<VerifiedIdentity> {
    let keys: JWTVerifyGetKey;
    try {
      keys = await getKeySet();
    } catch {
      throw new AppError('unavailable', 'the identity provider cannot be reached to verify the token');
    }
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
      if (error instanceof joseErrors.JOSEError && error.code === 'ERR_JWKS_TIMEOUT') {
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
