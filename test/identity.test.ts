import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { MAX_FAILED_SIGN_INS } from '../src/identity/identity.accounts.ts';
import { rotateSigningKey } from '../src/identity/identity.keys.ts';
import { systemClock } from '../src/lib/clock.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { startIdentityTestApp, type IdentityTestApp } from './support/identity-app.ts';
import { approveDeviceCode, completeInteraction, formAction, formField, submitSignIn, TestBrowser } from './support/identity-browser.ts';
import { isPublicRoute } from './support/public-routes.ts';

/**
 * The built-in identity provider, over real HTTP against a listening server: its OpenID Connect surface, local
 * accounts, the device and authorization-code flows, key rotation, and the API accepting its tokens through the
 * same verifier as an external issuer's.
 */
const CLIENT_ID = 'slipway-cli';
const PASSWORD = 'correct horse battery staple';
const REDIRECT_URI = 'http://127.0.0.1:45678/callback';

let counter = 0;
function uniqueEmail(): string {
  counter += 1;
  return `person-${process.pid}-${counter}@example.com`;
}

interface TokenResponse {
  access_token?: string;
  id_token?: string;
  refresh_token?: string;
  token_type?: string;
  error?: string;
}

async function postForm(url: string, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: new URLSearchParams(form) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

for (const dialect of TEST_DIALECTS) {
  describe(`built-in identity provider [${dialect}]`, () => {
    let ctx: IdentityTestApp;
    beforeAll(async () => {
      // Strangers create accounts throughout: what this suite tests is the provider, not who may sign up.
      ctx = await startIdentityTestApp(dialect, { signUp: 'open' });
    });
    afterAll(async () => {
      await ctx?.close();
    });

    async function discovery(): Promise<Record<string, unknown>> {
      const response = await fetch(`${ctx.issuer}/.well-known/openid-configuration`);
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, unknown>;
    }

    async function deviceSignIn(email: string, password = PASSWORD): Promise<TokenResponse> {
      const started = await postForm(`${ctx.issuer}/device/auth`, { client_id: CLIENT_ID, scope: 'openid email profile offline_access' });
      expect(started.status).toBe(200);
      const page = await approveDeviceCode(new TestBrowser(), started.body.verification_uri as string, started.body.user_code as string, email, password);
      expect(page.body).toContain("Your terminal is signed in");
      expect(page.status).toBe(200);
      const token = await postForm(`${ctx.issuer}/token`, {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: started.body.device_code as string,
        client_id: CLIENT_ID,
      });
      expect(token.body).toMatchObject({ token_type: "Bearer" });
      expect(token.status).toBe(200);
      return token.body as TokenResponse;
    }

    it('publishes a discovery document naming its issuer, JWKS, device and PKCE support', async () => {
      const document = await discovery();
      expect(document.issuer).toBe(ctx.issuer);
      expect(document.jwks_uri).toBe(`${ctx.issuer}/jwks`);
      expect(document.device_authorization_endpoint).toBe(`${ctx.issuer}/device/auth`);
      expect(document.authorization_endpoint).toBe(`${ctx.issuer}/auth`);
      expect(document.token_endpoint).toBe(`${ctx.issuer}/token`);
      expect(document.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code']));
      expect(document.code_challenge_methods_supported).toEqual(['S256']);
    });

    it('publishes public signing keys only', async () => {
      const response = await fetch(`${ctx.issuer}/jwks`);
      expect(response.status).toBe(200);
      const { keys } = (await response.json()) as { keys: Record<string, unknown>[] };
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key.kty).toBe('RSA');
        expect(typeof key.kid).toBe('string');
        expect(key.d).toBeUndefined();
        expect(key.p).toBeUndefined();
      }
    });

    it('signs a device in end to end; the API accepts the access token and creates the user from its claims', async () => {
      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const tokens = await deviceSignIn(email);
      expect(typeof tokens.access_token).toBe('string');
      expect(typeof tokens.refresh_token).toBe('string');
      const claims = decodeJwt(tokens.access_token as string);
      expect(claims.iss).toBe(ctx.issuer);
      expect(claims.aud).toBe('slipway');
      expect(claims.email).toBe(email);
      expect(claims.email_verified).toBe(true);

      const organizations = await fetch(`${ctx.baseUrl}/organization`, { headers: { authorization: `Bearer ${tokens.access_token as string}` } });
      expect(organizations.status).toBe(200);
      const user = await ctx.database.db.selectFrom('users').selectAll().where('issuer', '=', ctx.issuer).where('subject', '=', claims.sub as string).executeTakeFirst();
      expect(user?.email).toBe(email);
    });

    it('refuses bad sign-up input with the error body and writes nothing', async () => {
      const response = await fetch(`${ctx.issuer}/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'not-an-email', password: 'short' }),
      });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { status: number; error: string; message: string; request_id: string; details: { field: string }[] };
      expect(body.status).toBe(400);
      expect(typeof body.request_id).toBe('string');
      expect(body.details.map((detail) => detail.field).sort()).toEqual(['/email', '/password']);
      const rows = await ctx.database.db.selectFrom('local_accounts').select('id').where('email', '=', 'not-an-email').execute();
      expect(rows).toEqual([]);
    });

    it('refuses a second account for the same e-mail, whatever its case', async () => {
      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const response = await fetch(`${ctx.issuer}/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: email.toUpperCase(), password: PASSWORD }),
      });
      expect(response.status).toBe(409);
      expect(((await response.json()) as { status: number }).status).toBe(409);
    });

    it('stores only a scrypt hash of the password', async () => {
      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const row = await ctx.database.db.selectFrom('local_accounts').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
      expect(row.password_hash.startsWith('scrypt$')).toBe(true);
      expect(row.password_hash).not.toContain(PASSWORD);
      expect(row.email_verified_at).not.toBeNull();
      expect(row.verification_hash).toBeNull();
    });

    it('refuses an unknown or already used verification link', async () => {
      const unknown = await fetch(`${ctx.issuer}/verify?token=${randomBytes(32).toString('base64url')}`);
      expect(unknown.status).toBe(400);
      expect(((await unknown.json()) as { error: string }).error).toBeDefined();

      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const link = (await ctx.verificationLinks(email)).at(-1) as string;
      const again = await fetch(link);
      expect(again.status).toBe(400);
    });

    it('refuses to sign in an account whose e-mail is not verified yet, then signs it in once verified', async () => {
      const email = uniqueEmail();
      const signUp = await fetch(`${ctx.issuer}/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
      expect(signUp.status).toBe(201);
      const browser = new TestBrowser();
      const login = await startAuthorization(browser);
      const refused = await submitSignIn(browser, login.page, email, PASSWORD);
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('Verify your e-mail first');

      const verified = await fetch((await ctx.verificationLinks(email)).at(-1) as string);
      expect(verified.status).toBe(200);
      const redirect = await completeInteraction(browser, await browser.follow(await submitSignIn(browser, refused, email, PASSWORD)), email, PASSWORD);
      expect(new URL(redirect.location as string).searchParams.get('code')).toBeTruthy();
    });

    it('refuses a wrong password, and an unknown e-mail, without signing in', async () => {
      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const browser = new TestBrowser();
      const login = await startAuthorization(browser);
      const wrong = await submitSignIn(browser, login.page, email, `${PASSWORD}!`);
      expect(wrong.status).toBe(401);
      expect(wrong.location).toBeUndefined();
      expect(wrong.body).toContain('Wrong e-mail or password');
      const unknown = await submitSignIn(browser, wrong, uniqueEmail(), PASSWORD);
      expect(unknown.status).toBe(401);
      expect(unknown.body).toContain('Wrong e-mail or password');
    });

    it(`locks an account for a while after ${MAX_FAILED_SIGN_INS} wrong passwords in a row, even for the right one`, async () => {
      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const browser = new TestBrowser();
      let page = (await startAuthorization(browser)).page;
      for (let attempt = 0; attempt < MAX_FAILED_SIGN_INS; attempt += 1) {
        page = await submitSignIn(browser, page, email, `wrong-${attempt}-${PASSWORD}`);
        expect(page.status).toBe(401);
      }
      const locked = await submitSignIn(browser, page, email, PASSWORD);
      expect(locked.status).toBe(429);
      expect(locked.location).toBeUndefined();
      expect(locked.body).toContain('Too many wrong passwords');
      const row = await ctx.database.db.selectFrom('local_accounts').select(['locked_until']).where('email', '=', email).executeTakeFirstOrThrow();
      expect(Date.parse(row.locked_until as string)).toBeGreaterThan(Date.now());
    });

    it('resets the count of wrong passwords on a successful sign-in', async () => {
      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const browser = new TestBrowser();
      let page = (await startAuthorization(browser)).page;
      for (let attempt = 0; attempt < MAX_FAILED_SIGN_INS - 1; attempt += 1) page = await submitSignIn(browser, page, email, `wrong-${PASSWORD}`);
      const redirect = await completeInteraction(browser, await browser.follow(await submitSignIn(browser, page, email, PASSWORD)), email, PASSWORD);
      expect(new URL(redirect.location as string).searchParams.get('code')).toBeTruthy();
      const row = await ctx.database.db.selectFrom('local_accounts').select(['failed_sign_ins', 'locked_until']).where('email', '=', email).executeTakeFirstOrThrow();
      expect(row).toEqual({ failed_sign_ins: 0, locked_until: null });
    });

    it('signs a browser out: the next authorization asks for the password again', async () => {
      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const browser = new TestBrowser();
      await completeInteraction(browser, (await startAuthorization(browser)).page, email, PASSWORD);
      const signedIn = await startAuthorization(browser);
      expect(signedIn.page.body).not.toContain('name="password"');

      const confirmation = await browser.get(`${ctx.issuer}/session/end`);
      expect(confirmation.status).toBe(200);
      const action = formAction(confirmation.body, confirmation.url) as string;
      const done = await browser.follow(await browser.post(action, { xsrf: formField(confirmation.body, 'xsrf') as string, logout: 'yes' }));
      expect(done.body).toContain('You are signed out');

      const again = await startAuthorization(browser);
      expect(again.page.body).toContain('name="password"');
    });

    async function startAuthorization(browser: TestBrowser, overrides: Record<string, string> = {}) {
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const state = randomBytes(8).toString('hex');
      const query = new URLSearchParams({
        client_id: CLIENT_ID,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'openid email profile',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state,
        ...overrides,
      });
      const page = await browser.follow(await browser.get(`${ctx.issuer}/auth?${query.toString()}`));
      return { page, verifier, state };
    }

    it('runs the authorization code flow with PKCE; the code is bound to the verifier and used once', async () => {
      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const browser = new TestBrowser();
      const { page, state } = await startAuthorization(browser);
      expect(page.status).toBe(200);
      const redirect = await completeInteraction(browser, page, email, PASSWORD);
      expect(redirect.location?.startsWith(REDIRECT_URI)).toBe(true);
      const callback = new URL(redirect.location as string);
      expect(callback.searchParams.get('state')).toBe(state);
      const code = callback.searchParams.get('code') as string;

      const wrongVerifier = await postForm(`${ctx.issuer}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: CLIENT_ID, code_verifier: randomBytes(32).toString('base64url') });
      expect(wrongVerifier.status).toBe(400);
      expect(wrongVerifier.body.error).toBe('invalid_grant');

      // A fresh authorization gets a fresh code for the real exchange.
      const second = await startAuthorization(browser);
      const secondRedirect = await completeInteraction(browser, second.page, email, PASSWORD);
      const secondCode = new URL(secondRedirect.location as string).searchParams.get('code') as string;
      const exchanged = await postForm(`${ctx.issuer}/token`, { grant_type: 'authorization_code', code: secondCode, redirect_uri: REDIRECT_URI, client_id: CLIENT_ID, code_verifier: second.verifier });
      expect(exchanged.status).toBe(200);
      const idToken = decodeJwt(exchanged.body.id_token as string);
      expect(idToken.iss).toBe(ctx.issuer);
      expect(idToken.aud).toBe(CLIENT_ID);
      expect(idToken.email).toBe(email);
      const accessToken = exchanged.body.access_token as string;
      expect(decodeJwt(accessToken).aud).toBe('slipway');
      const api = await fetch(`${ctx.baseUrl}/organization`, { headers: { authorization: `Bearer ${accessToken}` } });
      expect(api.status).toBe(200);

      const replay = await postForm(`${ctx.issuer}/token`, { grant_type: 'authorization_code', code: secondCode, redirect_uri: REDIRECT_URI, client_id: CLIENT_ID, code_verifier: second.verifier });
      expect(replay.status).toBe(400);
      expect(replay.body.error).toBe('invalid_grant');
    });

    it('refuses an authorization request without a PKCE challenge', async () => {
      const browser = new TestBrowser();
      const query = new URLSearchParams({ client_id: CLIENT_ID, response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'openid', state: 's' });
      const response = await browser.get(`${ctx.issuer}/auth?${query.toString()}`);
      expect(response.status).toBe(303);
      const callback = new URL(response.location as string);
      expect(callback.searchParams.get('error')).toBe('invalid_request');
    });

    it('refreshes an access token with the refresh token from the device flow', async () => {
      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const tokens = await deviceSignIn(email);
      const refreshed = await postForm(`${ctx.issuer}/token`, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string, client_id: CLIENT_ID });
      expect(refreshed.status).toBe(200);
      const api = await fetch(`${ctx.baseUrl}/organization`, { headers: { authorization: `Bearer ${refreshed.body.access_token as string}` } });
      expect(api.status).toBe(200);
    });

    it('rotates its signing key: new tokens use the new key, tokens signed with the old one keep working', async () => {
      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const before = await deviceSignIn(email);
      const oldKid = decodeProtectedHeader(before.access_token as string).kid;

      const newKid = await rotateSigningKey(ctx.database.db, systemClock);
      expect(newKid).not.toBe(oldKid);
      const jwks = (await (await fetch(`${ctx.issuer}/jwks`)).json()) as { keys: { kid: string }[] };
      expect(jwks.keys.map((key) => key.kid)).toEqual(expect.arrayContaining([oldKid, newKid]));

      const after = await deviceSignIn(email);
      expect(decodeProtectedHeader(after.access_token as string).kid).toBe(newKid);
      for (const token of [after.access_token, before.access_token]) {
        const api = await fetch(`${ctx.baseUrl}/organization`, { headers: { authorization: `Bearer ${token as string}` } });
        expect(api.status).toBe(200);
      }
    });

    it('keeps the API contract around the provider: unknown paths, missing credentials and forged tokens get the error body', async () => {
      const missing = await fetch(`${ctx.baseUrl}/organization`);
      expect(missing.status).toBe(401);
      expect(((await missing.json()) as { status: number }).status).toBe(401);
      const unknown = await fetch(`${ctx.baseUrl}/no-such-thing`);
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as { status: number }).status).toBe(404);

      const email = uniqueEmail();
      await ctx.createVerifiedAccount(email, PASSWORD);
      const tokens = await deviceSignIn(email);
      const [header] = (tokens.access_token as string).split('.');
      const forgedPayload = Buffer.from(JSON.stringify({ ...decodeJwt(tokens.access_token as string), email: 'someone-else@example.com' })).toString('base64url');
      const forged = await fetch(`${ctx.baseUrl}/organization`, { headers: { authorization: `Bearer ${header as string}.${forgedPayload}.${'A'.repeat(342)}` } });
      expect(forged.status).toBe(401);
      // An ID token is for the client, not the API: its audience is refused.
      const idToken = await fetch(`${ctx.baseUrl}/organization`, { headers: { authorization: `Bearer ${tokens.id_token as string}` } });
      expect(idToken.status).toBe(401);
    });

    it('adds only public /oidc routes: every other route still refuses a request without credentials', async () => {
      const routes = ctx.app.registeredRoutes();
      const identityRoutes = routes.filter((route) => route.url === '/oidc' || route.url.startsWith('/oidc/'));
      expect(identityRoutes.length).toBeGreaterThan(0);
      for (const route of routes) {
        if (identityRoutes.includes(route) || isPublicRoute(route.url) || route.method === 'OPTIONS') continue;
        const url = route.url.replace(/:([A-Za-z0-9_]+)/g, () => '01a20000-0000-7000-8000-000000000000');
        const response = await fetch(`${ctx.baseUrl}${url}`, {
          method: route.method,
          ...(route.method === 'GET' || route.method === 'HEAD' ? {} : { headers: { 'content-type': 'application/json' }, body: '{}' }),
        });
        expect(response.status, `${route.method} ${route.url}`).toBe(401);
      }
      const openApi = (await (await fetch(`${ctx.baseUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(openApi.paths).filter((apiPath) => apiPath.startsWith('/oidc'))).toEqual([]);
    });

    it('keeps its keys in the database: another server on the same database publishes the same ones', async () => {
      const first = (await (await fetch(`${ctx.issuer}/jwks`)).json()) as { keys: { kid: string }[] };
      const other = await buildApp({ config: { oidc: undefined, egressIps: [], logLevel: 'silent', publicUrl: ctx.baseUrl }, database: ctx.database });
      try {
        const response = await other.inject({ method: 'GET', url: '/oidc/jwks' });
        expect(response.statusCode).toBe(200);
        const second = response.json<{ keys: { kid: string }[] }>();
        expect(second.keys.map((key) => key.kid).sort()).toEqual(first.keys.map((key) => key.kid).sort());
      } finally {
        await other.close();
      }
    });
  });
}
