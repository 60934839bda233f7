import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Kysely } from 'kysely';
import type { default as Provider, Configuration, errors as OidcErrors } from 'oidc-provider';
import type { DB } from '../db/db.schema.ts';
import { CONSOLE_CALLBACK_PATH, CONSOLE_CLIENT_ID, CONSOLE_PATH } from '../http/console.ts';
import type { Clock } from '../lib/clock.ts';
import type { AccountsService } from './identity.accounts.ts';
import { createOidcAdapterFactory } from './identity.adapter.ts';
import { keySetFingerprint, loadIdentityKeys, SIGNING_ALGORITHM, type IdentityKeys } from './identity.keys.ts';
import { errorPage, messagePage, signOutPage, userCodeConfirmPage, userCodeInputPage } from './identity.pages.ts';

/**
 * The built-in OpenID Connect provider (DESIGN.md §5), on when no external issuer is configured. The protocol is
 * the certified `oidc-provider` library's; Slipway supplies storage (the database), accounts, keys and pages.
 *
 * Tokens: access tokens are JWTs for the API resource with `aud` = IDENTITY_AUDIENCE and the account's e-mail
 * claims, so the API verifies them exactly as it verifies an external issuer's (auth/oidc.ts).
 */
export const IDENTITY_MOUNT_PATH = '/oidc';
/** The `aud` of access tokens, and what the API verifier expects when the built-in provider is on. */
export const IDENTITY_AUDIENCE = 'slipway';
/** The one client: the CLI (device flow) and browsers on loopback (authorization code + PKCE); public, no secret. */
export const CLI_CLIENT_ID = 'slipway-cli';
const CLIENT_NAME = 'Slipway CLI';
/** Scope of the API resource; a token without it is not issued for the API. */
const API_SCOPE = 'api';
const ACCESS_TOKEN_TTL_S = 3600;
const FIRST_PARTY_OIDC_SCOPES = 'openid email profile offline_access';

export interface BuiltInIdentityOptions {
  db: Kysely<DB>;
  clock: Clock;
  /** `${publicUrl}/oidc`. */
  issuer: string;
  /** The API's resource indicator: the installation's public URL. */
  apiResource: string;
  accounts: AccountsService;
}

export interface BuiltInIdentity {
  issuer: string;
  /** The API's resource indicator, which access tokens are issued for. */
  apiResource: string;
  /**
   * The request handler of the provider for the current keys; it serves requests whose URL is already stripped of
   * the mount path. Obtained before the response is handed over, so a database failure still gets the error body.
   */
  handler(): Promise<(request: IncomingMessage, response: ServerResponse) => Promise<void>>;
  /** The provider for the current keys; interaction pages use it to read and finish interactions. */
  provider(): Promise<Provider>;
}

function accountClaims(account: { id: string; email: string; name: string | null; emailVerified: boolean }) {
  return { sub: account.id, email: account.email, email_verified: account.emailVerified, ...(account.name === null ? {} : { name: account.name }) };
}

/** What the person is told when the code they entered cannot be used (the library's re-render error names). */
function userCodeProblem(error: Error): string {
  switch (error.name) {
    case 'NoCodeError':
      return 'Enter the code your terminal shows.';
    case 'NotFoundError':
      return 'That code is not valid. Check it and try again.';
    case 'ExpiredError':
      return 'That code has expired. Run the sign-in again in your terminal.';
    case 'AlreadyUsedError':
      return 'That code has already been used.';
    case 'AbortedError':
      return 'The sign-in was aborted.';
    default:
      return `The code could not be checked (${error.message}). Try again.`;
  }
}

/** What Slipway's own client is granted once a person has signed in (and, for the CLI, confirmed). */
export function grantFirstPartyScopes(grant: InstanceType<Provider['Grant']>, apiResource: string): void {
  grant.addOIDCScope(FIRST_PARTY_OIDC_SCOPES);
  grant.addResourceScope(apiResource, API_SCOPE);
}

function configuration(options: BuiltInIdentityOptions, keys: IdentityKeys, oidcErrors: typeof OidcErrors): Configuration {
  const { accounts } = options;
  const interactionBase = `${options.issuer}/interaction`;
  return {
    adapter: createOidcAdapterFactory(options.db),
    clients: [
      {
        client_id: CLI_CLIENT_ID,
        client_name: CLIENT_NAME,
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
        response_types: ['code'],
        // Native clients on loopback may use any port (RFC 8252 §7.3).
        redirect_uris: ['http://127.0.0.1/callback', 'http://localhost/callback'],
      },
      // The web console (docs/console.md): a browser application on this installation's own origin, so a client of
      // its own (a native client may not have an http redirect URI off loopback, and asks for consent every time).
      // Public, authorization code + PKCE, no refresh tokens; it signs out through the provider's logout page.
      {
        client_id: CONSOLE_CLIENT_ID,
        client_name: 'Slipway console',
        application_type: 'web',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [`${options.apiResource}${CONSOLE_CALLBACK_PATH}`],
        post_logout_redirect_uris: [`${options.apiResource}${CONSOLE_PATH}/`],
      },
    ],
    jwks: { keys: keys.signing },
    cookies: { keys: keys.cookie },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    scopes: ['openid', 'offline_access', 'email', 'profile', API_SCOPE],
    // The authorization code flow only: no implicit or hybrid responses put tokens in browser URLs.
    responseTypes: ['code'],
    pkce: { required: () => true },
    enabledJWA: { idTokenSigningAlgValues: [SIGNING_ALGORITHM] },
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S,
      IdToken: ACCESS_TOKEN_TTL_S,
      AuthorizationCode: 60,
      DeviceCode: 600,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      Grant: 30 * 24 * 3600,
      RefreshToken: 30 * 24 * 3600,
    },
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        async logoutSource(ctx, form) {
          ctx.type = 'html';
          ctx.body = signOutPage(form);
        },
        async postLogoutSuccessSource(ctx) {
          ctx.type = 'html';
          ctx.body = messagePage('Signed out', 'You are signed out of Slipway in this browser.');
        },
      },
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        async userCodeInputSource(ctx, form, _out, error) {
          ctx.type = 'html';
          ctx.body = userCodeInputPage(form, error === undefined ? undefined : userCodeProblem(error));
        },
        async userCodeConfirmSource(ctx, form, client, _deviceInfo, userCode) {
          ctx.type = 'html';
          ctx.body = userCodeConfirmPage(form, client.clientName ?? client.clientId, userCode);
        },
        async successSource(ctx) {
          ctx.type = 'html';
          ctx.body = messagePage('Signed in', 'Your terminal is signed in. You can close this page.');
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.apiResource,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, resourceIndicator) {
          if (resourceIndicator !== options.apiResource) throw new oidcErrors.InvalidTarget();
          return {
            scope: API_SCOPE,
            audience: IDENTITY_AUDIENCE,
            accessTokenTTL: ACCESS_TOKEN_TTL_S,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: SIGNING_ALGORITHM } },
          };
        },
      },
    },
    async findAccount(_ctx, sub) {
      const account = await accounts.findAccount(sub);
      if (account === undefined) return undefined;
      return { accountId: account.id, claims: () => accountClaims(account) };
    },
    // Access tokens carry the e-mail claims: the API creates a user row from them on first sight.
    async extraTokenClaims(_ctx, token) {
      if (token.kind !== 'AccessToken' || typeof token.accountId !== 'string') return undefined;
      const account = await accounts.findAccount(token.accountId);
      if (account === undefined) return undefined;
      const { sub: _sub, ...claims } = accountClaims(account);
      return claims;
    },
    interactions: { url: (_ctx, interaction) => `${interactionBase}/${interaction.uid}` },
    async renderError(ctx, out) {
      ctx.type = 'html';
      ctx.body = errorPage(out.error_description ?? out.error ?? 'the request cannot be completed');
    },
  };
}

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

interface BuiltProvider {
  fingerprint: string;
  provider: Provider;
  handler: RequestHandler;
}

export async function createBuiltInIdentity(options: BuiltInIdentityOptions): Promise<BuiltInIdentity> {
  let current: BuiltProvider | undefined;
  let building: Promise<BuiltProvider> | undefined;

  async function build(keys: IdentityKeys): Promise<BuiltProvider> {
    const { default: Provider, errors } = await import('oidc-provider');
    const provider = new Provider(options.issuer, configuration(options, keys, errors));
    // Behind a TLS-terminating proxy the public URL is https while this process sees http: trust its
    // X-Forwarded-* headers so the URLs the provider builds match the issuer.
    provider.proxy = options.issuer.startsWith('https:');
    current = { fingerprint: keySetFingerprint(keys), provider, handler: provider.callback() };
    return current;
  }

  /**
   * The provider for the keys now in the database. Keys are read on every protocol request (one small query) so
   * a rotation made by any replica or by `slipway admin rotate-signing-key` is served at once everywhere.
   */
  function built(): Promise<BuiltProvider> {
    building ??= (async () => {
      try {
        const keys = await loadIdentityKeys(options.db, options.clock);
        if (current !== undefined && current.fingerprint === keySetFingerprint(keys)) return current;
        return build(keys);
      } finally {
        building = undefined;
      }
    })();
    return building;
  }

  // Nothing is built until the first request that needs the provider: the library and its set-up cost ~120 ms and
  // 15 MB that a server answering only API requests (tokens are checked against the published keys) never needs.
  return {
    issuer: options.issuer,
    apiResource: options.apiResource,
    provider: async () => (await built()).provider,
    handler: async () => (await built()).handler,
  };
}
