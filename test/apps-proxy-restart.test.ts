import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, request, type Server as HttpServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGitServer, type TestGitServer } from './support/git-server.ts';
import { freePort } from './support/identity-app.ts';
import { createSampleRepository, killProcessesUnder, processAlive, requestThroughProxy, type HelloAnswer } from './support/sample-apps.ts';
import { startSlipwayServer, type SlipwayServer } from './support/slipway-process.ts';
import { startAppsProxy, type AppsProxy } from '../src/engine/local/apps-proxy.client.ts';
import { appsProxyPidPath, appsProxySocketPath, readJsonLines, writeJsonLine } from '../src/engine/local/apps-proxy.protocol.ts';

/**
 * Issue 21: the apps proxy keeps serving while the control plane restarts. A real `slipway server` with its local
 * agent deploys the `hello` sample from a real git server; continuous requests go to it through the apps port while
 * the server is stopped with SIGTERM (and later killed with SIGKILL) and started again on the same data directory:
 * not one fails, some are answered while no server runs at all, and the same proxy process serves throughout; the
 * application's internal address, which that process forwards too, answers throughout as well. After that the
 * application is still routed by the new server's agent, a redeploy under the same load switches to the new instance
 * with no failed request either, and a proxy killed while the server runs is started again with its routes.
 */

const STEP_TIMEOUT_MS = 240_000;
const SETTLE_DEADLINE_MS = 150_000;
/** Requests in flight at once, each loop sending its next as soon as the previous one is answered. */
const LOAD_CONCURRENCY = 4;

interface StatusView {
  state: string;
  deployment_request_id: string | null;
  message: string | null;
}

interface Outcome {
  at: number;
  status: number;
  build?: string;
  error?: string;
}

/** `GET /` of the application at its internal address (`PLATFORM_APPLICATION_WEB_HOSTNAME` on its internal port). */
function requestInternally(address: string, port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: address, port, path: '/', agent: false, timeout: 10_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    sent.on('timeout', () => sent.destroy(new Error(`no answer from ${address}:${port} within 10 s`)));
    sent.on('error', reject);
    sent.end();
  });
}

/** Continuous requests (`send`) until `stop`; each outcome is kept. */
function startLoad(send: () => Promise<{ status: number; body: string }>): { outcomes: Outcome[]; stop(): Promise<Outcome[]> } {
  const outcomes: Outcome[] = [];
  let running = true;
  const loop = async (): Promise<void> => {
    while (running) {
      try {
        const answer = await send();
        const outcome: Outcome = { at: Date.now(), status: answer.status };
        if (answer.status === 200) outcome.build = (JSON.parse(answer.body) as HelloAnswer).build;
        else outcome.error = answer.body;
        outcomes.push(outcome);
      } catch (error) {
        outcomes.push({ at: Date.now(), status: 0, error: (error as Error).message });
      }
    }
  };
  const loops = Array.from({ length: LOAD_CONCURRENCY }, () => loop());
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

/** SIGKILL to a proxy process that outlived its test; a pid that now names another process is left alone. */
async function killProxy(pid: number): Promise<void> {
  const commandLine = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!commandLine.split('\0').includes('apps-proxy')) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Ended meanwhile.
  }
}

const failuresOf = (outcomes: readonly Outcome[]) => outcomes.filter((outcome) => outcome.status !== 200);
const answeredBetween = (outcomes: readonly Outcome[], from: number, to: number) => outcomes.filter((outcome) => outcome.status === 200 && outcome.at > from && outcome.at < to).length;

describe('the apps proxy outlives the server: restarts under load fail no request', () => {
  let server: (SlipwayServer & { organizationId: string; apiToken: string }) | undefined;
  let gitServer: TestGitServer | undefined;
  let gitRoot = '';
  let dataDir = '';
  let appsPort = 0;
  let applicationId = '';
  let hostname = '';
  /** The application's internal address, which the proxy process listens on too. */
  let internalAddress = '';
  /** The proxy process, whichever pid its file named at some point: ended in afterAll even when a step failed. */
  const proxyPids = new Set<number>();

  const pidFile = () => path.join(dataDir, 'agent', 'apps-proxy.pid');
  async function proxyPid(): Promise<number> {
    const pid = Number((await readFile(pidFile(), 'utf8')).trim());
    proxyPids.add(pid);
    return pid;
  }

  beforeAll(async () => {
    gitRoot = await mkdtemp(path.join(tmpdir(), 'slipway-apps-proxy-git-'));
    await createSampleRepository(gitRoot, 'hello', 'hello');
    gitServer = await startGitServer({ root: gitRoot, privateRepositories: {} });
    appsPort = await freePort();
    server = await startSlipwayServer(
      'sqlite',
      { SLIPWAY_LOCAL_AGENT: 'true', SLIPWAY_APPS_PORT: String(appsPort), SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS: 'true' },
      { bootstrap: true },
    );
    dataDir = server.dataDir;
  }, STEP_TIMEOUT_MS);

  afterAll(async () => {
    if (dataDir !== '') await proxyPid().catch(() => undefined);
    // The server stops; the workloads and the proxy outlive it by design, and must not outlive the test.
    await server?.close();
    if (dataDir !== '') await killProcessesUnder(dataDir);
    for (const pid of proxyPids) await killProxy(pid);
    await gitServer?.close();
    if (gitRoot !== '') await rm(gitRoot, { recursive: true, force: true });
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

  async function waitForDeployed(requestId: string): Promise<void> {
    await vi.waitFor(
      async () => {
        const status = await api<StatusView>('GET', `/application/${applicationId}/status`);
        if (status.state.endsWith('_ERROR')) throw new Error(`the deployment failed: ${status.message ?? ''}\n${server?.output().slice(-4_000) ?? ''}`);
        expect(status).toMatchObject({ state: 'DEPLOYED', deployment_request_id: requestId });
      },
      { timeout: SETTLE_DEADLINE_MS, interval: 250 },
    );
  }

  async function served(): Promise<HelloAnswer> {
    const answer = await requestThroughProxy(appsPort, hostname);
    expect(answer.status, answer.body).toBe(200);
    return JSON.parse(answer.body) as HelloAnswer;
  }

  it('deploys an application behind the apps proxy, a process of its own', { timeout: STEP_TIMEOUT_MS }, async () => {
    if (server === undefined || gitServer === undefined) throw new Error('the server did not start');
    const organization = server.organizationId;
    const cluster = await api<{ id: string }>('POST', `/organization/${organization}/cluster`, { name: 'local', region: 'local', cloud_provider: 'ON_PREMISE', kubernetes: 'LOCAL' });
    await api('POST', `/organization/${organization}/cluster/${cluster.id}/deploy`);
    await vi.waitFor(async () => expect((await api<{ status: string }>('GET', `/organization/${organization}/cluster/${cluster.id}/status`)).status).toBe('DEPLOYED'), {
      timeout: SETTLE_DEADLINE_MS,
      interval: 250,
    });
    const project = await api<{ id: string }>('POST', `/organization/${organization}/project`, { name: 'shop' });
    const environment = await api<{ id: string }>('POST', `/project/${project.id}/environment`, { name: 'prod', cluster: cluster.id, mode: 'STAGING' });
    applicationId = (
      await api<{ id: string }>('POST', `/environment/${environment.id}/application`, {
        name: 'web',
        git_repository: { url: gitServer.urlOf('hello'), branch: 'main', provider: 'GITHUB', owner: 'acme', name: 'hello' },
        ports: [{ internal_port: 8080, publicly_accessible: true, protocol: 'HTTP' }],
        healthchecks: {
          readiness_probe: { type: { http: { path: '/health' } }, initial_delay_seconds: 0, period_seconds: 2, timeout_seconds: 1, failure_threshold: 30 },
        },
      })
    ).id;
    const links = (await api<{ results: { url: string; is_default: boolean }[] }>('GET', `/application/${applicationId}/link`)).results;
    hostname = new URL(links.find((link) => link.is_default)?.url ?? 'http://missing').hostname;
    const deploy = await api<StatusView>('POST', `/application/${applicationId}/deploy`, {});
    await waitForDeployed(deploy.deployment_request_id ?? '');
    expect(await served()).toMatchObject({ app: 'hello' });
    // Its built-in hostname is an internal name; the local driver stands an address of its own for it (its placement).
    const resolved = await api<{ results: { key: string; value?: string }[] }>('GET', `/application/${applicationId}/resolvedVariables?reveal=true`);
    expect(resolved.results.find((variable) => variable.key === 'PLATFORM_APPLICATION_WEB_HOSTNAME')?.value).toMatch(/^web\..+\.slipway\.internal$/);
    const placement = JSON.parse(await readFile(path.join(dataDir, 'agent', 'placement.json'), 'utf8')) as { addresses: Record<string, string> };
    internalAddress = placement.addresses[applicationId] ?? '';
    expect(internalAddress).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect((await requestInternally(internalAddress, 8080)).status).toBe(200);

    // The proxy is not the server: a process of its own, in a session of its own, found by its pid file.
    const pid = await proxyPid();
    expect(await processAlive(pid)).toBe(true);
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the name: state, ppid, pgrp, session. A session leader: no signal of the server's terminal reaches it.
    expect(fields[3]).toBe(String(pid));
    expect((await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0')).toContain('apps-proxy');
  });

  it('keeps serving through a SIGTERM and a kill -9 of the server and their restarts: no request fails', { timeout: STEP_TIMEOUT_MS }, async () => {
    if (server === undefined || hostname === '') throw new Error('the application was not deployed');
    const pid = await proxyPid().catch(() => undefined);
    const before = await served();
    const load = startLoad(() => requestThroughProxy(appsPort, hostname, '/', 10_000));
    // Another service's view: the internal address, forwarded by the same process.
    const internalLoad = startLoad(() => requestInternally(internalAddress, 8080));
    let stoppedAt = 0;
    let restartedAt = 0;
    try {
      await expect.poll(() => load.outcomes.length).toBeGreaterThan(10);

      // An operator's stop and start.
      stoppedAt = Date.now();
      await server.stop();
      // No server runs now: answers still come.
      await expect.poll(() => answeredBetween(load.outcomes, stoppedAt, Date.now()), { timeout: 10_000 }).toBeGreaterThan(10);
      restartedAt = Date.now();
      await server.restart();

      // A crash and a start.
      await expect.poll(() => answeredBetween(load.outcomes, restartedAt, Date.now()), { timeout: 10_000 }).toBeGreaterThan(10);
      const crashedAt = Date.now();
      await server.crash();
      await expect.poll(() => answeredBetween(load.outcomes, crashedAt, Date.now()), { timeout: 10_000 }).toBeGreaterThan(10);
      const startedAgainAt = Date.now();
      await server.restart();
      await expect.poll(() => answeredBetween(load.outcomes, startedAgainAt, Date.now()), { timeout: 10_000 }).toBeGreaterThan(10);
    } finally {
      await Promise.all([load.stop(), internalLoad.stop()]);
    }
    const outcomes = load.outcomes;
    expect(failuresOf(outcomes)).toEqual([]);
    expect(answeredBetween(outcomes, stoppedAt, restartedAt)).toBeGreaterThan(0);
    expect(failuresOf(internalLoad.outcomes)).toEqual([]);
    expect(answeredBetween(internalLoad.outcomes, stoppedAt, restartedAt)).toBeGreaterThan(0);
    // The same instance answered throughout, through the same proxy process.
    expect(new Set(outcomes.map((outcome) => outcome.build))).toEqual(new Set([before.build]));
    expect(pid).toBeDefined();
    expect(await proxyPid()).toBe(pid);
  });

  it('is still routed by the new server, and a redeploy under load switches with no failed request', { timeout: STEP_TIMEOUT_MS }, async () => {
    if (server === undefined || hostname === '') throw new Error('the application was not deployed');
    const before = await served();
    const load = startLoad(() => requestThroughProxy(appsPort, hostname, '/', 10_000));
    let after: HelloAnswer;
    try {
      await expect.poll(() => load.outcomes.length).toBeGreaterThan(10);
      const redeploy = await api<StatusView>('POST', `/application/${applicationId}/redeploy`);
      await waitForDeployed(redeploy.deployment_request_id ?? '');
      after = await served();
      const newBuild = after.build;
      expect(newBuild).not.toBe(before.build);
      await expect.poll(() => load.outcomes.filter((outcome) => outcome.build === newBuild).length).toBeGreaterThan(10);
    } finally {
      await load.stop();
    }
    const outcomes = load.outcomes;
    expect(failuresOf(outcomes)).toEqual([]);
    expect(new Set(outcomes.map((outcome) => outcome.build))).toEqual(new Set([before.build, after.build]));
  });

  it('is started again by the agent, with its routes, when it dies while the server runs', { timeout: STEP_TIMEOUT_MS }, async () => {
    if (server === undefined || hostname === '') throw new Error('the application was not deployed');
    const before = await served();
    const killed = await proxyPid();
    process.kill(killed, 'SIGKILL');
    await expect.poll(() => processAlive(killed)).toBe(false);
    // The agent saw its connection end: a new proxy, started with the agent's table, serves the same instance.
    await vi.waitFor(async () => expect((await served()).build).toBe(before.build), { timeout: 30_000, interval: 100 });
    // The new proxy writes its pid file once it serves, a moment after the first answer. On a loaded machine the agent
    // may time out waiting for a slow start and start another, and the first retires when the second takes its socket
    // over: the file first names the one that retires, and names the one that serves once the handover settles.
    await vi.waitFor(
      async () => {
        const pid = await proxyPid();
        expect(pid).not.toBe(killed);
        expect(await processAlive(pid)).toBe(true);
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(server.output()).toContain('the connection to the apps proxy ended: starting it again');
  });
});

/**
 * An upgrade: the serving proxy is asked to hand over (as the agent asks a proxy of another version) and starts its
 * successor itself, handing it its table and its listening sockets — the apps port's and an internal address's.
 * Requests go on through both throughout and none fails; the agent's side finds the successor and drives it.
 */
describe('the apps proxy hands over to its successor without a failed request', () => {
  let stateDir = '';
  let backend: HttpServer | undefined;
  let proxy: AppsProxy | undefined;
  const pids = new Set<number>();

  async function proxyPid(): Promise<number> {
    const pid = Number((await readFile(appsProxyPidPath(stateDir), 'utf8')).trim());
    pids.add(pid);
    return pid;
  }

  beforeAll(async () => {
    stateDir = await mkdtemp(path.join(tmpdir(), 'slipway-apps-proxy-'));
  });

  afterAll(async () => {
    await proxy?.shutdown();
    for (const pid of pids) await killProxy(pid);
    backend?.close();
    if (stateDir !== '') await rm(stateDir, { recursive: true, force: true });
  });

  it('starts the successor on the same sockets, then retires', { timeout: 90_000 }, async () => {
    backend = createHttpServer((_request, response) => response.end(JSON.stringify({ app: 'backend', build: 'b1' })));
    await new Promise<void>((resolve) => backend?.listen(0, '127.0.0.1', resolve));
    const target = { host: '127.0.0.1', port: (backend.address() as AddressInfo).port };
    const internalPort = await freePort();
    const trouble: string[] = [];
    const agentSide = await startAppsProxy({ stateDir, host: '127.0.0.1', port: 0, onTrouble: (message) => trouble.push(message) });
    proxy = agentSide;
    agentSide.setRoute('svc', { hostnames: ['web.localhost'], target });
    expect(await agentSide.internal?.expose('svc', { address: '127.0.0.1', ports: [internalPort] }, target.port)).toEqual([]);
    await agentSide.resync();
    const appsPort = agentSide.address.port;
    const first = await proxyPid();

    const load = startLoad(() => requestThroughProxy(appsPort, 'web.localhost', '/', 10_000));
    const internalLoad = startLoad(() => requestInternally('127.0.0.1', internalPort));
    let retiredAt = 0;
    try {
      await expect.poll(() => load.outcomes.length + internalLoad.outcomes.length).toBeGreaterThan(20);
      // What the agent sends a proxy of another version, on a connection of its own.
      const control = connect(appsProxySocketPath(stateDir));
      const answers: Record<string, unknown>[] = [];
      readJsonLines(control, (message) => answers.push(message));
      control.on('error', () => undefined);
      writeJsonLine(control, { id: 1, type: 'handover', execPath: process.execPath, command: path.resolve('bin/slipway.js') });
      await expect.poll(() => answers.find((answer) => answer.id === 1), { timeout: 60_000 }).toEqual({ id: 1, type: 'done' });
      control.destroy();
      const successor = await proxyPid();
      expect(successor).not.toBe(first);
      await expect.poll(() => processAlive(first), { timeout: 40_000 }).toBe(false);
      retiredAt = Date.now();
      await expect.poll(() => load.outcomes.filter((outcome) => outcome.at > retiredAt).length).toBeGreaterThan(20);
      await expect.poll(() => internalLoad.outcomes.filter((outcome) => outcome.at > retiredAt).length).toBeGreaterThan(20);
    } finally {
      await Promise.all([load.stop(), internalLoad.stop()]);
    }
    expect(failuresOf(load.outcomes)).toEqual([]);
    expect(failuresOf(internalLoad.outcomes)).toEqual([]);

    // The agent's side lost the predecessor and drives the successor now, on the same port.
    await vi.waitFor(async () => {
      agentSide.setRoute('svc', { hostnames: ['web.localhost', 'www.localhost'], target });
      await agentSide.applied();
      expect((await requestThroughProxy(appsPort, 'www.localhost')).status).toBe(200);
    });
    expect(agentSide.address.port).toBe(appsPort);
    expect(trouble).toContain('the connection to the apps proxy ended: starting it again');

    const successor = await proxyPid();
    await agentSide.shutdown();
    await expect.poll(() => processAlive(successor)).toBe(false);
    expect(await requestThroughProxy(appsPort, 'web.localhost').then(() => 'answered', (error: Error) => error.message)).toMatch(/ECONNREFUSED/);
  });
});
