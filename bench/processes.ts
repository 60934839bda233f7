import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';

/**
 * Child processes of the benchmark. Every server under test runs in a child process of its own, so the load
 * generator (autocannon, in the bench process) never shares an event loop with it.
 */

const runFile = promisify(execFile);

/** Enough of a child's output to explain why it failed, without holding all of it. */
const OUTPUT_TAIL_CHARS = 8_000;
const READY_TIMEOUT_MS = 30_000;
/** main.ts drains in-flight requests for up to 10 s on SIGTERM; after that the child is killed. */
const STOP_TIMEOUT_MS = 12_000;

export interface ServerProcess {
  name: string;
  baseUrl: string;
  /** The child's process id (a fault-injecting bench signals it directly). */
  pid: number | undefined;
  /** CPU time (user + system) the process has used so far, in microseconds; undefined where /proc is absent. */
  cpuMicros(): number | undefined;
  /** Idempotent: SIGTERM, then SIGKILL if the process has not exited in time. */
  stop(): Promise<void>;
}

/**
 * Every child from the moment it is spawned until it exits, so an interrupted run (Ctrl-C, an error while a
 * server is still starting or a CLI command still running) leaves none behind.
 */
const liveChildren = new Set<ChildProcess>();
let stopping = false;

/** Keeps a child in the set stopped on clean-up, from its spawn until it exits. */
export function trackChild<T extends ChildProcess>(child: T): T {
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
  return child;
}

function refuseWhileStopping(): void {
  if (stopping) throw new Error('the benchmark is stopping; no new process is started');
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, 'exit');
  child.kill('SIGTERM');
  // The timer must not keep the bench alive once the child has gone.
  const timedOut = await Promise.race([exit.then(() => false), sleep(STOP_TIMEOUT_MS, true, { ref: false })]);
  if (timedOut && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await exit;
  }
}

/** Stops every child still running and refuses to start new ones. */
export async function stopAllChildren(): Promise<void> {
  stopping = true;
  await Promise.all([...liveChildren].map(stopChild));
}

/** Kernel clock ticks per second, the unit of utime and stime in /proc/<pid>/stat. */
function clockTicksPerSecond(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}

let ticksPerSecond: number | undefined;

/**
 * On a machine whose cores the servers share with the load generator (and with anything else running),
 * requests/s moves with the neighbours; the CPU time a server spends per request barely does.
 */
export function processCpuMicros(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the parenthesised command name, which may itself contain spaces: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  ticksPerSecond ??= clockTicksPerSecond();
  return ((utime + stime) / ticksPerSecond) * 1e6;
}

/** A port nothing listens on right now (the OS picks it; the child binds it a moment later). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('could not obtain a free TCP port');
  return address.port;
}

/**
 * Starts `node <entry>` (Node strips the types) with the given environment and waits until GET readyPath answers 2xx.
 * A child that exits first fails the start with the tail of its output.
 */
export async function startServerProcess(options: {
  name: string;
  entry: string;
  cwd: string;
  env: Record<string, string>;
  host: string;
  port: number;
  readyPath: string;
  nodeArgs?: string[];
  /** How long the child may take to answer readyPath (READY_TIMEOUT_MS by default; a restart under load takes longer). */
  readyTimeoutMs?: number;
}): Promise<ServerProcess> {
  refuseWhileStopping();
  const child = trackChild(
    spawn(process.execPath, [...(options.nodeArgs ?? []), options.entry], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const stop = (): Promise<void> => stopChild(child);

  const baseUrl = `http://${options.host}:${options.port}`;
  const readyTimeoutMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exited) {
      throw new Error(`${options.name} exited before it was ready (code ${child.exitCode}, signal ${child.signalCode}):\n${output}`);
    }
    try {
      const response = await fetch(`${baseUrl}${options.readyPath}`);
      await response.arrayBuffer();
      if (response.ok) {
        const pid = child.pid;
        return { name: options.name, baseUrl, pid, stop, cpuMicros: () => (pid === undefined || exited ? undefined : processCpuMicros(pid)) };
      }
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${options.name} was not ready within ${readyTimeoutMs} ms:\n${output}`);
    }
    await sleep(100);
  }
}

/** Runs `node <script> ...args` to completion and returns its standard output; a non-zero exit throws with stderr. */
export async function runNodeScript(script: string, args: string[], options: { cwd: string; env: Record<string, string> }): Promise<string> {
  refuseWhileStopping();
  try {
    const running = runFile(process.execPath, [script, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
    });
    trackChild(running.child);
    const { stdout } = await running;
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr;
    throw new Error(`${script} ${args.join(' ')} failed: ${typeof stderr === 'string' ? stderr : String(error)}`);
  }
}

/**
 * One benchmark run's scaffolding. Every temporary file lives under one scratch directory, created first and
 * removed last; clean-up steps run in reverse order after every child process was stopped. Ctrl-C (or SIGTERM)
 * aborts `signal`: load in progress stops, children are stopped, no new one starts, and the run unwinds through the
 * same clean-up as a success or an error; a second Ctrl-C exits at once.
 */
export interface BenchRun {
  readonly scratchDir: string;
  readonly signal: AbortSignal;
  onCleanUp(undo: () => Promise<unknown>): void;
  /** Runs `main`, reports its failure (not after an interruption: that failure is on purpose), then cleans up. */
  run(main: () => Promise<void>): Promise<void>;
}

export function startBenchRun(prefix: string): BenchRun {
  const interruption = new AbortController();
  const scratchDir = mkdtempSync(path.join(tmpdir(), prefix));
  const cleanups: (() => Promise<unknown>)[] = [() => rm(scratchDir, { recursive: true, force: true })];

  async function cleanUp(): Promise<void> {
    try {
      await stopAllChildren();
    } catch (error) {
      process.stderr.write(`bench: stopping child processes failed: ${String(error)}\n`);
    }
    for (let undo = cleanups.pop(); undo !== undefined; undo = cleanups.pop()) {
      try {
        await undo();
      } catch (error) {
        process.stderr.write(`bench: clean-up step failed: ${String(error)}\n`);
      }
    }
  }

  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.on(signal, () => {
      if (interruption.signal.aborted) process.exit(code);
      process.exitCode = code;
      process.stderr.write(`\nbench: ${signal}, stopping servers and removing temporary files\n`);
      interruption.abort(new Error(`interrupted by ${signal}`));
      void stopAllChildren();
    });
  }

  return {
    scratchDir,
    signal: interruption.signal,
    onCleanUp: (undo) => void cleanups.push(undo),
    async run(main) {
      try {
        await main();
      } catch (error) {
        if (!interruption.signal.aborted) {
          process.exitCode = 1;
          process.stderr.write(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
        }
      } finally {
        await cleanUp();
      }
    },
  };
}

/**
 * A scratch database on the PostgreSQL server of `serverUrl`, named `<prefix>_<pid>_<ms>`, dropped WITH (FORCE) by
 * the run's clean-up. The drop is registered before CREATE DATABASE, so an interruption while it runs cannot leave it
 * behind.
 */
export async function scratchPostgresDatabase(run: BenchRun, serverUrl: string, prefix: string): Promise<{ url: string; name: string }> {
  const name = `${prefix}_${process.pid}_${Date.now()}`;
  run.onCleanUp(async () => {
    const dropper = new pg.Client({ connectionString: serverUrl });
    await dropper.connect();
    try {
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await dropper.end();
    }
  });
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), name };
}
