import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { mintToken } from '../src/auth/tokens.ts';
import { createHttpServer, redactedRequestUrl } from '../src/http/server.ts';
import type { FastifyTypeBox } from '../src/http/fastify.types.ts';
import { openTestDatabase, type TestDatabase } from './support/databases.ts';
import { startTestIssuer, type TestIssuer } from './support/oidc-issuer.ts';
import { describeEachDatabase, uniqueName, type TestUser } from './support/test-app.ts';
import { expectErrorBody } from './support/error-body.ts';

/**
 * The HTTP contract every route shares (DESIGN.md §4): the one error body for every error status, 404/405/415/
 * 400/413 from the plumbing, request ids, the public IP list and its content negotiation, the OpenAPI document
 * and docs page, timestamp format, and what the logs carry (request ids) and never carry (credentials).
 */

const EGRESS_IPS = ['203.0.113.7', '198.51.100.20', '2001:db8::1'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_WITH_MILLISECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every value under a key ending in `_at`, anywhere in a JSON document. */
function timestampsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) timestampsIn(item, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key.endsWith('_at') && typeof inner === 'string') out.push(inner);
      else timestampsIn(inner, out);
    }
  }
  return out;
}

describeEachDatabase(
  'HTTP contract',
  (ctx) => {
    let user: TestUser;
    let organizationId: string;

    beforeAll(async () => {
      user = await ctx().signUp();
      organizationId = await ctx().createOrganization(user);
    });

    describe('errors from the plumbing', () => {
      it('answers an unknown path with 404 and the error body, signed in or not', async () => {
        expectErrorBody(await ctx().call(user.auth, { method: 'GET', url: '/no/such/path' }), 404);
        expectErrorBody(await ctx().call(undefined, { method: 'POST', url: '/organizations', payload: {} }), 404);
        // Paths are matched as SPEC.md writes them, letter case included.
        expectErrorBody(await ctx().call(user.auth, { method: 'GET', url: '/Organization' }), 404);
      });

      it('answers a known path asked with another method with 405, an Allow header and the error body', async () => {
        const onList = await ctx().call(user.auth, { method: 'PATCH', url: '/organization' });
        expectErrorBody(onList, 405);
        expect(String(onList.headers.allow).split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);

        const onOne = await ctx().call(undefined, { method: 'POST', url: `/organization/${organizationId}` });
        expectErrorBody(onOne, 405);
        expect(String(onOne.headers.allow).split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PUT']);

        const onPublic = await ctx().call(undefined, { method: 'DELETE', url: '/ips' });
        expectErrorBody(onPublic, 405);
        expect(String(onPublic.headers.allow).split(', ').sort()).toEqual(['GET', 'HEAD']);
      });

      it('answers a body that is not JSON with 415 and the error body', async () => {
        const xml = await ctx().call(user.auth, {
          method: 'POST',
          url: '/organization',
          headers: { 'content-type': 'text/xml' },
          payload: '<organization><name>x</name></organization>',
        });
        expectErrorBody(xml, 415);
        const form = await ctx().call(user.auth, {
          method: 'POST',
          url: `/organization/${organizationId}/project`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: 'name=x',
        });
        expectErrorBody(form, 415);
        const text = await ctx().call(user.auth, {
          method: 'POST',
          url: '/organization',
          headers: { 'content-type': 'text/plain' },
          payload: '{"name":"sent-as-text"}',
        });
        expectErrorBody(text, 415);
        const jsonLookalike = await ctx().call(user.auth, {
          method: 'POST',
          url: '/organization',
          headers: { 'content-type': 'application/merge-patch+json' },
          payload: `{"name":"${uniqueName('patch')}"}`,
        });
        expectErrorBody(jsonLookalike, 415);
      });

      it('accepts application/json whatever its letter case or parameters', async () => {
        for (const contentType of ['application/json; charset=utf-8', 'Application/JSON']) {
          const response = await ctx().call(user.auth, {
            method: 'POST',
            url: '/organization',
            headers: { 'content-type': contentType },
            payload: JSON.stringify({ name: uniqueName('typed') }),
          });
          expect(response.statusCode, `${contentType}: ${response.body}`).toBe(201);
        }
      });

      it('treats an empty application/json body as no body: fine where none is taken, 400 where one is required', async () => {
        const project = await ctx().call(user.auth, {
          method: 'POST',
          url: `/organization/${organizationId}/project`,
          payload: { name: uniqueName('bodyless-delete') },
        });
        expect(project.statusCode).toBe(200);
        const deleted = await ctx().call(user.auth, {
          method: 'DELETE',
          url: `/project/${project.json<{ id: string }>().id}`,
          headers: { 'content-type': 'application/json' },
        });
        expect(deleted.statusCode, deleted.body).toBe(204);
        const needsBody = await ctx().call(user.auth, {
          method: 'POST',
          url: `/organization/${organizationId}/project`,
          headers: { 'content-type': 'application/json' },
          payload: '',
        });
        expectErrorBody(needsBody, 400);
      });

      it('answers malformed JSON with 400 and the error body, without echoing the body', async () => {
        for (const payload of ['{"name":', '{name: "x"}', 'null x', '{"name":"a"}}']) {
          const response = await ctx().call(user.auth, {
            method: 'POST',
            url: '/organization',
            headers: { 'content-type': 'application/json' },
            payload,
          });
          expectErrorBody(response, 400);
        }
        const blank = await ctx().call(user.auth, {
          method: 'POST',
          url: '/organization',
          headers: { 'content-type': 'application/json' },
          payload: '  \n',
        });
        expectErrorBody(blank, 400);
        // Prototype pollution attempts are refused, not merged.
        const poisoned = await ctx().call(user.auth, {
          method: 'POST',
          url: '/organization',
          headers: { 'content-type': 'application/json' },
          payload: `{"name":"${uniqueName('proto')}","__proto__":{"admin":true}}`,
        });
        expectErrorBody(poisoned, 400);
      });

      it('answers a body over 1 MiB with 413 and the error body, and creates nothing', async () => {
        const name = uniqueName('huge');
        const response = await ctx().call(user.auth, {
          method: 'POST',
          url: '/organization',
          payload: { name, description: 'x'.repeat(1024 * 1024) },
        });
        expectErrorBody(response, 413);
        const listed = await ctx().call(user.auth, { method: 'GET', url: '/organization' });
        expect(listed.json<{ results: { name: string }[] }>().results.map((organization) => organization.name)).not.toContain(name);
        // Just under the limit the same request is judged on its content, not refused for its size.
        const underLimit = await ctx().call(user.auth, {
          method: 'POST',
          url: '/organization',
          payload: { name, description: 'x'.repeat(1024 * 1024 - 200) },
        });
        expect(underLimit.statusCode).not.toBe(413);
        expect(underLimit.statusCode).toBeLessThan(500);
      });

      it('answers a badly encoded path or an over-long path parameter with a 4xx and the error body', async () => {
        expectErrorBody(await ctx().call(user.auth, { method: 'GET', url: '/organization/%E0%A4%A' }), 400);
        expectErrorBody(await ctx().call(user.auth, { method: 'GET', url: '/no/such/%zz' }), 400);
        const long = await ctx().call(user.auth, { method: 'GET', url: `/project/${'a'.repeat(300)}` });
        expect(long.statusCode).toBeGreaterThanOrEqual(400);
        expect(long.statusCode).toBeLessThan(500);
        expectErrorBody(long, long.statusCode);
      });
    });

    describe('request ids', () => {
      it('echoes a well-formed X-Request-Id and uses it as the error body request_id', async () => {
        const requestId = 'client-req.42:retry-1';
        const response = await ctx().call(user.auth, { method: 'GET', url: '/no/such/path', headers: { 'x-request-id': requestId } });
        expect(response.headers['x-request-id']).toBe(requestId);
        expect(expectErrorBody(response, 404).request_id).toBe(requestId);

        const success = await ctx().call(user.auth, { method: 'GET', url: '/organization', headers: { 'x-request-id': 'ok-1' } });
        expect(success.statusCode).toBe(200);
        expect(success.headers['x-request-id']).toBe('ok-1');
      });

      it('replaces a malformed X-Request-Id with a fresh uuid', async () => {
        for (const malformed of ['has spaces in it', 'x'.repeat(129), 'quote"and<angle>', 'line\tbreak']) {
          const response = await ctx().call(undefined, { method: 'GET', url: '/organization', headers: { 'x-request-id': malformed } });
          const body = expectErrorBody(response, 401);
          expect(response.headers['x-request-id']).not.toBe(malformed);
          expect(response.headers['x-request-id']).toMatch(UUID);
          expect(body.request_id).toBe(response.headers['x-request-id']);
        }
      });

      it('gives every request without an X-Request-Id its own uuid', async () => {
        const first = await ctx().call(user.auth, { method: 'GET', url: '/organization' });
        const second = await ctx().call(user.auth, { method: 'GET', url: '/organization' });
        expect(first.headers['x-request-id']).toMatch(UUID);
        expect(second.headers['x-request-id']).toMatch(UUID);
        expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
      });
    });

    describe('GET /ips', () => {
      it('answers JSON {"ips": [...]} with the configured egress addresses, without authentication', async () => {
        for (const accept of [undefined, '*/*', 'application/json', 'application/*']) {
          const response = await ctx().call(undefined, { method: 'GET', url: '/ips', headers: accept === undefined ? {} : { accept } });
          expect(response.statusCode, `Accept: ${accept}`).toBe(200);
          expect(response.headers['content-type']).toMatch(/^application\/json/);
          expect(response.json()).toEqual({ ips: EGRESS_IPS });
        }
      });

      it('answers text/plain with one address per line when asked for text/plain', async () => {
        for (const accept of ['text/plain', 'text/plain; charset=utf-8', 'text/plain;q=0.9, application/json;q=0.5']) {
          const response = await ctx().call(undefined, { method: 'GET', url: '/ips', headers: { accept } });
          expect(response.statusCode, `Accept: ${accept}`).toBe(200);
          expect(response.headers['content-type']).toMatch(/^text\/plain/);
          expect(response.body.split('\n').filter((line) => line !== '')).toEqual(EGRESS_IPS);
        }
      });

      it('answers text/plain to a client that accepts any text type', async () => {
        const response = await ctx().call(undefined, { method: 'GET', url: '/ips', headers: { accept: 'text/*' } });
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toMatch(/^text\/plain/);
        expect(response.body.split('\n').filter((line) => line !== '')).toEqual(EGRESS_IPS);
      });

      it('prefers JSON when the client ranks it higher', async () => {
        const response = await ctx().call(undefined, { method: 'GET', url: '/ips', headers: { accept: 'text/plain;q=0.5, application/json' } });
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual({ ips: EGRESS_IPS });
      });

      it('ignores credentials, even invalid ones', async () => {
        const response = await ctx().call('Bearer not-a-token', { method: 'GET', url: '/ips' });
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual({ ips: EGRESS_IPS });
      });
    });

    describe('route schemas', () => {
      // Compiled at first use (src/http/validation.ts): every validator and serializer must still compile.
      it('compiles the validator and serializer of every route', () => {
        expect(() => ctx().app.compileSchemasNow()).not.toThrow();
      });

      it('validates and serializes through schemas compiled at their first request: refusals name the field, answers follow the schema', async () => {
        const url = `/organization/${organizationId}/project`;
        const refused = await ctx().call(user.auth, { method: 'POST', url, payload: { name: 7, unknown_field: true } });
        const body = expectErrorBody(refused, 400);
        expect(JSON.stringify(body)).toContain('name');
        const name = uniqueName('schemas');
        const created = await ctx().call(user.auth, { method: 'POST', url, payload: { name } });
        expect(created.statusCode).toBe(200);
        expect(created.json()).toMatchObject({ name, id: expect.stringMatching(UUID) });
        expect(created.json<{ created_at: string }>().created_at).toMatch(ISO_WITH_MILLISECONDS);
      });
    });

    describe('API description', () => {
      it('serves an OpenAPI 3 document with the interface version, the security schemes and a public listPlatformIps', async () => {
        const response = await ctx().call(undefined, { method: 'GET', url: '/openapi.json' });
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        const document = response.json<{
          openapi: string;
          info: { title: string; version: string };
          paths: Record<string, Record<string, { operationId?: string; security?: unknown[]; responses?: Record<string, unknown> }>>;
          components: { securitySchemes: Record<string, { type: string; scheme?: string; in?: string; name?: string }> };
          security: unknown[];
        }>();
        expect(document.openapi).toMatch(/^3\.\d+\.\d+$/);
        expect(document.info.version).toBe('1.0.4');
        expect(typeof document.info.title).toBe('string');
        expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
        expect(document.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
        expect(document.security).toEqual(expect.arrayContaining([{ bearerAuth: [] }, { ApiKeyAuth: [] }]));
        const ips = document.paths['/ips']?.get;
        expect(ips?.operationId).toBe('listPlatformIps');
        expect(ips?.security).toEqual([]);
        // Authenticated operations inherit the document's security and document their 401.
        const getOrganization = document.paths['/organization/{organizationId}']?.get;
        expect(getOrganization?.operationId).toBe('getOrganization');
        expect(getOrganization?.security).toBeUndefined();
        expect(Object.keys(getOrganization?.responses ?? {})).toEqual(expect.arrayContaining(['200', '401', '403', '404']));
        // A cluster's operator and agent authenticate with their own credential: every /operator/v1 operation says so,
        // but enrollment, whose one-time token travels in its body.
        expect(document.components.securitySchemes.OperatorAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
        const operatorOperations = Object.entries(document.paths)
          .filter(([path]) => path.startsWith('/operator/v1/'))
          .flatMap(([path, operations]) => Object.values(operations).map((operation) => ({ path, operation })));
        expect(operatorOperations.length).toBeGreaterThanOrEqual(11);
        for (const { path, operation } of operatorOperations) {
          expect(operation.security, `${path} ${operation.operationId ?? ''}`).toEqual(path === '/operator/v1/enroll' ? [] : [{ OperatorAuth: [] }]);
        }
      });

      it('serves the documentation page as HTML', async () => {
        const response = await ctx().call(undefined, { method: 'GET', url: '/docs' });
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toMatch(/^text\/html/);
        expect(response.body).toMatch(/<html/i);
      });
    });

    it('writes every timestamp as ISO-8601 UTC with milliseconds', async () => {
      const organization = await ctx().call(user.auth, { method: 'GET', url: `/organization/${organizationId}` });
      const project = await ctx().call(user.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/project`,
        payload: { name: uniqueName('stamped') },
      });
      // A whole-second expiry in another offset comes back normalised to UTC with milliseconds.
      const token = await ctx().call(user.auth, {
        method: 'POST',
        url: `/organization/${organizationId}/apiToken`,
        payload: { name: uniqueName('stamped'), scope: 'READ', expires_at: '2031-03-04T05:06:07+02:00' },
      });
      expect(token.statusCode).toBe(201);
      expect(token.json<{ expires_at: string }>().expires_at).toBe('2031-03-04T03:06:07.000Z');
      const tokens = await ctx().call(user.auth, { method: 'GET', url: `/organization/${organizationId}/apiToken` });
      const projects = await ctx().call(user.auth, { method: 'GET', url: `/organization/${organizationId}/project` });

      const stamps = [organization, project, token, tokens, projects].flatMap((response) => timestampsIn(response.json()));
      expect(stamps.length).toBeGreaterThanOrEqual(8);
      for (const stamp of stamps) expect(stamp).toMatch(ISO_WITH_MILLISECONDS);
    });
  },
  { egressIps: EGRESS_IPS },
);

describeEachDatabase(
  'HTTP contract: GET /ips chooses its media type from Accept',
  (ctx) => {
    // Offers: application/json (first, so the default) and text/plain. An Accept header that offers neither still
    // gets JSON: the operation lists no error answers.
    it.each([
      [undefined, 'json'],
      ['', 'json'],
      ['*/*', 'json'],
      ['application/json', 'json'],
      ['application/*', 'json'],
      ['text/plain', 'text'],
      ['TEXT/Plain', 'text'],
      ['text/plain; charset=utf-8', 'text'],
      ['text/plain;charset=UTF-8', 'text'],
      ['text/*', 'text'],
      ['text/*;q=0.9, */*;q=0.1', 'text'],
      ['text/plain;q=0.9, application/json;q=0.5', 'text'],
      ['text/plain;q=0.5, application/json', 'json'],
      ['*/*;q=0.8, text/plain', 'text'],
      ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'json'],
      ['*/*, application/json;q=0', 'text'],
      ['text/html', 'json'],
      ['application/json;q=0, text/plain;q=0', 'json'],
      ['garbage', 'json'],
    ] as const)('Accept: %s → %s', async (accept, expected) => {
      const response = await ctx().call(undefined, {
        method: 'GET',
        url: '/ips',
        headers: accept === undefined ? {} : { accept },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers.vary).toBe('Accept');
      if (expected === 'text') {
        expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(response.body).toBe(EGRESS_IPS.map((ip) => `${ip}\n`).join(''));
      } else {
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(response.json()).toEqual({ ips: EGRESS_IPS });
      }
    });
  },
  { egressIps: EGRESS_IPS },
);

describe('HTTP contract: logs', () => {
  let testDatabase: TestDatabase;
  let issuer: TestIssuer;
  let app: FastifyTypeBox;
  const lines: string[] = [];

  beforeAll(async () => {
    testDatabase = await openTestDatabase('sqlite');
    issuer = await startTestIssuer();
    const logStream = new PassThrough();
    let pending = '';
    logStream.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const complete = pending.split('\n');
      pending = complete.pop() ?? '';
      lines.push(...complete.filter((line) => line !== ''));
    });
    app = await buildApp({
      config: { oidc: { issuer: issuer.issuer, audience: issuer.audience }, egressIps: [], logLevel: 'info' },
      database: testDatabase.database,
      logStream,
    });
  });

  afterAll(async () => {
    await app.close();
    await issuer.close();
    await testDatabase.dispose();
  });

  it('puts the request id on every line of a request and never a credential', async () => {
    const jwt = await issuer.signToken({ sub: 'sub-logged', email: 'logged@example.com', email_verified: true, name: 'Logged' });
    const garbage = 'garbage-secret-credential-0123456789';
    const requests: { id: string; auth: string | undefined; method: 'GET' | 'POST'; url: string; payload?: unknown; status: number }[] = [
      { id: 'log-signup', auth: `Bearer ${jwt}`, method: 'GET', url: '/organization', status: 200 },
      { id: 'log-create', auth: `Bearer ${jwt}`, method: 'POST', url: '/organization', payload: { name: uniqueName('logged') }, status: 201 },
      { id: 'log-garbage', auth: `Bearer ${garbage}`, method: 'GET', url: '/organization', status: 401 },
      { id: 'log-unknown', auth: `Token ${jwt}`, method: 'GET', url: '/no/such/path', status: 404 },
    ];
    const secrets = [jwt, garbage];
    const answered: { id: string; status: number }[] = requests.map((request) => ({ id: request.id, status: request.status }));
    for (const request of requests) {
      const response = await app.inject({
        method: request.method,
        url: request.url,
        headers: { 'x-request-id': request.id, ...(request.auth === undefined ? {} : { authorization: request.auth }) },
        ...(request.payload === undefined ? {} : { payload: request.payload as Record<string, unknown> }),
      });
      expect(response.statusCode, response.body).toBe(request.status);
      if (request.id === 'log-create') {
        const organizationId = response.json<{ id: string }>().id;
        const created = await app.inject({
          method: 'POST',
          url: `/organization/${organizationId}/apiToken`,
          headers: { authorization: `Bearer ${jwt}`, 'x-request-id': 'log-mint' },
          payload: { name: 'logged-token', scope: 'READ' },
        });
        expect(created.statusCode).toBe(201);
        const apiToken = created.json<{ token: string }>().token;
        secrets.push(apiToken);
        const used = await app.inject({
          method: 'GET',
          url: `/organization/${organizationId}`,
          headers: { authorization: `Token ${apiToken}`, 'x-request-id': 'log-token-use' },
        });
        expect(used.statusCode).toBe(200);
        answered.push({ id: 'log-mint', status: 201 }, { id: 'log-token-use', status: 200 });
      }
    }
    await new Promise((resolve) => setImmediate(resolve));

    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const request of answered) {
      const own = parsed.filter((line) => line.request_id === request.id);
      const messages = own.map((line) => line.msg);
      expect(messages, request.id).toContain('incoming request');
      expect(messages, request.id).toContain('request completed');
      const completed = own.find((line) => line.msg === 'request completed') as { res?: { statusCode?: number } } | undefined;
      expect(completed?.res?.statusCode, request.id).toBe(request.status);
    }
    // Every line written about a request names it.
    for (const line of parsed.filter((entry) => 'req' in entry || 'res' in entry || 'err' in entry)) {
      expect(typeof line.request_id, JSON.stringify(line)).toBe('string');
    }
    for (const line of lines) {
      for (const secret of secrets) expect(line.includes(secret), line).toBe(false);
    }
  });

  it('keeps signed links\' signatures out of request log lines', async () => {
    const logged: string[] = [];
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => logged.push(...chunk.toString('utf8').split('\n').filter((line) => line !== '')));
    const server = createHttpServer({ logLevel: 'info', logStream });
    server.get('/download', async () => ({ ok: true }));
    await server.ready();
    try {
      await server.inject({ method: 'GET', url: '/download?expires=1900000000&signature=s3cretSignatureValue&x=1' });
      await new Promise((resolve) => setImmediate(resolve));
      const incoming = logged.map((line) => JSON.parse(line) as { req?: { url?: string } }).find((line) => line.req?.url !== undefined);
      expect(incoming?.req?.url).toBe('/download?expires=1900000000&signature=[redacted]&x=1');
      for (const line of logged) expect(line).not.toContain('s3cretSignatureValue');
    } finally {
      await server.close();
    }
  });

  it('keeps credentials sent in a query string out of the request log line, and the other parameters in it', async () => {
    const apiToken = mintToken('api').value;
    const policyToken = mintToken('policy').value;
    const response = await app.inject({ method: 'GET', url: `/organization?token=${apiToken}&other=1&x=${policyToken}`, headers: { 'x-request-id': 'log-query-token' } });
    expectErrorBody(response, 401);
    await new Promise((resolve) => setImmediate(resolve));
    const own = lines.filter((line) => line.includes('"log-query-token"'));
    const incoming = own.map((line) => JSON.parse(line) as { msg?: string; req?: { url?: string } }).find((line) => line.msg === 'incoming request');
    expect(incoming?.req?.url).toBe('/organization?token=[redacted]&other=1&x=[redacted]');
    for (const line of lines) {
      expect(line).not.toContain(apiToken);
      expect(line).not.toContain(policyToken);
    }
  });

  it('redacts credential-named query parameters and any value holding a Slipway token, and nothing else', () => {
    const token = mintToken('api').value;
    const cases: [string, string][] = [
      ['/x', '/x'],
      ['/x?page=2&sort=name', '/x?page=2&sort=name'],
      ['/x?token=a&access_token=b&password=c&secret=d&api_key=e&key=f&signature=g', '/x?token=[redacted]&access_token=[redacted]&password=[redacted]&secret=[redacted]&api_key=[redacted]&key=[redacted]&signature=[redacted]'],
      // Names compared case-insensitively and decoded; values too.
      ['/x?Access_Token=a&API_KEY=b&%74oken=c', '/x?Access_Token=[redacted]&API_KEY=[redacted]&%74oken=[redacted]'],
      [`/x?q=${token}&n=1`, '/x?q=[redacted]&n=1'],
      [`/x?q=%73lw_${token.slice(4)}`, '/x?q=[redacted]'],
      [`/x?next=${encodeURIComponent(`https://example.com/?t=${mintToken('operator').value}`)}`, '/x?next=[redacted]'],
      [`/x?enroll=${mintToken('enrollment').value}`, '/x?enroll=[redacted]'],
      [`/x?${token}&n=1`, '/x?[redacted]&n=1'],
      // Only exact names: a parameter that merely contains one is kept, and so is a name without a value.
      ['/x?keyboard=us&monkey=1&token', '/x?keyboard=us&monkey=1&token'],
      ['/x?bad=%E0%A4%A&token=%zz', '/x?bad=%E0%A4%A&token=[redacted]'],
    ];
    for (const [url, logged] of cases) expect(redactedRequestUrl(url), url).toBe(logged);
  });

  it('answers an unexpected failure with a 500 that hides it, and logs it under the request id', async () => {
    const logged: string[] = [];
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => logged.push(...chunk.toString('utf8').split('\n').filter((line) => line !== '')));
    const server = createHttpServer({ logLevel: 'info', logStream });
    server.get('/explode', async () => {
      throw new Error('database password is hunter2');
    });
    await server.ready();
    try {
      const response = await server.inject({ method: 'GET', url: '/explode', headers: { 'x-request-id': 'boom-1' } });
      const body = expectErrorBody(response, 500);
      expect(body.request_id).toBe('boom-1');
      expect(response.body).not.toContain('hunter2');
      await new Promise((resolve) => setImmediate(resolve));
      const failure = logged.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.err !== undefined);
      expect(failure?.request_id).toBe('boom-1');
      expect(JSON.stringify(failure?.err)).toContain('hunter2');
    } finally {
      await server.close();
    }
  });
});
