import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AgentTask } from '../src/protocol/agent-protocol.ts';
import { carryOutTask } from '../src/agent/agent.runtime.ts';
import type { AgentDriver } from '../src/protocol/agent-driver.ts';
import { noLocalEngineMessage } from '../src/engine/local/database-engines.ts';
import { findFreePort } from '../src/lib/free-port.ts';
import { createLocalDriver, unsupportedKindMessage, type LocalDriver } from '../src/engine/local/local-driver.ts';
import type { WorkloadLogLine } from '../src/engine/workload-log-batcher.ts';
import { tcpProbe } from '../src/engine/local/probes.ts';
import { isProcessAlive, processGroupAlive } from '../src/engine/local/process-table.ts';
import { WorkloadCgroups } from '../src/engine/local/workload-cgroups.ts';
import { DYNAMIC_UID_FIRST, WorkloadSandbox } from '../src/engine/local/workload-sandbox.ts';
import { LocalReverseProxy } from '../src/engine/local/reverse-proxy.ts';
import { createSystemGitAccess } from '../src/git/system-git.ts';
import { startGitServer, type TestGitServer } from './support/git-server.ts';
import { agentTask, TaskSessionHarness } from './support/task-session.ts';

/**
 * The local driver with real parts: applications checked out from a real git server (private, with a token),
 * built and run as real processes behind a real reverse proxy; a real PostgreSQL server; lifecycle and cron jobs
 * running real commands. Tasks come through TaskSessionHarness, which stands where the agent runtime's session
 * stands and records what the driver reports and logs.
 */

const TOKEN = 'driver-test-token';
const SECRET = 'greeting-s3cr3t-value';
const HOSTNAME = 'web-prod.apps.test';

const SERVER = `
const http = require('node:http');
// Which instance answers: confined, each instance has a PID namespace of its own, where pids repeat.
const instance = require('node:crypto').randomUUID();
const version = require('node:fs').readFileSync('version.txt', 'utf8').trim();
console.log('listening as version ' + version);
http.createServer((req, res) => {
  if (req.url === '/crash') process.exit(7);
  if (req.url !== '/health') console.log('served ' + req.url);
  res.end(JSON.stringify({ version, greeting: process.env.GREETING, plain: process.env.PLAIN, instance, uid: process.getuid() }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

/** Tries, from inside a workload, what a hostile tenant would, and answers what worked. */
const PROBE = `
const fs = require('node:fs');
const http = require('node:http');
const targets = JSON.parse(process.env.PROBE_TARGETS);
// The marker arrives reversed, so this process's own environment never holds it.
const marker = targets.reversedMarker.split('').reverse().join('');
const attempt = (work) => { try { return { ok: true, value: String(work()).slice(0, 100) }; } catch (error) { return { ok: false, error: error.code || error.message }; } };
const pids = () => fs.readdirSync('/proc').filter((entry) => /^\\d+$/.test(entry));
http.createServer((req, res) => {
  res.end(JSON.stringify({
    uid: process.getuid(),
    gid: process.getgid(),
    readKey: attempt(() => fs.readFileSync(targets.dataDir + '/secret.key', 'utf8')),
    readDatabase: attempt(() => fs.readFileSync(targets.dataDir + '/slipway.db', 'utf8')),
    listDataDir: attempt(() => fs.readdirSync(targets.dataDir).join(',')),
    listServices: attempt(() => fs.readdirSync(targets.stateDir + '/sources').join(',')),
    listRootHome: attempt(() => fs.readdirSync('/root').join(',')),
    hostTmpFileVisible: fs.existsSync(targets.hostTmpFile),
    environOfHostPids: targets.hostPids.map((pid) => attempt(() => fs.readFileSync('/proc/' + pid + '/environ', 'utf8'))),
    markerInSomeEnviron: pids().some((pid) => { try { return fs.readFileSync('/proc/' + pid + '/environ', 'utf8').includes(marker); } catch { return false; } }),
    visibleProcesses: pids().length,
    writeEtc: attempt(() => fs.writeFileSync('/etc/slipway-probe', 'x')),
    writeUsr: attempt(() => fs.writeFileSync('/usr/local/slipway-probe', 'x')),
    writeDataDir: attempt(() => fs.writeFileSync(targets.dataDir + '/planted', 'x')),
    writeOwnCheckout: attempt(() => fs.writeFileSync('written-by-probe', 'x')),
    writeTmp: attempt(() => fs.writeFileSync('/tmp/probe', 'x')),
  }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

/**
 * An application that shows its limits: `/burn` spins for two seconds of wall time and answers the CPU time it got,
 * `/hog` allocates (and touches) memory until something stops it, `/` answers its control groups.
 */
const LIMITS_APP = `
const fs = require('node:fs');
const http = require('node:http');
const held = [];
http.createServer((req, res) => {
  if (req.url === '/burn') {
    const before = process.cpuUsage();
    const until = Date.now() + 2000;
    while (Date.now() < until) {}
    const used = process.cpuUsage(before);
    res.end(JSON.stringify({ cpuMs: (used.user + used.system) / 1000 }));
    return;
  }
  if (req.url === '/hog') {
    for (;;) held.push(Buffer.alloc(16 * 1024 * 1024, 1));
  }
  res.end(JSON.stringify({ cgroup: fs.readFileSync('/proc/self/cgroup', 'utf8') }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;


let root: string;
let stateDir: string;
let gitServer: TestGitServer;
let proxy: LocalReverseProxy;
let proxyPort: number;
let driver: LocalDriver;
const commits: Record<'one' | 'two' | 'slow' | 'probe' | 'limits', string> = { one: '', two: '', slow: '', probe: '', limits: '' };
/** This host's control groups, as the local agent finds them (CI's hosts: cgroup v1, writable as root). */
const cgroups = new WorkloadCgroups();
const workloadLines: Array<{ serviceId: string } & WorkloadLogLine> = [];
/** What the driver reported of workloads' health, in order. */
const healthReports: Array<{ serviceId: string; health: string; restarts: number; message?: string }> = [];
const environmentId = randomUUID();

function runGit(args: string[], cwd: string): Promise<string> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.com' };
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env }, (error, stdout, stderr) => (error === null ? resolve(stdout.trim()) : reject(new Error(`git ${args.join(' ')}: ${stderr}`))));
  });
}

async function commit(work: string, files: Record<string, string>, message: string): Promise<string> {
  for (const [file, content] of Object.entries(files)) await writeFile(path.join(work, file), content);
  await runGit(['add', '--all'], work);
  await runGit(['commit', '--quiet', '-m', message], work);
  return runGit(['rev-parse', 'HEAD'], work);
}

/** `apps.git`: main has version one then two of the server; branch slow has a build that takes long. */
async function createAppRepository(reposDir: string): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-driver-work-'));
  try {
    await runGit(['init', '--quiet', '--initial-branch=main', work], work);
    const pkg = JSON.stringify({ name: 'sample', private: true, scripts: { start: 'node server.js' } });
    commits.one = await commit(work, { 'package.json': pkg, 'server.js': SERVER, 'version.txt': 'one\n' }, 'one');
    commits.two = await commit(work, { 'version.txt': 'two\n' }, 'two');
    await runGit(['checkout', '--quiet', '-b', 'slow'], work);
    commits.slow = await commit(work, { 'package.json': JSON.stringify({ name: 'sample', private: true, scripts: { build: 'sleep 60', start: 'node server.js' } }) }, 'slow');
    await runGit(['checkout', '--quiet', '-b', 'probe', 'main'], work);
    commits.probe = await commit(work, { 'package.json': JSON.stringify({ name: 'probe', private: true, scripts: { start: 'node probe.js' } }), 'probe.js': PROBE }, 'probe');
    await runGit(['checkout', '--quiet', '-b', 'limits', 'main'], work);
    commits.limits = await commit(work, { 'package.json': JSON.stringify({ name: 'limits', private: true, scripts: { start: 'node limits.js' } }), 'limits.js': LIMITS_APP }, 'limits');
    await runGit(['clone', '--quiet', '--bare', work, path.join(reposDir, 'apps.git')], reposDir);
    await runGit(['symbolic-ref', 'HEAD', 'refs/heads/main'], path.join(reposDir, 'apps.git'));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function newDriver(): LocalDriver {
  return createLocalDriver({
    stateDir,
    // The suite's directory stands for the data directory: hidden from every workload.
    sandbox: new WorkloadSandbox({ isolation: 'strict', protectedPaths: [root], identitiesFile: path.join(stateDir, 'identities.json') }),
    cgroups,
    proxy,
    git: createSystemGitAccess({ allowPrivateHosts: true }),
    workloadLogs: async (serviceId, lines) => {
      workloadLines.push(...lines.map((line) => ({ serviceId, ...line })));
    },
    workloadHealth: async (serviceId, report) => {
      healthReports.push({ serviceId, ...report });
    },
    cancelPollMs: 100,
  });
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'slipway-driver-'));
  // Database servers run as the engine's account when the tests run as root: it must pass through.
  await chmod(root, 0o711);
  stateDir = path.join(root, 'agent');
  // As the local agent leaves it when it runs as root (local-agent.ts): searchable, not listable.
  await mkdir(stateDir, { mode: 0o711 });
  await chmod(stateDir, 0o711);
  const reposDir = path.join(root, 'repos');
  await mkdir(reposDir);
  await createAppRepository(reposDir);
  gitServer = await startGitServer({ root: reposDir, privateRepositories: { apps: TOKEN } });
  proxy = new LocalReverseProxy({ drainTimeoutMs: 5_000 });
  proxyPort = (await proxy.listen(0)).port;
  driver = newDriver();
});

afterAll(async () => {
  await driver.stopAll();
  cgroups.tidy();
  await proxy.close();
  await gitServer.close();
  await rm(root, { recursive: true, force: true });
});

function task(serviceId: string, action: string, serviceType: string, subjectType: AgentTask['subject_type'] = 'SERVICE'): AgentTask {
  return agentTask(environmentId, serviceId, action, serviceType, subjectType);
}

/** Carries one task out with a driver as the agent runtime does: take, the driver's work, the outcome. */
function carryOut(withDriver: AgentDriver, session: TaskSessionHarness): Promise<void> {
  return carryOutTask(withDriver, session, (event, message) => session.report(event, message));
}

async function perform(agentTask: AgentTask, spec: Record<string, unknown> | undefined, beforeStart?: (session: TaskSessionHarness) => void): Promise<TaskSessionHarness> {
  const session = new TaskSessionHarness(agentTask, spec);
  beforeStart?.(session);
  await carryOut(driver, session);
  return session;
}

function serviceSpec(serviceId: string, kind: string, name: string, settings: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    service: { id: serviceId, kind, name, organizationId: randomUUID(), environmentId, clusterId: randomUUID(), settings },
    git_commit_id: null,
    image_tag: null,
    variables: [
      { key: 'GREETING', value: SECRET, mount_path: null, scope: 'ENVIRONMENT', secret: true },
      { key: 'PLAIN', value: 'plain-value', mount_path: null, scope: 'SERVICE', secret: false },
    ],
    environment: { id: environmentId, name: 'prod', mode: 'PRODUCTION', project_id: randomUUID() },
    image: null,
    git: null,
    database: null,
    routing: { hostnames: [], internal: null, peers: [] },
    ...extra,
  };
}

function gitSource(commitId: string | null, branch = 'main'): Record<string, unknown> {
  return { url: gitServer.urlOf('apps'), branch, commit_id: commitId, root_path: '/', credentials: { provider: 'GITHUB', token: TOKEN } };
}

const webId = randomUUID();
function webSpec(commitId: string | null, branch = 'main'): Record<string, unknown> {
  const settings = {
    memory: 512,
    entrypoint: null,
    arguments: [],
    healthchecks: { readiness_probe: { type: { kind: 'http', port: 8080, path: '/health', scheme: 'HTTP' }, initial_delay_seconds: 0, period_seconds: 10, timeout_seconds: 5, success_threshold: 1, failure_threshold: 3 }, liveness_probe: null },
  };
  return serviceSpec(webId, 'APPLICATION', 'web', settings, { git_commit_id: commitId, git: gitSource(commitId, branch), routing: { hostnames: [HOSTNAME], internal: null, peers: [] } });
}

/** GET through the proxy with a Host header (fetch cannot set one). */
function get(hostname: string, pathname = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: proxyPort, path: pathname, headers: { host: hostname }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Waits (at most 20 s) until the hostname answers 200 (an instance being restarted answers 502 meanwhile). */
async function answerOf(hostname: string, pathname = '/'): Promise<string> {
  return vi.waitFor(
    async () => {
      const answer = await get(hostname, pathname);
      if (answer.status !== 200) throw new Error(`${hostname} answered ${answer.status}: ${answer.body}`);
      return answer.body;
    },
    { timeout: 20_000, interval: 100 },
  );
}

/** Waits (at most 20 s) until a workload line of the service matches, among the lines from index `since` on. */
async function workloadLine(serviceId: string, pattern: RegExp, since = 0): Promise<WorkloadLogLine> {
  return vi.waitFor(
    () => {
      const found = workloadLines.slice(since).find((entry) => entry.serviceId === serviceId && pattern.test(entry.line));
      if (found !== undefined) return found;
      throw new Error(`no workload line of ${serviceId} matched ${pattern}; got:\n${workloadLines.filter((entry) => entry.serviceId === serviceId).map((entry) => entry.line).join('\n')}`);
    },
    { timeout: 20_000, interval: 100 },
  );
}

async function pidFileOf(name: string): Promise<{ pid: number; port: number }> {
  return JSON.parse(await readFile(path.join(stateDir, 'processes', `${name}.pid.json`), 'utf8')) as { pid: number; port: number };
}

async function currentInstance(serviceId: string): Promise<string> {
  const record = JSON.parse(await readFile(path.join(stateDir, 'services', `${serviceId}.json`), 'utf8')) as { application: { instanceId: string } };
  return `${serviceId}.${record.application.instanceId}`;
}

describe('local driver: applications', () => {
  let firstInstance = '';

  it('deploys an application from git: checkout, build log, start, served by hostname through the proxy', async () => {
    const session = await perform(task(webId, 'deploy', 'APPLICATION'), webSpec(commits.one));
    expect(session.reports).toEqual([
      { event: 'take', message: undefined },
      { event: 'built', message: undefined },
      { event: 'succeed', message: undefined },
    ]);
    expect(session.text()).toContain(`checked out commit ${commits.one}`);
    expect(session.text()).toContain('starting npm start');
    // The instance's first line is the deployment's log or, read after it settled, the workload's: once either way.
    const deploymentCopies = session.lines.filter((entry) => entry.line === 'listening as version one').length;
    if (deploymentCopies === 0) await workloadLine(webId, /^listening as version one$/);
    expect(deploymentCopies + workloadLines.filter((entry) => entry.serviceId === webId && entry.line === 'listening as version one').length).toBe(1);

    const answer = await get(HOSTNAME);
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.body) as { version: string; greeting: string; plain: string; instance: string; uid: number };
    expect(body).toMatchObject({ version: 'one', greeting: SECRET, plain: 'plain-value' });
    // Confined: a uid of the service's own, neither root nor the agent's.
    expect(body.uid).toBeGreaterThanOrEqual(DYNAMIC_UID_FIRST);
    expect(body.uid).not.toBe(process.getuid?.());
    expect(session.text()).toContain(`workload isolation: strict — uid ${body.uid}`);
    firstInstance = body.instance;

    // Output after the deployment settled is the workload's log, not the deployment's.
    await get(HOSTNAME, '/after-deploy');
    expect((await workloadLine(webId, /served \/after-deploy/)).stream).toBe('stdout');
    expect(session.text()).not.toContain('/after-deploy');
  });

  it('keeps secrets off the disk: the state files hold the non-secret parts only', async () => {
    for (const dir of ['services', 'processes']) {
      for (const file of (await readdir(path.join(stateDir, dir))).filter((name) => name.endsWith('.json'))) {
        expect(await readFile(path.join(stateDir, dir, file), 'utf8')).not.toContain(SECRET);
      }
    }
  });

  it('redeploys a newer commit in a new instance and removes the superseded checkout', async () => {
    const before = await currentInstance(webId);
    const oldPid = (await pidFileOf(before)).pid;
    const session = await perform(task(webId, 'redeploy', 'APPLICATION'), webSpec(commits.two));
    expect(session.events()).toEqual(['take', 'built', 'succeed']);
    const body = JSON.parse((await get(HOSTNAME)).body) as { version: string; instance: string };
    expect(body.version).toBe('two');
    expect(body.instance).not.toBe(firstInstance);
    expect(processGroupAlive(oldPid)).toBe(false);
    expect(await readdir(path.join(stateDir, 'sources', webId))).toEqual([session.task.id]);
    // The replaced instance's output files go with it: a redeploy adds none.
    const outputs = (await readdir(path.join(stateDir, 'processes'))).filter((file) => file.startsWith(`${webId}.`) && file.endsWith('.log'));
    expect(outputs.sort()).toEqual([`${webId}.${session.task.id}.stderr.log`, `${webId}.${session.task.id}.stdout.log`]);
  });

  it('fails a deployment whose instance does not start, saying how it ended, and keeps the current one', async () => {
    const serving = JSON.parse((await get(HOSTNAME)).body) as { instance: string };
    const spec = webSpec(commits.two);
    (spec.service as { settings: Record<string, unknown> }).settings.entrypoint = 'sh';
    (spec.service as { settings: Record<string, unknown> }).settings.arguments = ['-c', 'echo cannot reach the database >&2; exit 4'];
    const session = await perform(task(webId, 'redeploy', 'APPLICATION'), spec);
    expect(session.events()).toEqual(['take', 'built', 'fail']);
    expect(session.reports.at(-1)?.message).toContain('exited with code 4 before it was ready');
    expect(session.reports.at(-1)?.message).toContain('cannot reach the database');
    expect(existsSync(path.join(stateDir, 'sources', webId, session.task.id))).toBe(false);
    expect((JSON.parse((await get(HOSTNAME)).body) as { instance: string }).instance).toBe(serving.instance);
  });

  it('shows a crash of a deployed instance in its workload logs, and the supervisor restarts it', async () => {
    const crashingId = randomUUID();
    const crashingHost = 'crashing-prod.apps.test';
    const spec = webSpec(commits.two);
    Object.assign(spec, { routing: { hostnames: [crashingHost], internal: null, peers: [] } });
    Object.assign(spec.service as Record<string, unknown>, { id: crashingId, name: 'crashing' });
    Object.assign((spec.service as { settings: Record<string, unknown> }).settings, { entrypoint: 'node', arguments: ['server.js'] });
    const session = await perform(task(crashingId, 'deploy', 'APPLICATION'), spec);
    expect(session.events()).toEqual(['take', 'built', 'succeed']);
    expect(session.text()).toContain('starting node server.js');
    const before = JSON.parse((await get(crashingHost)).body) as { instance: string };

    await get(crashingHost, '/crash').catch(() => undefined);
    expect((await workloadLine(crashingId, /exited with code 7; restarting in \d+ ms$/)).stream).toBe('system');
    const restarted = await answerOf(crashingHost);
    expect((JSON.parse(restarted) as { instance: string }).instance).not.toBe(before.instance);
    // The service's status hears of it too: restarting after the crash, running again once the new process is ready.
    const reportsOf = () => healthReports.filter((report) => report.serviceId === crashingId);
    await expect.poll(() => reportsOf().at(-1)?.health, { timeout: 10_000, interval: 50 }).toBe('RUNNING');
    expect(reportsOf()[0]).toMatchObject({ health: 'RESTARTING', restarts: 1, message: expect.stringMatching(/exited with code 7; restarting in \d+ ms$/) });
    expect(reportsOf().at(-1)).toEqual({ serviceId: crashingId, health: 'RUNNING', restarts: 1 });
    expect((await perform(task(crashingId, 'delete', 'APPLICATION', 'SERVICE_TEARDOWN'), undefined)).events()).toEqual(['take', 'succeed']);
  });

  it('writes file variables at their mount path under the instance, owner-only, names them in the variable, and replaces them with it', async () => {
    const filesId = randomUUID();
    const filesHost = 'files-prod.apps.test';
    const reader = "require('http').createServer((q, s) => s.end(q.url === '/health' ? 'ok' : require('fs').readFileSync(process.env.APP_CONFIG, 'utf8'))).listen(Number(process.env.PORT), '127.0.0.1')";
    const specWith = (variables: Array<{ key: string; value: string; mount_path: string }>): Record<string, unknown> => {
      const spec = webSpec(commits.two);
      Object.assign(spec, { routing: { hostnames: [filesHost], internal: null, peers: [] }, variables: [...(spec.variables as unknown[]), ...variables.map((variable) => ({ ...variable, scope: 'SERVICE', secret: true }))] });
      Object.assign(spec.service as Record<string, unknown>, { id: filesId, name: 'files' });
      Object.assign((spec.service as { settings: Record<string, unknown> }).settings, { entrypoint: 'node', arguments: ['-e', reader] });
      return spec;
    };
    const filesDir = path.join(stateDir, 'files', filesId);

    const first = await perform(task(filesId, 'deploy', 'APPLICATION'), specWith([{ key: 'APP_CONFIG', value: '{"answer":42}', mount_path: '/etc/app/config.json' }]));
    expect(first.events()).toEqual(['take', 'built', 'succeed']);
    expect(await answerOf(filesHost)).toBe('{"answer":42}');
    const firstFile = path.join(filesDir, first.task.id, 'etc/app/config.json');
    expect((await stat(firstFile)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(firstFile))).mode & 0o777).toBe(0o700);

    const second = await perform(task(filesId, 'redeploy', 'APPLICATION'), specWith([{ key: 'APP_CONFIG', value: '{"answer":43}', mount_path: '/etc/app/config.json' }]));
    expect(second.events()).toEqual(['take', 'built', 'succeed']);
    expect(await answerOf(filesHost)).toBe('{"answer":43}');
    expect(await readdir(filesDir)).toEqual([second.task.id]);

    // A file cannot also be the directory of another file: the deployment fails saying so, and writes nothing.
    const clash = await perform(task(filesId, 'redeploy', 'APPLICATION'), specWith([
      { key: 'APP_CONFIG', value: 'a', mount_path: '/etc/app' },
      { key: 'APP_KEY', value: 'b', mount_path: '/etc/app/key' },
    ]));
    expect(clash.events()).toEqual(['take', 'fail']);
    expect(clash.reports.at(-1)?.message).toContain('file variable APP_KEY: cannot write it at /etc/app/key');
    expect(await readdir(filesDir)).toEqual([second.task.id]);
    expect(await answerOf(filesHost)).toBe('{"answer":43}');

    expect((await perform(task(filesId, 'delete', 'APPLICATION', 'SERVICE_TEARDOWN'), undefined)).events()).toEqual(['take', 'succeed']);
    expect(existsSync(filesDir)).toBe(false);
  });

  it('answers at an address of its own on its declared port, the instance serving now behind it, until it stops', async () => {
    const apiId = randomUUID();
    const hostname = `api.${environmentId}.slipway.internal`;
    const apiSpec = (commitId: string) => {
      const spec = webSpec(commitId);
      // The internal hostname as the built-ins name it, in a value a user wrote, next to a longer name it must not touch.
      const plain = `http://${hostname}:8080/ and my-${hostname}`;
      const variables = (spec.variables as Array<{ key: string }>).map((variable) => (variable.key === 'PLAIN' ? { ...variable, value: plain } : variable));
      Object.assign(spec, { variables, routing: { hostnames: [], internal: { hostname, ports: [8080] }, peers: [{ service_id: apiId, hostname }] } });
      Object.assign(spec.service as Record<string, unknown>, { id: apiId, name: 'api' });
      return spec;
    };
    let address = '';
    // A connection per request, as get() does: a keep-alive connection to the instance a redeploy stopped is closed.
    const internalAnswer = () =>
      new Promise<{ version: string; instance: string; plain: string }>((resolve, reject) => {
        const req = request({ host: address, port: 8080, path: '/', agent: false, timeout: 5_000 }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve(JSON.parse(body) as { version: string; instance: string; plain: string }));
        });
        req.on('timeout', () => req.destroy(new Error(`${address}:8080 did not answer`)));
        req.on('error', reject);
        req.end();
      });
    const first = await perform(task(apiId, 'deploy', 'APPLICATION'), apiSpec(commits.two));
    expect(first.events()).toEqual(['take', 'built', 'succeed']);
    // The driver chose the address (placement is its own), kept it in its state, and put it in place of the name.
    address = /api is reached inside its environment as \S+, on (127\.\d+\.\d+\.\d+):8080/.exec(first.text())?.[1] ?? '';
    expect(address).toMatch(/^127\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.\d{1,3}\.\d{1,3}$/);
    expect(first.text()).toContain(`api is reached inside its environment as ${hostname}, on ${address}:8080`);
    const placement = JSON.parse(await readFile(path.join(stateDir, 'placement.json'), 'utf8')) as { addresses: Record<string, string> };
    expect(placement.addresses[apiId]).toBe(address);
    const before = await internalAnswer();
    expect(before.version).toBe('two');
    expect(before.plain).toBe(`http://${address}:8080/ and my-${hostname}`);
    const beforeHostPid = (await pidFileOf(await currentInstance(apiId))).pid;

    // A redeploy: the same address and port, the new instance behind them, the old one gone.
    expect((await perform(task(apiId, 'redeploy', 'APPLICATION'), apiSpec(commits.one))).events()).toEqual(['take', 'built', 'succeed']);
    const after = await internalAnswer();
    expect(after).toMatchObject({ version: 'one' });
    expect(after.instance).not.toBe(before.instance);
    expect(processGroupAlive(beforeHostPid)).toBe(false);
    const record = JSON.parse(await readFile(path.join(stateDir, 'services', `${apiId}.json`), 'utf8')) as { application: { internal: unknown } };
    expect(record.application.internal).toEqual({ address, ports: [8080] });

    // The listeners are the agent's: a new agent takes the instance over and listens there again.
    await driver.detach();
    expect(await tcpProbe(address, 8080)).toBe(false);
    driver = newDriver();
    await driver.recover();
    expect((await internalAnswer()).instance).toBe(after.instance);

    expect((await perform(task(apiId, 'stop', 'APPLICATION'), apiSpec(commits.one))).events()).toEqual(['take', 'succeed']);
    expect(await tcpProbe(address, 8080)).toBe(false);
    expect((await perform(task(apiId, 'delete', 'APPLICATION', 'SERVICE_TEARDOWN'), undefined)).events()).toEqual(['take', 'succeed']);
    // The address goes with the service.
    const released = JSON.parse(await readFile(path.join(stateDir, 'placement.json'), 'utf8')) as { addresses: Record<string, string> };
    expect(released.addresses[apiId]).toBeUndefined();
  });

  it('deploys without its internal port where another program holds that port on every address, saying so', async () => {
    const busyId = randomUUID();
    const port = await findFreePort();
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '0.0.0.0', resolve));
    try {
      const spec = webSpec(commits.two);
      const hostname = `busy.${environmentId}.slipway.internal`;
      Object.assign(spec, { routing: { hostnames: ['busy-prod.apps.test'], internal: { hostname, ports: [port] }, peers: [{ service_id: busyId, hostname }] } });
      Object.assign(spec.service as Record<string, unknown>, { id: busyId, name: 'busy' });
      const session = await perform(task(busyId, 'deploy', 'APPLICATION'), spec);
      expect(session.events()).toEqual(['take', 'built', 'succeed']);
      expect(session.text()).toMatch(new RegExp(`127\\.[\\d.]+:${port} is taken \\(another program listens on port ${port} of every address of this host\\)`));
      expect((await get('busy-prod.apps.test')).status).toBe(200);
      expect((await perform(task(busyId, 'delete', 'APPLICATION', 'SERVICE_TEARDOWN'), undefined)).events()).toEqual(['take', 'succeed']);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });

  it('restarts without a build: a new instance of the same checkout', async () => {
    const before = JSON.parse((await get(HOSTNAME)).body) as { instance: string };
    const session = await perform(task(webId, 'restart', 'APPLICATION'), webSpec(commits.two));
    expect(session.events()).toEqual(['take', 'succeed']);
    const after = JSON.parse((await get(HOSTNAME)).body) as { version: string; instance: string };
    expect(after.version).toBe('two');
    expect(after.instance).not.toBe(before.instance);
  });

  it('routes a custom domain verified after the deployment to the running instance, and stops routing a removed one', async () => {
    const serving = JSON.parse((await get(HOSTNAME)).body) as { instance: string };
    const domain = 'shop.example.test';
    const asked: string[][] = [];
    const answering = (hostnames: string[]) => async (serviceIds: readonly string[]) => {
      asked.push([...serviceIds]);
      return [{ service_id: webId, hostnames }];
    };
    expect((await get(domain)).status).toBe(404);
    await driver.reconcileRoutes?.(answering([HOSTNAME, domain]));
    // The driver asks for what it routes: the web application (the crashing one was deleted).
    expect(asked).toEqual([[webId]]);
    expect((JSON.parse((await get(domain)).body) as { instance: string }).instance).toBe(serving.instance);
    expect((JSON.parse((await get(HOSTNAME)).body) as { instance: string }).instance).toBe(serving.instance);
    // Kept for the next agent: the record names the new hostnames.
    const record = JSON.parse(await readFile(path.join(stateDir, 'services', `${webId}.json`), 'utf8')) as { application: { hostnames: string[] } };
    expect(record.application.hostnames).toEqual([HOSTNAME, domain]);

    await driver.reconcileRoutes?.(answering([HOSTNAME]));
    expect((await get(domain)).status).toBe(404);
    expect((JSON.parse((await get(HOSTNAME)).body) as { instance: string }).instance).toBe(serving.instance);
  });

  it('cancels a build when the control plane asks, leaving the running instance serving', async () => {
    const serving = JSON.parse((await get(HOSTNAME)).body) as { instance: string };
    const session = await perform(task(webId, 'redeploy', 'APPLICATION'), webSpec(commits.slow, 'slow'), (harness) => {
      const timer = setInterval(() => {
        if (harness.text().includes('$ npm run build')) {
          harness.cancel = true;
          clearInterval(timer);
        }
      }, 50);
    });
    expect(session.events()).toEqual(['take', 'cancel_done']);
    expect(existsSync(path.join(stateDir, 'sources', webId, session.task.id))).toBe(false);
    expect((JSON.parse((await get(HOSTNAME)).body) as { instance: string }).instance).toBe(serving.instance);
  });

  it('is taken over by a new driver over the same state directory without a restart', async () => {
    const name = await currentInstance(webId);
    const { pid } = await pidFileOf(name);
    await driver.detach();
    proxy.removeRoute(webId);
    expect((await get(HOSTNAME)).status).toBe(404);

    driver = newDriver();
    await driver.recover();
    const answer = JSON.parse((await get(HOSTNAME)).body) as { pid: number; greeting: string };
    expect((await pidFileOf(name)).pid).toBe(pid);
    expect(isProcessAlive(pid)).toBe(true);
    // The environment, secret included, came back from the live process, so it is the same process.
    expect(answer.greeting).toBe(SECRET);
    await get(HOSTNAME, '/after-recover');
    await workloadLine(webId, /served \/after-recover/);
  });

  it('stops: no route, no process, no port', async () => {
    const name = await currentInstance(webId);
    const { pid, port } = await pidFileOf(name);
    const session = await perform(task(webId, 'stop', 'APPLICATION'), webSpec(commits.two));
    expect(session.events()).toEqual(['take', 'succeed']);
    expect((await get(HOSTNAME)).status).toBe(404);
    expect(processGroupAlive(pid)).toBe(false);
    expect(await tcpProbe('127.0.0.1', port)).toBe(false);
  });

  it('deletes: a teardown without a spec removes the checkouts and the record', async () => {
    await perform(task(webId, 'deploy', 'APPLICATION'), webSpec(commits.one));
    const { pid } = await pidFileOf(await currentInstance(webId));
    const session = await perform(task(webId, 'delete', 'APPLICATION', 'SERVICE_TEARDOWN'), undefined);
    expect(session.events()).toEqual(['take', 'succeed']);
    expect(processGroupAlive(pid)).toBe(false);
    expect((await get(HOSTNAME)).status).toBe(404);
    expect(existsSync(path.join(stateDir, 'sources', webId))).toBe(false);
    expect(existsSync(path.join(stateDir, 'services', `${webId}.json`))).toBe(false);
    expect((await readdir(path.join(stateDir, 'processes'))).filter((file) => file.startsWith(`${webId}.`))).toEqual([]);
  });
});

describe('local driver: workload isolation', () => {
  it('confines a hostile workload: its own uid, no data directory, no other process, a read-only system', async () => {
    // What the control plane keeps in its data directory, and a process holding a secret in its environment.
    await writeFile(path.join(root, 'secret.key'), 'the-control-plane-key', { mode: 0o600 });
    await writeFile(path.join(root, 'slipway.db'), 'SQLite format 3', { mode: 0o600 });
    const marker = `other-tenant-secret-${randomUUID()}`;
    const hostTmpFile = path.join(tmpdir(), `slipway-host-only-${randomUUID()}`);
    await writeFile(hostTmpFile, 'on the host\n');
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { env: { PATH: process.env.PATH ?? '', OTHER_TENANT_SECRET: marker }, stdio: 'ignore' });
    const probeId = randomUUID();
    const hostname = 'probe-prod.apps.test';
    try {
      const targets = { dataDir: root, stateDir, hostTmpFile, hostPids: [holder.pid, process.pid], reversedMarker: marker.split('').reverse().join('') };
      const spec = serviceSpec(probeId, 'APPLICATION', 'probe', { entrypoint: null, arguments: [] }, {
        git_commit_id: commits.probe,
        git: gitSource(commits.probe, 'probe'),
        routing: { hostnames: [hostname], internal: null, peers: [] },
        variables: [{ key: 'PROBE_TARGETS', value: JSON.stringify(targets), mount_path: null, scope: 'SERVICE', secret: false }],
      });
      const session = await perform(task(probeId, 'deploy', 'APPLICATION'), spec);
      expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
      const report = JSON.parse(await answerOf(hostname)) as Record<string, unknown> & { uid: number; environOfHostPids: { ok: boolean }[] };

      expect(report.uid).toBeGreaterThanOrEqual(DYNAMIC_UID_FIRST);
      expect(report.uid).not.toBe(0);
      expect(report.gid).toBe(report.uid);
      expect(session.text()).toContain(`workload isolation: strict — uid ${report.uid}`);
      for (const refused of ['readKey', 'readDatabase', 'listDataDir', 'listServices', 'listRootHome', 'writeEtc', 'writeUsr', 'writeDataDir']) {
        expect(report[refused], refused).toMatchObject({ ok: false });
      }
      expect(report.environOfHostPids).toEqual([expect.objectContaining({ ok: false }), expect.objectContaining({ ok: false })]);
      expect(report.markerInSomeEnviron).toBe(false);
      expect(report.hostTmpFileVisible).toBe(false);
      // Its own processes only: the sandbox's init, the shell, npm, node and what npm starts.
      expect(report.visibleProcesses).toBeLessThan(10);
      expect(report.writeOwnCheckout).toMatchObject({ ok: true });
      expect(report.writeTmp).toMatchObject({ ok: true });
      // Nothing was planted where the probe was refused.
      expect(existsSync('/etc/slipway-probe')).toBe(false);
      expect(existsSync(path.join(root, 'planted'))).toBe(false);
    } finally {
      holder.kill('SIGKILL');
      await rm(hostTmpFile, { force: true });
      await perform(task(probeId, 'delete', 'APPLICATION', 'SERVICE_TEARDOWN'), undefined);
    }
  });

  it.runIf(cgroups.unavailable === undefined)('holds a workload to its CPU and memory limits through its control groups, and says when the kernel killed it', async () => {
    const limitedId = randomUUID();
    const hostname = 'limited-prod.apps.test';
    const spec = serviceSpec(limitedId, 'APPLICATION', 'limited', { entrypoint: null, arguments: [], memory: 128, cpu: 100 }, {
      git_commit_id: commits.limits,
      git: gitSource(commits.limits, 'limits'),
      routing: { hostnames: [hostname], internal: null, peers: [] },
    });
    try {
      const session = await perform(task(limitedId, 'deploy', 'APPLICATION'), spec);
      expect(session.events(), session.text()).toEqual(['take', 'built', 'succeed']);
      expect(session.text()).toContain(`resource limits: memory 128 MB, CPU 100m, held by the kernel (cgroup ${cgroups.version ?? ''})`);
      // Every process of the instance is in the service's own groups.
      const { cgroup } = JSON.parse(await answerOf(hostname)) as { cgroup: string };
      const controlling = cgroups.version === 'v2' ? /^0::/ : /[:,](memory|cpu)[:,]/;
      const groups = cgroup.split('\n').filter((line) => controlling.test(line));
      expect(groups.length).toBeGreaterThan(0);
      for (const line of groups) expect(line).toContain(`/slipway/${limitedId}`);

      // A tenth of a CPU: two seconds of spinning get about 0.2 s of CPU time, whatever the host has free.
      const burned = JSON.parse(await answerOf(hostname, '/burn')) as { cpuMs: number };
      expect(burned.cpuMs).toBeLessThan(500);

      // Past 128 MB the kernel kills it; the supervisor says why and starts it again.
      await get(hostname, '/hog').catch(() => undefined);
      await vi.waitFor(
        () => expect(healthReports.filter((report) => report.serviceId === limitedId).map((report) => report.message ?? '')).toContainEqual(expect.stringContaining('was killed by the kernel for going over its memory limit of 128 MB')),
        { timeout: 30_000, interval: 100 },
      );
      await vi.waitFor(async () => expect(JSON.parse(await answerOf(hostname))).toHaveProperty('cgroup'), { timeout: 30_000, interval: 200 });
    } finally {
      await perform(task(limitedId, 'delete', 'APPLICATION', 'SERVICE_TEARDOWN'), undefined);
    }
    // Its groups go with it.
    const memoryLine = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((line) => (cgroups.version === 'v2' ? /^0::/ : /[:,]memory:/).test(line)) ?? '';
    const ownPath = memoryLine.slice(memoryLine.indexOf(':', memoryLine.indexOf(':') + 1) + 1);
    const mount = memoryLine.startsWith('0::') ? '/sys/fs/cgroup' : '/sys/fs/cgroup/memory';
    expect(existsSync(path.join(mount, ownPath, 'slipway', limitedId))).toBe(false);
  });

  it('ends at its start what an earlier agent left running that no task owns, and never a running instance', async () => {
    const slowId = randomUUID();
    const spec = webSpec(commits.slow, 'slow');
    Object.assign(spec, { routing: { hostnames: ['slow-prod.apps.test'], internal: null, peers: [] } });
    Object.assign(spec.service as Record<string, unknown>, { id: slowId, name: 'slow' });
    // A running instance, which the next agent must take over, not end.
    const keeperId = randomUUID();
    const keeperSpec = webSpec(commits.one);
    Object.assign(keeperSpec, { routing: { hostnames: ['keeper-prod.apps.test'], internal: null, peers: [] } });
    Object.assign(keeperSpec.service as Record<string, unknown>, { id: keeperId, name: 'keeper' });
    expect((await perform(task(keeperId, 'deploy', 'APPLICATION'), keeperSpec)).events()).toEqual(['take', 'built', 'succeed']);
    const keeper = JSON.parse(await answerOf('keeper-prod.apps.test')) as { instance: string };
    // An agent whose build runs (sleep 60), and which then "dies": nothing of it ends the build.
    const session = new TaskSessionHarness(task(slowId, 'deploy', 'APPLICATION'), spec);
    const interrupted = carryOut(driver, session);
    await expect.poll(() => session.text(), { timeout: 20_000, interval: 50 }).toContain('$ npm run build');
    const recorded = await readdir(path.join(stateDir, 'commands'));
    expect(recorded).toHaveLength(1);
    const buildGroup = Number((recorded[0] as string).replace('.json', ''));
    expect(processGroupAlive(buildGroup)).toBe(true);

    // The next agent over the same state directory ends the build's whole group at its start.
    const next = newDriver();
    await next.recover();
    expect(processGroupAlive(buildGroup)).toBe(false);
    expect(await readdir(path.join(stateDir, 'commands'))).toEqual([]);
    expect(JSON.parse(await answerOf('keeper-prod.apps.test'))).toMatchObject({ instance: keeper.instance });
    await interrupted;
    await driver.detach();
    driver = next;
    expect((await perform(task(keeperId, 'delete', 'APPLICATION', 'SERVICE_TEARDOWN'), undefined)).events()).toEqual(['take', 'succeed']);
  });

  it('refuses to deploy where strict isolation is impossible, saying what the host lacks, and runs unconfined when told to', async () => {
    const unconfinedState = path.join(root, 'unconfined-agent');
    const sandbox = new WorkloadSandbox({ isolation: 'none', protectedPaths: [root], identitiesFile: path.join(unconfinedState, 'identities.json') });
    const unconfined = createLocalDriver({ stateDir: unconfinedState, sandbox, proxy, git: createSystemGitAccess({ allowPrivateHosts: true }), workloadLogs: async () => undefined });
    const serviceId = randomUUID();
    const spec = webSpec(commits.one);
    Object.assign(spec, { routing: { hostnames: ['unconfined-prod.apps.test'], internal: null, peers: [] } });
    Object.assign(spec.service as Record<string, unknown>, { id: serviceId, name: 'unconfined' });
    const session = new TaskSessionHarness(task(serviceId, 'deploy', 'APPLICATION'), spec);
    try {
      await carryOut(unconfined, session);
      expect(session.events()).toEqual(['take', 'built', 'succeed']);
      expect(session.text()).toContain('workload isolation: none');
      const body = JSON.parse(await answerOf('unconfined-prod.apps.test')) as { uid: number };
      expect(body.uid).toBe(process.getuid?.());
    } finally {
      await unconfined.stopAll();
    }
    // Strict where the host cannot (here: no bubblewrap): the deployment fails before anything runs, saying why.
    const impossibleState = path.join(root, 'impossible-agent');
    const impossible = new WorkloadSandbox({ isolation: 'strict', protectedPaths: [root], identitiesFile: path.join(impossibleState, 'identities.json'), bwrapPath: path.join(root, 'no-bwrap-here') });
    expect(impossible.unavailable).toMatch(/bubblewrap is not installed|does not run as root/);
    const refusing = createLocalDriver({ stateDir: impossibleState, sandbox: impossible, proxy, git: createSystemGitAccess({ allowPrivateHosts: true }), workloadLogs: async () => undefined });
    const refusedId = randomUUID();
    const refusedSpec = webSpec(commits.one);
    Object.assign(refusedSpec, { routing: { hostnames: ['refused-prod.apps.test'], internal: null, peers: [] } });
    Object.assign(refusedSpec.service as Record<string, unknown>, { id: refusedId, name: 'refused' });
    const refused = new TaskSessionHarness(task(refusedId, 'deploy', 'APPLICATION'), refusedSpec);
    try {
      await carryOut(refusing, refused);
      expect(refused.events()).toEqual(['take', 'fail']);
      expect(refused.reports.at(-1)?.message).toMatch(/workload isolation is strict, but this host cannot confine workloads: .*SLIPWAY_WORKLOAD_ISOLATION=none/);
      expect((await get('refused-prod.apps.test')).status).toBe(404);
      expect(existsSync(path.join(impossibleState, 'sources', refusedId))).toBe(false);
    } finally {
      await refusing.stopAll();
    }
  });
});

describe('local driver: databases', () => {
  const databaseId = randomUUID();
  const credentials = { username: 'udrivertest', password: 'Driver-Test-Password-123' };

  it('starts PostgreSQL with the given credentials, reached on an address of its own at its declared port, and destroys it on delete', async () => {
    const hostname = `db.${environmentId}.slipway.internal`;
    const spec = serviceSpec(databaseId, 'DATABASE', 'db', { memory: 512 }, {
      database: { type: 'POSTGRESQL', version: '16', ...credentials, database_name: 'appdata', shared: false },
      routing: { hostnames: [], internal: { hostname, ports: [5432] }, peers: [{ service_id: databaseId, hostname }] },
    });
    const session = await perform(task(databaseId, 'deploy', 'DATABASE'), spec);
    expect(session.reports.at(-1)).toEqual({ event: 'succeed', message: undefined });
    // The server listens on a port the driver chose on 127.0.0.1; the service's own address forwards its declared port there.
    const port = Number(/POSTGRESQL listens on 127\.0\.0\.1:(\d+)/.exec(session.text())?.[1]);
    expect(port).toBeGreaterThan(1024);
    const address = /db is reached inside its environment as \S+, on (127\.[\d.]+):5432/.exec(session.text())?.[1] ?? '';
    expect(address).toMatch(/^127\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\./);
    const client = new pg.Client({ host: address, port: 5432, user: credentials.username, password: credentials.password, database: 'appdata' });
    await client.connect();
    const result = await client.query<{ user: string }>('SELECT current_user AS user');
    await client.end();
    expect(result.rows[0]?.user).toBe(credentials.username);

    // A new agent takes the running server over (its password is not on disk, its port answering is enough).
    const { pid } = await pidFileOf(`database-${databaseId}`);
    await driver.detach();
    driver = newDriver();
    await driver.recover();
    expect((await pidFileOf(`database-${databaseId}`)).pid).toBe(pid);
    const again = new pg.Client({ host: address, port: 5432, user: credentials.username, password: credentials.password, database: 'appdata' });
    await again.connect();
    expect((await again.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1);
    await again.end();

    const teardown = await perform(task(databaseId, 'delete', 'DATABASE', 'SERVICE_TEARDOWN'), undefined);
    expect(teardown.events()).toEqual(['take', 'succeed']);
    expect(await tcpProbe('127.0.0.1', port)).toBe(false);
    expect(await tcpProbe(address, 5432)).toBe(false);
    expect(existsSync(path.join(stateDir, 'databases', databaseId))).toBe(false);
  });

  it('fails a MONGODB database with the reason', async () => {
    const mongoId = randomUUID();
    const spec = serviceSpec(mongoId, 'DATABASE', 'documents', {}, {
      database: { type: 'MONGODB', version: '7', ...credentials, database_name: 'documents', shared: false },
    });
    const session = await perform(task(mongoId, 'deploy', 'DATABASE'), spec);
    expect(session.reports.at(-1)).toEqual({ event: 'fail', message: noLocalEngineMessage('MONGODB') });
  });
});

const SHARED_POSTGRES_URL = process.env.SLIPWAY_TEST_DATABASE_URL;

describe.skipIf(SHARED_POSTGRES_URL === undefined || SHARED_POSTGRES_URL === '')('local driver: POSTGRESQL on the shared server (SLIPWAY_LOCAL_POSTGRES_URL)', () => {
  it('creates the role and the database on deploy and drops both on delete', async () => {
    const adminUrl = SHARED_POSTGRES_URL as string;
    const sharedState = path.join(root, 'shared-agent');
    const sandbox = new WorkloadSandbox({ isolation: 'strict', protectedPaths: [root], identitiesFile: path.join(sharedState, 'identities.json') });
    const shared = createLocalDriver({ stateDir: sharedState, sandbox, proxy, git: createSystemGitAccess({ allowPrivateHosts: true }), externalPostgresUrl: adminUrl, workloadLogs: async () => undefined });
    const serviceId = randomUUID();
    const suffix = Date.now().toString(36);
    const credentials = { username: `slw_driver_${suffix}`, password: 'Shared-Driver-Password-1' };
    const hostname = `shared.${environmentId}.slipway.internal`;
    const spec = serviceSpec(serviceId, 'DATABASE', 'shared', {}, {
      database: { type: 'POSTGRESQL', version: '16', ...credentials, database_name: `slw_driver_db_${suffix}`, shared: true },
      routing: { hostnames: [], internal: { hostname, ports: [5432] }, peers: [{ service_id: serviceId, hostname }] },
    });
    const deployed = new TaskSessionHarness(task(serviceId, 'deploy', 'DATABASE'), spec);
    await carryOut(shared, deployed);
    expect(deployed.events()).toEqual(['take', 'built', 'succeed']);
    // Reached as any database is, on its own address and declared port, which lead to the shared server here.
    const address = /shared is reached inside its environment as \S+, on (127\.[\d.]+):5432/.exec(deployed.text())?.[1] ?? '';
    expect(address).toMatch(/^127\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\./);
    const client = new pg.Client({ host: address, port: 5432, user: credentials.username, password: credentials.password, database: `slw_driver_db_${suffix}` });
    await client.connect();
    expect((await client.query<{ user: string }>('SELECT current_user AS user')).rows[0]?.user).toBe(credentials.username);
    await client.end();

    const deleted = new TaskSessionHarness(task(serviceId, 'delete', 'DATABASE', 'SERVICE_TEARDOWN'), undefined);
    await carryOut(shared, deleted);
    expect(deleted.events()).toEqual(['take', 'succeed']);
    const adminClient = new pg.Client({ connectionString: adminUrl });
    await adminClient.connect();
    const left = await adminClient.query('SELECT 1 FROM pg_roles WHERE rolname = $1 UNION ALL SELECT 1 FROM pg_database WHERE datname = $2', [credentials.username, `slw_driver_db_${suffix}`]);
    await adminClient.end();
    expect(left.rowCount).toBe(0);
    await shared.stopAll();
  });
});

describe('local driver: jobs and other kinds', () => {
  function jobSpec(jobId: string, schedule: Record<string, unknown>): Record<string, unknown> {
    const settings = { memory: 512, max_duration_seconds: 60, source: { kind: 'docker', git_repository: {} }, schedule };
    return serviceSpec(jobId, 'JOB', 'job', settings, { git: gitSource(commits.one) });
  }

  it('runs a lifecycle job\'s on_start to its end: exit code 0 succeeds, another fails', async () => {
    const passing = randomUUID();
    const ok = await perform(
      task(passing, 'deploy', 'JOB'),
      jobSpec(passing, {
        kind: 'LIFECYCLE',
        lifecycle_type: 'GENERIC',
        on_start: { entrypoint: 'sh', arguments: ['-c', 'echo "starting with $PLAIN"; cat version.txt'] },
        on_stop: null,
        on_delete: { entrypoint: 'sh', arguments: ['-c', 'echo "deleting with $PLAIN and [$GREETING]"'] },
      }),
    );
    expect(ok.events()).toEqual(['take', 'built', 'succeed']);
    expect(ok.text()).toContain('starting with plain-value');
    expect(ok.text()).toContain('on_start exited with code 0');

    // The delete has no spec: on_delete runs from the kept checkout with the non-secret variables only.
    const deleted = await perform(task(passing, 'delete', 'JOB', 'SERVICE_TEARDOWN'), undefined);
    expect(deleted.events()).toEqual(['take', 'succeed']);
    expect(deleted.text()).toContain('deleting with plain-value and []');
    expect(existsSync(path.join(stateDir, 'sources', passing))).toBe(false);

    const failing = randomUUID();
    const bad = await perform(task(failing, 'deploy', 'JOB'), jobSpec(failing, { kind: 'LIFECYCLE', lifecycle_type: 'GENERIC', on_start: { entrypoint: 'sh', arguments: ['-c', 'exit 3'] }, on_stop: null, on_delete: null }));
    expect(bad.reports.at(-1)).toEqual({ event: 'fail', message: "on_start (sh -c 'exit 3') exited with code 3" });
  });

  it('arms a cron job whose runs and exit codes reach the workload logs, and stops it', async () => {
    const cronId = randomUUID();
    const session = await perform(task(cronId, 'deploy', 'JOB'), jobSpec(cronId, { kind: 'CRON', cronjob: { entrypoint: 'sh', arguments: ['-c', 'echo tick $PLAIN'], timezone: 'Etc/UTC', scheduled_at: '* * * * * *' } }));
    expect(session.events()).toEqual(['take', 'built', 'succeed']);
    expect((await workloadLine(cronId, /^run \d+ exited with code 0 after/)).stream).toBe('system');
    expect((await workloadLine(cronId, /^tick plain-value$/)).stream).toBe('stdout');

    // A new agent re-adopts the schedule's runner: same process, and its runs keep reaching the logs.
    const { pid } = await pidFileOf(`cron-${cronId}`);
    await driver.detach();
    driver = newDriver();
    await driver.recover();
    expect((await pidFileOf(`cron-${cronId}`)).pid).toBe(pid);
    const since = workloadLines.length;
    await workloadLine(cronId, /^run \d+ exited with code 0 after/, since);

    const stopped = await perform(task(cronId, 'stop', 'JOB'), undefined);
    expect(stopped.events()).toEqual(['take', 'succeed']);
    expect(processGroupAlive(pid)).toBe(false);
  });

  it('fails kinds the local cluster cannot run, and takes environment tasks', async () => {
    const containerId = randomUUID();
    const container = await perform(task(containerId, 'deploy', 'CONTAINER'), serviceSpec(containerId, 'CONTAINER', 'box', {}));
    expect(container.reports.at(-1)).toEqual({ event: 'fail', message: unsupportedKindMessage('CONTAINER') });

    // The environment's state machine passes a deploy through its build phase; a stop has none.
    const environment = await perform(task(environmentId, 'deploy', 'ENVIRONMENT', 'ENVIRONMENT'), undefined);
    expect(environment.events()).toEqual(['take', 'built', 'succeed']);
    const stopped = await perform(task(environmentId, 'stop', 'ENVIRONMENT', 'ENVIRONMENT'), undefined);
    expect(stopped.events()).toEqual(['take', 'succeed']);
  });
});
