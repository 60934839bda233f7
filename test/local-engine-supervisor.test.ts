import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findFreePort } from '../src/lib/free-port.ts';
import { httpProbe } from '../src/engine/local/probes.ts';
import { isProcessAlive, processGroupAlive } from '../src/engine/local/process-table.ts';
import { baseEnvironment, ProcessSupervisor, type LogLine, type ProcessSpec, type ProcessState } from '../src/engine/local/process-supervisor.ts';
import { ProcessStartError } from '../src/engine/local/supervised-process.ts';

/**
 * The supervisor against real processes: a small Node HTTP server written to a temporary directory, started,
 * probed, crashed, stopped and re-adopted by a second supervisor after the first one's process was killed -9.
 */

const APP = `
const http = require('node:http');
const port = Number(process.env.PORT);
const server = http.createServer((req, res) => {
  if (req.url === '/crash') { res.end('bye'); setTimeout(() => process.exit(7), 5); return; }
  console.log('request ' + req.url);
  res.end(process.env.GREETING + ' from ' + process.pid);
});
server.listen(port, '127.0.0.1', () => { console.log('listening on ' + port); console.error('ready on stderr'); });
`;

let dir: string;
const logs: { name: string; line: LogLine }[] = [];
const statuses: ProcessState[] = [];
let supervisor: ProcessSupervisor;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'slipway-supervisor-'));
  await writeFile(path.join(dir, 'app.cjs'), APP);
  supervisor = new ProcessSupervisor({
    stateDir: path.join(dir, 'state'),
    logPollMs: 50,
    onLog: (name, line) => logs.push({ name, line }),
    onStatus: (state) => statuses.push(state),
  });
});

afterAll(async () => {
  await supervisor.stopAll();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Whether the workload of `spec` still answers on its port. The port itself is free once the workload is gone, so with
 * other suites running an unrelated server may have bound it since: what matters is that it is not this workload
 * answering (its greeting names it).
 */
async function workloadAnswers(spec: ProcessSpec): Promise<boolean> {
  const answer = await fetch(`http://127.0.0.1:${spec.port}/`, { signal: AbortSignal.timeout(5_000) }).then((response) => response.text(), () => '');
  return answer.includes(`${spec.env.GREETING} from`);
}

async function appSpec(name: string, overrides: Partial<ProcessSpec> = {}): Promise<ProcessSpec> {
  return {
    name,
    command: [process.execPath, 'app.cjs'],
    cwd: dir,
    env: { ...baseEnvironment(), GREETING: `hello ${name}` },
    port: await findFreePort(),
    readiness: { kind: 'http', path: '/health' },
    startTimeoutMs: 10_000,
    restart: { initialDelayMs: 100, maxDelayMs: 1_000, resetAfterMs: 60_000 },
    ...overrides,
  };
}

/** Checks `condition` every 25 ms until it holds; at the deadline it fails quoting the condition. */
async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  await vi.waitFor(() => expect(condition(), `condition not met in time: ${String(condition)}`).toBe(true), { timeout: timeoutMs, interval: 25 });
}

const linesOf = (name: string): string[] => logs.filter((entry) => entry.name === name).map((entry) => `${entry.line.stream}: ${entry.line.line}`);

describe('process supervisor', () => {
  it('starts a process with PORT and its environment only, waits for readiness, captures both streams, stops leaving nothing behind', async () => {
    process.env.SLIPWAY_AGENT_SECRET_FOR_TEST = 'must-not-leak';
    const spec = await appSpec('web-1', { command: [process.execPath, '-e', `console.log('secret=' + process.env.SLIPWAY_AGENT_SECRET_FOR_TEST); require('./app.cjs')`] });
    const state = await supervisor.start(spec);
    delete process.env.SLIPWAY_AGENT_SECRET_FOR_TEST;
    expect(state.status).toBe('RUNNING');
    expect(state.pid).toBeGreaterThan(0);
    const response = await fetch(`http://127.0.0.1:${spec.port}/hello`);
    expect(await response.text()).toBe(`hello web-1 from ${state.pid}`);
    await until(() => linesOf('web-1').includes('stdout: request /hello'));
    expect(linesOf('web-1')).toEqual(expect.arrayContaining(['stdout: secret=undefined', `stdout: listening on ${spec.port}`, 'stderr: ready on stderr']));
    expect(statuses.filter((entry) => entry.name === 'web-1').map((entry) => entry.status)).toEqual(['STARTING', 'RUNNING']);

    await supervisor.stop('web-1');
    expect(isProcessAlive(state.pid as number)).toBe(false);
    expect(processGroupAlive(state.pid as number)).toBe(false);
    expect(await workloadAnswers(spec)).toBe(false);
    expect(statuses.filter((entry) => entry.name === 'web-1').map((entry) => entry.status)).toEqual(['STARTING', 'RUNNING', 'STOPPING', 'STOPPED']);
    expect(supervisor.state('web-1')).toBeUndefined();
  });

  it('restarts a crashed process with backoff and shows it in the status', async () => {
    const spec = await appSpec('web-crash');
    const first = await supervisor.start(spec);
    await fetch(`http://127.0.0.1:${spec.port}/crash`);
    await until(() => statuses.some((entry) => entry.name === 'web-crash' && entry.status === 'BACKOFF'));
    const backoff = statuses.find((entry) => entry.name === 'web-crash' && entry.status === 'BACKOFF');
    expect(backoff?.message).toMatch(/exited with code 7; restarting in 100 ms/);
    await until(() => supervisor.state('web-crash')?.status === 'RUNNING' && supervisor.state('web-crash')?.pid !== first.pid);
    const restarted = supervisor.state('web-crash');
    expect(restarted?.restarts).toBe(1);
    expect(restarted?.lastExit?.code).toBe(7);
    expect(await httpProbe('127.0.0.1', spec.port as number, '/')).toBe(true);

    // A second crash waits twice as long.
    await fetch(`http://127.0.0.1:${spec.port}/crash`);
    await until(() => supervisor.state('web-crash')?.status === 'BACKOFF');
    expect(supervisor.state('web-crash')?.message).toMatch(/restarting in 200 ms/);
    await until(() => supervisor.state('web-crash')?.status === 'RUNNING');
    expect(supervisor.state('web-crash')?.restarts).toBe(2);
    await supervisor.stop('web-crash');
  });

  it('fails a first start that exits before it is ready, with its output, and leaves nothing running', async () => {
    const spec = await appSpec('web-broken', { command: [process.execPath, '-e', "console.error('missing DATABASE_URL'); process.exit(3)"] });
    const error = await supervisor.start(spec).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProcessStartError);
    expect((error as Error).message).toContain('web-broken exited with code 3 before it was ready');
    expect((error as ProcessStartError).output).toContain('missing DATABASE_URL');
    expect(supervisor.state('web-broken')?.status).toBe('FAILED');
  });

  it('runs an exec readiness check in the workload\'s directory with its environment, and counts it ready once it exits 0', async () => {
    // The process says it is ready by writing a file named after its PORT, half a second after it started.
    const spec = await appSpec('web-exec', {
      command: [process.execPath, '-e', "setTimeout(() => require('fs').writeFileSync('ready-' + process.env.PORT, ''), 500); setInterval(() => {}, 1000)"],
      readiness: { kind: 'exec', command: ['/bin/sh', '-c', 'test -f "ready-$PORT" && test "$GREETING" = "hello web-exec"'] },
    });
    const started = Date.now();
    const state = await supervisor.start(spec);
    expect(state.status).toBe('RUNNING');
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    await supervisor.stop('web-exec');

    const never = await appSpec('web-exec-never', { command: ['/bin/sh', '-c', 'sleep 30 & wait'], readiness: { kind: 'exec', command: ['false'] }, startTimeoutMs: 600, stopTimeoutMs: 500 });
    const error = await supervisor.start(never).catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(/web-exec-never was not ready within 1s \(the command false\)/);
  });

  it('gives up on a process that never becomes ready and kills its whole group', async () => {
    const spec = await appSpec('web-deaf', {
      // A shell whose child sleeps and never listens: the readiness check cannot pass.
      command: ['/bin/sh', '-c', 'sleep 30 & wait'],
      startTimeoutMs: 600,
      stopTimeoutMs: 500,
    });
    const starting = supervisor.start(spec).catch((caught: unknown) => caught);
    const pidFile = path.join(dir, 'state', 'web-deaf.pid.json');
    // The pid file exists from the spawn until the start is given up (600 ms later).
    const pid = await vi.waitFor(
      async () => {
        const recorded = await readFile(pidFile, 'utf8').then((text) => (JSON.parse(text) as { pid: number }).pid, () => undefined);
        expect(recorded, `the pid file ${pidFile}`).toBeDefined();
        return recorded as number;
      },
      { timeout: 10_000, interval: 10 },
    );
    const error = await starting;
    expect((error as Error).message).toMatch(/web-deaf was not ready within 1s \(HTTP GET 127\.0\.0\.1:\d+\/health\)/);
    expect(processGroupAlive(pid)).toBe(false);
    expect(await readFile(pidFile, 'utf8').catch(() => 'removed')).toBe('removed');
  });

  it('stops a process that ignores SIGTERM with SIGKILL after the stop timeout, children included', async () => {
    const spec = await appSpec('stubborn', {
      command: ['/bin/sh', '-c', `trap '' TERM; ${process.execPath} -e "process.on('SIGTERM', () => {}); require('./app.cjs')" & wait`],
      stopTimeoutMs: 300,
    });
    const state = await supervisor.start(spec);
    const started = Date.now();
    await supervisor.stop('stubborn');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(processGroupAlive(state.pid as number)).toBe(false);
    expect(await workloadAnswers(spec)).toBe(false);
  });

  it('kills a workload whose process group holds more than its memory limit, says so, and restarts it', async () => {
    // Ready first, then 10 MB more every 50 ms held by the leader and a child it forked: the limit counts the group.
    const leaky = `
      const { fork } = require('node:child_process');
      if (process.argv[2] === 'child') { const held = []; setInterval(() => held.push(Buffer.alloc(10 * 1024 * 1024, 1)), 50); }
      else { require('./app.cjs'); fork(__filename, ['child']); const held = []; setInterval(() => held.push(Buffer.alloc(10 * 1024 * 1024, 1)), 50); }`;
    await writeFile(path.join(dir, 'leaky.cjs'), leaky);
    const limited = await appSpec('web-limited', { command: [process.execPath, 'leaky.cjs'], memoryLimitMb: 256 });
    const started = await supervisor.start(limited);
    expect(started.status).toBe('RUNNING');
    await until(() => statuses.some((state) => state.name === 'web-limited' && state.status === 'BACKOFF'));
    const backoff = statuses.find((state) => state.name === 'web-limited' && state.status === 'BACKOFF');
    expect(backoff?.message).toMatch(/^web-limited was killed for holding \d+ MB, more than its memory limit of 256 MB; restarting in/);
    expect(backoff?.lastExit?.signal).toBe('SIGKILL');
    expect(processGroupAlive(started.pid as number)).toBe(false);
    await supervisor.stop('web-limited');

    // The same program with room for what it holds keeps running: a runtime's reserved address space is no memory.
    const hungry = "const held = []; for (let i = 0; i < 20; i++) held.push(Buffer.alloc(10 * 1024 * 1024, 1)); require('./app.cjs')";
    const roomy = await appSpec('web-roomy', { command: [process.execPath, '-e', hungry], memoryLimitMb: 512 });
    expect((await supervisor.start(roomy)).status).toBe('RUNNING');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(supervisor.state('web-roomy')?.status).toBe('RUNNING');
    await supervisor.stop('web-roomy');
  });

  it('re-adopts a running process after its agent was killed -9, following its logs from where they were read', async () => {
    const spec = await appSpec('web-adopted');
    const stateDir = path.join(dir, 'agent-state');
    const script = path.join(dir, 'agent.mts');
    await writeFile(script, `
import { ProcessSupervisor } from ${JSON.stringify(path.resolve('src/engine/local/process-supervisor.ts'))};
const supervisor = new ProcessSupervisor({ stateDir: ${JSON.stringify(stateDir)} });
const state = await supervisor.start(${JSON.stringify(spec)});
console.log('PID ' + state.pid);
setInterval(() => undefined, 1000);
`);
    const agent = spawn(process.execPath, [script], { cwd: path.resolve('.'), stdio: ['ignore', 'pipe', 'inherit'] });
    const pid = await new Promise<number>((resolve, reject) => {
      let output = '';
      agent.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /PID (\d+)/.exec(output);
        if (match?.[1] !== undefined) resolve(Number(match[1]));
      });
      agent.once('exit', (code) => reject(new Error(`agent exited with ${code}: ${output}`)));
    });
    agent.kill('SIGKILL');
    await new Promise((resolve) => agent.once('exit', resolve));
    expect(isProcessAlive(pid)).toBe(true);
    await fetch(`http://127.0.0.1:${spec.port}/while-no-agent`);

    const adoptedLogs: string[] = [];
    const next = new ProcessSupervisor({ stateDir, logPollMs: 50, livenessPollMs: 50, onLog: (_name, line) => adoptedLogs.push(line.line) });
    const adopted = await next.adopt(spec);
    expect(adopted).toMatchObject({ status: 'RUNNING', pid, adopted: true });
    await fetch(`http://127.0.0.1:${spec.port}/after-adoption`);
    await until(() => adoptedLogs.includes('request /after-adoption'));
    // The first agent died before it saved an offset past its start, so the lines printed meanwhile arrive too, once.
    expect(adoptedLogs.filter((line) => line === 'request /while-no-agent')).toHaveLength(1);

    // A crash of an adopted process (not a child: seen by polling) restarts it like any other.
    await fetch(`http://127.0.0.1:${spec.port}/crash`);
    await until(() => next.state('web-adopted')?.status === 'RUNNING' && next.state('web-adopted')?.pid !== pid);
    expect(next.state('web-adopted')?.restarts).toBe(1);
    await next.stop('web-adopted');
    expect(await workloadAnswers(spec)).toBe(false);
  });

  it('stops a workload a previous agent left running even without adopting it', async () => {
    const stateDir = path.join(dir, 'orphan-state');
    const first = new ProcessSupervisor({ stateDir });
    const spec = await appSpec('web-orphan');
    const state = await first.start(spec);
    first.detachAll();
    const next = new ProcessSupervisor({ stateDir });
    await next.stop('web-orphan');
    expect(processGroupAlive(state.pid as number)).toBe(false);
    expect(await workloadAnswers(spec)).toBe(false);
    expect(next.recorded('web-orphan')).toBeUndefined();
  });

  it('does not adopt a pid that now belongs to another process, nor a process started from another spec', async () => {
    const spec = await appSpec('web-reused');
    const stateDir = path.join(dir, 'state');
    await writeFile(path.join(stateDir, 'web-reused.pid.json'), JSON.stringify({ pid: process.pid, startTime: '1', fingerprint: 'x', startedAt: new Date().toISOString(), offsets: { stdout: 0, stderr: 0 } }));
    expect(await supervisor.adopt(spec)).toBeUndefined();
    expect(isProcessAlive(process.pid)).toBe(true);

    const running = await supervisor.start(spec);
    const detachedState = path.join(dir, 'state');
    supervisor.detachAll();
    const other = new ProcessSupervisor({ stateDir: detachedState });
    expect(await other.adopt({ ...spec, env: { ...spec.env, GREETING: 'changed' } })).toBeUndefined();
    expect(isProcessAlive(running.pid as number)).toBe(false);
    supervisor = new ProcessSupervisor({ stateDir: path.join(dir, 'state') });
  });
});
