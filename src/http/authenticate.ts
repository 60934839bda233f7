import type { FastifyError, FastifyReply, FastifyRequest, onRequestAsyncHookHandler, preValidationAsyncHookHandler } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import { recogniseToken } from '../auth/tokens.ts';
import { AppError, unauthenticated } from '../lib/errors.ts';
import { handleError } from './errors.ts';

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

/**
 * Callers of `/operator/v1/*` are clusters — their operator or agent — not principals, so the user API's
 * authentication (security.ts) lets those routes through as public and each authenticates its caller with one of
 * the hooks below, at the same point of the request: before the body is read or anything of the request is
 * validated. An anonymous or wrongly credentialed caller gets 401 whatever its body, path or query, and learns
 * nothing of the shape the route expects (which validation would tell it, field by field).
 */
const clusterOfRequest = new WeakMap<FastifyRequest, string>();

/** The route's onRequest hook: the credential in `Authorization` must be one `authenticate` accepts (401 otherwise). */
export function clusterCredentialHook(authenticate: (credential: string) => Promise<{ clusterId: string }>, what: string): onRequestAsyncHookHandler {
  return async (request) => {
    const { clusterId } = await authenticate(bearerCredentialOf(request, what));
    clusterOfRequest.set(request, clusterId);
  };
}

/** The cluster a request's credential belongs to, on a route that has clusterCredentialHook. */
export function authenticatedClusterId(request: FastifyRequest): string {
  const clusterId = clusterOfRequest.get(request);
  // Fails closed: a route whose options lost the hook answers 500 rather than serving an unauthenticated caller.
  if (clusterId === undefined) throw new AppError('internal', 'operator route reached without its credential hook');
  return clusterId;
}

/**
 * The hooks of a route whose credential is a field of its JSON body (the operator's one-time enrollment token, sent
 * there by every operator already installed). The body is the credential, so it is checked in preValidation — the
 * first moment the body exists, still before it is validated — with `check` (401 unless the credential is good;
 * only checked, so the handler can use it up atomically). A body that cannot be read at all (not JSON, another media
 * type, too large) carries no credential either: the route's error handler answers those 401 too, instead of the
 * parser's 400, 413 or 415.
 */
export function bodyCredentialHooks(options: { field: string; what: string; check(credential: string): Promise<void> }): {
  preValidation: preValidationAsyncHookHandler;
  errorHandler(error: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply;
} {
  // The message names what is missing, not where it goes: the body's fields are for those who hold the credential.
  const missing = () => unauthenticated(`${options.what} is required`);
  return {
    preValidation: async (request) => {
      const body = request.body;
      const credential = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)[options.field] : undefined;
      if (typeof credential !== 'string' || credential === '') throw missing();
      await options.check(credential);
    },
    errorHandler: (error, request, reply) => {
      const code = (error as Partial<FastifyError>).code;
      if (typeof code === 'string' && code.startsWith('FST_ERR_CTP_')) return handleError(missing(), request, reply);
      return handleError(error, request, reply);
    },
  };
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
