import { request } from 'node:http';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { BuildError, planBuild, runBuild, startCommandArgv } from '../src/engine/local/app-builder.ts';
import { LocalApplications, type ApplicationInstanceSpec } from '../src/engine/local/application-instances.ts';
import { findFreePort } from '../src/lib/free-port.ts';
import { baseEnvironment, ProcessSupervisor, type ProcessSpec } from '../src/engine/local/process-supervisor.ts';
import { listeningPortsOfProcessGroup } from '../src/engine/local/listening-ports.ts';
import { isProcessAlive, processGroupAlive } from '../src/engine/local/process-table.ts';
import { LocalReverseProxy, RouteConflictError, requestHostname } from '../src/engine/local/reverse-proxy.ts';

/**
 * The application path of the local engine with real processes: source directories built by the builder (npm
 * included, offline: the only dependency is a local `file:` package), started by the supervisor, reached through
 * the reverse proxy by hostname, and replaced under continuous load without a failed request.
 */

let root: string;
let supervisor: ProcessSupervisor;
let proxy: LocalReverseProxy;
let proxyPort: number;
const proxyErrors: string[] = [];

const SERVER = `
const http = require('node:http');
if (process.env.CRASH_AT_START === 'yes') { console.error('cannot connect to the database'); process.exit(1); }
const delay = Number(process.env.DELAY_MS ?? 0);
http.createServer((req, res) => {
  setTimeout(() => res.end(JSON.stringify({ version: process.env.VERSION, forwardedFor: req.headers['x-forwarded-for'] ?? null, host: req.headers.host })), delay);
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

const stateDir = (): string => path.join(root, 'agent-state');

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'slipway-apps-'));
  supervisor = new ProcessSupervisor({ stateDir: stateDir(), logPollMs: 50 });
  proxy = new LocalReverseProxy({ onError: (message) => proxyErrors.push(message), drainTimeoutMs: 5_000 });
  proxyPort = (await proxy.listen(0)).port;
});

afterAll(async () => {
  await supervisor.stopAll();
  // Also what the supervisor of the moment does not hold: a test that failed before stopping its instances leaves them
  // to the supervisor it ran with, which the re-adoption test below lets go of (detachAll) for a successor. Their pid
  // files name them, and stop() ends a recorded process it does not supervise.
  for (const file of await readdir(stateDir()).catch(() => [])) {
    if (file.endsWith('.pid.json')) await supervisor.stop(file.slice(0, -'.pid.json'.length));
  }
  await proxy.close();
  await rm(root, { recursive: true, force: true });
});

async function sourceDir(name: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(root, name);
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  return dir;
}

/** GET through the proxy with a Host header (fetch cannot set one). */
function get(hostname: string, pathname = '/', agentless = true): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: proxyPort, path: pathname, headers: { host: `${hostname}:${proxyPort}` }, agent: agentless ? false : undefined }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function appSpec(name: string, dir: string, startCommand: string, env: Record<string, string>): Promise<ProcessSpec> {
  return { name, command: startCommandArgv(startCommand), cwd: dir, env: { ...baseEnvironment(), ...env }, port: await findFreePort(), readiness: { kind: 'http', path: '/' }, startTimeoutMs: 20_000 };
}

describe('application builder: what to run', () => {
  it('detects npm steps and the start command from package.json, and prefers a Procfile web: line', async () => {
    const noDependencies = await sourceDir('plan-plain', { 'package.json': JSON.stringify({ scripts: { build: 'tsc', start: 'node dist/server.js' } }) });
    expect(planBuild(noDependencies)).toEqual({ steps: [{ command: 'npm run build', reason: 'package.json has a build script' }], startCommand: 'npm start', startSource: 'PACKAGE_JSON_START' });

    const locked = await sourceDir('plan-locked', { 'package.json': JSON.stringify({ dependencies: { x: '1' }, scripts: { start: 'node a.js' } }), 'package-lock.json': '{}', Procfile: 'worker: node worker.js\nweb: node web.js --port $PORT\n' });
    expect(planBuild(locked)).toEqual({ steps: [{ command: 'npm ci --no-audit --no-fund', reason: 'package-lock.json found' }], startCommand: 'node web.js --port $PORT', startSource: 'PROCFILE' });

    const unlocked = await sourceDir('plan-unlocked', { 'package.json': JSON.stringify({ devDependencies: { x: '1' }, main: 'index.js' }), 'index.js': '' });
    expect(planBuild(unlocked)).toEqual({ steps: [{ command: 'npm install --no-audit --no-fund', reason: 'package.json without a lockfile' }], startCommand: 'node "index.js"', startSource: 'PACKAGE_JSON_MAIN' });

    expect(planBuild(unlocked, { buildCommand: 'make all', startCommand: './server' })).toEqual({ steps: [{ command: 'make all', reason: 'the service\'s build command' }], startCommand: './server', startSource: 'START_COMMAND' });
  });

  it('says what to add when nothing starts the application, and refuses a broken package.json', async () => {
    const empty = await sourceDir('plan-empty', { 'README.md': '# nothing' });
    expect(() => planBuild(empty)).toThrow(/no start command: set the service's start command, add a Procfile with a "web:" line, or a "start" script/);
    const broken = await sourceDir('plan-broken', { 'package.json': '{ "scripts": ' });
    expect(() => planBuild(broken)).toThrow(BuildError);
    expect(() => planBuild(path.join(root, 'missing'))).toThrow(/does not exist/);
  });
});

describe('application builder: building', () => {
  it('installs dependencies, runs the build script with the deployment variables, and the result starts behind the proxy', async () => {
    const dir = await sourceDir('shop', {
      'greeter/package.json': JSON.stringify({ name: 'greeter', version: '1.0.0', main: 'index.js' }),
      'greeter/index.js': "module.exports = (name) => 'ahoy ' + name;",
      'package.json': JSON.stringify({
        name: 'shop', version: '1.0.0',
        dependencies: { greeter: 'file:./greeter' },
        scripts: { build: 'node build.js', start: 'node dist/server.js' },
      }),
      'build.js': `
const fs = require('node:fs');
console.log('building for ' + process.env.BUILD_TARGET);
fs.mkdirSync('dist', { recursive: true });
fs.writeFileSync('dist/server.js', "const greet = require('greeter'); require('node:http').createServer((q, s) => s.end(greet(process.env.WHO))).listen(Number(process.env.PORT), '127.0.0.1');");
`,
    });
    const lines: string[] = [];
    const plan = planBuild(dir);
    expect(plan.steps.map((step) => step.command)).toEqual(['npm install --no-audit --no-fund', 'npm run build']);
    await runBuild(plan, { sourceDir: dir, env: { ...baseEnvironment(), BUILD_TARGET: 'production' }, onLine: (stream, line) => lines.push(`${stream}: ${line}`) });
    expect(lines).toContain('stdout: $ npm run build   # package.json has a build script');
    expect(lines).toContain('stdout: building for production');
    expect(await readFile(path.join(dir, 'node_modules/greeter/index.js'), 'utf8')).toContain('ahoy');

    // With the lockfile npm install wrote, the next build uses npm ci.
    const again = planBuild(dir);
    expect(again.steps[0]?.command).toBe('npm ci --no-audit --no-fund');
    await runBuild(again, { sourceDir: dir, env: baseEnvironment() });

    const spec = await appSpec('shop-1', dir, again.startCommand, { WHO: 'sailor' });
    await supervisor.start(spec);
    const hostname = 'shop-staging-x7k2mq4a.apps.localhost';
    proxy.setRoute('service-shop', { hostnames: [hostname], target: { host: '127.0.0.1', port: spec.port as number } });
    expect(await get(hostname)).toEqual({ status: 200, body: 'ahoy sailor' });
    await supervisor.stop('shop-1');
    proxy.removeRoute('service-shop');
  });

  it('fails with the failing step, its exit code and its last output lines', async () => {
    const dir = await sourceDir('failing', { 'package.json': JSON.stringify({ scripts: { build: "node -e \"console.error('type error in src/app.ts'); process.exit(2)\"", start: 'node x.js' } }) });
    const error = await runBuild(planBuild(dir), { sourceDir: dir, env: baseEnvironment() }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BuildError);
    expect((error as BuildError).message).toBe('build step "npm run build" exited with code 2');
    expect((error as BuildError).output).toContain('type error in src/app.ts');
  });

  it('stops a canceled build, everything it started included', async () => {
    const dir = await sourceDir('slow', { 'pids.txt': '' });
    const controller = new AbortController();
    const building = runBuild({ steps: [{ command: 'sleep 30 & echo $$ > pids.txt; wait', reason: 'test' }], startCommand: 'true', startSource: 'START_COMMAND' }, { sourceDir: dir, env: baseEnvironment(), signal: controller.signal });
    const shellPid = await vi.waitFor(
      async () => {
        const written = Number((await readFile(path.join(dir, 'pids.txt'), 'utf8')).trim() || 0);
        expect(written, 'the build shell\'s pid in pids.txt').not.toBe(0);
        return written;
      },
      { timeout: 10_000, interval: 20 },
    );
    controller.abort();
    await expect(building).rejects.toThrow('the build was canceled during "sleep 30 & echo $$ > pids.txt; wait"');
    expect(processGroupAlive(shellPid)).toBe(false);
  });
});

describe('reverse proxy', () => {
  it('routes by hostname, answers 404 for unknown hosts and 502 when the instance is gone, and refuses a hostname twice', async () => {
    const dir = await sourceDir('echo', { 'server.js': SERVER });
    const blue = await appSpec('echo-blue', dir, 'node server.js', { VERSION: 'blue' });
    const green = await appSpec('echo-green', dir, 'node server.js', { VERSION: 'green' });
    await Promise.all([supervisor.start(blue), supervisor.start(green)]);
    proxy.setRoute('service-blue', { hostnames: ['blue-prod.localhost', 'www.blue.example'], target: { host: '127.0.0.1', port: blue.port as number } });
    proxy.setRoute('service-green', { hostnames: ['green-prod.localhost'], target: { host: '127.0.0.1', port: green.port as number } });

    const viaBlue = await get('blue-prod.localhost');
    expect(JSON.parse(viaBlue.body)).toEqual({ version: 'blue', forwardedFor: '127.0.0.1', host: `blue-prod.localhost:${proxyPort}` });
    expect(JSON.parse((await get('WWW.Blue.Example.')).body).version).toBe('blue');
    expect(JSON.parse((await get('green-prod.localhost')).body).version).toBe('green');
    expect(await get('nobody-prod.localhost')).toEqual({ status: 404, body: 'No service answers on nobody-prod.localhost.\n' });
    expect(() => proxy.setRoute('service-green', { hostnames: ['green-prod.localhost', 'www.blue.example'], target: { host: '127.0.0.1', port: green.port as number } })).toThrow(RouteConflictError);
    // Its message reaches the refused service's log: it names the hostname, never the service holding it.
    expect(() => proxy.setRoute('service-green', { hostnames: ['www.blue.example'], target: { host: '127.0.0.1', port: green.port as number } })).toThrow(
      /^www\.blue\.example is already routed to another service$/,
    );
    // The refused change left the green route as it was.
    expect(proxy.route('service-green')?.hostnames).toEqual(['green-prod.localhost']);

    await supervisor.stop('echo-green');
    expect(await get('green-prod.localhost')).toEqual({ status: 502, body: 'The service did not answer.\n' });
    expect(proxyErrors.at(-1)).toMatch(/forwarding GET green-prod\.localhost:\d+\/ to 127\.0\.0\.1:\d+ failed/);
    proxy.removeRoute('service-green');
    await supervisor.stop('echo-blue');
    proxy.removeRoute('service-blue');
  });

  it('replaces an instance under continuous load without a failed request', async () => {
    const dir = await sourceDir('rolling', { 'server.js': SERVER });
    const v1 = await appSpec('rolling-v1', dir, 'node server.js', { VERSION: 'v1', DELAY_MS: '30' });
    const v1State = await supervisor.start(v1);
    const hostname = 'rolling-prod.localhost';
    proxy.setRoute('service-rolling', { hostnames: [hostname], target: { host: '127.0.0.1', port: v1.port as number } });

    const seen: string[] = [];
    const failures: string[] = [];
    let loading = true;
    const client = async (): Promise<void> => {
      while (loading) {
        try {
          const response = await get(hostname, '/', false);
          if (response.status !== 200) failures.push(`${response.status} ${response.body}`);
          else seen.push((JSON.parse(response.body) as { version: string }).version);
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    };
    const clients = Array.from({ length: 8 }, () => client());
    // Whatever fails below, the load stops and both instances end with the test, not with the suite.
    onTestFinished(async () => {
      loading = false;
      await Promise.all(clients);
      await supervisor.stop('rolling-v1');
      await supervisor.stop('rolling-v2');
      proxy.removeRoute('service-rolling');
    });
    await new Promise((resolve) => setTimeout(resolve, 300));

    const v2 = await appSpec('rolling-v2', dir, 'node server.js', { VERSION: 'v2', DELAY_MS: '30' });
    await supervisor.start(v2);
    // The switch must happen under load: requests in flight to v1 at that moment (a busy runner can catch every
    // client between two requests, so the moment is awaited, not assumed).
    await vi.waitFor(() => expect(proxy.inFlight({ host: '127.0.0.1', port: v1.port as number })).toBeGreaterThan(0), { timeout: 5_000, interval: 5 });
    const previous = await proxy.replaceTarget('service-rolling', { host: '127.0.0.1', port: v2.port as number });
    expect(previous).toEqual({ host: '127.0.0.1', port: v1.port });
    expect(proxy.inFlight(previous as { host: string; port: number })).toBe(0);
    await supervisor.stop('rolling-v1');
    expect(processGroupAlive(v1State.pid as number)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    loading = false;
    await Promise.all(clients);

    expect(failures).toEqual([]);
    expect(seen.filter((version) => version === 'v1').length).toBeGreaterThan(10);
    expect(seen.filter((version) => version === 'v2').length).toBeGreaterThan(10);
    expect(seen.lastIndexOf('v1')).toBeLessThan(seen.indexOf('v2') + 8);
    await supervisor.stop('rolling-v2');
    proxy.removeRoute('service-rolling');
  });

  it('forwards WebSocket upgrades and counts an open one as in flight', async () => {
    // A minimal upgrade handler: answers 101 and echoes what it receives, upper-cased (framing is the endpoints' business, not the proxy's).
    const dir = await sourceDir('socket', { 'server.js': `
require('node:http').createServer((q, s) => s.end('plain')).on('upgrade', (req, socket) => {
  socket.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\n');
  socket.on('data', (chunk) => socket.write(chunk.toString().toUpperCase()));
  socket.on('end', () => socket.end());
}).listen(Number(process.env.PORT), '127.0.0.1');
` });
    const spec = await appSpec('socket-1', dir, 'node server.js', {});
    await supervisor.start(spec);
    const target = { host: '127.0.0.1', port: spec.port as number };
    proxy.setRoute('service-socket', { hostnames: ['socket-prod.localhost'], target });
    const socket = await new Promise<import('node:net').Socket>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: proxyPort, headers: { host: 'socket-prod.localhost', connection: 'Upgrade', upgrade: 'websocket' } });
      req.on('upgrade', (res, upgraded) => (res.statusCode === 101 ? resolve(upgraded) : reject(new Error(String(res.statusCode)))));
      req.on('error', reject);
      req.end();
    });
    const echoed = new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    socket.write('ahoy');
    expect(await echoed).toBe('AHOY');
    expect(proxy.inFlight(target)).toBe(1);
    expect(await proxy.drain(target, 100)).toBe(false);
    socket.destroy();
    expect(await proxy.drain(target, 2_000)).toBe(true);
    await supervisor.stop('socket-1');
    proxy.removeRoute('service-socket');
  });

  it('reads hostnames as routing does', () => {
    expect(requestHostname('Shop-Prod.Localhost:8080')).toBe('shop-prod.localhost');
    expect(requestHostname('bad host')).toBeUndefined();
    expect(requestHostname(undefined)).toBeUndefined();
  });
});

describe('an application that does not listen on $PORT', () => {
  it('fails at once, naming the port it listens on and its PORT, and leaves nothing running', async () => {
    // It listens on a port of its own (as on its declared internal_port), in a child of the start command's shell.
    const dir = await sourceDir('wrong-port', { 'server.js': `
require('node:fs').writeFileSync('pid.txt', String(process.pid));
require('node:http').createServer((q, s) => s.end('hello')).listen(Number(process.env.OWN_PORT), '127.0.0.1');
` });
    const ownPort = await findFreePort();
    // The start timeout is 15 s: a failure saying anything but "was not ready within 15s" came before it.
    const spec = { ...(await appSpec('wrong-port-1', dir, 'node server.js', { OWN_PORT: String(ownPort) })), startTimeoutMs: 15_000 };
    const error = (await supervisor.start(spec).catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message.split('\n')[0]).toBe(
      `wrong-port-1 listens on port ${ownPort}, not on $PORT (${spec.port}): Slipway gives each instance its own port in the PORT variable; listen on process.env.PORT`,
    );
    expect(supervisor.state('wrong-port-1')).toMatchObject({ status: 'FAILED', pid: undefined });
    const pid = Number(await readFile(path.join(dir, 'pid.txt'), 'utf8'));
    expect(isProcessAlive(pid)).toBe(false);
    // Nothing of the instance answers on its port any more. Only its own answer counts: on a busy machine the freed
    // port may already have been given to another program (a parallel suite's server).
    const answersAsTheInstance = await fetch(`http://127.0.0.1:${ownPort}/`, { signal: AbortSignal.timeout(5_000) }).then(
      async (response) => (await response.text()) === 'hello',
      () => false,
    );
    expect(answersAsTheInstance).toBe(false);
  });

  it('sees the ports a running instance\'s processes listen on (what the check above reads)', async () => {
    const dir = await sourceDir('listening', { 'server.js': SERVER });
    const spec = await appSpec('listening-1', dir, 'node server.js', {});
    const state = await supervisor.start(spec);
    expect(listeningPortsOfProcessGroup(state.pid as number)).toEqual([spec.port]);
    await supervisor.stop('listening-1');
  });

  it('keeps waiting for readiness when the application listens nowhere, and then says so', async () => {
    const dir = await sourceDir('silent', { 'server.js': 'setInterval(() => undefined, 1000);' });
    const spec = { ...(await appSpec('silent-1', dir, 'node server.js', {})), readiness: { kind: 'tcp' as const }, startTimeoutMs: 4_000 };
    await expect(supervisor.start(spec)).rejects.toThrow(`silent-1 was not ready within 4s (TCP connect 127.0.0.1:${spec.port})`);
  });
});

describe('application instances (supervisor + proxy)', () => {
  it('deploys, replaces under load without a failed request, keeps serving when a new instance fails, is re-adopted, and stops', async () => {
    const dir = await sourceDir('instances', { 'server.js': SERVER });
    const applications = new LocalApplications({ supervisor, proxy });
    const hostname = 'web-prod.localhost';
    const spec = (instanceId: string, env: Record<string, string>): ApplicationInstanceSpec => ({
      serviceKey: 'svc-web', instanceId, sourceDir: dir, startCommand: 'node server.js',
      env: { ...baseEnvironment(), DELAY_MS: '20', ...env }, readiness: { kind: 'http', path: '/' }, hostnames: [hostname], startTimeoutMs: 5_000,
    });
    const first = await applications.deploy(spec('dep-1', { VERSION: 'one' }));
    expect(JSON.parse((await get(hostname)).body).version).toBe('one');
    // A retried deploy of the same instance changes nothing.
    expect(await applications.deploy(spec('dep-1', { VERSION: 'one' }))).toMatchObject({ pid: first.pid, status: 'RUNNING' });

    const failures: string[] = [];
    const seen = new Set<string>();
    let loading = true;
    const client = async (): Promise<void> => {
      while (loading) {
        const response = await get(hostname, '/', false).catch((error: Error) => ({ status: 0, body: error.message }));
        if (response.status === 200) seen.add((JSON.parse(response.body) as { version: string }).version);
        else failures.push(`${response.status} ${response.body}`);
      }
    };
    const clients = Array.from({ length: 6 }, () => client());
    onTestFinished(() => {
      loading = false;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await applications.deploy(spec('dep-2', { VERSION: 'two' }));
    expect(processGroupAlive(first.pid as number)).toBe(false);

    await expect(applications.deploy(spec('dep-3', { VERSION: 'three', CRASH_AT_START: 'yes' }))).rejects.toThrow(/svc-web\.dep-3 exited with code 1 before it was ready\ncannot connect to the database/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    loading = false;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect([...seen].sort()).toEqual(['one', 'two']);
    expect(applications.instance('svc-web')).toMatchObject({ name: 'svc-web.dep-2', status: 'RUNNING', pid: second.pid });
    expect(JSON.parse((await get(hostname)).body).version).toBe('two');

    // The agent restarts: its successor finds the instance from the pid file (port included) and routes to it.
    supervisor.detachAll();
    proxy.removeRoute('svc-web');
    supervisor = new ProcessSupervisor({ stateDir: stateDir(), logPollMs: 50 });
    const successor = new LocalApplications({ supervisor, proxy });
    expect(await successor.adopt(spec('dep-2', { VERSION: 'two' }))).toMatchObject({ status: 'RUNNING', pid: second.pid, adopted: true });
    expect(JSON.parse((await get(hostname)).body).version).toBe('two');

    await successor.stop('svc-web');
    expect(await get(hostname)).toMatchObject({ status: 404 });
    expect(processGroupAlive(second.pid as number)).toBe(false);
    expect(await successor.adopt(spec('dep-2', { VERSION: 'two' }))).toBeUndefined();
  });
});
