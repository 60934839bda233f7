import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The suite's guard against processes that outlive it (vitest globalSetup, vitest.config.ts): every process a test
 * file starts — its children, theirs, detached workloads and database servers included — is noted while the run goes
 * on, and a run after which one of them is still alive fails, naming each by its command line, after ending it.
 *
 * The test files run in vitest's worker processes (the forks pool of vitest.config.ts: children of the main process,
 * where this module runs), so what they start descends from a worker while the worker lives: /proc is read every
 * POLL_MS and each such descendant is remembered by pid and start time (a reused pid is not mistaken for it). A
 * workload started detached leads a process group; what its group holds is remembered too, so a child whose parent
 * exited first (a daemon's double fork) is not missed. A process that starts and loses its parent between two looks
 * (`sh -c 'server &'`) is found by its environment instead: the run's id, set here before the workers start, reaches
 * every process that inherits its environment, so after the last test any process holding it is the tests' too. The
 * workers themselves, and what the main process runs for itself, are not the tests' and are not counted. Linux only:
 * where /proc cannot be read, the guard does nothing.
 */

const POLL_MS = 200;
/** The variable that carries the run's id to every process that inherits the environment of a test. */
const RUN_VARIABLE = 'LEFTOVER_GUARD_RUN';
/** How long, after the last test, what is still ending (a SIGTERM'd server draining) may take before it counts. */
const GRACE_MS = 5_000;

interface ProcessStat {
  pid: number;
  parent: number;
  group: number;
  state: string;
  /** The kernel's start time of the process, in clock ticks since boot: with the pid, it names one process. */
  startTime: string;
}

interface Noted {
  pid: number;
  startTime: string;
  command: string;
}

function readStat(pid: number): ProcessStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [state, parent, group] = fields;
    const startTime = fields[19];
    if (state === undefined || parent === undefined || group === undefined || startTime === undefined) return undefined;
    return { pid, parent: Number(parent), group: Number(group), state, startTime };
  } catch {
    return undefined;
  }
}

function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

function environmentHolds(pid: number, entry: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(entry);
  } catch {
    return false;
  }
}

function allProcesses(): ProcessStat[] {
  const found: ProcessStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat !== undefined) found.push(stat);
  }
  return found;
}

/** A worker of this run: a child of the main process running vitest's worker entry. */
function isWorker(stat: ProcessStat, main: number): boolean {
  return stat.parent === main && /[\\/]vitest[\\/]dist[\\/]/.test(commandLineOf(stat.pid));
}

function keyOf(stat: Pick<ProcessStat, 'pid' | 'startTime'>): string {
  return `${stat.pid}:${stat.startTime}`;
}

function isAlive(noted: Noted): boolean {
  const stat = readStat(noted.pid);
  return stat !== undefined && stat.startTime === noted.startTime && stat.state !== 'Z';
}

class ProcessWatch {
  private readonly noted = new Map<string, Noted>();
  private readonly main: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(main: number) {
    this.main = main;
  }

  start(): void {
    this.scan();
    this.timer = setInterval(() => this.scan(), POLL_MS);
    this.timer.unref();
  }

  /** Notes every process that descends from a worker, or shares a process group led by one noted before. */
  scan(): void {
    const processes = allProcesses();
    const children = new Map<number, ProcessStat[]>();
    for (const stat of processes) {
      const siblings = children.get(stat.parent);
      if (siblings === undefined) children.set(stat.parent, [stat]);
      else siblings.push(stat);
    }
    const pending = processes.filter((stat) => isWorker(stat, this.main)).flatMap((worker) => children.get(worker.pid) ?? []);
    const leaders = new Set([...this.noted.values()].map((noted) => noted.pid));
    pending.push(...processes.filter((stat) => leaders.has(stat.group) && !isWorker(stat, this.main) && stat.pid !== this.main));
    const seen = new Set<number>();
    for (let stat = pending.pop(); stat !== undefined; stat = pending.pop()) {
      if (seen.has(stat.pid)) continue;
      seen.add(stat.pid);
      const key = keyOf(stat);
      if (!this.noted.has(key) && stat.state !== 'Z') this.noted.set(key, { pid: stat.pid, startTime: stat.startTime, command: commandLineOf(stat.pid) });
      pending.push(...(children.get(stat.pid) ?? []));
    }
  }

  /** Notes every live process whose environment holds `entry`, but the main process and what it started itself. */
  noteByEnvironment(entry: string): void {
    for (const stat of allProcesses()) {
      if (stat.pid === this.main || stat.parent === this.main || stat.state === 'Z' || !environmentHolds(stat.pid, entry)) continue;
      const key = keyOf(stat);
      if (!this.noted.has(key)) this.noted.set(key, { pid: stat.pid, startTime: stat.startTime, command: commandLineOf(stat.pid) });
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The noted processes still alive now, with their current command lines. */
  alive(): Noted[] {
    return [...this.noted.values()].filter(isAlive).map((noted) => ({ ...noted, command: commandLineOf(noted.pid) || noted.command }));
  }

  /** Ends a noted process that is still that process. */
  end(noted: Noted): void {
    if (!isAlive(noted)) return;
    try {
      process.kill(noted.pid, 'SIGKILL');
    } catch {
      // Ended meanwhile.
    }
  }
}

function procReadable(): boolean {
  try {
    readFileSync('/proc/self/stat', 'utf8');
    return true;
  } catch {
    return false;
  }
}

let watch: ProcessWatch | undefined;
let runEntry = '';

export function setup(): void {
  if (!procReadable()) return;
  const runId = `${process.pid}-${Date.now()}`;
  process.env[RUN_VARIABLE] = runId;
  runEntry = `${RUN_VARIABLE}=${runId}`;
  watch = new ProcessWatch(process.pid);
  watch.start();
}

export async function teardown(): Promise<void> {
  if (watch === undefined) return;
  watch.scan();
  watch.stop();
  watch.noteByEnvironment(runEntry);
  const deadline = Date.now() + GRACE_MS;
  let leftovers = watch.alive();
  while (leftovers.length > 0 && Date.now() < deadline) {
    await sleep(100);
    leftovers = watch.alive();
  }
  if (leftovers.length === 0) return;
  for (const leftover of leftovers) watch.end(leftover);
  throw new Error(
    `${leftovers.length} process(es) started by the tests were still running after the whole suite (ended now with SIGKILL); ` +
      `a test or its afterAll must stop what it starts:\n${leftovers.map((leftover) => `  pid ${leftover.pid}: ${leftover.command}`).join('\n')}`,
  );
}
