import { decodeJwt } from 'jose';
import { readCredentials, writeCredentials, type Env, type ServerCredentials } from './credentials.ts';

/**
 * `slipway login` and `logout`, and the token every API call carries (`whoami`, an API call, is in whoami.ts). Sign-in
 * is the OAuth 2.0 device authorization grant (RFC 8628) against the server's built-in identity provider
 * (`<server>/oidc`), or against an external issuer named with --issuer and --client-id (a public client with the
 * device grant enabled, e.g. in Keycloak, Auth0 or Dex).
 */
export const DEFAULT_SERVER_URL = 'http://127.0.0.1:8080';
const BUILT_IN_CLIENT_ID = 'slipway-cli';
const SCOPE = 'openid email profile offline_access';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** An access token this close to expiry is refreshed before use. */
const EXPIRY_MARGIN_S = 30;

export interface CliIo {
  env: Env;
  /** Writes to standard output. */
  out(text: string): void;
  /** Waits between polls; tests replace it. */
  sleep(ms: number): Promise<void>;
}

export class CliError extends Error {}

interface DiscoveryDocument {
  issuer: string;
  token_endpoint: string;
  device_authorization_endpoint?: string;
  revocation_endpoint?: string;
}

export function serverUrlOf(option: string | undefined, env: Env, current: string | undefined): string {
  const raw = option ?? (env.SLIPWAY_URL !== undefined && env.SLIPWAY_URL !== '' ? env.SLIPWAY_URL : undefined) ?? current ?? DEFAULT_SERVER_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`"${raw}" is not a URL; give the server as --url https://slipway.example.com`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`"${raw}" is not an http(s) URL`);
  return raw.replace(/\/+$/, '');
}

export async function requestJson(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, headers: { accept: 'application/json', ...(init.headers as Record<string, string> | undefined) }, signal: AbortSignal.timeout(15_000) });
  } catch (error) {
    throw new CliError(`cannot reach ${url}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    throw new CliError(`${url} answered ${response.status} with something other than JSON`);
  }
  return { status: response.status, body };
}

function postForm(url: string, form: Record<string, string>) {
  return requestJson(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
}

async function discover(issuer: string): Promise<DiscoveryDocument> {
  const { status, body } = await requestJson(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);
  if (status !== 200 || typeof body.token_endpoint !== 'string') {
    throw new CliError(`${issuer} does not publish an OpenID Connect discovery document (answered ${status})`);
  }
  return body as unknown as DiscoveryDocument;
}

function describeTokenError(body: Record<string, unknown>): string {
  return typeof body.error_description === 'string' ? `${String(body.error)}: ${body.error_description}` : String(body.error ?? 'unknown error');
}

function credentialsFromTokens(discovery: DiscoveryDocument, clientId: string, body: Record<string, unknown>, previousRefresh?: string): ServerCredentials {
  if (typeof body.access_token !== 'string') throw new CliError('the identity provider answered without an access token');
  return {
    issuer: discovery.issuer,
    client_id: clientId,
    token_endpoint: discovery.token_endpoint,
    revocation_endpoint: discovery.revocation_endpoint,
    access_token: body.access_token,
    refresh_token: typeof body.refresh_token === 'string' ? body.refresh_token : previousRefresh,
    expires_at: typeof body.expires_in === 'number' ? Math.floor(Date.now() / 1000) + body.expires_in : undefined,
  };
}

export interface LoginOptions {
  url?: string | undefined;
  issuer?: string | undefined;
  clientId?: string | undefined;
  /** Sent as `audience` when starting the sign-in: Auth0 issues JWT access tokens only for a named API. */
  audience?: string | undefined;
}

/** The device flow: show the code and where to enter it, poll until the person approves, keep the tokens. */
export async function login(options: LoginOptions, io: CliIo): Promise<{ server: string; file: string }> {
  const stored = await readCredentials(io.env);
  const server = serverUrlOf(options.url, io.env, stored.current);
  const issuer = options.issuer ?? `${server}/oidc`;
  const clientId = options.clientId ?? BUILT_IN_CLIENT_ID;
  const discovery = await discover(issuer);
  if (discovery.device_authorization_endpoint === undefined) {
    throw new CliError(`${issuer} does not offer the device authorization grant, which slipway login uses`);
  }
  const started = await postForm(discovery.device_authorization_endpoint, {
    client_id: clientId,
    scope: SCOPE,
    ...(options.audience === undefined ? {} : { audience: options.audience }),
  });
  if (started.status !== 200 || typeof started.body.device_code !== 'string' || typeof started.body.user_code !== 'string') {
    throw new CliError(`the identity provider refused to start a sign-in: ${describeTokenError(started.body)}`);
  }
  const { device_code: deviceCode, user_code: userCode } = started.body;
  const verificationUri = String(started.body.verification_uri ?? started.body.verification_url ?? '');
  const complete = typeof started.body.verification_uri_complete === 'string' ? started.body.verification_uri_complete : undefined;
  io.out(`To sign in, open ${verificationUri}\nand enter the code: ${userCode}\n`);
  if (complete !== undefined) io.out(`(or open ${complete} directly)\n`);
  io.out('Waiting for you to approve the sign-in…\n');

  let intervalMs = (typeof started.body.interval === 'number' ? started.body.interval : 5) * 1000;
  const deadline = Date.now() + (typeof started.body.expires_in === 'number' ? started.body.expires_in : 600) * 1000;
  for (;;) {
    await io.sleep(intervalMs);
    const polled = await postForm(discovery.token_endpoint, { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId });
    if (polled.status === 200) {
      const credentials = credentialsFromTokens(discovery, clientId, polled.body);
      const latest = await readCredentials(io.env);
      const file = await writeCredentials(io.env, { current: server, servers: { ...latest.servers, [server]: credentials } });
      const email = emailOf(credentials.access_token);
      io.out(`Signed in to ${server}${email === undefined ? '' : ` as ${email}`}.\n`);
      return { server, file };
    }
    if (polled.body.error === 'authorization_pending') continue;
    if (polled.body.error === 'slow_down') {
      intervalMs += 5000;
      continue;
    }
    if (polled.body.error === 'access_denied') throw new CliError('the sign-in was denied');
    if (polled.body.error === 'expired_token' || Date.now() > deadline) throw new CliError('the code expired before it was approved; run slipway login again');
    throw new CliError(`the sign-in failed: ${describeTokenError(polled.body)}`);
  }
}

/** The e-mail claim of a JWT access token (API tokens and opaque tokens have none). */
export function emailOf(token: string): string | undefined {
  try {
    const email = decodeJwt(token).email;
    return typeof email === 'string' ? email : undefined;
  } catch {
    return undefined;
  }
}

/** Forgets the server's credentials and revokes its refresh token where the provider allows. */
export async function logout(options: { url?: string | undefined }, io: CliIo): Promise<void> {
  const stored = await readCredentials(io.env);
  const server = serverUrlOf(options.url, io.env, stored.current);
  const credentials = stored.servers[server];
  if (credentials === undefined) {
    io.out(`Not signed in to ${server}.\n`);
    return;
  }
  const { [server]: _removed, ...servers } = stored.servers;
  await writeCredentials(io.env, { current: stored.current === server ? undefined : stored.current, servers });
  if (credentials.revocation_endpoint !== undefined && credentials.refresh_token !== undefined) {
    // Best effort: the credentials are already forgotten locally; a provider that is down cannot undo that.
    await postForm(credentials.revocation_endpoint, { token: credentials.refresh_token, token_type_hint: 'refresh_token', client_id: credentials.client_id }).catch(() => undefined);
  }
  io.out(`Signed out of ${server}.\n`);
}

/** The token to call `server` with: SLIPWAY_TOKEN when set, else the stored one, refreshed when about to expire. */
export async function tokenFor(server: string, io: CliIo): Promise<{ token: string; source: 'SLIPWAY_TOKEN' | 'credentials' }> {
  const fromEnv = io.env.SLIPWAY_TOKEN;
  if (fromEnv !== undefined && fromEnv !== '') return { token: fromEnv, source: 'SLIPWAY_TOKEN' };
  const stored = await readCredentials(io.env);
  const credentials = stored.servers[server];
  if (credentials === undefined) throw new CliError(`not signed in to ${server}; run slipway login${server === DEFAULT_SERVER_URL ? '' : ` --url ${server}`}`);
  const fresh = credentials.expires_at === undefined || credentials.expires_at - EXPIRY_MARGIN_S > Date.now() / 1000;
  if (fresh || credentials.refresh_token === undefined) return { token: credentials.access_token, source: 'credentials' };
  const refreshed = await postForm(credentials.token_endpoint, { grant_type: 'refresh_token', refresh_token: credentials.refresh_token, client_id: credentials.client_id });
  if (refreshed.status !== 200) throw new CliError(`the sign-in has expired (${describeTokenError(refreshed.body)}); run slipway login again`);
  const renewed = credentialsFromTokens(
    { issuer: credentials.issuer, token_endpoint: credentials.token_endpoint, ...(credentials.revocation_endpoint === undefined ? {} : { revocation_endpoint: credentials.revocation_endpoint }) },
    credentials.client_id,
    refreshed.body,
    credentials.refresh_token,
  );
  const latest = await readCredentials(io.env);
  await writeCredentials(io.env, { ...latest, servers: { ...latest.servers, [server]: renewed } });
  return { token: renewed.access_token, source: 'credentials' };
}
