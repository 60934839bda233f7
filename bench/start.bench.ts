import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, startBenchRun, trackChild } from './processes.ts';

/**
 * `npm run bench:start`: how long a newcomer waits.
 *   (a) cold start: a fresh data directory (migrations from nothing, a new key file), spawn → first 200 on GET /ips;
 *   (b) warm start: the same data directory again;
 *   (c) resident memory (VmRSS) of the server right after its first answer;
 *   and the server's CPU time (user + system) up to that answer, the figure that moves least with the neighbours;
 *   (d) `slipway --help` and `slipway admin bootstrap` (a new data directory each time), spawn → exit.
 * Medians of SLIPWAY_BENCH_STARTS runs (5) each, goals beside them. The server is started the way `npm start` starts
 * it (the command of package.json's start script, with this Node in place of `node`), every SLIPWAY_* of the
 * caller's shell blanked, on free ports; nothing else runs in this process while a child starts.
 *
 * SLIPWAY_BENCH_START_ROOT runs the same measurement against another checkout (the figures before a change, with
 * its own start script and CLI entry), SLIPWAY_BENCH_START_NODE with another Node binary: see docs/benchmarks.md.
 */

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = path.resolve(process.env.SLIPWAY_BENCH_START_ROOT?.trim() || HERE);
/** The Node that runs the server and the CLI: this one, unless SLIPWAY_BENCH_START_NODE names another binary. */
const NODE = process.env.SLIPWAY_BENCH_START_NODE?.trim() || process.execPath;
const RUNS = Math.max(1, Math.round(Number(process.env.SLIPWAY_BENCH_STARTS ?? 5)) || 5);
const HOST = '127.0.0.1';
const POLL_MS = 2;
const READY_TIMEOUT_MS = 60_000;

const GOALS = { coldMs: 600, warmMs: 400, rssMb: 150, helpMs: 250 };

/** The argv of package.json's start script, `node` replaced by this process's Node. */
function startCommand(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const script = pkg.scripts?.start;
  if (script === undefined) throw new Error(`${ROOT}/package.json has no start script`);
  const words = script.trim().split(/\s+/);
  if (words[0] === 'node') return [NODE, ...words.slice(1)];
  if (words[0] === 'tsx') return [NODE, '--import', 'tsx', ...words.slice(1)];
  throw new Error(`cannot run the start script "${script}" without a shell`);
}

/** The environment of every child: the caller's, without any SLIPWAY_* setting of its shell. */
function childEnvironment(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('SLIPWAY_')) env[name] = value;
  }
  return { ...env, SLIPWAY_LOG_LEVEL: 'warn', ...extra };
}

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU time (user + system) the process has used, in ms: steadier than wall time on a machine shared with others. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1000;
}

function residentMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kilobytes = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kilobytes / 1024;
}

interface StartFigures {
  ms: number;
  cpuMs: number;
  rssMb: number;
}

/** Spawns the server on a data directory and returns the time until GET /ips first answers 200, and its RSS then. */
async function timeStart(dataDir: string): Promise<StartFigures> {
  const [command, ...args] = startCommand();
  const port = await freePort();
  const appsPort = await freePort();
  const startedAt = performance.now();
  const child = trackChild(
    spawn(command as string, args, {
      cwd: ROOT,
      env: childEnvironment({ SLIPWAY_DATA_DIR: dataDir, SLIPWAY_HOST: HOST, SLIPWAY_PORT: String(port), SLIPWAY_APPS_PORT: String(appsPort) }),
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server exited before answering:\n${stderr}`);
      if (performance.now() - startedAt > READY_TIMEOUT_MS) throw new Error(`no answer within ${READY_TIMEOUT_MS} ms:\n${stderr}`);
      try {
        const response = await fetch(`http://${HOST}:${port}/ips`);
        await response.arrayBuffer();
        if (response.status === 200) {
          const ms = performance.now() - startedAt;
          return { ms, cpuMs: cpuMs(child.pid as number), rssMb: residentMb(child.pid as number) };
        }
      } catch {
        // Not listening yet.
      }
      await sleep(POLL_MS);
    }
  } finally {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
}

/** Runs the CLI to its end and returns its wall time; a non-zero exit fails the bench with its stderr. */
async function timeCli(args: string[], dataDir: string): Promise<number> {
  const startedAt = performance.now();
  const child = trackChild(
    spawn(NODE, [path.join(ROOT, 'bin/slipway.js'), ...args], {
      cwd: ROOT,
      env: childEnvironment({ SLIPWAY_DATA_DIR: dataDir }),
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const [code] = (await once(child, 'exit')) as [number | null];
  const ms = performance.now() - startedAt;
  if (code !== 0) throw new Error(`slipway ${args.join(' ')} exited with ${code}:\n${stderr}`);
  return ms;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function row(name: string, values: readonly number[], unit: string, goal: number | undefined): string {
  const figure = median(values);
  const verdict = goal === undefined ? '' : figure < goal ? `  < ${goal} ${unit}: met` : `  < ${goal} ${unit}: NOT MET`;
  const all = values.map((value) => value.toFixed(0)).join(', ');
  return `${name.padEnd(34)} ${figure.toFixed(0).padStart(6)} ${unit.padEnd(3)} (runs: ${all})${verdict}`;
}

const bench = startBenchRun('slipway-bench-start-');

await bench.run(async () => {
  let dirs = 0;
  const freshDir = (): string => {
    const dir = path.join(bench.scratchDir, `data-${++dirs}`);
    mkdirSync(dir);
    return dir;
  };
  process.stdout.write(
    `slipway start-up: ${ROOT === HERE ? 'this checkout' : ROOT}, ${cpus().length} cores, ` +
      `load ${loadavg()[0]?.toFixed(2)}, start: ${startCommand().join(' ')}\n`,
  );

  const cold: StartFigures[] = [];
  const warm: StartFigures[] = [];
  for (let run = 0; run < RUNS; run++) {
    bench.signal.throwIfAborted();
    const dataDir = freshDir();
    cold.push(await timeStart(dataDir));
    warm.push(await timeStart(dataDir));
  }
  const help: number[] = [];
  const bootstrap: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    bench.signal.throwIfAborted();
    help.push(await timeCli(['--help'], freshDir()));
    bootstrap.push(await timeCli(['admin', 'bootstrap', '--email', `admin${run}@example.com`, '--organization', 'Bench', '--json'], freshDir()));
  }

  process.stdout.write(
    [
      row('(a) cold start → first 200', cold.map((figures) => figures.ms), 'ms', GOALS.coldMs),
      row('(b) warm start → first 200', warm.map((figures) => figures.ms), 'ms', GOALS.warmMs),
      row('    CPU time to first 200 (cold)', cold.map((figures) => figures.cpuMs), 'ms', undefined),
      row('    CPU time to first 200 (warm)', warm.map((figures) => figures.cpuMs), 'ms', undefined),
      row('(c) RSS after first answer (warm)', warm.map((figures) => figures.rssMb), 'MB', GOALS.rssMb),
      row('    RSS after first answer (cold)', cold.map((figures) => figures.rssMb), 'MB', undefined),
      row('(d) slipway --help', help, 'ms', GOALS.helpMs),
      row('    slipway admin bootstrap', bootstrap, 'ms', undefined),
    ].join('\n') + '\n',
  );
});
