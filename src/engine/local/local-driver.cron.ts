import { createRequire } from 'node:module';
import { dirname, sep } from 'node:path';
import type { ProcessSpec } from './process-supervisor.ts';

/**
 * Cron jobs on the local cluster. The schedule is not kept by the agent but by a small supervised Node process per
 * job (the cron runner, `cron-<serviceId>`) that fires the schedule with croner and runs the job's command for each
 * firing. So the schedule, like any workload, outlives an agent restart (the runner is re-adopted, and lines printed
 * meanwhile arrive late rather than never), and the job's variables, secrets included, live only in that process's
 * environment, never on disk.
 *
 * Each run: `/bin/sh -c <command>` in the job's source directory with the runner's environment, its output on the
 * runner's stdout/stderr (the supervisor's log files, then the workload logs); the runner says when a run starts and
 * how it ended on lines starting with CRON_MARKER (the driver sends them as `system` lines). A firing while the
 * previous run still runs is skipped (Kubernetes' concurrencyPolicy Forbid); a run longer than the job's
 * max_duration_seconds is killed with everything it started: each run is a process group of its own, which the
 * runner kills whole at the limit and when it is stopped itself (SIGTERM: the supervisor's stop). Confined, the
 * runner and its runs share one PID namespace, which ends with the runner even when it is killed outright.
 */
export const CRON_MARKER = 'slipway-cron: ';

/** CommonJS, run with `node -e`; its arguments: croner's path, pattern, timezone, command, max seconds. */
const CRON_RUNNER_SCRIPT = `
const { spawn } = require('node:child_process');
const [cronerPath, pattern, timezone, command, maxSeconds] = process.argv.slice(1);
const { Cron } = require(cronerPath);
const say = (text) => process.stdout.write(${JSON.stringify(CRON_MARKER)} + text + '\\n');
let count = 0;
let current;
let running;
const killRun = (child) => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} };
process.on('SIGTERM', () => { if (running !== undefined) killRun(running); process.exit(143); });
new Cron(pattern, { timezone }, () => {
  if (current !== undefined) { say('run skipped: run ' + current + ' is still running'); return; }
  const run = ++count;
  const started = Date.now();
  current = run;
  say('run ' + run + ' started');
  const child = spawn('/bin/sh', ['-c', command], { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  running = child;
  const timer = setTimeout(() => { say('run ' + run + ' ran longer than ' + maxSeconds + ' s: killed'); killRun(child); }, Number(maxSeconds) * 1000);
  child.on('error', (error) => say('run ' + run + ' could not start: ' + error.message));
  child.on('close', (code, signal) => {
    clearTimeout(timer);
    current = undefined;
    running = undefined;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    say('run ' + run + (code === null ? ' was killed by ' + signal : ' exited with code ' + code) + ' after ' + seconds + ' s');
  });
});
say('schedule "' + pattern + '" (' + timezone + ') armed');
`;

export interface CronRunnerSpec {
  /** The job's confinement (workload-sandbox.ts): the runner, and so every run, inside it. */
  confine?: (command: readonly string[]) => string[];
  processName: string;
  sourceDir: string;
  pattern: string;
  timezone: string;
  command: string;
  maxDurationSeconds: number;
  env: Readonly<Record<string, string>>;
}

/** The scheduler package's directory: what a confined cron runner must be able to read besides its own files. */
export function cronerPackageDirectory(): string {
  const entry = createRequire(import.meta.url).resolve('croner');
  const marker = `${sep}node_modules${sep}croner${sep}`;
  const at = entry.lastIndexOf(marker);
  return at === -1 ? dirname(entry) : entry.slice(0, at + marker.length - 1);
}

export function cronRunnerProcess(spec: CronRunnerSpec): ProcessSpec {
  const cronerPath = createRequire(import.meta.url).resolve('croner');
  return {
    name: spec.processName,
    command: [process.execPath, '-e', CRON_RUNNER_SCRIPT, '--', cronerPath, spec.pattern, spec.timezone, spec.command, String(spec.maxDurationSeconds)],
    cwd: spec.sourceDir,
    env: spec.env,
    ...(spec.confine === undefined ? {} : { confine: spec.confine }),
  };
}
