import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TEST_DIALECTS } from './support/databases.ts';
import type { TestGitServer } from './support/git-server.ts';
import { requestThroughProxy } from './support/sample-apps.ts';
import { runSlipway, spawnSlipway, type SlipwayServer } from './support/slipway-process.ts';
import { startBootstrappedWorld } from './support/local-engine-world.ts';

/**
 * Issue 21 part 2 end to end: a real `slipway server` with its in-process agent and the local driver deploys an
 * application from a git server on 127.0.0.1 that prints a line for every request it serves. `slipway logs web
 * --follow` — a child process of bin/slipway.js — is started after the deployment settled, and shows the line the
 * application prints for a request made after that; the server is killed and started again under it, and the command
 * picks the stream up again after the last line it printed (a redeploy made then shows, announced); Ctrl-C (SIGINT)
 * ends it quietly with status 0. Then the filters without --follow, and one the server refuses. Nothing here is timed:
 * waits poll or wait for output, with generous deadlines.
 */

const STEP_TIMEOUT_MS = 240_000;
const SETTLE_DEADLINE_MS = 150_000;

/** An HTTP server without dependencies that prints each request it serves (its runtime output). */
const APP_FILES: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'chatty', version: '1.0.0', private: true, scripts: { build: 'node build.js', start: 'node server.js' } }, null, 2)}\n`,
  'build.js': "console.log('chatty build: nothing to compile');\n",
  'server.js': `'use strict';
const http = require('node:http');
const port = Number(process.env.PORT);
const server = http.createServer((request, response) => {
  if (request.url === '/health') return response.end('ok');
  console.log('chatty served ' + request.url);
  response.end('hello');
});
server.listen(port, '127.0.0.1', () => console.log('chatty listening on ' + port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`,
};

/** Git with no user or system configuration, so the machine's settings never change the fixture repository. */
function git(args: string[], cwd: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: cwd,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Fixture',
    GIT_AUTHOR_EMAIL: 'fixture@example.com',
    GIT_COMMITTER_NAME: 'Fixture',
    GIT_COMMITTER_EMAIL: 'fixture@example.com',
  };
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env }, (error, stdout, stderr) => (error === null ? resolve(stdout) : reject(new Error(`git ${args.join(' ')} failed: ${stderr}`))));
  });
}

/** `<root>/chatty.git`, whose branch main holds the app in one commit. */
async function createChattyRepository(root: string): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-chatty-'));
  try {
    await git(['init', '--quiet', '--initial-branch=main', work], work);
    for (const [name, content] of Object.entries(APP_FILES)) await writeFile(path.join(work, name), content);
    await git(['add', '--all'], work);
    await git(['commit', '--quiet', '-m', 'chatty'], work);
    await git(['clone', '--quiet', '--bare', work, path.join(root, 'chatty.git')], work);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

for (const dialect of TEST_DIALECTS) {
  describe(`slipway logs --follow through the local engine [${dialect}]`, () => {
    let server: (SlipwayServer & { organizationId: string; apiToken: string }) | undefined;
    let gitServer: TestGitServer | undefined;
    let dataDir = '';
    let appsPort = 0;
    let follower: ReturnType<typeof spawnSlipway> | undefined;
    let world: Awaited<ReturnType<typeof startBootstrappedWorld>> | undefined;

    beforeAll(async () => {
      world = await startBootstrappedWorld(dialect, { name: 'logs-follow', repositories: createChattyRepository });
      ({ server, gitServer, dataDir, appsPort } = world);
    }, STEP_TIMEOUT_MS);

    afterAll(async () => {
      if (follower !== undefined && follower.exitCode === null && follower.signalCode === null) {
        follower.kill('SIGKILL');
        await follower.result;
      }
      await world?.close();
    }, 60_000);

    async function api<T>(method: string, url: string, body?: unknown): Promise<T> {
      if (server === undefined) throw new Error('the server did not start');
      const response = await fetch(`${server.baseUrl}${url}`, {
        method,
        headers: { authorization: `Bearer ${server.apiToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    }

    async function settled(check: () => Promise<boolean>): Promise<void> {
      await vi.waitFor(async () => expect(await check()).toBe(true), { timeout: SETTLE_DEADLINE_MS, interval: 250 });
    }

    /** Waits until the follower printed `pattern`; the deadline fails with what it printed and the server's trouble. */
    async function shows(pattern: RegExp): Promise<void> {
      await vi
        .waitFor(() => expect(follower?.printed()).toMatch(pattern), { timeout: SETTLE_DEADLINE_MS, interval: 250 })
        .catch((error: unknown) => {
          const trouble = (server?.output() ?? '').split('\n').filter((line) => /"level":(40|50|60)/.test(line)).slice(-20).join('\n');
          const ended = follower?.exitCode === null ? 'still running' : `ended with ${String(follower?.exitCode ?? follower?.signalCode)}`;
          throw new Error(`slipway logs did not print ${pattern} (${(error as Error).message.split('\n')[0] ?? ''}); it is ${ended} and printed:\n${follower?.printed() ?? ''}\nserver trouble:\n${trouble}`);
        });
    }

    async function deployedTo(applicationId: string, deploymentId: string): Promise<void> {
      await settled(async () => {
        const status = await api<{ state: string; deployment_request_id: string; message: string | null }>('GET', `/application/${applicationId}/status`);
        if (status.state.endsWith('_ERROR') || status.state === 'CANCELED') throw new Error(`the deployment ended ${status.state}: ${status.message ?? ''}`);
        return status.state === 'DEPLOYED' && status.deployment_request_id === deploymentId;
      });
    }

    it('shows what the application prints after it was deployed, survives a server restart, ends quietly on SIGINT, and filters',  { timeout: STEP_TIMEOUT_MS * 2 }, async () => {
      if (server === undefined || gitServer === undefined) throw new Error('the set-up did not finish');
      const { organizationId } = server;
      const cluster = await api<{ id: string }>('POST', `/organization/${organizationId}/cluster`, { name: 'local', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
      await api('POST', `/organization/${organizationId}/cluster/${cluster.id}/deploy`);
      await settled(async () => (await api<{ status: string }>('GET', `/organization/${organizationId}/cluster/${cluster.id}/status`)).status === 'DEPLOYED');
      const project = await api<{ id: string }>('POST', `/organization/${organizationId}/project`, { name: 'shop' });
      const environment = await api<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'staging', cluster: cluster.id, mode: 'STAGING' });
      const application = await api<{ id: string }>('POST', `/environment/${environment.id}/application`, {
        name: 'web',
        git_repository: { url: gitServer.urlOf('chatty'), branch: 'main', provider: 'GITHUB', owner: 'acme', name: 'chatty' },
        ports: [{ internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' }],
        healthchecks: { readiness_probe: { type: { http: { path: '/health' } }, initial_delay_seconds: 0, period_seconds: 2, timeout_seconds: 1, failure_threshold: 60 } },
      });
      const links = await api<{ results: Array<{ url: string; is_default: boolean }> }>('GET', `/application/${application.id}/link`);
      const hostname = new URL(links.results.find((link) => link.is_default)?.url ?? '').hostname;
      const first = await api<{ deployment_request_id: string }>('POST', `/application/${application.id}/deploy`, {});
      await deployedTo(application.id, first.deployment_request_id);

      // Started once the deployment settled: what comes after DEPLOYED is what it is for.
      follower = spawnSlipway(['logs', 'web', '--env', environment.id, '--follow', '--tail', '3'], {
        HOME: dataDir,
        XDG_CONFIG_HOME: dataDir,
        SLIPWAY_URL: server.baseUrl,
        SLIPWAY_TOKEN: server.apiToken,
        SLIPWAY_ORGANIZATION: organizationId,
      });
      await shows(/^(?:.*\n){3}/);
      const answer = await requestThroughProxy(appsPort, hostname, '/after-deploy');
      expect(answer).toEqual({ status: 200, body: 'hello' });
      await shows(/^\S+ \[stdout\] chatty served \/after-deploy$/m);

      // The server goes away under the command and comes back: the command picks the stream up where it was.
      await server.crash();
      await server.restart();
      const second = await api<{ deployment_request_id: string }>('POST', `/application/${application.id}/redeploy`);
      await shows(new RegExp(`^-- deployment ${second.deployment_request_id} \\(REDEPLOY\\) began at \\S+$`, 'm'));
      await shows(/\[stdout\] chatty build: nothing to compile$/m);
      await deployedTo(application.id, second.deployment_request_id);
      await requestThroughProxy(appsPort, hostname, '/after-restart');
      await shows(/\[stdout\] chatty served \/after-restart$/m);
      // The resumed stream went on after the last line seen: what was printed before the restart is not printed again.
      const printed = follower.printed();
      const before = printed.slice(0, printed.lastIndexOf('\n', printed.indexOf('chatty served /after-deploy')) + 1);
      expect(before.split('\n').filter((line) => line !== '').length).toBeGreaterThanOrEqual(3);
      // A line may be printed twice in one millisecond (a program's blank lines): each occurs later as often as before.
      for (const line of before.split('\n').filter((text) => text !== '')) {
        expect(printed.split(`${line}\n`).length, line).toBe(before.split(`${line}\n`).length);
      }

      follower.kill('SIGINT');
      const ended = await follower.result;
      expect(ended.stderr).toBe('');
      expect(ended.code).toBe(0);

      // The filters without --follow: the stored lines that pass them; a value the server refuses names the field.
      const cli = { HOME: dataDir, XDG_CONFIG_HOME: dataDir, SLIPWAY_URL: server.baseUrl, SLIPWAY_TOKEN: server.apiToken, SLIPWAY_ORGANIZATION: organizationId };
      const served = await runSlipway(['logs', 'web', '--env', environment.id, '--stream', 'stdout', '--since', '1h', '--tail', '1'], cli);
      expect(served).toEqual({ code: 0, stdout: expect.stringMatching(/^\S+ \[stdout\] chatty served \/after-restart\n$/), stderr: '' });
      const refused = await runSlipway(['logs', 'web', '--env', environment.id, '--follow', '--since', 'yesterday'], cli);
      expect(refused).toEqual({ code: 1, stdout: '', stderr: expect.stringMatching(/^slipway: invalid since \(since must be an ISO-8601 time .*\)\n$/) });
    });
  });
}
