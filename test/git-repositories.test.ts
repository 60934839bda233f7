import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import type { Config } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/db.client.ts';
import { migrateToLatest } from '../src/db/db.migrate.ts';
import { isPublicAddress } from '../src/git/git-addresses.ts';
import { createSystemGitAccess } from '../src/git/system-git.ts';
import type { FastifyTypeBox } from '../src/http/fastify.types.ts';
import { AppError } from '../src/lib/errors.ts';
import { TEST_DIALECTS, openTestDatabase, type TestDialect } from './support/databases.ts';
import { expectErrorBody } from './support/error-body.ts';
import { createBareRepository, startGitServer, type TestGitServer } from './support/git-server.ts';
import { startTestIssuer, type TestIssuer } from './support/oidc-issuer.ts';
import { connectionsDuring, EMBEDDED_IPV4_HOSTS } from './support/outbound-attempts.ts';
import { uniqueName } from './support/test-app.ts';

/**
 * listDirectoriesFromGitRepository against a real git server (git http-backend over smart HTTP, basic auth) with
 * git tokens stored through the API: the right token lists the nested directories of two branches; every failure
 * is a 400 saying which (wrong token, no token, unknown branch, missing path, unknown repository, unreachable host,
 * private host without SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS); the token value never shows in responses, in the logs,
 * in the database (the SQLite file's bytes, the PostgreSQL rows) or in the URLs the git server saw.
 */

const RIGHT_TOKEN = 'glpat-RightValue7c1f2e9a4b5d';
const WRONG_TOKEN = 'glpat-WrongValue0000000000';
const PUBLIC_TOKEN = 'ghp-PublicRepoValue55aa';

interface Harness {
  app: FastifyTypeBox;
  database: Database;
  dataDir: string;
  logLines: string[];
  call(auth: string | undefined, options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** The real app on a real database (a SQLite file, so its bytes can be read), with its logs captured. */
async function openHarnessDatabase(dialect: TestDialect, dataDir: string): Promise<{ database: Database; dispose(): Promise<void> }> {
  if (dialect === 'postgres') return openTestDatabase('postgres');
  const database = openDatabase({ dialect: 'sqlite', file: path.join(dataDir, 'slipway.db') });
  await migrateToLatest(database.db, database.dialect);
  return { database, dispose: () => database.close() };
}

async function startApp(
  database: Database,
  issuer: TestIssuer,
  config: Pick<Config, 'secretKey' | 'gitAllowPrivateHosts'> & Partial<Pick<Config, 'gitAllowedHosts'>>,
  logLines: string[],
): Promise<FastifyTypeBox> {
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== '')));
  return buildApp({
    config: { oidc: { issuer: issuer.issuer, audience: issuer.audience }, egressIps: [], logLevel: 'trace', ...config },
    database,
    logStream,
  });
}

function listRequest(organizationId: string, payload: Record<string, unknown>): InjectOptions {
  return { method: 'POST', url: `/organization/${organizationId}/listDirectoriesFromGitRepository`, payload };
}

describe('git host addresses', () => {
  it('treats loopback, private, link-local, CGNAT, reserved and their IPv6-embedded forms as not public', () => {
    for (const address of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    for (const address of ['::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '64:ff9b::a00:1', 'ff02::1']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    for (const address of ['140.82.121.3', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPublicAddress(address), address).toBe(true);
    expect(isPublicAddress('not-an-ip')).toBe(false);
  });

  it('judges every IPv6 form that carries an IPv4 address by that address, and counts only unicast as public', () => {
    const notPublic = [
      '::7f00:1', // IPv4-compatible ::127.0.0.1
      '::a00:1', // ::10.0.0.1
      '::ffff:0:a00:1', // IPv4-translated ::ffff:0:10.0.0.1
      '::ffff:0:a9fe:a9fe', // ::ffff:0:169.254.169.254
      '2002:7f00:1::', // 6to4 of 127.0.0.1
      '2002:a9fe:a9fe::1', // 6to4 of 169.254.169.254
      '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo, client NOT(80ff:fffe) = 127.0.0.1
      '2001:0:a00:1:8000:63bf:f7f7:f7f7', // Teredo with a private server (10.0.0.1), public client
      '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
      '64:ff9b::7f00:1', // NAT64 of 127.0.0.1
      '64:ff9b:1::808:808', // the local-use NAT64 prefix (RFC 8215)
      '2001:db8::1', // documentation
      '100::1', // discard
      'fec0::1', // deprecated site-local
      'fd00:ec2::254', // a cloud metadata address (unique local)
      '192.0.2.10', // documentation
      '198.18.0.1', // benchmarking
      '192.175.48.1', // AS112
      '127.1', // forms ipaddr.js would read as IPv4 but an IP address never takes
      '0x7f000001',
    ];
    for (const address of notPublic) expect(isPublicAddress(address), address).toBe(false);
    const isPublic = [
      '::808:808', // IPv4-compatible ::8.8.8.8
      '::ffff:0:808:808', // IPv4-translated ::ffff:0:8.8.8.8
      '2002:808:808::1', // 6to4 of 8.8.8.8
      '2001:0:4136:e378:8000:63bf:f7f7:f7f7', // Teredo, client 8.8.8.8
      '64:ff9b::808:808', // NAT64 of 8.8.8.8
      '2001:4860:4860::8888',
    ];
    for (const address of isPublic) expect(isPublicAddress(address), address).toBe(true);
  });

  it('refuses every IPv6 form of a non-public IPv4 address before starting git', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'slipway-git-recorder-'));
    const invocations = path.join(dir, 'invocations');
    const recorder = path.join(dir, 'git');
    // Stands in for git: any run of it (the only thing that would open a connection) leaves a line behind.
    await writeFile(recorder, `#!/bin/sh\necho "$@" >> '${invocations}'\nexit 1\n`);
    await chmod(recorder, 0o755);
    try {
      const git = createSystemGitAccess({ allowPrivateHosts: false, gitBinary: recorder });
      for (const { host, form } of EMBEDDED_IPV4_HOSTS) {
        const url = `https://${host}/acme/infra.git`;
        for (const attempt of [
          () => git.listDirectories({ url, branch: 'main', rootPath: '/' }),
          () => git.checkout({ url, destination: path.join(dir, 'checkout') }),
        ]) {
          const { result: failure, connections } = await connectionsDuring(() => attempt().catch((error: unknown) => error));
          expect(failure, form).toBeInstanceOf(AppError);
          expect((failure as AppError).kind, form).toBe('bad_request');
          expect((failure as AppError).message, form).toMatch(/is a loopback or private address; Slipway only reaches public git hosts/);
          expect((failure as AppError).details, form).toEqual([{ field: '/url', message: 'host is not public' }]);
          expect(connections, form).toEqual([]);
        }
      }
      expect(await readFile(invocations, 'utf8').catch(() => 'never run')).toBe('never run');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives up on a host that accepts connections and never answers, naming it', async () => {
    const held: Socket[] = [];
    const silent = createTcpServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const git = createSystemGitAccess({ allowPrivateHosts: true, timeoutMs: 1500 });
      const failure = await git.listDirectories({ url: `http://127.0.0.1:${port}/infra.git`, branch: 'main', rootPath: '/' }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(AppError);
      expect((failure as AppError).kind).toBe('bad_request');
      expect((failure as AppError).message).toMatch(/git host 127\.0\.0\.1 (did not answer within|is unreachable)/);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

for (const dialect of TEST_DIALECTS) {
  describe(`listDirectoriesFromGitRepository [${dialect}]`, () => {
    let gitRoot: string;
    let server: TestGitServer;
    let issuer: TestIssuer;
    let harness: Harness;
    let disposeDatabase: () => Promise<void>;
    let ownerAuth: string;
    let organizationId: string;
    let rightTokenId: string;
    let wrongTokenId: string;
    let closedPortUrl: string;

    async function signUp(): Promise<{ auth: string; id: string }> {
      const name = uniqueName('git-user');
      const jwt = await issuer.signToken({ sub: `sub-${name}`, email: `${name}@example.com`, email_verified: true, name });
      const auth = `Bearer ${jwt}`;
      expect((await harness.call(auth, { method: 'GET', url: '/organization' })).statusCode).toBe(200);
      const row = await harness.database.db.selectFrom('users').select('id').where('subject', '=', `sub-${name}`).executeTakeFirstOrThrow();
      return { auth, id: row.id };
    }

    async function createOrganization(auth: string): Promise<string> {
      const response = await harness.call(auth, { method: 'POST', url: '/organization', payload: { name: uniqueName('git-org') } });
      expect(response.statusCode, response.body).toBe(201);
      return response.json<{ id: string }>().id;
    }

    async function createGitToken(auth: string, orgId: string, body: Record<string, unknown>): Promise<string> {
      const response = await harness.call(auth, { method: 'POST', url: `/organization/${orgId}/gitToken`, payload: body });
      expect(response.statusCode, response.body).toBe(201);
      return response.json<{ id: string }>().id;
    }

    async function addMember(orgId: string, userId: string, roleName: string): Promise<void> {
      const { db } = harness.database;
      const role = await db.selectFrom('roles').select('id').where('organization_id', '=', orgId).where('name', '=', roleName).executeTakeFirstOrThrow();
      const now = new Date().toISOString();
      await db.insertInto('members').values({ organization_id: orgId, user_id: userId, role_id: role.id, created_at: now, updated_at: now }).execute();
    }

    beforeAll(async () => {
      gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-git-root-'));
      await createBareRepository(gitRoot, 'infra', {
        main: ['README.md', 'infra/envs/prod/main.tf', 'infra/envs/staging/main.tf', 'infra/envs/notes.txt', 'infra/modules/network/main.tf', 'app/src/index.ts'],
        feature: ['infra/envs/qa/main.tf', 'infra/envs/dev/eu/main.tf', 'docs/guide.md'],
      });
      await createBareRepository(gitRoot, 'public-site', { main: ['site/pages/index.html', 'site/assets/logo.svg', 'Makefile'] });
      server = await startGitServer({ root: gitRoot, privateRepositories: { infra: RIGHT_TOKEN } });

      // A port that was listened on and closed: nothing answers there.
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      closedPortUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/infra.git`;
      await new Promise<void>((resolve) => probe.close(() => resolve()));

      issuer = await startTestIssuer();
      const dataDir = await mkdtemp(path.join(tmpdir(), 'slipway-git-data-'));
      const opened = await openHarnessDatabase(dialect, dataDir);
      disposeDatabase = opened.dispose;
      const logLines: string[] = [];
      const app = await startApp(opened.database, issuer, { secretKey: { kind: 'file', file: path.join(dataDir, 'secret.key') }, gitAllowPrivateHosts: true }, logLines);
      harness = {
        app,
        database: opened.database,
        dataDir,
        logLines,
        call: (auth, options) => app.inject({ ...options, headers: { ...(options.headers ?? {}), ...(auth === undefined ? {} : { authorization: auth }) } }),
        close: () => app.close(),
      };
      const owner = await signUp();
      ownerAuth = owner.auth;
      organizationId = await createOrganization(ownerAuth);
      rightTokenId = await createGitToken(ownerAuth, organizationId, { name: 'right', type: 'GITHUB', token: RIGHT_TOKEN });
      wrongTokenId = await createGitToken(ownerAuth, organizationId, { name: 'wrong', type: 'GITLAB', token: WRONG_TOKEN });
    });

    afterAll(async () => {
      await harness?.close();
      await disposeDatabase?.();
      await server?.close();
      await issuer?.close();
      if (gitRoot !== undefined) await rm(gitRoot, { recursive: true, force: true });
      if (harness?.dataDir !== undefined) await rm(harness.dataDir, { recursive: true, force: true });
    });

    it('lists the immediate subdirectories, sorted, of nested paths on two branches with the right token', async () => {
      const cases: Array<[string | undefined, string, string[]]> = [
        ['main', '/', ['app', 'infra']],
        ['main', '/infra', ['envs', 'modules']],
        ['main', '/infra/envs', ['prod', 'staging']],
        ['main', 'infra/envs/', ['prod', 'staging']],
        ['main', '/infra/envs/prod', []],
        ['feature', '/', ['docs', 'infra']],
        ['feature', '/infra/envs', ['dev', 'qa']],
        ['feature', '/infra/envs/dev', ['eu']],
        // Without a branch, the repository's default branch.
        [undefined, '/infra/envs', ['prod', 'staging']],
      ];
      for (const [branch, rootPath, expected] of cases) {
        const response = await harness.call(
          ownerAuth,
          listRequest(organizationId, { url: server.urlOf('infra'), owner: 'acme', name: 'infra', provider: 'GITHUB', git_token_id: rightTokenId, root_path: rootPath, ...(branch === undefined ? {} : { branch }) }),
        );
        expect(response.statusCode, `${branch} ${rootPath}: ${response.body}`).toBe(200);
        expect(response.json(), `${branch} ${rootPath}`).toEqual({ results: expected });
      }
      // The provider's convention (GitHub: x-access-token) in basic credentials; never the token in a URL.
      const authenticated = server.seen.filter((request) => request.accepted);
      expect(authenticated.length).toBeGreaterThan(0);
      expect(new Set(authenticated.map((request) => request.userName))).toEqual(new Set(['x-access-token']));
      for (const request of server.seen) expect(request.url).not.toContain(RIGHT_TOKEN);
    });

    it('reads a public repository without a token, and root_path defaults to the top', async () => {
      const response = await harness.call(ownerAuth, listRequest(organizationId, { url: server.urlOf('public-site'), provider: 'GITHUB', branch: 'main' }));
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({ results: ['site'] });
      const nested = await harness.call(
        ownerAuth,
        listRequest(organizationId, { url: server.urlOf('public-site'), provider: 'GITHUB', branch: 'main', root_path: '/site', git_token_id: null }),
      );
      expect(nested.json()).toEqual({ results: ['assets', 'pages'] });
    });

    it('answers 400 saying which: wrong token, no token, unknown branch, missing path, a file, unknown repository, unreachable host', async () => {
      const base = { url: server.urlOf('infra'), provider: 'GITHUB', branch: 'main', git_token_id: rightTokenId };
      const cases: Array<[string, Record<string, unknown>, RegExp]> = [
        ['wrong token', { ...base, git_token_id: wrongTokenId }, /refused the git token/],
        ['no token', { ...base, git_token_id: undefined }, /requires authentication/],
        ['unknown branch', { ...base, branch: 'release-9' }, /branch "release-9" does not exist/],
        ['missing path', { ...base, root_path: '/infra/nowhere' }, /root_path "\/infra\/nowhere" does not exist on branch "main"/],
        ['path of another branch', { ...base, root_path: '/docs' }, /root_path "\/docs" does not exist on branch "main"/],
        ['a file', { ...base, root_path: '/README.md' }, /root_path "\/README.md" is not a directory/],
        ['unknown repository', { ...base, url: server.urlOf('no-such-repository') }, /repository .*no-such-repository\.git was not found/],
        ['unreachable host', { ...base, url: closedPortUrl }, /git host 127\.0\.0\.1 is unreachable/],
        ['unresolvable host', { ...base, url: 'https://no-such-host.invalid/acme/infra.git' }, /git host no-such-host\.invalid could not be resolved/],
        ['credentials in the URL', { ...base, url: `http://user:${RIGHT_TOKEN}@127.0.0.1:1/infra.git` }, /must not carry credentials/],
        ['not http(s)', { ...base, url: 'ext::sh%20-c%20id' }, /https/],
        ['ssh', { ...base, url: 'ssh://git@example.com/acme/infra.git' }, /https/],
        ['file URL', { ...base, url: `file://${gitRoot}/infra.git` }, /https/],
        ['option as branch', { ...base, branch: '--upload-pack=touch /tmp/pwned' }, /not a valid branch name/],
        ['bad ref name', { ...base, branch: 'main..x' }, /not a valid branch name/],
        ['path escaping the repository', { ...base, root_path: '/infra/../../etc' }, /not a path inside the repository/],
        ['unknown git token', { ...base, git_token_id: '0190f0b2-6c5e-7000-8000-000000000000' }, /git token .* not found in this organization/],
      ];
      for (const [label, payload, message] of cases) {
        const body = expectErrorBody(await harness.call(ownerAuth, listRequest(organizationId, payload)), 400);
        expect(body.message, label).toMatch(message);
        expect(body.message, label).not.toContain(RIGHT_TOKEN);
        expect(body.message, label).not.toContain(WRONG_TOKEN);
      }
      // Schema-level refusals (no provider, no url, an unknown provider) are 400s too.
      for (const payload of [{ url: server.urlOf('infra') }, { provider: 'GITHUB' }, { url: server.urlOf('infra'), provider: 'SVN' }]) {
        expectErrorBody(await harness.call(ownerAuth, listRequest(organizationId, payload)), 400);
      }
    });

    it('refuses loopback and private hosts without SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS, resolving names first', async () => {
      const strictLogs: string[] = [];
      const strict = await startApp(harness.database, issuer, { secretKey: { kind: 'file', file: path.join(harness.dataDir, 'secret.key') }, gitAllowPrivateHosts: false }, strictLogs);
      try {
        const seenBefore = server.seen.length;
        for (const url of [server.urlOf('infra'), server.urlOf('infra').replace('127.0.0.1', 'localhost'), 'https://10.1.2.3/infra.git', 'https://[::1]/infra.git', 'https://169.254.169.254/latest.git']) {
          const response = await strict.inject({
            ...listRequest(organizationId, { url: url.replace(/^http:/, 'https:'), provider: 'GITHUB', branch: 'main', git_token_id: rightTokenId }),
            headers: { authorization: ownerAuth },
          });
          const body = expectErrorBody(response, 400);
          expect(body.message, url).toMatch(/loopback or private address.*SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true/);
          // A name's resolved address is not disclosed (it would map the internal network).
          if (url.includes('localhost')) expect(body.message).not.toContain('127.0.0.1');
        }
        // Plain http is refused too, before any connection.
        const plain = await strict.inject({ ...listRequest(organizationId, { url: server.urlOf('infra'), provider: 'GITHUB', branch: 'main' }), headers: { authorization: ownerAuth } });
        expect(expectErrorBody(plain, 400).message).toMatch(/https/);
        expect(server.seen.length).toBe(seenBefore);
      } finally {
        await strict.close();
      }
    });

    it('refuses IPv6 forms of loopback, private and metadata addresses with 400, before any connection', async () => {
      const strict = await startApp(harness.database, issuer, { secretKey: { kind: 'file', file: path.join(harness.dataDir, 'secret.key') }, gitAllowPrivateHosts: false }, []);
      try {
        // The new app fetches the identity provider's keys at its first authenticated request (a connection of its
        // own when the pooled one has timed out on a slow machine): done here, so only the refused requests are watched.
        expect((await strict.inject({ method: 'GET', url: '/organization', headers: { authorization: ownerAuth } })).statusCode).toBe(200);
        const seenBefore = server.seen.length;
        for (const { host, form } of EMBEDDED_IPV4_HOSTS) {
          const request = { ...listRequest(organizationId, { url: `https://${host}/infra.git`, provider: 'GITHUB', branch: 'main' }), headers: { authorization: ownerAuth } };
          const { result: response, connections } = await connectionsDuring(() => strict.inject(request));
          const body = expectErrorBody(response, 400);
          expect(body.message, form).toMatch(/loopback or private address.*SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true/);
          expect(body.details, form).toEqual([{ field: '/url', message: 'host is not public' }]);
          expect(connections, form).toEqual([]);
        }
        expect(server.seen.length).toBe(seenBefore);
      } finally {
        await strict.close();
      }
    });

    it('reaches only the hosts of SLIPWAY_GIT_ALLOWED_HOSTS when it is set, refusing others before any connection', async () => {
      const keyFile = { kind: 'file' as const, file: path.join(harness.dataDir, 'secret.key') };
      const payload = { url: server.urlOf('infra'), provider: 'GITHUB', branch: 'main', root_path: '/infra', git_token_id: rightTokenId };
      const elsewhere = await startApp(harness.database, issuer, { secretKey: keyFile, gitAllowPrivateHosts: true, gitAllowedHosts: ['github.com', '*.example.com'] }, []);
      try {
        const seenBefore = server.seen.length;
        const refused = await elsewhere.inject({ ...listRequest(organizationId, payload), headers: { authorization: ownerAuth } });
        expect(expectErrorBody(refused, 400).message).toMatch(/git host 127\.0\.0\.1 is not one this installation may reach/);
        expect(server.seen.length).toBe(seenBefore);
      } finally {
        await elsewhere.close();
      }
      const listed = await startApp(harness.database, issuer, { secretKey: keyFile, gitAllowPrivateHosts: true, gitAllowedHosts: ['127.0.0.1'] }, []);
      try {
        const response = await listed.inject({ ...listRequest(organizationId, payload), headers: { authorization: ownerAuth } });
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json()).toEqual({ results: ['envs', 'modules'] });
      } finally {
        await listed.close();
      }
    });

    it('needs write: a developer lists directories, a viewer gets 403, another organization gets 403/404 and cannot use this organization\'s token', async () => {
      const payload = { url: server.urlOf('infra'), provider: 'GITHUB', branch: 'main', root_path: '/infra', git_token_id: rightTokenId };
      const developer = await signUp();
      await addMember(organizationId, developer.id, 'DEVELOPER');
      const listed = await harness.call(developer.auth, listRequest(organizationId, payload));
      expect(listed.statusCode, listed.body).toBe(200);
      expect(listed.json()).toEqual({ results: ['envs', 'modules'] });

      const viewer = await signUp();
      await addMember(organizationId, viewer.id, 'VIEWER');
      expectErrorBody(await harness.call(viewer.auth, listRequest(organizationId, payload)), 403);

      const stranger = await signUp();
      const strangerOrganization = await createOrganization(stranger.auth);
      const direct = await harness.call(stranger.auth, listRequest(organizationId, payload));
      expect([403, 404]).toContain(direct.statusCode);
      // The victim's token named from the stranger's own organization is not found there.
      const borrowed = expectErrorBody(await harness.call(stranger.auth, listRequest(strangerOrganization, payload)), 400);
      expect(borrowed.message).toMatch(/not found in this organization/);
      expectErrorBody(await harness.call(stranger.auth, { method: 'GET', url: `/organization/${strangerOrganization}/gitToken/${rightTokenId}` }), 404);
    });

    it('keeps tokens across restarts with the same key; under another key a token is reported unreadable, not leaked', async () => {
      const keyFile = await stat(path.join(harness.dataDir, 'secret.key'));
      expect(keyFile.mode & 0o777).toBe(0o600);
      const restarted = await startApp(harness.database, issuer, { secretKey: { kind: 'file', file: path.join(harness.dataDir, 'secret.key') }, gitAllowPrivateHosts: true }, []);
      try {
        const response = await restarted.inject({
          ...listRequest(organizationId, { url: server.urlOf('infra'), provider: 'GITHUB', branch: 'feature', root_path: '/infra/envs', git_token_id: rightTokenId }),
          headers: { authorization: ownerAuth },
        });
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json()).toEqual({ results: ['dev', 'qa'] });
      } finally {
        await restarted.close();
      }
      const otherKeyDir = await mkdtemp(path.join(tmpdir(), 'slipway-other-key-'));
      const rekeyed = await startApp(harness.database, issuer, { secretKey: { kind: 'file', file: path.join(otherKeyDir, 'secret.key') }, gitAllowPrivateHosts: true }, []);
      try {
        const response = await rekeyed.inject({
          ...listRequest(organizationId, { url: server.urlOf('infra'), provider: 'GITHUB', branch: 'main', git_token_id: rightTokenId }),
          headers: { authorization: ownerAuth },
        });
        expect(expectErrorBody(response, 400).message).toMatch(/can no longer be decrypted/);
      } finally {
        await rekeyed.close();
        await rm(otherKeyDir, { recursive: true, force: true });
      }
    });

    it('never lets a token value reach the logs or the database in plain text', async () => {
      // A token edited without a value and one edited with a new value: still nowhere in plain text.
      const edited = await harness.call(ownerAuth, {
        method: 'PUT',
        url: `/organization/${organizationId}/gitToken/${wrongTokenId}`,
        payload: { name: 'wrong-renamed', type: 'GITLAB' },
      });
      expect(edited.statusCode).toBe(200);
      const replacedValue = 'glpat-ReplacedValue31337abc';
      const publicTokenId = await createGitToken(ownerAuth, organizationId, { name: 'public', type: 'BITBUCKET', token: PUBLIC_TOKEN });
      const replaced = await harness.call(ownerAuth, {
        method: 'PUT',
        url: `/organization/${organizationId}/gitToken/${publicTokenId}`,
        payload: { name: 'public', type: 'BITBUCKET', token: replacedValue },
      });
      expect(replaced.statusCode).toBe(200);
      // A refused create whose body carries a value (validation error) must not log it either.
      expectErrorBody(await harness.call(ownerAuth, { method: 'POST', url: `/organization/${organizationId}/gitToken`, payload: { name: 'bad', type: 'SVN', token: 'glpat-RefusedValue999' } }), 400);

      const values = [RIGHT_TOKEN, WRONG_TOKEN, PUBLIC_TOKEN, replacedValue, 'glpat-RefusedValue999'];
      const base64Values = values.map((value) => Buffer.from(value).toString('base64'));
      expect(harness.logLines.length).toBeGreaterThan(0);
      const logText = harness.logLines.join('\n');
      for (const value of [...values, ...base64Values]) expect(logText).not.toContain(value);

      if (dialect === 'sqlite') {
        await sql`PRAGMA wal_checkpoint(FULL)`.execute(harness.database.db);
        const files = (await readdir(harness.dataDir)).filter((file) => file.startsWith('slipway.db'));
        expect(files).toContain('slipway.db');
        for (const file of files) {
          const bytes = await readFile(path.join(harness.dataDir, file));
          for (const value of values) expect(bytes.includes(Buffer.from(value, 'utf8')), `${value} in ${file}`).toBe(false);
        }
        // The rows are there, sealed: the file does hold the envelopes.
        const envelope = (await harness.database.db.selectFrom('git_tokens').select('token_envelope').where('id', '=', rightTokenId).executeTakeFirstOrThrow()).token_envelope;
        expect((await readFile(path.join(harness.dataDir, 'slipway.db'))).includes(Buffer.from(envelope))).toBe(true);
      } else {
        const rows = await sql<{ row: string }>`select row_to_json(t)::text as row from git_tokens t`.execute(harness.database.db);
        expect(rows.rows.length).toBeGreaterThanOrEqual(3);
        for (const { row } of rows.rows) for (const value of values) expect(row).not.toContain(value);
      }
    });
  });
}
