import { createServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import type { FastifyTypeBox } from '../src/http/fastify.types.ts';
import { systemClock } from '../src/lib/clock.ts';
import { AppError } from '../src/lib/errors.ts';
import { createSecretBox } from '../src/lib/secret-box.ts';
import { createContainerRegistriesService, NO_CONTAINER_REGISTRY_USAGE } from '../src/modules/container-registries/container-registries.service.ts';
import { createOciDistributionClient, parseChallenge } from '../src/registry/oci-distribution.ts';
import { createOutboundHttp, OutboundFailure } from '../src/registry/outbound-http.ts';
import type { EcrAuthorizer } from '../src/registry/registry-access.ts';
import { startTestAwsServer, type TestAwsServer } from './support/aws-server.ts';
import { openTestDatabase, TEST_DIALECTS, type TestDatabase } from './support/databases.ts';
import { expectErrorBody } from './support/error-body.ts';
import { startOciRegistry, type TestOciRegistry } from './support/oci-registry-server.ts';
import { startTestIssuer, type TestIssuer } from './support/oidc-issuer.ts';
import { connectionsDuring, EMBEDDED_IPV4_HOSTS } from './support/outbound-attempts.ts';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';

/**
 * Container registries against real OCI-distribution registries on loopback (basic auth and the bearer-token
 * challenge): the check succeeds with the right credentials and fails with wrong ones or none, the catalog and tag
 * lists are read (pages followed), the credentials never show in answers, rows or logs, private addresses are refused
 * unless allowed, and names are unique per organization, concurrently too.
 */

const PASSWORD = 'reg-Secret-9f8e7d6c5b4a';
const WRONG_PASSWORD = 'reg-Wrong-000000000000';
const REPOSITORIES = { 'team/api': ['1.0.0', '1.1.0', 'latest'], 'team/web': ['2.0.0'], 'tools/cli': ['0.1.0'] };

interface Harness {
  app: FastifyTypeBox;
  testDatabase: TestDatabase;
  logLines: string[];
  call(options: InjectOptions): Promise<LightMyRequestResponse>;
}

async function startHarness(dialect: (typeof TEST_DIALECTS)[number], issuer: TestIssuer, awsEndpointUrl: string): Promise<Harness & { auth: string; organizationId: string }> {
  const testDatabase = await openTestDatabase(dialect);
  const logLines: string[] = [];
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== '')));
  const app = await buildApp({
    config: { oidc: { issuer: issuer.issuer, audience: issuer.audience }, egressIps: [], logLevel: 'trace', gitAllowPrivateHosts: true, awsEndpointUrl },
    database: testDatabase.database,
    logStream,
  });
  const name = uniqueName('registry-owner');
  const auth = `Bearer ${await issuer.signToken({ sub: `sub-${name}`, email: `${name}@example.com`, email_verified: true, name })}`;
  const call = (options: InjectOptions) => app.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: auth } });
  const created = await call({ method: 'POST', url: '/organization', payload: { name: uniqueName('org') } });
  expect(created.statusCode, created.body).toBe(201);
  return { app, testDatabase, logLines, call, auth, organizationId: created.json<{ id: string }>().id };
}

describe('registry challenge parsing', () => {
  it('reads the scheme and the quoted and bare parameters of WWW-Authenticate', () => {
    expect(parseChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull"')).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/nginx:pull' },
    });
    expect(parseChallenge('Basic realm=registry')).toEqual({ scheme: 'basic', params: { realm: 'registry' } });
    expect(parseChallenge(undefined)).toBeUndefined();
  });
});

describe('outgoing registry requests', () => {
  it('gives up on a registry that accepts connections and never answers', async () => {
    const held: Socket[] = [];
    const silent = createTcpServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const oci = createOciDistributionClient(createOutboundHttp({ allowPrivateHosts: true }, { timeoutMs: 500 }));
      const result = await oci.check({ baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` });
      expect(result).toEqual({ reachable: false, authenticated: false, message: expect.stringMatching(/did not answer within 0\.5 s/) });
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('refuses private addresses unless allowed, before connecting', async () => {
    const oci = createOciDistributionClient(createOutboundHttp({ allowPrivateHosts: false }));
    for (const baseUrl of ['https://127.0.0.1:5000', 'https://[::1]:5000', 'https://169.254.169.254', 'http://registry.example.com']) {
      const failure = await oci.check({ baseUrl }).catch((error: unknown) => error);
      expect(failure, baseUrl).toBeInstanceOf(OutboundFailure);
      expect((failure as OutboundFailure).kind).toBe('refused');
    }
  });

  it('refuses IPv6 forms that carry a loopback, private or metadata IPv4 address without connecting', async () => {
    const seen: Socket[] = [];
    const listener = createTcpServer((socket) => {
      seen.push(socket);
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    try {
      const oci = createOciDistributionClient(createOutboundHttp({ allowPrivateHosts: false }));
      for (const { host, form } of EMBEDDED_IPV4_HOSTS) {
        const { result: failure, connections } = await connectionsDuring(() => oci.check({ baseUrl: `https://${host}:${port}` }).catch((error: unknown) => error));
        expect(failure, form).toBeInstanceOf(OutboundFailure);
        expect((failure as OutboundFailure).kind, form).toBe('refused');
        expect((failure as OutboundFailure).message, form).toContain('host is a loopback or private address');
        expect(connections, form).toEqual([]);
      }
      expect(seen).toEqual([]);
      // The recorder and the listener do notice a connection: with private hosts allowed, the mapped form reaches it.
      const allowed = createOciDistributionClient(createOutboundHttp({ allowPrivateHosts: true }, { timeoutMs: 2000 }));
      const { connections } = await connectionsDuring(() => allowed.check({ baseUrl: `http://[::ffff:127.0.0.1]:${port}` }));
      expect(connections).toEqual([`::ffff:7f00:1:${port}`]);
      expect(seen.length).toBe(1);
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });

  it('drops the credentials when a registry redirects to another host', async () => {
    const elsewhere: { authorization: string | undefined }[] = [];
    const target = createServer((request, response) => {
      elsewhere.push({ authorization: request.headers.authorization });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const redirecting = createServer((request, response) => {
      if (request.headers.authorization === undefined) response.writeHead(401, { 'www-authenticate': 'Basic realm="r"' }).end();
      else response.writeHead(302, { location: `http://localhost:${(target.address() as AddressInfo).port}/v2/` }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const oci = createOciDistributionClient(createOutboundHttp({ allowPrivateHosts: true }));
      const result = await oci.check({ baseUrl: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`, credentials: { username: 'robot', password: PASSWORD } });
      expect(result.authenticated).toBe(true);
      expect(elsewhere).toEqual([{ authorization: undefined }]);
    } finally {
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
      await new Promise<void>((resolve) => target.close(() => resolve()));
    }
  });
});

for (const dialect of TEST_DIALECTS) {
  describe(`container registries [${dialect}]`, () => {
    let issuer: TestIssuer;
    let harness: Harness & { auth: string; organizationId: string };
    let basicRegistry: TestOciRegistry;
    let tokenRegistry: TestOciRegistry;
    let base: string;
    let aws: TestAwsServer;

    beforeAll(async () => {
      issuer = await startTestIssuer();
      aws = await startTestAwsServer();
      harness = await startHarness(dialect, issuer, aws.url);
      basicRegistry = await startOciRegistry({ mode: 'basic', username: 'robot', password: PASSWORD, repositories: REPOSITORIES });
      tokenRegistry = await startOciRegistry({ mode: 'token', username: 'robot', password: PASSWORD, repositories: REPOSITORIES, catalogPageSize: 2 });
      base = `/organization/${harness.organizationId}/containerRegistry`;
    });

    afterAll(async () => {
      await harness?.app.close();
      await harness?.testDatabase.dispose();
      await basicRegistry?.close();
      await tokenRegistry?.close();
      await issuer?.close();
      await aws?.close();
    });

    async function createRegistry(payload: Record<string, unknown>): Promise<{ id: string } & Record<string, unknown>> {
      const response = await harness.call({ method: 'POST', url: base, payload });
      expect(response.statusCode, response.body).toBe(201);
      return response.json();
    }

    async function check(id: string): Promise<{ reachable: boolean; authenticated: boolean; message: string }> {
      const response = await harness.call({ method: 'POST', url: `${base}/${id}/check` });
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    }

    it('creates, lists, reads, edits and deletes a registry without ever answering its password', async () => {
      const name = uniqueName('generic');
      const created = await createRegistry({ name, kind: 'GENERIC_CR', url: `${basicRegistry.url}/`, description: 'team images', config: { username: 'robot', password: PASSWORD } });
      expect(created).toMatchObject({ name, kind: 'GENERIC_CR', url: basicRegistry.url, description: 'team images', associated_services_count: 0, config: { username: 'robot' } });
      expect(JSON.stringify(created)).not.toContain(PASSWORD);

      const listed = await harness.call({ method: 'GET', url: base });
      expect(listed.statusCode).toBe(200);
      expect(listed.json<{ results: { id: string }[] }>().results.map((registry) => registry.id)).toContain(created.id);
      expect(listed.body).not.toContain(PASSWORD);
      const fetched = await harness.call({ method: 'GET', url: `${base}/${created.id}` });
      expect(fetched.json()).toEqual(created);

      // Editing without the password keeps it: the check still gets in.
      const renamed = uniqueName('renamed');
      const edited = await harness.call({ method: 'PUT', url: `${base}/${created.id}`, payload: { name: renamed, kind: 'GENERIC_CR', url: basicRegistry.url, config: { username: 'robot' } } });
      expect(edited.statusCode, edited.body).toBe(200);
      expect(edited.json()).toMatchObject({ name: renamed });
      expect(edited.json()).not.toHaveProperty('description');
      expect(await check(created.id)).toMatchObject({ reachable: true, authenticated: true });

      const deleted = await harness.call({ method: 'DELETE', url: `${base}/${created.id}` });
      expect(deleted.statusCode).toBe(204);
      expectErrorBody(await harness.call({ method: 'GET', url: `${base}/${created.id}` }), 404);
      expectErrorBody(await harness.call({ method: 'POST', url: `${base}/${created.id}/check` }), 404);
    });

    it('keeps the credentials sealed at rest and out of the logs', async () => {
      const created = await createRegistry({ name: uniqueName('sealed'), kind: 'GENERIC_CR', url: tokenRegistry.url, config: { username: 'robot', password: PASSWORD } });
      await check(created.id);
      const rows = await sql<Record<string, unknown>>`select * from container_registries where id = ${created.id}`.execute(harness.testDatabase.database.db);
      expect(rows.rows).toHaveLength(1);
      expect(JSON.stringify(rows.rows)).not.toContain(PASSWORD);
      expect(String(rows.rows[0]?.secret_envelope)).toMatch(/^v1\./);
      expect(harness.logLines.join('\n')).not.toContain(PASSWORD);
      expect(harness.logLines.join('\n')).not.toContain(Buffer.from(`robot:${PASSWORD}`).toString('base64'));
    });

    it('checks a Basic-auth registry: right credentials in, wrong ones and none refused', async () => {
      const right = await createRegistry({ name: uniqueName('basic-right'), kind: 'GENERIC_CR', url: basicRegistry.url, config: { username: 'robot', password: PASSWORD } });
      expect(await check(right.id)).toEqual({ reachable: true, authenticated: true, message: 'the registry accepted the credentials of "robot"' });
      const wrong = await createRegistry({ name: uniqueName('basic-wrong'), kind: 'GENERIC_CR', url: basicRegistry.url, config: { username: 'robot', password: WRONG_PASSWORD } });
      expect(await check(wrong.id)).toEqual({ reachable: true, authenticated: false, message: 'the registry refused the credentials (401)' });
      const none = await createRegistry({ name: uniqueName('basic-none'), kind: 'GENERIC_CR', url: basicRegistry.url });
      expect(await check(none.id)).toMatchObject({ reachable: true, authenticated: false, message: expect.stringMatching(/requires credentials/) });
    });

    it('checks a token-challenge registry: a token is fetched with the credentials and sent as Bearer', async () => {
      const right = await createRegistry({ name: uniqueName('token-right'), kind: 'GITHUB_CR', url: tokenRegistry.url, config: { username: 'robot', password: PASSWORD } });
      const before = tokenRegistry.requests.length;
      expect(await check(right.id)).toMatchObject({ reachable: true, authenticated: true });
      const seen = tokenRegistry.requests.slice(before);
      expect(seen.map((request) => request.url.split('?')[0])).toEqual(['/v2/', '/token', '/v2/']);
      expect(seen[1]?.authorization).toBe(`Basic ${Buffer.from(`robot:${PASSWORD}`).toString('base64')}`);
      expect(seen[2]?.authorization).toMatch(/^Bearer [0-9a-f]{32}$/);

      const wrong = await createRegistry({ name: uniqueName('token-wrong'), kind: 'GITLAB_CR', url: tokenRegistry.url, config: { username: 'robot', password: WRONG_PASSWORD } });
      expect(await check(wrong.id)).toMatchObject({ reachable: true, authenticated: false, message: expect.stringMatching(/token service .* refused the credentials \(401\)/) });
    });

    it('reports an unreachable registry as such', async () => {
      const closed = await startOciRegistry({ mode: 'basic', username: 'robot', password: PASSWORD, repositories: {} });
      const url = closed.url;
      await closed.close();
      const created = await createRegistry({ name: uniqueName('gone'), kind: 'GENERIC_CR', url });
      expect(await check(created.id)).toMatchObject({ reachable: false, authenticated: false, message: expect.stringMatching(/refused the connection/) });
    });

    it('lists the tags of an image and the catalog with its pages, through the token flow', async () => {
      const created = await createRegistry({ name: uniqueName('images'), kind: 'GENERIC_CR', url: tokenRegistry.url, config: { username: 'robot', password: PASSWORD } });
      const tags = await harness.call({ method: 'GET', url: `${base}/${created.id}/images?image_name=team/api` });
      expect(tags.statusCode, tags.body).toBe(200);
      expect(tags.json()).toEqual({ results: [{ image_name: 'team/api', versions: ['1.0.0', '1.1.0', 'latest'] }] });

      const before = tokenRegistry.requests.length;
      const catalog = await harness.call({ method: 'GET', url: `${base}/${created.id}/images` });
      expect(catalog.statusCode, catalog.body).toBe(200);
      expect(catalog.json()).toEqual({
        results: [
          { image_name: 'team/api', versions: ['1.0.0', '1.1.0', 'latest'] },
          { image_name: 'team/web', versions: ['2.0.0'] },
          { image_name: 'tools/cli', versions: ['0.1.0'] },
        ],
      });
      // Three repositories, two per page: the second page was followed through the Link header.
      expect(tokenRegistry.requests.slice(before).filter((request) => request.url.startsWith('/v2/_catalog') && request.authorization !== undefined)).toHaveLength(2);

      const searched = await harness.call({ method: 'GET', url: `${base}/${created.id}/images?search=TEAM` });
      expect(searched.json<{ results: { image_name: string }[] }>().results.map((image) => image.image_name)).toEqual(['team/api', 'team/web']);

      const unknown = expectErrorBody(await harness.call({ method: 'GET', url: `${base}/${created.id}/images?image_name=team/missing` }), 400);
      expect(unknown.message).toMatch(/repository "team\/missing" not found/);
      expectErrorBody(await harness.call({ method: 'GET', url: `${base}/${created.id}/images?image_name=Not..Valid` }), 400);
    });

    it('answers 400 when the registry refuses the listing', async () => {
      const created = await createRegistry({ name: uniqueName('refused'), kind: 'GENERIC_CR', url: basicRegistry.url, config: { username: 'robot', password: WRONG_PASSWORD } });
      const refused = expectErrorBody(await harness.call({ method: 'GET', url: `${base}/${created.id}/images?image_name=team/api` }), 400);
      expect(refused.message).toMatch(/refused access/);
      expect(refused.message).not.toContain(WRONG_PASSWORD);
    });

    it('refuses bad configurations with the field at fault', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ name: uniqueName('x'), kind: 'GENERIC_CR', url: 'ftp://registry.example.com' }, '/url'],
        [{ name: uniqueName('x'), kind: 'GENERIC_CR' }, '/url'],
        [{ name: uniqueName('x'), kind: 'GENERIC_CR', url: 'not a url' }, '/url'],
        [{ name: uniqueName('x'), kind: 'GENERIC_CR', url: 'https://user:pw@registry.example.com' }, '/url'],
        [{ name: uniqueName('x'), kind: 'GENERIC_CR', url: tokenRegistry.url, config: { username: 'robot' } }, '/config/password'],
        [{ name: uniqueName('x'), kind: 'ECR', url: 'https://1.dkr.ecr.eu-west-1.amazonaws.com', config: { region: 'eu-west-1' } }, '/config/aws_credentials_id'],
        [{ name: uniqueName('x'), kind: 'ECR', url: 'https://1.dkr.ecr.eu-west-1.amazonaws.com', config: { access_key_id: 'AKIA', secret_access_key: 's', region: 'eu-west-1' } }, '/config/access_key_id'],
        [{ name: uniqueName('x'), kind: 'SCALEWAY_CR', url: 'https://rg.fr-par.scw.cloud', config: { region: 'fr-par' } }, '/config/scaleway_secret_key'],
        [{ name: uniqueName('x'), kind: 'NOT_A_KIND', url: tokenRegistry.url }, '/kind'],
        [{ name: uniqueName('x'), kind: 'GENERIC_CR', url: tokenRegistry.url, config: { surprise: true } }, '/config/surprise'],
      ];
      for (const [payload, field] of cases) {
        const body = expectErrorBody(await harness.call({ method: 'POST', url: base, payload }), 400);
        expect(body.details?.map((detail) => detail.field), JSON.stringify(payload)).toContain(field);
      }
    });

    it('fills in the hosted registry of a kind and accepts every kind of the reference', async () => {
      const hub = await createRegistry({ name: uniqueName('hub'), kind: 'DOCKER_HUB' });
      expect(hub.url).toBe('https://docker.io');
      expect((await createRegistry({ name: uniqueName('ghcr'), kind: 'GITHUB_CR' })).url).toBe('https://ghcr.io');
      expect((await createRegistry({ name: uniqueName('gitlab'), kind: 'GITLAB_CR' })).url).toBe('https://registry.gitlab.com');
      const unknownCredentials = expectErrorBody(
        await harness.call({
          method: 'POST',
          url: base,
          payload: { name: uniqueName('ecr'), kind: 'ECR', url: 'https://123456789012.dkr.ecr.eu-west-1.amazonaws.com', config: { region: 'eu-west-1', aws_credentials_id: '0190a0a0-0000-7000-8000-000000000001' } },
        }),
        400,
      );
      expect(unknownCredentials.details).toEqual([{ field: '/config/aws_credentials_id', message: 'unknown AWS credentials' }]);
      const gcp = await createRegistry({ name: uniqueName('gcp'), kind: 'GCP_ARTIFACT_REGISTRY', url: 'https://europe-docker.pkg.dev', config: { json_credentials: '{"type":"service_account"}' } });
      expect(gcp.config).toEqual({});
      for (const kind of ['GITHUB_ENTERPRISE_CR', 'PUBLIC_ECR', 'DOCR', 'AZURE_CR']) {
        await createRegistry({ name: uniqueName(kind.toLowerCase()), kind, url: 'https://registry.example.com' });
      }
    });

    it('keeps names unique per organization, case-insensitively and under concurrency', async () => {
      const name = uniqueName('Shared');
      await createRegistry({ name, kind: 'GENERIC_CR', url: tokenRegistry.url });
      expectErrorBody(await harness.call({ method: 'POST', url: base, payload: { name: name.toLowerCase(), kind: 'GENERIC_CR', url: tokenRegistry.url } }), 409);
      const other = await createRegistry({ name: uniqueName('other'), kind: 'GENERIC_CR', url: tokenRegistry.url });
      expectErrorBody(await harness.call({ method: 'PUT', url: `${base}/${other.id}`, payload: { name, kind: 'GENERIC_CR', url: tokenRegistry.url } }), 409);

      const raced = uniqueName('raced');
      const answers = await Promise.all(
        [0, 1, 2].map(() => harness.call({ method: 'POST', url: base, payload: { name: raced, kind: 'GENERIC_CR', url: tokenRegistry.url } })),
      );
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409, 409]);
    });

    it('checks an ECR registry with a login from the AWS credentials module (real SDK against a local ECR endpoint)', async () => {
      const key = aws.addKey('210987654321');
      const credentials = await harness.call({
        method: 'POST',
        url: `/organization/${harness.organizationId}/aws/credentials`,
        payload: { type: 'AWS_STATIC', name: uniqueName('aws'), access_key_id: key.accessKeyId, secret_access_key: key.secretAccessKey },
      });
      expect(credentials.statusCode, credentials.body).toBe(201);
      const credentialsId = credentials.json<{ id: string }>().id;
      // The registry accepts the password GetAuthorizationToken hands out for this key (user AWS, as ECR's).
      const ecrRegistry = await startOciRegistry({ mode: 'token', username: 'AWS', password: `ecr-password-${key.accessKeyId}`, repositories: { 'shop/api': ['v3'] } });
      try {
        const created = await createRegistry({ name: uniqueName('ecr'), kind: 'ECR', url: ecrRegistry.url, config: { region: 'eu-west-3', aws_credentials_id: credentialsId } });
        expect(created.config).toEqual({ region: 'eu-west-3', aws_credentials_id: credentialsId });
        expect(await check(created.id)).toEqual({ reachable: true, authenticated: true, message: 'the registry accepted the credentials of "AWS"' });
        expect(aws.calls.filter((call) => call.accessKeyId === key.accessKeyId)).toContainEqual({
          service: 'ecr',
          action: 'GetAuthorizationToken',
          region: 'eu-west-3',
          accessKeyId: key.accessKeyId,
          answered: 'ok',
        });
        const tags = await harness.call({ method: 'GET', url: `${base}/${created.id}/images?image_name=shop/api` });
        expect(tags.json()).toEqual({ results: [{ image_name: 'shop/api', versions: ['v3'] }] });

        // The credential cannot be deleted while the registry signs in with it; once the registry is gone, it can.
        const credentialsUrl = `/organization/${harness.organizationId}/aws/credentials/${credentialsId}`;
        const inUse = expectErrorBody(await harness.call({ method: 'DELETE', url: credentialsUrl }), 409);
        expect(inUse.message).toContain(`container registry "${created.name}"`);

        // AWS refusing the login is the caller's problem to fix: a 400 saying so, never a 5xx.
        aws.setRules([{ service: 'ecr', behaviour: { kind: 'refuse', code: 'AccessDeniedException' } }]);
        const refused = expectErrorBody(await harness.call({ method: 'POST', url: `${base}/${created.id}/check` }), 400);
        expect(refused.message).toMatch(/AWS refused the credentials .* AccessDeniedException/);
        expect(refused.message).not.toContain(key.secretAccessKey);
        expect((await harness.call({ method: 'DELETE', url: `${base}/${created.id}` })).statusCode).toBe(204);
        expect((await harness.call({ method: 'DELETE', url: credentialsUrl })).statusCode).toBe(204);
      } finally {
        aws.setRules([]);
        await ecrRegistry.close();
      }
    });

    it('creates a cluster default ECR registry inside the caller transaction and checks it through the ECR port', async () => {
      const { db } = harness.testDatabase.database;
      // AWS is out of reach here: a fake ECR port hands out the token registry's credentials, as GetAuthorizationToken would.
      const fakeEcr: EcrAuthorizer = {
        authorizeEcr: async (_organizationId, credentialsId, region) => {
          expect(region).toBe('eu-west-3');
          expect(credentialsId).toBe('0190a0a0-0000-7000-8000-0000000000aa');
          return { registryUrl: 'https://123456789012.dkr.ecr.eu-west-3.amazonaws.com', username: 'robot', password: PASSWORD };
        },
      };
      const outbound = createOutboundHttp({ allowPrivateHosts: true });
      const service = createContainerRegistriesService({
        db,
        clock: systemClock,
        secrets: createSecretBox(Buffer.alloc(32, 7)),
        oci: createOciDistributionClient(outbound),
        policy: outbound.policy,
        usage: NO_CONTAINER_REGISTRY_USAGE,
        ecr: fakeEcr,
      });
      const input = {
        organizationId: harness.organizationId,
        name: uniqueName('cluster-ecr'),
        url: tokenRegistry.url,
        region: 'eu-west-3',
        awsCredentialsId: '0190a0a0-0000-7000-8000-0000000000aa',
      };
      const { registryId } = await db.transaction().execute((trx) => service.createClusterDefaultRegistry(trx, input));
      // Secrets sealed under the app's key do not open under another one: a 400 asking for them again, nothing exposed.
      const sealedElsewhere = await createRegistry({ name: uniqueName('rekeyed'), kind: 'GENERIC_CR', url: tokenRegistry.url, config: { username: 'robot', password: PASSWORD } });
      await expect(service.checkContainerRegistry(harness.organizationId, sealedElsewhere.id)).rejects.toMatchObject({
        kind: 'bad_request',
        message: expect.stringMatching(/can no longer be decrypted/),
      });
      // Without the ECR port (the AWS credentials module not wired), a check says so: a 400, not a 5xx.
      const unwired = createContainerRegistriesService({ db, clock: systemClock, secrets: createSecretBox(Buffer.alloc(32, 7)), oci: createOciDistributionClient(outbound), policy: outbound.policy, usage: NO_CONTAINER_REGISTRY_USAGE });
      await expect(unwired.checkContainerRegistry(harness.organizationId, registryId)).rejects.toMatchObject({ kind: 'bad_request', message: expect.stringMatching(/ECR checks need the AWS credentials module/) });
      expect(await service.getContainerRegistry(harness.organizationId, registryId)).toMatchObject({ kind: 'ECR', name: input.name, config: { region: 'eu-west-3' } });
      expect(await service.checkContainerRegistry(harness.organizationId, registryId)).toMatchObject({ reachable: true, authenticated: true });

      // A taken name is a conflict, and the transaction it ran in leaves nothing behind.
      const failure = await db
        .transaction()
        .execute(async (trx) => {
          await trx.insertInto('labels_groups').values({ id: '0190a0a0-0000-7000-8000-0000000000bb', organization_id: harness.organizationId, name: 'x', name_key: uniqueName('x'), labels: '[]', created_at: 'now', updated_at: 'now' }).execute();
          return service.createClusterDefaultRegistry(trx, input);
        })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(AppError);
      expect((failure as AppError).kind).toBe('conflict');
      expect(await db.selectFrom('labels_groups').select('id').where('id', '=', '0190a0a0-0000-7000-8000-0000000000bb').execute()).toEqual([]);
    });
  });
}

describeEachDatabase('container registry addresses without private hosts', (ctx) => {
  it('refuses loopback and private registry addresses and plain http', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const url = `/organization/${organizationId}/containerRegistry`;
    for (const address of ['https://127.0.0.1:5000', 'https://10.1.2.3', 'https://[::1]:5000', 'https://localhost:5000', 'https://169.254.169.254', 'http://registry.example.com']) {
      const body = expectErrorBody(await ctx().call(owner.auth, { method: 'POST', url, payload: { name: uniqueName('private'), kind: 'GENERIC_CR', url: address } }), 400);
      expect(body.details?.[0]?.field, address).toBe('/url');
    }
    const listed = await ctx().call(owner.auth, { method: 'GET', url });
    expect(listed.json()).toEqual({ results: [] });
  });

  it('refuses IPv6 addresses that carry a loopback, private or metadata IPv4 address, before any connection', async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const url = `/organization/${organizationId}/containerRegistry`;
    for (const { host, form } of EMBEDDED_IPV4_HOSTS) {
      const payload = { name: uniqueName('embedded'), kind: 'GENERIC_CR', url: `https://${host}:5000` };
      const { result: response, connections } = await connectionsDuring(() => ctx().call(owner.auth, { method: 'POST', url, payload }));
      const body = expectErrorBody(response, 400);
      expect(body.message, form).toContain('host is a loopback or private address');
      expect(body.details, form).toEqual([{ field: '/url', message: 'host is a loopback or private address' }]);
      expect(connections, form).toEqual([]);
    }
    expect((await ctx().call(owner.auth, { method: 'GET', url })).json()).toEqual({ results: [] });
  });
});
