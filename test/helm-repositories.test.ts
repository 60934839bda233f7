import { PassThrough } from 'node:stream';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import type { FastifyTypeBox } from '../src/http/fastify.types.ts';
import { parseHelmIndex } from '../src/registry/helm-index.ts';
import { RegistryAccessError } from '../src/registry/oci-distribution.ts';
import { openTestDatabase, TEST_DIALECTS, type TestDatabase } from './support/databases.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startHelmRepo, type TestHelmRepo } from './support/helm-repo-server.ts';
import { startOciRegistry, type TestOciRegistry } from './support/oci-registry-server.ts';
import { startTestIssuer, type TestIssuer } from './support/oidc-issuer.ts';
import { connectionsDuring, EMBEDDED_IPV4_HOSTS } from './support/outbound-attempts.ts';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';

/**
 * Helm repositories: charts and versions read from a real index.yaml served over HTTP with Basic auth, and from an
 * OCI registry (catalog and tags under the repository's path, token flow); credentials sealed and never answered;
 * bad addresses and private hosts refused.
 */

const PASSWORD = 'charts-Secret-1a2b3c4d5e';

/** As `helm repo index` writes it: entries by chart, newest version first. */
const INDEX_YAML = `apiVersion: v1
entries:
  redis:
  - apiVersion: v2
    name: redis
    version: 19.0.1
    urls:
    - charts/redis-19.0.1.tgz
    created: "2024-03-01T10:00:00Z"
    digest: aaaa
  - apiVersion: v2
    name: redis
    version: 18.6.4
    urls:
    - charts/redis-18.6.4.tgz
  api-gateway:
  - &gw
    apiVersion: v2
    name: api-gateway
    version: 1.2.0
    urls:
    - charts/api-gateway-1.2.0.tgz
  - <<: *gw
    version: 1.1.0
generated: "2024-03-01T10:00:00Z"
`;

interface Harness {
  app: FastifyTypeBox;
  testDatabase: TestDatabase;
  logLines: string[];
  organizationId: string;
  call(options: InjectOptions): Promise<LightMyRequestResponse>;
}

async function startHarness(dialect: (typeof TEST_DIALECTS)[number], issuer: TestIssuer): Promise<Harness> {
  const testDatabase = await openTestDatabase(dialect);
  const logLines: string[] = [];
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== '')));
  const app = await buildApp({
    config: { oidc: { issuer: issuer.issuer, audience: issuer.audience }, egressIps: [], logLevel: 'trace', gitAllowPrivateHosts: true },
    database: testDatabase.database,
    logStream,
  });
  const name = uniqueName('helm-owner');
  const auth = `Bearer ${await issuer.signToken({ sub: `sub-${name}`, email: `${name}@example.com`, email_verified: true, name })}`;
  const call = (options: InjectOptions) => app.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: auth } });
  const created = await call({ method: 'POST', url: '/organization', payload: { name: uniqueName('org') } });
  expect(created.statusCode, created.body).toBe(201);
  return { app, testDatabase, logLines, call, organizationId: created.json<{ id: string }>().id };
}

describe('helm index parsing', () => {
  it('lists charts by name with their versions in index order, merge keys resolved', () => {
    expect(parseHelmIndex(INDEX_YAML)).toEqual([
      { chart_name: 'api-gateway', versions: ['1.2.0', '1.1.0'] },
      { chart_name: 'redis', versions: ['19.0.1', '18.6.4'] },
    ]);
    expect(parseHelmIndex('apiVersion: v1\nentries: {}\n')).toEqual([]);
    // Unquoted versions stay as written, never read as numbers.
    expect(parseHelmIndex('entries:\n  tool:\n  - version: 1.10\n  - version: 2\n')).toEqual([{ chart_name: 'tool', versions: ['1.10', '2'] }]);
  });

  it('refuses what is not an index, and alias bombs', () => {
    expect(() => parseHelmIndex('- a\n- b\n')).toThrow(RegistryAccessError);
    expect(() => parseHelmIndex('entries: [1, 2]\n')).toThrow(/entries/);
    expect(() => parseHelmIndex('entries: {a: [\n')).toThrow(/not valid YAML/);
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let level = 1; level < 9; level += 1) bomb.push(`${String.fromCharCode(97 + level)}: &${String.fromCharCode(97 + level)} [${Array(10).fill(`*${String.fromCharCode(96 + level)}`).join(',')}]`);
    expect(() => parseHelmIndex(`${bomb.join('\n')}\nentries: {}\n`)).toThrow(RegistryAccessError);
  });
});

for (const dialect of TEST_DIALECTS) {
  describe(`helm repositories [${dialect}]`, () => {
    let issuer: TestIssuer;
    let harness: Harness;
    let charts: TestHelmRepo;
    let ociRegistry: TestOciRegistry;
    let base: string;

    beforeAll(async () => {
      issuer = await startTestIssuer();
      harness = await startHarness(dialect, issuer);
      charts = await startHelmRepo({ path: '/stable', indexYaml: INDEX_YAML, credentials: { username: 'reader', password: PASSWORD } });
      ociRegistry = await startOciRegistry({
        mode: 'token',
        username: 'reader',
        password: PASSWORD,
        repositories: { 'charts/redis': ['19.0.1', '18.6.4'], 'charts/postgres': ['15.1.0'], 'charts/nested/deep': ['1.0.0'], 'images/app': ['latest'] },
      });
      base = `/organization/${harness.organizationId}/helmRepository`;
    });

    afterAll(async () => {
      await harness?.app.close();
      await harness?.testDatabase.dispose();
      await charts?.close();
      await ociRegistry?.close();
      await issuer?.close();
    });

    async function createRepository(payload: Record<string, unknown>): Promise<{ id: string } & Record<string, unknown>> {
      const response = await harness.call({ method: 'POST', url: base, payload });
      expect(response.statusCode, response.body).toBe(201);
      return response.json();
    }

    it('creates, reads, edits and deletes a repository without answering its password', async () => {
      const name = uniqueName('stable');
      const created = await createRepository({ name, kind: 'HTTPS', url: `${charts.url}/`, config: { username: 'reader', password: PASSWORD } });
      expect(created).toMatchObject({ name, kind: 'HTTPS', url: charts.url, skip_tls_verification: false, associated_services_count: 0, config: { username: 'reader' } });
      expect(JSON.stringify(created)).not.toContain(PASSWORD);
      const listed = await harness.call({ method: 'GET', url: base });
      expect(listed.json<{ results: { id: string }[] }>().results.map((repository) => repository.id)).toContain(created.id);
      expect((await harness.call({ method: 'GET', url: `${base}/${created.id}` })).json()).toEqual(created);

      const edited = await harness.call({ method: 'PUT', url: `${base}/${created.id}`, payload: { name: uniqueName('renamed'), kind: 'HTTPS', url: charts.url, description: 'main charts', config: { username: 'reader' } } });
      expect(edited.statusCode, edited.body).toBe(200);
      expect(edited.json()).toMatchObject({ description: 'main charts' });
      // The stored password was kept: the index is still read.
      const read = await harness.call({ method: 'GET', url: `${base}/${created.id}/charts` });
      expect(read.statusCode, read.body).toBe(200);

      const rows = await sql<Record<string, unknown>>`select * from helm_repositories where id = ${created.id}`.execute(harness.testDatabase.database.db);
      expect(JSON.stringify(rows.rows)).not.toContain(PASSWORD);
      expect(harness.logLines.join('\n')).not.toContain(PASSWORD);

      expect((await harness.call({ method: 'DELETE', url: `${base}/${created.id}` })).statusCode).toBe(204);
      expectErrorBody(await harness.call({ method: 'GET', url: `${base}/${created.id}` }), 404);
    });

    it('lists the charts and versions of an HTTPS repository from its index.yaml, with Basic auth', async () => {
      const created = await createRepository({ name: uniqueName('https'), kind: 'HTTPS', url: charts.url, config: { username: 'reader', password: PASSWORD } });
      const before = charts.requests.length;
      const listed = await harness.call({ method: 'GET', url: `${base}/${created.id}/charts` });
      expect(listed.statusCode, listed.body).toBe(200);
      expect(listed.json()).toEqual({
        results: [
          { chart_name: 'api-gateway', versions: ['1.2.0', '1.1.0'] },
          { chart_name: 'redis', versions: ['19.0.1', '18.6.4'] },
        ],
      });
      expect(charts.requests.slice(before)).toEqual([{ url: '/stable/index.yaml', authorization: `Basic ${Buffer.from(`reader:${PASSWORD}`).toString('base64')}` }]);
      const one = await harness.call({ method: 'GET', url: `${base}/${created.id}/charts?chart_name=redis` });
      expect(one.json()).toEqual({ results: [{ chart_name: 'redis', versions: ['19.0.1', '18.6.4'] }] });

      const checked = await harness.call({ method: 'POST', url: `${base}/${created.id}/check` });
      expect(checked.json()).toEqual({ reachable: true, authenticated: true, message: 'index.yaml lists 2 chart(s)' });
    });

    it('answers why an HTTPS repository cannot be read', async () => {
      const wrong = await createRepository({ name: uniqueName('wrong'), kind: 'HTTPS', url: charts.url, config: { username: 'reader', password: 'nope' } });
      expect(expectErrorBody(await harness.call({ method: 'GET', url: `${base}/${wrong.id}/charts` }), 400).message).toMatch(/refused the credentials \(401\)/);
      expect((await harness.call({ method: 'POST', url: `${base}/${wrong.id}/check` })).json()).toMatchObject({ reachable: true, authenticated: false });
      const none = await createRepository({ name: uniqueName('anonymous'), kind: 'HTTPS', url: charts.url });
      expect(expectErrorBody(await harness.call({ method: 'GET', url: `${base}/${none.id}/charts` }), 400).message).toMatch(/requires credentials/);
      const missing = await createRepository({ name: uniqueName('missing'), kind: 'HTTPS', url: `${charts.url}/elsewhere`, config: { username: 'reader', password: PASSWORD } });
      expect(expectErrorBody(await harness.call({ method: 'GET', url: `${base}/${missing.id}/charts` }), 400).message).toMatch(/no index\.yaml/);
    });

    it('lists the charts under an OCI repository path and their tags, through the token flow', async () => {
      const created = await createRepository({ name: uniqueName('oci'), kind: 'OCI_GENERIC_CR', url: `oci://${ociRegistry.host}/charts`, config: { username: 'reader', password: PASSWORD } });
      expect(created.url).toBe(`oci://${ociRegistry.host}/charts`);
      const listed = await harness.call({ method: 'GET', url: `${base}/${created.id}/charts` });
      expect(listed.statusCode, listed.body).toBe(200);
      expect(listed.json()).toEqual({
        results: [
          { chart_name: 'postgres', versions: ['15.1.0'] },
          { chart_name: 'redis', versions: ['19.0.1', '18.6.4'] },
        ],
      });
      const one = await harness.call({ method: 'GET', url: `${base}/${created.id}/charts?chart_name=redis` });
      expect(one.json()).toEqual({ results: [{ chart_name: 'redis', versions: ['19.0.1', '18.6.4'] }] });
      expect((await harness.call({ method: 'POST', url: `${base}/${created.id}/check` })).json()).toMatchObject({ reachable: true, authenticated: true });

      const wrong = await createRepository({ name: uniqueName('oci-wrong'), kind: 'OCI_GITHUB_CR', url: `oci://${ociRegistry.host}/charts`, config: { username: 'reader', password: 'nope' } });
      expect(expectErrorBody(await harness.call({ method: 'GET', url: `${base}/${wrong.id}/charts?chart_name=redis` }), 400).message).toMatch(/refused the credentials/);
    });

    it('refuses bad addresses and configurations with the field at fault, and taken names with 409', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ name: uniqueName('x'), kind: 'HTTPS', url: `oci://${ociRegistry.host}/charts` }, '/url'],
        [{ name: uniqueName('x'), kind: 'OCI_GENERIC_CR', url: charts.url }, '/url'],
        [{ name: uniqueName('x'), kind: 'HTTPS', url: 'ftp://charts.example.com' }, '/url'],
        [{ name: uniqueName('x'), kind: 'HTTPS', url: `${charts.url}?token=1` }, '/url'],
        [{ name: uniqueName('x'), kind: 'HTTPS', url: charts.url, config: { password: PASSWORD } }, '/config/username'],
        [{ name: uniqueName('x'), kind: 'OCI_ECR', url: 'oci://1.dkr.ecr.eu-west-1.amazonaws.com/charts', config: { region: 'eu-west-1' } }, '/config/aws_credentials_id'],
        [{ name: uniqueName('x'), kind: 'HTTPS' }, '/url'],
      ];
      for (const [payload, field] of cases) {
        const body = expectErrorBody(await harness.call({ method: 'POST', url: base, payload }), 400);
        expect(body.details?.map((detail) => detail.field), JSON.stringify(payload)).toContain(field);
      }
      const name = uniqueName('Charts');
      await createRepository({ name, kind: 'HTTPS', url: charts.url });
      expectErrorBody(await harness.call({ method: 'POST', url: base, payload: { name: name.toUpperCase(), kind: 'HTTPS', url: charts.url } }), 409);
      const raced = uniqueName('raced');
      const answers = await Promise.all([0, 1].map(() => harness.call({ method: 'POST', url: base, payload: { name: raced, kind: 'HTTPS', url: charts.url } })));
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409]);
    });
  });
}

describeEachDatabase('helm repository addresses without private hosts', (ctx) => {
  it('refuses loopback and private repository addresses and plain http', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const url = `/organization/${organizationId}/helmRepository`;
    const cases: [string, string][] = [
      ['HTTPS', 'https://127.0.0.1:8443/charts'],
      ['HTTPS', 'http://charts.example.com'],
      ['OCI_GENERIC_CR', 'oci://192.168.0.10/charts'],
      ['OCI_GENERIC_CR', 'oci://localhost:5000/charts'],
    ];
    for (const [kind, address] of cases) {
      const body = expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: { name: uniqueName('private'), kind, url: address } }), 400);
      expect(body.details?.[0]?.field, address).toBe('/url');
    }
  });

  it('refuses IPv6 addresses that carry a loopback, private or metadata IPv4 address, for HTTPS and OCI, before any connection', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const url = `/organization/${organizationId}/helmRepository`;
    for (const { host, form } of EMBEDDED_IPV4_HOSTS) {
      for (const [kind, address] of [
        ['HTTPS', `https://${host}/charts`],
        ['OCI_GENERIC_CR', `oci://${host}:5000/charts`],
      ] as const) {
        const payload = { name: uniqueName('embedded'), kind, url: address };
        const { result: response, connections } = await connectionsDuring(() => ctx().call(owner.auth, { method: 'POST', url, payload }));
        const body = expectErrorBody(response, 400);
        expect(body.message, `${kind} ${form}`).toContain('host is a loopback or private address');
        expect(body.details, `${kind} ${form}`).toEqual([{ field: '/url', message: 'host is a loopback or private address' }]);
        expect(connections, `${kind} ${form}`).toEqual([]);
      }
    }
    expect((await ctx().call(owner.auth, { method: 'GET', url })).json()).toEqual({ results: [] });
  });
});
