/**
 * Sign-in with the authorization code flow and PKCE (S256) against the issuer the server names (the built-in provider
 * at `<public URL>/oidc`, or an external one). The server writes its settings into index.html; `vite dev` has none,
 * then the built-in provider on this origin is assumed.
 *
 * Tokens live in sessionStorage: they survive a reload and a deep link opened in the same tab (memory alone would
 * send every reload through the issuer), and go when the tab closes; no other tab or later visit sees them
 * (localStorage would keep a bearer token on disk for days). Any script of the page could read them either way, so
 * the page loads scripts from its own origin only (the server's Content-Security-Policy). No refresh token is asked
 * for: when the access token expires, the person signs in again (the issuer's session usually makes that one click).
 */
export interface Settings {
  issuer: string | null;
  clientId: string;
  audience: string | null;
}

export interface Session {
  accessToken: string;
  idToken: string | undefined;
  /** Epoch milliseconds. */
  expiresAt: number;
  email: string | undefined;
  name: string | undefined;
}

interface Pending {
  state: string;
  verifier: string;
  nonce: string;
  returnTo: string;
  tokenEndpoint: string;
}

interface Discovery {
  authorization_endpoint: string;
  token_endpoint: string;
  end_session_endpoint?: string;
}

const SESSION_KEY = 'slipway.console.session';
const PENDING_KEY = 'slipway.console.pending';
const SCOPE = 'openid email profile';
export const CALLBACK_PATH = '/console/callback';

export function settings(): Settings {
  const element = document.getElementById('slipway-settings');
  if (element?.textContent) return JSON.parse(element.textContent) as Settings;
  return { issuer: `${location.origin}/oidc`, clientId: 'slipway-console', audience: null };
}

function randomString(bytes: number): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function base64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

async function challengeOf(verifier: string): Promise<string> {
  return base64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

let discovered: Promise<Discovery> | undefined;
function discovery(issuer: string): Promise<Discovery> {
  discovered ??= fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`).then(async (response) => {
    if (!response.ok) throw new Error(`The sign-in service at ${issuer} did not answer (${response.status}).`);
    return (await response.json()) as Discovery;
  });
  discovered.catch(() => (discovered = undefined));
  return discovered;
}

/** Leaves for the issuer's sign-in page; the callback comes back to `returnTo` (a path under /console). */
export async function startSignIn(returnTo: string): Promise<void> {
  const { issuer, clientId, audience } = settings();
  if (issuer === null) throw new Error('Sign-in is not configured on this installation.');
  const endpoints = await discovery(issuer);
  const pending: Pending = { state: randomString(16), verifier: randomString(32), nonce: randomString(16), returnTo, tokenEndpoint: endpoints.token_endpoint };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: `${location.origin}${CALLBACK_PATH}`,
    scope: SCOPE,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await challengeOf(pending.verifier),
    code_challenge_method: 'S256',
    ...(audience === null ? {} : { audience }),
  });
  location.assign(`${endpoints.authorization_endpoint}?${query.toString()}`);
}

function claimsOf(jwt: string | undefined): Record<string, unknown> {
  const payload = jwt?.split('.')[1];
  if (payload === undefined) return {};
  try {
    const text = atob(payload.replaceAll('-', '+').replaceAll('_', '/'));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(text, (char) => char.charCodeAt(0)))) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Finishes a sign-in at the callback: checks the state, exchanges the code; answers where to go next. */
export async function finishSignIn(search: URLSearchParams): Promise<string> {
  const raw = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  if (raw === null) throw new Error('This sign-in was not started in this tab, or was already finished. Sign in again.');
  const pending = JSON.parse(raw) as Pending;
  const problem = search.get('error_description') ?? search.get('error');
  if (problem !== null) throw new Error(`The sign-in service refused: ${problem}`);
  if (search.get('state') !== pending.state) throw new Error('This sign-in answer does not match the request made from this tab. Sign in again.');
  const code = search.get('code');
  if (code === null) throw new Error('The sign-in service sent no authorization code. Sign in again.');
  const response = await fetch(pending.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: `${location.origin}${CALLBACK_PATH}`, client_id: settings().clientId, code_verifier: pending.verifier }),
  });
  const body = (await response.json().catch(() => ({}))) as { access_token?: string; id_token?: string; expires_in?: number; error_description?: string; error?: string };
  if (!response.ok || typeof body.access_token !== 'string') throw new Error(`The sign-in could not be completed: ${body.error_description ?? body.error ?? response.status}`);
  const claims = claimsOf(body.id_token);
  if (body.id_token !== undefined && claims.nonce !== pending.nonce) throw new Error('The sign-in answer was not made for this request. Sign in again.');
  const session: Session = {
    accessToken: body.access_token,
    idToken: body.id_token,
    expiresAt: Date.now() + (body.expires_in ?? 3600) * 1000,
    email: typeof claims.email === 'string' ? claims.email : undefined,
    name: typeof claims.name === 'string' ? claims.name : undefined,
  };
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  return pending.returnTo;
}

export function storedSession(): Session | undefined {
  const raw = sessionStorage.getItem(SESSION_KEY);
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw) as Session;
  } catch {
    return undefined;
  }
}

export function forgetSession(): void {
  sessionStorage.removeItem(SESSION_KEY);
}

/**
 * Signs out here, then at the issuer (its logout page ends its own session, so the next sign-in asks for the
 * password again) when it offers one; back to the console afterwards.
 */
export async function signOut(session: Session | undefined): Promise<void> {
  forgetSession();
  const { issuer, clientId } = settings();
  const back = `${location.origin}/console/`;
  const endpoints = issuer === null ? undefined : await discovery(issuer).catch(() => undefined);
  if (endpoints?.end_session_endpoint === undefined) {
    location.assign(back);
    return;
  }
  const query = new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: back, ...(session?.idToken === undefined ? {} : { id_token_hint: session.idToken }) });
  location.assign(`${endpoints.end_session_endpoint}?${query.toString()}`);
}
