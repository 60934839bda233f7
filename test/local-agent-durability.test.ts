import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TEST_DIALECTS } from './support/databases.ts';
import { startGitServer, type TestGitServer } from './support/git-server.ts';
import { freePort } from './support/identity-app.ts';
import { killProcessesUnder, portAccepts, processesUnder, requestThroughProxy } from './support/sample-apps.ts';
import { startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';

/**
 * Issue 9 part 7 on a real `slipway server` with its in-process local agent: a `kill -9` of the server in the middle
 * of a deployment leaves that deployment carried out after the restart (its task, held by the dead agent, is offered
 * again at once and performed from the start), and a running application outlives the server's death and is taken
 * over, not started twice, by the next start.
 */
const STEP_TIMEOUT_MS = 240_000;

/** An app whose build takes a few seconds (time to kill the server in the middle) and that says who it is. */
const SLOW_APP: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'slow', version: '1.0.0', private: true, scripts: { build: 'node build.js', start: 'node server.js' } }),
  'build.js': "console.log('slow build: started');\nsetTimeout(() => console.log('slow build: done'), 4000);\n",
  'server.js':
    "const http = require('node:http');\n" +
    "http.createServer((request, response) => response.end(JSON.stringify({ pid: process.pid, port: Number(process.env.PORT) }))).listen(Number(process.env.PORT), '127.0.0.1');\n",
};

function git(args: string[], cwd: string): Promise<void> {
  const env = { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@example.com' };
  return new Promise((resolve, reject) => execFile('git', args, { cwd, env }, (error, _stdout, stderr) => (error === null ? resolve() : reject(new Error(stderr)))));
}

async function slowAppRepository(root: string): Promise<void> {
  const work = path.join(root, 'work');
  await mkdir(work, { recursive: true });
  for (const [file, content] of Object.entries(SLOW_APP)) await writeFile(path.join(work, file), content);
  await git(['init', '--quiet', '--initial-branch=main', '.'], work);
  await git(['add', '--all'], work);
  await git(['commit', '--quiet', '-m', 'slow'], work);
  await git(['clone', '--quiet', '--bare', work, path.join(root, 'slow.git')], root);
}

for (const dialect of TEST_DIALECTS) {
  describe(`the local agent across a kill -9 of the server [${dialect}]`, () => {
    let server: SlipwayServer & { organizationId: string; apiToken: string };
    let gitServer: TestGitServer;
    let gitRoot: string;
    let appsPort: number;
    let applicationId = '';
    /** The application's public hostname, as its link names it (`slow-durable-<8 characters of its id>.localhost`). */
    let hostname = '';

    async function api<T>(method: string, url: string, body?: unknown): Promise<{ status: number; body: T }> {
      const response = await fetch(`${server.baseUrl}${url}`, {
        method,
        headers: { authorization: `Token ${server.apiToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: (text === '' ? {} : JSON.parse(text)) as T };
    }

    async function created(url: string, body: unknown): Promise<string> {
      const response = await api<{ id: string }>('POST', url, body);
      expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
      return response.body.id;
    }

    async function stateOf(): Promise<{ state: string; message: string | null }> {
      return (await api<{ state: string; message: string | null }>('GET', `/application/${applicationId}/status`)).body;
    }

    /** Reads every 200 ms (a failed read counts as not yet) until `done` holds; at the deadline it fails naming `what` and the last value. */
    function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
      return vi.waitFor(
        async () => {
          const value = await read().catch(() => undefined);
          expect(value !== undefined && done(value), `timed out waiting for ${what}: last ${JSON.stringify(value)}`).toBe(true);
          return value as T;
        },
        { timeout: STEP_TIMEOUT_MS - 30_000, interval: 200 },
      );
    }

    beforeAll(async () => {
      gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-durable-git-'));
      await slowAppRepository(gitRoot);
      gitServer = await startGitServer({ root: gitRoot, privateRepositories: {} });
      appsPort = await freePort();
      server = await startSlipwayServer(
        dialect,
        { SLIPWAY_LOCAL_AGENT: 'true', SLIPWAY_APPS_PORT: String(appsPort), SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true' },
        { bootstrap: true },
      );
    }, STEP_TIMEOUT_MS);

    afterAll(async () => {
      if (applicationId !== '') await api('DELETE', `/application/${applicationId}`).catch(() => undefined);
      await until(async () => (await processesUnder(path.join(server.dataDir, 'agent'))).length, (count) => count === 0, 'the teardown').catch(() => undefined);
      const left = await killProcessesUnder(server.dataDir);
      await server?.close();
      await gitServer?.close();
      await rm(gitRoot, { recursive: true, force: true });
      expect(left).toEqual([]);
    }, STEP_TIMEOUT_MS);

    it('carries out a deployment interrupted by a kill -9 of the server once the server is back', { timeout: STEP_TIMEOUT_MS }, async () => {
      const projectId = await created(`/organization/${server.organizationId}/project`, { name: 'durable' });
      const clusterId = await created(`/organization/${server.organizationId}/cluster`, { name: 'here', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
      const environmentId = await created(`/project/${projectId}/environment`, { name: 'durable', cluster: clusterId, mode: 'DEVELOPMENT' });
      applicationId = await created(`/environment/${environmentId}/application`, {
        name: 'slow',
        git_repository: { url: gitServer.urlOf('slow'), provider: 'GITHUB', branch: 'main' },
        ports: [{ internal_port: 8080, publicly_accessible: true }],
        healthchecks: {},
      });
      const links = await api<{ results: Array<{ url: string }> }>('GET', `/application/${applicationId}/link`);
      hostname = new URL(links.body.results[0]?.url ?? 'http://missing').hostname;
      expect(hostname).toMatch(/^slow-durable-[a-z2-7]{8}\.localhost$/);
      expect((await api('POST', `/application/${applicationId}/deploy`, {})).status).toBe(202);
      await until(stateOf, (status) => status.state === 'BUILDING', 'the build to start');

      await server.crash();
      await server.restart();
      const deployed = await until(stateOf, (status) => status.state === 'DEPLOYED' || status.state.endsWith('_ERROR'), 'DEPLOYED after the restart');
      expect(deployed.state, deployed.message ?? '').toBe('DEPLOYED');
      const answer = await requestThroughProxy(appsPort, hostname);
      expect(answer.status, answer.body).toBe(200);
      // One deployment, carried out once to its end: the history shows it DEPLOYED, nothing stuck behind it.
      const history = await api<{ results: Array<{ status: string }> }>('GET', `/application/${applicationId}/deploymentHistoryV2`);
      expect(history.body.results.map((entry) => entry.status)).toEqual(['DEPLOYED']);
    });

    it('keeps a running application through a kill -9 of the server and takes it over afterwards', { timeout: STEP_TIMEOUT_MS }, async () => {
      const before = JSON.parse((await requestThroughProxy(appsPort, hostname)).body) as { pid: number; port: number };
      await server.crash();
      // The proxy died with the server; the application did not.
      expect(await portAccepts(before.port)).toBe(true);
      await server.restart();
      const after = await until(() => requestThroughProxy(appsPort, hostname), (answer) => answer.status === 200, 'the proxy to route again');
      expect(JSON.parse(after.body)).toEqual(before);
      expect((await stateOf()).state).toBe('DEPLOYED');
    });
  });
}
