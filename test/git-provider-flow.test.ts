import { execFile } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TEST_DIALECTS } from './support/databases.ts';
import { startGitHubApi, type TestGitHubApi } from './support/github-api-server.ts';
import { startGitProviderServer, type TestGitProviderServer } from './support/git-provider-server.ts';
import type { TestGitServer } from './support/git-server.ts';
import { startBootstrappedWorld } from './support/local-engine-world.ts';
import { portAccepts, requestThroughProxy } from './support/sample-apps.ts';
import type { SlipwayServer } from './support/slipway-process.ts';

/**
 * Issue 23 end to end: the git-provider flow against a real `slipway server` with its local agent (the local driver,
 * real processes). One GitHub git token whose API URL is a test GitHub API — the listings of
 * test/support/git-provider-server.ts and the hooks of test/support/github-api-server.ts behind one API root — lists
 * the repositories and branches; the application is created from the listing's clone URL, which a test git server
 * serves over HTTP, and deployed. Sync registers the hook; a real `git push` and the delivery GitHub would send for
 * it (signed with the secret the test GitHub API received) deploy exactly that commit, and the app answers the new
 * content through the apps proxy. A pull request opens a preview environment that serves the feature branch, and
 * closing it removes the environment and stops its process. Nothing is timed: waits poll with generous deadlines.
 */

const STEP_TIMEOUT_MS = 240_000;
const SETTLE_DEADLINE_MS = 150_000;
const TOKEN = 'ghp_flow_test_token_0123456789abcdef';
const REPOSITORY = 'acme/chatty';

/** An HTTP server without dependencies that prints each request it serves and answers its VERSION. */
const APP_FILES: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'chatty', version: '1.0.0', private: true, scripts: { build: 'node build.js', start: 'node server.js' } }, null, 2)}\n`,
  'build.js': "console.log('chatty build: nothing to compile');\n",
  'server.js': `'use strict';
const http = require('node:http');
const VERSION = 'v1';
const port = Number(process.env.PORT);
const server = http.createServer((request, response) => {
  if (request.url === '/health') return response.end('ok');
  console.log('chatty ' + VERSION + ' served ' + request.url);
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ version: VERSION, port }));
});
server.listen(port, '127.0.0.1', () => console.log('chatty ' + VERSION + ' listening on ' + port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`,
};

interface ChattyAnswer {
  version: string;
  port: number;
}

/** Git with no user or system configuration, so the machine's settings never change the fixture repository. */
function git(args: string[], cwd: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: cwd,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Dev',
    GIT_AUTHOR_EMAIL: 'dev@example.com',
    GIT_COMMITTER_NAME: 'Dev',
    GIT_COMMITTER_EMAIL: 'dev@example.com',
  };
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env }, (error, stdout, stderr) => (error === null ? resolve(stdout.trim()) : reject(new Error(`git ${args.join(' ')} failed: ${stderr}`))));
  });
}

/**
 * `<root>/acme/chatty.git`, whose branch main holds the app in one commit; served as `<git server>/acme/chatty.git`,
 * so its URL names owner and repository as GitHub's do. It accepts pushes over HTTP (`http.receivepack`): the test
 * git server asks no credentials of a public repository, and git refuses anonymous pushes unless the repository says so.
 */
async function createChattyRepository(root: string): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-flow-chatty-'));
  try {
    await git(['init', '--quiet', '--initial-branch=main', work], work);
    for (const [name, content] of Object.entries(APP_FILES)) await writeFile(path.join(work, name), content);
    await git(['add', '--all'], work);
    await git(['commit', '--quiet', '-m', 'chatty'], work);
    await mkdir(path.join(root, 'acme'), { recursive: true });
    const bare = path.join(root, 'acme', 'chatty.git');
    await git(['clone', '--quiet', '--bare', work, bare], work);
    await git(['config', 'http.receivepack', 'true'], bare);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Clones the served repository over HTTP, sets VERSION in server.js on `branch` (made from main when `fromMain`), commits
 * and pushes it over HTTP: the commit before and the pushed one.
 */
async function pushVersion(gitServer: TestGitServer, branch: string, version: string, fromMain = false): Promise<{ before: string; after: string }> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-flow-push-'));
  try {
    await git(['clone', '--quiet', '--branch', fromMain ? 'main' : branch, gitServer.urlOf(REPOSITORY), work], work);
    if (fromMain) await git(['checkout', '--quiet', '-b', branch], work);
    const before = await git(['rev-parse', 'HEAD'], work);
    const file = path.join(work, 'server.js');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/const VERSION = '[^']*';/, `const VERSION = '${version}';`));
    await git(['commit', '--quiet', '-am', `version ${version}`], work);
    const after = await git(['rev-parse', 'HEAD'], work);
    await git(['push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`], work);
    return { before: fromMain ? '0'.repeat(40) : before, after };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The headers GitHub sends with a delivery, the body signed with `secret` (X-Hub-Signature-256). */
function githubHeaders(event: string, body: string, secret: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/5a1b2c3',
    'x-github-event': event,
    'x-github-delivery': randomUUID(),
    'x-github-hook-id': '1001',
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  };
}

interface GitHubFront {
  /** The API root a git token's git_api_url names. */
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * One GitHub API root over the two test servers, as api.github.com is one host: the repository hooks API goes to the
 * test GitHub API, everything else (repositories, branches) to the listings' GitHub part. Requests and answers are
 * relayed as they are; the listings' `Link` header is rewritten to this root, as its next pages are this API's.
 */
async function startGitHubFront(listings: TestGitProviderServer, hooks: TestGitHubApi): Promise<GitHubFront> {
  let baseUrl = '';
  const relay = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const target = /^\/repos\/[^/]+\/[^/]+\/hooks(?:\/\d+)?$/.test(url.pathname) ? hooks.baseUrl : listings.githubApiUrl;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const name of ['authorization', 'content-type', 'accept']) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const method = request.method ?? 'GET';
    const answer = await fetch(`${target}${url.pathname}${url.search}`, { method, headers, ...(method === 'GET' || method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }) });
    const relayed: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (name === 'content-type' || name.startsWith('x-ratelimit-')) relayed[name] = value;
      if (name === 'link') relayed[name] = value.replaceAll(listings.githubApiUrl, baseUrl);
    });
    response.writeHead(answer.status, relayed).end(Buffer.from(await answer.arrayBuffer()));
  };
  const server = createServer((request, response) => {
    relay(request, response).catch((error: unknown) => response.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ message: String(error) })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

for (const dialect of TEST_DIALECTS) {
  describe(`the git-provider flow through the local engine [${dialect}]`, () => {
    let server: (SlipwayServer & { organizationId: string; apiToken: string }) | undefined;
    let gitServer: TestGitServer | undefined;
    let appsPort = 0;
    let world: Awaited<ReturnType<typeof startBootstrappedWorld>> | undefined;
    let listings: TestGitProviderServer | undefined;
    let hooksApi: TestGitHubApi | undefined;
    let front: GitHubFront | undefined;

    beforeAll(async () => {
      world = await startBootstrappedWorld(dialect, { name: 'git-flow', repositories: createChattyRepository });
      ({ server, gitServer, appsPort } = world);
      const served = gitServer;
      listings = await startGitProviderServer({ pageSize: 2, cloneUrlOf: (_provider, fullName) => served.urlOf(fullName) });
      listings.addAccount(TOKEN, {
        repositories: [
          { fullName: 'acme/archive', isPrivate: true, defaultBranch: 'main', branches: ['main'] },
          { fullName: REPOSITORY, isPrivate: false, defaultBranch: 'main', branches: ['main', 'release'] },
          { fullName: 'acme/website', isPrivate: false, defaultBranch: 'main', branches: ['main'] },
        ],
      });
      hooksApi = await startGitHubApi({ [REPOSITORY]: TOKEN });
      front = await startGitHubFront(listings, hooksApi);
    }, STEP_TIMEOUT_MS);

    afterAll(async () => {
      await world?.close();
      await front?.close();
      await hooksApi?.close();
      await listings?.close();
    }, 60_000);

    async function call(method: string, url: string, body?: unknown): Promise<{ status: number; text: string }> {
      if (server === undefined) throw new Error('the server did not start');
      const response = await fetch(`${server.baseUrl}${url}`, {
        method,
        headers: { authorization: `Bearer ${server.apiToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, text: await response.text() };
    }

    async function api<T>(method: string, url: string, body?: unknown): Promise<T> {
      const { status, text } = await call(method, url, body);
      if (status >= 300) throw new Error(`${method} ${url} answered ${status}: ${text}`);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    }

    /** The server's warnings and errors, for a failure's message. */
    function trouble(): string {
      return (server?.output() ?? '').split('\n').filter((line) => /"level":(40|50|60)/.test(line)).slice(-20).join('\n');
    }

    async function settled(what: string, check: () => Promise<boolean>): Promise<void> {
      await vi.waitFor(async () => expect(await check()).toBe(true), { timeout: SETTLE_DEADLINE_MS, interval: 500 }).catch((error: unknown) => {
        throw new Error(`${what} did not happen (${(error as Error).message.split('\n')[0] ?? ''}); server trouble:\n${trouble()}`);
      });
    }

    /** Waits until the application's last deployment is DEPLOYED and is of `commit`. */
    async function deployedCommit(applicationId: string, commit: string | undefined): Promise<void> {
      await settled(`deployment of ${commit ?? 'the branch'} to ${applicationId}`, async () => {
        const status = await api<{ state: string; deployment_request_id: string | null; message: string | null }>('GET', `/application/${applicationId}/status`);
        if (status.state.endsWith('_ERROR') || status.state === 'CANCELED') throw new Error(`the deployment ended ${status.state}: ${status.message ?? ''}`);
        if (status.state !== 'DEPLOYED' || status.deployment_request_id === null) return false;
        if (commit === undefined) return true;
        const deployment = await api<{ git_commit_id: string | null }>('GET', `/application/${applicationId}/deploymentHistory/${status.deployment_request_id}`);
        return deployment.git_commit_id === commit;
      });
    }

    async function hostnameOf(applicationId: string): Promise<string> {
      const links = await api<{ results: Array<{ url: string; is_default: boolean }> }>('GET', `/application/${applicationId}/link`);
      const link = links.results.find((candidate) => candidate.is_default);
      if (link === undefined) throw new Error(`application ${applicationId} has no default link: ${JSON.stringify(links)}`);
      return new URL(link.url).hostname;
    }

    /** What the app answers through the apps proxy once it answers `version`. */
    async function answersVersion(hostname: string, version: string): Promise<ChattyAnswer> {
      let answer: ChattyAnswer | undefined;
      await settled(`${hostname} answering ${version}`, async () => {
        const reply = await requestThroughProxy(appsPort, hostname, '/');
        if (reply.status !== 200) return false;
        answer = JSON.parse(reply.body) as ChattyAnswer;
        return answer.version === version;
      });
      if (answer === undefined) throw new Error('no answer');
      return answer;
    }

    interface Delivered {
      outcome: string;
      git_commit_id: string | null;
      environment_id: string | null;
      message: string;
    }

    /** Sends a delivery to the URL the hook was registered with, as GitHub does. */
    async function deliver(hookUrl: string, event: string, payload: unknown, secret: string): Promise<{ status: number; body: Delivered }> {
      const body = JSON.stringify(payload);
      // No Slipway credential: the signature is the proof.
      const response = await fetch(hookUrl, { method: 'POST', headers: githubHeaders(event, body, secret), body });
      const text = await response.text();
      return { status: response.status, body: JSON.parse(text) as Delivered };
    }

    it('lists, creates, deploys, deploys a push, and opens and closes a preview', { timeout: STEP_TIMEOUT_MS * 4 }, async () => {
      if (server === undefined || gitServer === undefined || front === undefined || hooksApi === undefined) throw new Error('the set-up did not finish');
      const { organizationId } = server;
      const cluster = await api<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: 'local', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
      await api('POST', `/organization/${organizationId}/cluster/${cluster.id}/deploy`);
      await settled('the cluster deployment', async () => (await api<{ status: string }>('GET', `/organization/${organizationId}/cluster/${cluster.id}/status`)).status === 'DEPLOYED');
      const project = await api<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
      const environment = await api<{ id: string; name: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });

      // 1. One git token whose API is the test GitHub API.
      const token = await api<{ id: string; git_api_url: string }>('POST', `/organization/${organizationId}/gitToken`, { name: 'acme-github', type: 'GITHUB', token: TOKEN, git_api_url: front.baseUrl });
      expect(token.git_api_url).toBe(front.baseUrl);

      // 2. The repositories it sees (over two pages), a repository's branches, the application from the chosen one.
      const repositories = await api<{ results: Array<{ id: string; name: string; url: string; default_branch: string; is_private: boolean }> }>(
        'GET',
        `/organization/${organizationId}/account/github/repository?gitTokenId=${token.id}`,
      );
      expect(repositories.results.map((repository) => repository.name)).toEqual(['acme/archive', REPOSITORY, 'acme/website']);
      const chosen = repositories.results.find((repository) => repository.name === REPOSITORY);
      expect(chosen).toMatchObject({ url: gitServer.urlOf(REPOSITORY), default_branch: 'main', is_private: false });
      const branches = await api<{ results: Array<{ name: string }> }>(
        'GET',
        `/organization/${organizationId}/account/github/repository/branch?name=${encodeURIComponent(REPOSITORY)}&gitTokenId=${token.id}`,
      );
      expect(branches.results).toEqual([{ name: 'main' }, { name: 'release' }]);
      const branch = chosen?.default_branch ?? '';
      expect(branches.results.map((candidate) => candidate.name)).toContain(branch);

      const application = await api<{ id: string; auto_deploy: boolean; git_repository: { owner: string; name: string; url: string; branch: string } }>('POST', `/environment/${environment.id}/application`, {
        name: 'web',
        git_repository: { url: chosen?.url, branch, provider: 'GITHUB', git_token_id: token.id },
        auto_deploy: true,
        ports: [{ internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' }],
        healthchecks: { readiness_probe: { type: { http: { path: '/health' } }, initial_delay_seconds: 0, period_seconds: 2, timeout_seconds: 1, failure_threshold: 60 } },
      });
      expect(application.auto_deploy).toBe(true);
      expect(application.git_repository).toMatchObject({ owner: 'acme', name: 'chatty', url: gitServer.urlOf(REPOSITORY), branch: 'main' });
      const hostname = await hostnameOf(application.id);
      await api('POST', `/application/${application.id}/deploy`, {});
      await deployedCommit(application.id, undefined);
      const first = await answersVersion(hostname, 'v1');
      expect(first.version).toBe('v1');

      // 3. The hook, a real push, the delivery GitHub sends for it: a deployment of exactly that commit.
      const synced = await api<{ status: string; provider: string; missing_events: string[] }>('POST', `/service/${application.id}/gitWebhook/sync`);
      expect(synced).toEqual({ status: 'ACTIVE', provider: 'GITHUB', missing_events: [] });
      const hook = hooksApi.hooks.get(REPOSITORY)?.find((candidate) => candidate.config.url === `${server?.baseUrl ?? ''}/git-webhook/github/${application.id}`);
      expect(hook?.events).toEqual(['push', 'pull_request']);
      const secret = hook?.config.secret ?? '';
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      const hookUrl = hook?.config.url ?? '';

      const pushed = await pushVersion(gitServer, 'main', 'v2');
      const push = await deliver(
        hookUrl,
        'push',
        {
          ref: 'refs/heads/main',
          before: pushed.before,
          after: pushed.after,
          created: false,
          deleted: false,
          forced: false,
          repository: { id: 1296269, name: 'chatty', full_name: REPOSITORY, clone_url: gitServer.urlOf(REPOSITORY), default_branch: 'main' },
          pusher: { name: 'dev', email: 'dev@example.com' },
          commits: [{ id: pushed.after, message: 'version v2', added: [], removed: [], modified: ['server.js'] }],
          head_commit: { id: pushed.after, message: 'version v2', added: [], removed: [], modified: ['server.js'] },
        },
        secret,
      );
      expect(push.status, JSON.stringify(push.body)).toBe(202);
      expect(push.body).toMatchObject({ outcome: 'DEPLOYED', git_commit_id: pushed.after, environment_id: null });
      await deployedCommit(application.id, pushed.after);
      await answersVersion(hostname, 'v2');

      // 4. Previews on (the environment's deployment rule), a feature branch, its pull request: a preview serving it.
      const rule = await api<{ id: string; timezone: string; start_time: string; stop_time: string; weekdays: string[] }>('GET', `/environment/${environment.id}/deploymentRule`);
      await api('PUT', `/environment/${environment.id}/deploymentRule/${rule.id}`, {
        auto_preview: true,
        timezone: rule.timezone,
        start_time: rule.start_time,
        stop_time: rule.stop_time,
        weekdays: rule.weekdays,
      });
      const feature = await pushVersion(gitServer, 'feature', 'feature-7', true);
      const cloneUrl = gitServer.urlOf(REPOSITORY);
      const pullRequest = (action: string) => ({
        action,
        number: 7,
        pull_request: {
          number: 7,
          state: action === 'closed' ? 'closed' : 'open',
          merged: false,
          head: { ref: 'feature', sha: feature.after },
          base: { ref: 'main', sha: pushed.after },
        },
        repository: { id: 1296269, name: 'chatty', full_name: REPOSITORY, clone_url: cloneUrl },
        sender: { login: 'dev' },
      });
      const opened = await deliver(hookUrl, 'pull_request', pullRequest('opened'), secret);
      expect(opened.status, JSON.stringify(opened.body)).toBe(202);
      expect(opened.body).toMatchObject({ outcome: 'PREVIEW_DEPLOYED', git_commit_id: feature.after });
      const previewId = opened.body.environment_id ?? '';
      const preview = await api<{ mode: string; name: string }>('GET', `/environment/${previewId}`);
      expect(preview).toMatchObject({ mode: 'PREVIEW', name: `pr-7-${environment.name}` });
      const previewApplications = await api<{ results: Array<{ id: string; git_repository: { branch: string } }> }>('GET', `/environment/${previewId}/application`);
      expect(previewApplications.results).toHaveLength(1);
      const previewApplication = previewApplications.results[0];
      expect(previewApplication?.git_repository.branch).toBe('feature');
      const previewApplicationId = previewApplication?.id ?? '';
      await deployedCommit(previewApplicationId, feature.after);
      const previewHostname = await hostnameOf(previewApplicationId);
      expect(previewHostname).not.toBe(hostname);
      const previewAnswer = await answersVersion(previewHostname, 'feature-7');
      // The instance's own port, where the proxy reaches it (a pid would be of the sandbox's pid namespace).
      expect(await portAccepts(previewAnswer.port)).toBe(true);
      // The blueprint's application still serves main.
      expect(JSON.parse((await requestThroughProxy(appsPort, hostname, '/')).body)).toMatchObject({ version: 'v2' });

      // Closing the pull request removes the preview: the environment is gone, and so is its process.
      const closed = await deliver(hookUrl, 'pull_request', pullRequest('closed'), secret);
      expect(closed.status, JSON.stringify(closed.body)).toBe(202);
      expect(closed.body).toMatchObject({ outcome: 'PREVIEW_DELETED', environment_id: previewId });
      await settled('the preview environment going', async () => (await call('GET', `/environment/${previewId}`)).status === 404);
      await settled('the preview process ending', async () => !(await portAccepts(previewAnswer.port)));
      const gone = await requestThroughProxy(appsPort, previewHostname, '/');
      expect(gone.status).not.toBe(200);
      expect(JSON.parse((await requestThroughProxy(appsPort, hostname, '/')).body)).toMatchObject({ version: 'v2' });
    });
  });
}
