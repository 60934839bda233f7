import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import { recogniseToken } from '../auth/tokens.ts';
import { unauthenticated } from '../lib/errors.ts';

/**
 * Resolves `Authorization: Bearer|Token <token>` to a principal. Either word is accepted for either kind of
 * token (SPEC.md does not bind them); the token's own form says what it is: `slw_…` an API token, `slwp_…` a
 * policy API token, three dotted base64url parts a user JWT. Anything missing, malformed, unknown, expired or revoked is a 401.
 */
export interface AuthenticationPorts {
  resolveApiToken(value: string): Promise<Principal | undefined>;
  resolvePolicyToken(value: string): Promise<Principal | undefined>;
  /** Undefined when no OIDC issuer is configured: JWTs are then refused. */
  resolveUserJwt: ((jwt: string) => Promise<Principal>) | undefined;
}

const AUTHORIZATION = /^(Bearer|Token)\s+(\S+)\s*$/i;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * The credential of a caller that is not a principal (a cluster's operator or agent): `Bearer|Token <credential>`,
 * checked by whoever issued it. Missing or malformed → 401.
 */
export function bearerCredentialOf(request: FastifyRequest, what: string): string {
  const token = AUTHORIZATION.exec(request.headers.authorization ?? '')?.[2];
  if (token === undefined) throw unauthenticated(`${what} is required (Authorization: Bearer <credential>)`);
  return token;
}

export function createAuthenticator(ports: AuthenticationPorts) {
  return async function authenticate(request: FastifyRequest): Promise<Principal> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      throw unauthenticated('missing Authorization header; send "Authorization: Bearer <token>"');
    }
    const match = AUTHORIZATION.exec(header);
    const token = match?.[2];
    if (token === undefined) {
      throw unauthenticated('malformed Authorization header; expected "Bearer <token>" or "Token <token>"');
    }
    const kind = recogniseToken(token);
    if (kind === 'api') {
      const principal = await ports.resolveApiToken(token);
      if (principal === undefined) throw unauthenticated('the API token is invalid, expired or revoked');
      return principal;
    }
    if (kind === 'policy') {
      const principal = await ports.resolvePolicyToken(token);
      if (principal === undefined) throw unauthenticated('the policy API token is invalid, expired or revoked');
      return principal;
    }
    if (kind === undefined && JWT_SHAPE.test(token)) {
      if (ports.resolveUserJwt === undefined) {
        throw unauthenticated('user tokens are not accepted: no OIDC issuer is configured (SLIPWAY_OIDC_ISSUER)');
      }
      return ports.resolveUserJwt(token);
    }
    throw unauthenticated('the token is not a valid Slipway token');
  };
}
