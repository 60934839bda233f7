import type { LightMyRequestResponse } from 'fastify';
import { generateKeyPair, SignJWT } from 'jose';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { mintToken } from '../src/auth/tokens.ts';
import { newId } from '../src/lib/ids.ts';
import { startTestIssuer } from './support/oidc-issuer.ts';
import { describeEachDatabase, uniqueName, type TestApp } from './support/test-app.ts';

/**
 * Authentication through the real app: the Authorization header's forms, user JWTs of a real OIDC issuer on
 * loopback (claims, keys, key rotation, the user row behind them) and organization API tokens (checksum, expiry,
 * revocation), and the one 401 body that never echoes a credential.
 */

interface ErrorBody {
  status: number;
  error: string;
  message: string;
  request_id: string;
}

/** Asserts the 401 body and that none of the given secrets (or any part of them) appears in the answer. */
function expectUnauthorized(response: LightMyRequestResponse, secrets: string[] = []): ErrorBody {
  expect(response.statusCode, response.body).toBe(401);
  const body = response.json<ErrorBody>();
  expect(Object.keys(body).sort()).toEqual(['error', 'message', 'request_id', 'status']);
  expect(body).toMatchObject({ status: 401, error: 'Unauthorized' });
  expect(body.message.length).toBeGreaterThan(0);
  expect(body.request_id).toBe(response.headers['x-request-id']);
  expect(response.headers['www-authenticate']).toBe('Bearer realm="slipway"');
  for (const secret of secrets) {
    for (const part of [secret, ...secret.split('.').filter((segment) => segment.length >= 8)]) {
      expect(response.body).not.toContain(part);
      expect(JSON.stringify(response.headers)).not.toContain(part);
    }
  }
  return body;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Changes the last checksum character, keeping the token's shape. */
function withBrokenChecksum(token: string): string {
  const last = token.at(-1);
  return `${token.slice(0, -1)}${last === 'A' ? 'B' : 'A'}`;
}

/**
 * Counts the statements an app sends to the database, to show a request was refused without one. Counted as they
 * answer, not as they compile: the token lookup is compiled once and then only executed (db/db.compiled-query.ts).
 */
class QueryCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.count += 1;
    return args.result;
  }
}

async function usersWithSubject(ctx: TestApp, subject: string) {
  return ctx.database.db.selectFrom('users').selectAll().where('subject', '=', subject).execute();
}

describeEachDatabase('authentication', (ctx) => {
  const listOrganizations = (auth: string | undefined, headers: Record<string, string> = {}) =>
    ctx().call(auth, { method: 'GET', url: '/organization', headers });

  it('a request without an Authorization header gets 401 with the error body and its request id', async () => {
    const response = await listOrganizations(undefined);
    expectUnauthorized(response);

    const traced = await listOrganizations(undefined, { 'x-request-id': 'trace-42.a' });
    expect(expectUnauthorized(traced).request_id).toBe('trace-42.a');
    expect(traced.headers['x-request-id']).toBe('trace-42.a');

    expectUnauthorized(await listOrganizations(''));
  });

  it('authentication comes before the body is read: an anonymous malformed POST gets 401, not 400', async () => {
    const response = await ctx().call(undefined, {
      method: 'POST',
      url: '/organization',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expectUnauthorized(response);
    const organizations = await ctx().database.db.selectFrom('organizations').select('id').execute();
    expect(organizations).toEqual([]);
  });

  it('malformed Authorization headers get 401 without echoing what was sent', async () => {
    const user = await ctx().signUp();
    const headers = [
      'Basic x',
      `Basic ${Buffer.from('user:password').toString('base64')}`,
      'Bearer',
      'Bearer ',
      'Token',
      'Bearer garbage-that-is-no-token',
      'Bearer a.b.c',
      'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl',
      `Bearer ${user.jwt} extra`,
      `Bearer${user.jwt}`,
      `JWT ${user.jwt}`,
      `Bearer ${user.jwt}x`,
      `Bearer ${user.jwt.split('.').slice(0, 2).join('.')}`,
      'Token slw_short',
    ];
    const sent = [user.jwt, 'garbage-that-is-no-token', 'eyJzdWIiOiJ4In0', 'c2lnbmF0dXJl', Buffer.from('user:password').toString('base64')];
    for (const header of headers) expectUnauthorized(await listOrganizations(header), sent);
  });

  it('both words, Bearer and Token, in any case, are accepted for a user JWT', async () => {
    const user = await ctx().signUp();
    const organizationId = await ctx().createOrganization(user);
    for (const word of ['Bearer', 'Token', 'bearer', 'token', 'BEARER', 'TOKEN', 'bEaReR']) {
      const response = await listOrganizations(`${word} ${user.jwt}`);
      expect(response.statusCode, `${word}: ${response.body}`).toBe(200);
      expect(response.json<{ results: { id: string }[] }>().results.map((organization) => organization.id)).toEqual([organizationId]);
    }
  });

  it('both words, Bearer and Token, in any case, are accepted for an API token', async () => {
    const user = await ctx().signUp();
    const organizationId = await ctx().createOrganization(user);
    const token = await ctx().createApiToken(user.auth, organizationId, { name: 'ci', scope: 'READ' });
    expect(token.startsWith('slw_')).toBe(true);
    for (const word of ['Token', 'Bearer', 'token', 'bearer', 'TOKEN', 'BEARER']) {
      const response = await ctx().call(`${word} ${token}`, { method: 'GET', url: `/organization/${organizationId}` });
      expect(response.statusCode, `${word}: ${response.body}`).toBe(200);
      expect(response.json()).toMatchObject({ id: organizationId });
    }
  });

  it('refuses JWTs that are expired, not yet valid, of another issuer or audience, or signed by an unpublished key', async () => {
    const { issuer } = ctx();
    const claims = { sub: `sub-${uniqueName('claims')}`, email: 'claims@example.com', email_verified: true };
    const cases: { label: string; jwt: string }[] = [
      { label: 'expired', jwt: await issuer.signToken(claims, { expiresIn: -3600 }) },
      { label: 'expired a minute ago', jwt: await issuer.signToken(claims, { expiresIn: -60 }) },
      { label: 'not before in the future', jwt: await issuer.signToken(claims, { notBefore: 3600 }) },
      { label: 'another issuer', jwt: await issuer.signToken(claims, { issuer: 'https://login.evil.example' }) },
      { label: 'issuer with a trailing slash', jwt: await issuer.signToken(claims, { issuer: `${issuer.issuer}/` }) },
      { label: 'another audience', jwt: await issuer.signToken(claims, { audience: 'someone-else' }) },
      { label: 'unpublished key', jwt: await issuer.signToken(claims, { foreignKey: true }) },
    ];
    for (const { label, jwt } of cases) {
      const response = await listOrganizations(`Bearer ${jwt}`);
      expect(response.statusCode, `${label}: ${response.body}`).toBe(401);
      expectUnauthorized(response, [jwt]);
    }
    // None of them signed anyone up.
    expect(await usersWithSubject(ctx(), claims.sub)).toEqual([]);
  });

  it('refuses unsigned and symmetric-key JWTs', async () => {
    const { issuer } = ctx();
    const now = Math.floor(Date.now() / 1000);
    const payload = { sub: `sub-${uniqueName('alg')}`, iss: issuer.issuer, aud: issuer.audience, iat: now, exp: now + 3600 };
    const unsigned = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(payload)}.`;
    const symmetric = await new SignJWT(payload).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('a shared secret of 32 bytes!!!!!'));
    for (const jwt of [unsigned, symmetric]) expectUnauthorized(await listOrganizations(`Bearer ${jwt}`), [jwt]);
    expect(await usersWithSubject(ctx(), payload.sub)).toEqual([]);
  });

  it('after the issuer rotates its key, tokens signed with the new key are accepted (the JWKS is fetched again)', async () => {
    const { issuer } = ctx();
    const before = await ctx().signUp();
    const fetchesBefore = issuer.hits.get('/jwks') ?? 0;
    await issuer.rotateKey();
    // A burst of first requests signed with the new key: every one is accepted, after a single fetch of the keys.
    const signed = await Promise.all(
      Array.from({ length: 5 }, () => issuer.signToken({ sub: `sub-${uniqueName('rotated')}`, email: 'rotated@example.com', email_verified: true })),
    );
    const responses = await Promise.all(signed.map((jwt) => listOrganizations(`Bearer ${jwt}`)));
    for (const response of responses) expect(response.statusCode, response.body).toBe(200);
    expect(issuer.hits.get('/jwks') ?? 0).toBe(fetchesBefore + 1);
    // The old key is still published, so tokens signed before the rotation keep working until they expire.
    expect((await listOrganizations(before.auth)).statusCode).toBe(200);
  });

  it('creates the user row on first sight, reuses it afterwards and refreshes the profile from the claims', async () => {
    const { issuer } = ctx();
    const subject = `sub-${uniqueName('person')}`;
    const first = await issuer.signToken({ sub: subject, email: 'first@example.com', email_verified: true, name: 'First Name' });
    expect(await usersWithSubject(ctx(), subject)).toEqual([]);

    expect((await listOrganizations(`Bearer ${first}`)).statusCode).toBe(200);
    const created = await usersWithSubject(ctx(), subject);
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ issuer: issuer.issuer, subject, email: 'first@example.com', name: 'First Name' });

    expect((await listOrganizations(`Token ${first}`)).statusCode).toBe(200);
    expect(await usersWithSubject(ctx(), subject)).toEqual(created);

    const renamed = await issuer.signToken({ sub: subject, email: 'second@example.com', email_verified: true, name: 'Second Name' });
    expect((await listOrganizations(`Bearer ${renamed}`)).statusCode).toBe(200);
    const refreshed = await usersWithSubject(ctx(), subject);
    expect(refreshed).toHaveLength(1);
    expect(refreshed[0]).toMatchObject({ id: created[0]?.id, email: 'second@example.com', name: 'Second Name' });

    // The same subject at another issuer is another person.
    const rows = await ctx().database.db.selectFrom('users').select('id').where('issuer', '=', issuer.issuer).where('subject', '=', subject).execute();
    expect(rows.map((row) => row.id)).toEqual([created[0]?.id]);
  });

  it('concurrent first requests of one person create exactly one user row', async () => {
    const subject = `sub-${uniqueName('eager')}`;
    const jwt = await ctx().issuer.signToken({ sub: subject, email: 'eager@example.com', email_verified: true });
    const responses = await Promise.all(Array.from({ length: 6 }, () => listOrganizations(`Bearer ${jwt}`)));
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await usersWithSubject(ctx(), subject)).toHaveLength(1);
  });

  it('a bootstrap user without identity is claimed only by a verified e-mail, and by one identity only', async () => {
    const { db } = ctx().database;
    const { issuer } = ctx();
    const email = `${uniqueName('bootstrap')}@example.com`;
    const bootstrapId = newId();
    const now = new Date().toISOString();
    await db
      .insertInto('users')
      .values({ id: bootstrapId, issuer: null, subject: null, email, name: 'Admin', picture: null, created_at: now, updated_at: now })
      .execute();

    const unverified = await issuer.signToken({ sub: `sub-${uniqueName('unverified')}`, email, email_verified: false });
    expect((await listOrganizations(`Bearer ${unverified}`)).statusCode).toBe(200);
    const stillUnlinked = await db.selectFrom('users').selectAll().where('id', '=', bootstrapId).executeTakeFirstOrThrow();
    expect(stillUnlinked).toMatchObject({ issuer: null, subject: null });

    const subjects = [`sub-${uniqueName('claimer')}`, `sub-${uniqueName('claimer')}`];
    const tokens = await Promise.all(subjects.map((sub) => issuer.signToken({ sub, email, email_verified: true })));
    const responses = await Promise.all(tokens.map((jwt) => listOrganizations(`Bearer ${jwt}`)));
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200]);

    const claimed = await db.selectFrom('users').selectAll().where('id', '=', bootstrapId).executeTakeFirstOrThrow();
    expect(claimed.issuer).toBe(issuer.issuer);
    expect(subjects).toContain(claimed.subject);
    // Each identity has exactly one row of its own; neither took over the other's.
    for (const subject of subjects) expect(await usersWithSubject(ctx(), subject)).toHaveLength(1);
    const other = subjects.find((subject) => subject !== claimed.subject) as string;
    expect((await usersWithSubject(ctx(), other))[0]?.id).not.toBe(bootstrapId);
  });

  it('an API token works until it is deleted, and is refused at once afterwards', async () => {
    const user = await ctx().signUp();
    const organizationId = await ctx().createOrganization(user);
    const created = await ctx().call(user.auth, {
      method: 'POST',
      url: `/organization/${organizationId}/apiToken`,
      payload: { name: 'to-revoke', scope: 'ADMIN' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { id, token } = created.json<{ id: string; token: string }>();

    const works = await ctx().call(`Token ${token}`, { method: 'GET', url: '/organization' });
    expect(works.statusCode).toBe(200);
    expect(works.json<{ results: { id: string }[] }>().results.map((organization) => organization.id)).toEqual([organizationId]);

    const deleted = await ctx().call(user.auth, { method: 'DELETE', url: `/organization/${organizationId}/apiToken/${id}` });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expectUnauthorized(await ctx().call(`Token ${token}`, { method: 'GET', url: '/organization' }), [token]);
    expectUnauthorized(await ctx().call(`Bearer ${token}`, { method: 'GET', url: `/organization/${organizationId}` }), [token]);
  });

  it('an API token past its expires_at is refused', async () => {
    const user = await ctx().signUp();
    const organizationId = await ctx().createOrganization(user);
    const expiresAt = new Date(ctx().clock.now().getTime() + 60 * 60 * 1000).toISOString();
    const token = await ctx().createApiToken(user.auth, organizationId, { name: 'short-lived', scope: 'READ', expires_at: expiresAt });
    const lasting = await ctx().createApiToken(user.auth, organizationId, { name: 'lasting', scope: 'READ' });

    expect((await ctx().call(`Token ${token}`, { method: 'GET', url: '/organization' })).statusCode).toBe(200);
    ctx().clock.advance(59 * 60 * 1000);
    expect((await ctx().call(`Token ${token}`, { method: 'GET', url: '/organization' })).statusCode).toBe(200);
    ctx().clock.advance(2 * 60 * 1000);
    expectUnauthorized(await ctx().call(`Token ${token}`, { method: 'GET', url: '/organization' }), [token]);
    // A token without expiry is unaffected by the passing time.
    expect((await ctx().call(`Token ${lasting}`, { method: 'GET', url: '/organization' })).statusCode).toBe(200);
  });

  it('API tokens with a wrong checksum are refused without a database read; well-formed unknown ones after one', async () => {
    const user = await ctx().signUp();
    const organizationId = await ctx().createOrganization(user);
    const token = await ctx().createApiToken(user.auth, organizationId, { name: 'checksum', scope: 'READ' });

    const counter = new QueryCounter();
    const app = await buildApp({
      config: { oidc: { issuer: ctx().issuer.issuer, audience: ctx().issuer.audience }, egressIps: [], logLevel: 'silent' },
      database: { ...ctx().database, db: ctx().database.db.withPlugin(counter) },
      clock: ctx().clock,
    });
    try {
      const call = (value: string) => app.inject({ method: 'GET', url: '/organization', headers: { authorization: `Token ${value}` } });

      const valid = await call(token);
      expect(valid.statusCode, valid.body).toBe(200);
      expect(counter.count).toBeGreaterThan(0);

      counter.count = 0;
      const broken = withBrokenChecksum(token);
      expect(broken).not.toBe(token);
      expectUnauthorized(await call(broken), [token, broken]);
      expectUnauthorized(await call(token.slice(0, -1)), [token]);
      expectUnauthorized(await call(`${token}0`), [token]);
      expect(counter.count).toBe(0);

      const neverIssued = mintToken('api').value;
      expectUnauthorized(await call(neverIssued), [neverIssued]);
      expect(counter.count).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });

  it('an unreachable identity provider answers 503, not 401 and not 500', async () => {
    const gone = await startTestIssuer();
    const jwt = await gone.signToken({ sub: 'sub-unreachable' });
    await gone.close();
    const app = await buildApp({
      config: { oidc: { issuer: gone.issuer, audience: gone.audience }, egressIps: [], logLevel: 'silent' },
      database: ctx().database,
      clock: ctx().clock,
    });
    try {
      const response = await app.inject({ method: 'GET', url: '/organization', headers: { authorization: `Bearer ${jwt}` } });
      expect(response.statusCode, response.body).toBe(503);
      const body = response.json<ErrorBody>();
      expect(body).toMatchObject({ status: 503, request_id: response.headers['x-request-id'] });
      expect(response.body).not.toContain(jwt);
    } finally {
      await app.close();
    }
  });
});

// Its own app, so no earlier test has used up the refetch that an unknown key id may cause.
describeEachDatabase('authentication: unknown key ids', (ctx) => {
  const listOrganizations = (auth: string) => ctx().call(auth, { method: 'GET', url: '/organization' });

  it('tokens naming unknown key ids are refused, and cannot make the server fetch the JWKS again and again', async () => {
    const { issuer } = ctx();
    const { privateKey } = await generateKeyPair('RS256');
    const now = Math.floor(Date.now() / 1000);
    const forge = (kid: string) =>
      new SignJWT({ sub: `sub-${uniqueName('forged')}` })
        .setProtectedHeader({ alg: 'RS256', kid })
        .setIssuer(issuer.issuer)
        .setAudience(issuer.audience)
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(privateKey);

    // A signed-in person first: the keys are fetched for the first time.
    const person = await ctx().signUp();
    const fetchesBefore = issuer.hits.get('/jwks') ?? 0;
    const first = await forge('made-up-1');
    expectUnauthorized(await listOrganizations(`Bearer ${first}`), [first]);
    // One look for the key, in case the issuer had just rotated to it ...
    expect(issuer.hits.get('/jwks') ?? 0).toBe(fetchesBefore + 1);
    for (const kid of ['made-up-2', 'made-up-3', 'made-up-4', 'made-up-5']) {
      const forged = await forge(kid);
      expectUnauthorized(await listOrganizations(`Bearer ${forged}`), [forged]);
    }
    // ... and no more: made-up key ids cannot be used to hammer the identity provider.
    expect(issuer.hits.get('/jwks') ?? 0).toBe(fetchesBefore + 1);
    // Known keys keep working meanwhile.
    expect((await listOrganizations(person.auth)).statusCode).toBe(200);
  });
});
