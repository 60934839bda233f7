import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { clusterWithEnrollmentToken } from './support/agent-cluster.ts';
import { startGitServer, type TestGitServer } from './support/git-server.ts';
import { createSampleRepository, killProcessesUnder, portAccepts, processesUnder, requestThroughProxy, type HelloAnswer } from './support/sample-apps.ts';
import { spawnSlipway, waitForOutput } from './support/slipway-process.ts';
import { describeEachDatabase, uniqueName } from './support/test-app.ts';

/**
 * `slipway agent --control-plane URL --enrollment-token T --driver local` as its own process (issue 9 part 2): it
 * enrolls once with a self-managed cluster's one-time token, keeps its credential (0600), builds and runs a
 * dependency-free application from a git repository served over HTTP, serves it on its own apps port, hands its
 * workloads to the next start when stopped, and tears the application down when it is deleted. The repository is
 * served over http:// on 127.0.0.1, so the control plane (which checks a git source's URL when it is written) allows
 * private hosts as the agent does.
 */
const DEPLOY_TIMEOUT_MS = 120_000;

describeEachDatabase('slipway agent', (ctx) => {
  let baseUrl = '';
  let gitRoot = '';
  let git: TestGitServer;
  const stateDirs: string[] = [];

  beforeAll(async () => {
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
    gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-agent-git-'));
    await createSampleRepository(gitRoot, 'hello', 'hello');
    git = await startGitServer({ root: gitRoot, privateRepositories: {} });
  });

  afterAll(async () => {
    await git?.close();
    for (const dir of stateDirs) {
      await killProcessesUnder(dir);
      await rm(dir, { recursive: true, force: true });
    }
    await rm(gitRoot, { recursive: true, force: true });
  });

  function startAgentProcess(stateDir: string, extra: string[]) {
    return spawnSlipway(['agent', '--control-plane', baseUrl, '--state-dir', stateDir, ...extra], {
      HOME: stateDir,
      SLIPWAY_DATA_DIR: stateDir,
      SLIPWAY_APPS_PORT: '0',
      SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true',
    });
  }

  async function appsPortOf(agent: ReturnType<typeof startAgentProcess>): Promise<number> {
    const [, port] = await waitForOutput(agent, /serving apps on http:\/\/127\.0\.0\.1:(\d+)/);
    return Number(port);
  }

  /** Reads every 200 ms until `done` holds for the value read; at the deadline it fails naming `what` and the last value. */
  function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    return vi.waitFor(
      async () => {
        const value = await read();
        expect(done(value), `timed out waiting for ${what}: last ${JSON.stringify(value)}`).toBe(true);
        return value;
      },
      { timeout: DEPLOY_TIMEOUT_MS, interval: 200 },
    );
  }

  it('enrolls once, deploys an application from git on its host, hands it to its next start, and tears it down', { timeout: 4 * DEPLOY_TIMEOUT_MS }, async () => {
    const { owner, organizationId } = await ctx().signUpWithOrganization();
    const { clusterId, enrollmentToken } = await clusterWithEnrollmentToken(ctx(), organizationId, owner);
    const stateDir = await mkdtemp(path.join(tmpdir(), 'slipway-agent-state-'));
    stateDirs.push(stateDir);

    let agent = startAgentProcess(stateDir, ['--enrollment-token', enrollmentToken, '--driver', 'local']);
    let appsPort = await appsPortOf(agent);
    expect(agent.printed()).toContain(`agent for cluster ${clusterId} (driver local)`);
    expect((await stat(path.join(stateDir, 'agent-credential.json'))).mode & 0o777).toBe(0o600);
    expect(await readFile(path.join(stateDir, 'agent-credential.json'), 'utf8')).not.toContain(enrollmentToken);

    const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
      ctx().call(owner.auth, { method, url, ...(payload === undefined ? {} : { payload }) });
    const projectId = (await call('POST', `/organization/${organizationId}/project`, { name: uniqueName('p') })).json<{ id: string }>().id;
    const environmentName = uniqueName('agent');
    const environment = await call('POST', `/project/${projectId}/environment`, { name: environmentName, cluster: clusterId, mode: 'DEVELOPMENT' });
    expect(environment.statusCode, environment.body).toBe(201);
    const environmentId = environment.json<{ id: string }>().id;
    const created = await call('POST', `/environment/${environmentId}/application`, {
      name: 'hello',
      git_repository: { url: git.urlOf('hello'), provider: 'GITHUB', branch: 'main' },
      ports: [{ internal_port: 8080, publicly_accessible: true }],
      healthchecks: { readiness_probe: { type: { http: { path: '/health', port: 8080 } } } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const applicationId = created.json<{ id: string }>().id;
    expect((await call('POST', `/application/${applicationId}/environmentVariable`, { key: 'GREETING', value: 'from the agent process' })).statusCode).toBe(201);

    const deploy = await call('POST', `/application/${applicationId}/deploy`, {});
    expect(deploy.statusCode, deploy.body).toBe(202);
    const status = () => call('GET', `/application/${applicationId}/status`).then((response) => response.json<{ state: string; message: string | null }>());
    const deployed = await eventually(status, (s) => s.state === 'DEPLOYED' || s.state.endsWith('_ERROR'), 'DEPLOYED');
    expect(deployed.state, deployed.message ?? '').toBe('DEPLOYED');
    // Its own hostname, as its link names it (the URL's port is the server's apps proxy, not this agent's).
    const link = (await call('GET', `/application/${applicationId}/link`)).json<{ results: Array<{ url: string }> }>().results[0];
    const hostname = new URL(link?.url ?? 'http://missing').hostname;
    expect(hostname).toMatch(new RegExp(`^hello-${environmentName}-[a-z2-7]{8}\\.localhost$`));
    const first = await requestThroughProxy(appsPort, hostname);
    expect(first.status, first.body).toBe(200);
    const answer = JSON.parse(first.body) as HelloAnswer;
    expect(answer.greeting).toBe('from the agent process');
    const logs = (await call('GET', `/application/${applicationId}/log`)).json<{ results: Array<{ message: string }> }>().results.map((line) => line.message);
    expect(logs.some((line) => line.includes('sample build: stamped build'))).toBe(true);
    const agentStatus = (await call('GET', `/organization/${organizationId}/cluster/${clusterId}/agent`)).json<{ connected: boolean; driver: string }>();
    expect(agentStatus).toMatchObject({ connected: true, driver: 'local' });

    // Stopped, the agent leaves the application running; started again without a token, it takes it over.
    agent.kill('SIGTERM');
    expect((await agent.result).stdout).toContain('agent stopped; workloads keep running');
    expect(await portAccepts(answer.port)).toBe(true);
    agent = startAgentProcess(stateDir, []);
    appsPort = await appsPortOf(agent);
    const again = await eventually(() => requestThroughProxy(appsPort, hostname).catch(() => ({ status: 0, body: '' })), (r) => r.status === 200, 'the re-adopted instance');
    expect((JSON.parse(again.body) as HelloAnswer).pid).toBe(answer.pid);

    // Deleting the application leaves nothing of it on the host.
    expect((await call('DELETE', `/application/${applicationId}`)).statusCode).toBe(204);
    await eventually(async () => (await processesUnder(stateDir)).length, (count) => count === 0, 'no process under the state directory');
    expect(await portAccepts(answer.port)).toBe(false);
    expect((await requestThroughProxy(appsPort, hostname)).status).toBe(404);
    agent.kill('SIGTERM');
    await agent.result;
  });

  // Four agent processes in turn, each loading the whole program: more than the default budget on a loaded machine.
  it('refuses to start without a credential or an enrollment token, and names a driver or a concurrency it does not take', { timeout: 90_000 }, async () => {
    const stateDir = await mkdtemp(path.join(tmpdir(), 'slipway-agent-state-'));
    stateDirs.push(stateDir);
    const noToken = await startAgentProcess(stateDir, []).result;
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toMatch(/^slipway: no credential for http:\/\/127\.0\.0\.1:\d+ in .*: give the cluster's one-time --enrollment-token\n$/);
    const badToken = await startAgentProcess(stateDir, ['--enrollment-token', 'slwe_not-a-token']).result;
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toMatch(/^slipway: enrollment refused: /);
    const driver = await startAgentProcess(stateDir, ['--enrollment-token', 'x', '--driver', 'nomad']).result;
    expect(driver.stderr).toBe('slipway: --driver nomad is not one of: local, kubernetes\n');
    const concurrency = await startAgentProcess(stateDir, ['--enrollment-token', 'x', '--concurrency', '0']).result;
    expect(concurrency.code).toBe(1);
    expect(concurrency.stderr).toMatch(/^error: option '--concurrency <n>' argument '0' is invalid\. must be a whole number from 1 to 20\n/);
  });
}, { gitAllowPrivateHosts: true });
