import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ReadinessCheck } from './probes.ts';
import { MemorySampler } from './memory-sampler.ts';
import { isProcessAlive, processGroupAlive, sendSignal } from './process-table.ts';
import type { OutputStream, RunAs } from './run-command.ts';
import { GROUP_EXIT_WAIT_MS, NAME_PATTERN, ORPHAN_STOP_TIMEOUT_MS, sleep, SupervisedProcess, type PidRecord } from './supervised-process.ts';

/**
 * The process supervisor: runs long-lived workloads (application instances, database servers) as child processes
 * of the agent and keeps them running.
 *
 * Model. A workload is known by a `name` chosen by the caller (an instance of a deployment, a database server). It
 * runs in a process group of its own (so stopping it ends everything it started), with stdout and stderr appended
 * to files under the state directory (so it survives the agent: a pipe would break when the agent dies). A pid file
 * beside them records the pid, the kernel's start time of that pid (a reused pid is not mistaken for the workload)
 * and a fingerprint of the spec; a new agent re-adopts a live workload from it (`adopt`).
 *
 * Statuses: STARTING (spawned, readiness check not yet passed) → RUNNING; a crash of a RUNNING workload → BACKOFF
 * (restart after a delay doubling up to a cap, reset after a long enough healthy run) → STARTING …; STOPPING →
 * STOPPED; FAILED when the first start fails (the caller reports a deployment error and nothing is left running),
 * or when restarts are exhausted or disabled.
 */
export type SupervisedStatus = 'STARTING' | 'RUNNING' | 'BACKOFF' | 'STOPPING' | 'STOPPED' | 'FAILED';

export interface RestartPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  /** A run at least this long resets the delay to `initialDelayMs`. */
  resetAfterMs: number;
  /** Restarts in a row (without a long enough run between them) before giving up as FAILED; unlimited if absent. */
  maxRestarts?: number;
}

export interface ProcessSpec {
  /** Unique per supervisor; letters, digits, `.`, `_`, `-` (it names files). */
  name: string;
  /** argv. Shell command lines are run as `['/bin/sh', '-c', line]` by the caller. */
  command: readonly string[];
  cwd: string;
  /** The whole environment of the process: nothing of the agent's own environment leaks in (see baseEnvironment). */
  env: Readonly<Record<string, string>>;
  /** Given to the process as PORT, and the port the readiness check probes unless it names another. */
  port?: number;
  /** Without a check, the process is ready once it survived `settleMs`. */
  readiness?: ReadinessCheck;
  startTimeoutMs?: number;
  settleMs?: number;
  stopTimeoutMs?: number;
  /** SIGTERM unless the program wants another (PostgreSQL's fast shutdown is SIGINT). */
  stopSignal?: NodeJS.Signals;
  /** Whether the stop signal goes to the whole group (default) or to the leader only, which stops its own children. */
  signalGroup?: boolean;
  restart?: RestartPolicy | false;
  runAs?: RunAs;
  /**
   * Wraps an argv in the workload's confinement (workload-sandbox.ts): the command itself and its exec readiness
   * checks run through it.
   */
  confine?: (command: readonly string[]) => string[];
  /**
   * The most memory the workload's process group may hold resident, in MB. The supervisor sums the group's resident
   * sizes every `memoryPollMs` and kills the group (SIGKILL) once they pass it, as the kernel's OOM killer would in a
   * cgroup; the restart policy then applies and the exit says why. A limit on address space (RLIMIT_AS/RLIMIT_DATA)
   * is no memory limit for today's runtimes: V8 reserves more than half a gigabyte of address space at start
   * (Node 24: ~560 MB of VmData for 40 MB resident), the Go runtime reserves arenas, so such a limit stops a small
   * program from starting at all. Where `memoryCgroup` is given, the kernel holds the limit instead and nothing is
   * sampled.
   */
  memoryLimitMb?: number;
  /**
   * The control groups the workload joins (through `confine`) and that hold its memory limit (workload-cgroups.ts):
   * their OOM-kill count, read when an instance ends, says whether the kernel killed it for the limit.
   */
  memoryCgroup?: { oomKills(): number };
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: string;
}

export interface ProcessState {
  name: string;
  status: SupervisedStatus;
  pid: number | undefined;
  /** Restarts after crashes since the last start. */
  restarts: number;
  startedAt: string | undefined;
  lastExit: ProcessExit | undefined;
  /** Why the status is what it is, for a status page: "exited with code 1; restarting in 2s". */
  message: string | undefined;
  /** True when this agent found the process running (re-adoption) rather than starting it. */
  adopted: boolean;
}

export interface LogLine {
  stream: OutputStream;
  line: string;
  at: Date;
}

export interface SupervisorOptions {
  /** Where pid files and log files live; kept across agent restarts. */
  stateDir: string;
  /** Called from the supervisor's timers; must not throw (an error thrown is shown in the status message). */
  onLog?: (name: string, line: LogLine) => void;
  onStatus?: (state: ProcessState) => void;
  /** How often log files are read. */
  logPollMs?: number;
  /** How often a re-adopted process (not a child, so no exit event) is checked for life. */
  livenessPollMs?: number;
  /** A log file larger than this is truncated once read. */
  maxLogBytes?: number;
  /** How often the resident memory of a workload with a memory limit is summed. */
  memoryPollMs?: number;
}

/** A start that did not reach RUNNING; `output` is the end of what the process printed. */

/**
 * PATH, HOME, locale and temp dir of the agent: what a workload needs to find its tools, and nothing secret. npm,
 * which builds and starts most applications here, is told not to call the registry to announce a newer npm or
 * funding requests: a build reaches the network only for the dependencies it declares.
 */
export function baseEnvironment(): Record<string, string> {
  const env: Record<string, string> = { NPM_CONFIG_UPDATE_NOTIFIER: 'false', NPM_CONFIG_FUND: 'false' };
  for (const key of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/** What the pid file of a workload says: enough for an agent to rebuild the spec it re-adopts with (its port). */
export interface ProcessRecord {
  pid: number;
  port: number | undefined;
  startedAt: string;
}

export class ProcessSupervisor {
  private readonly processes = new Map<string, SupervisedProcess>();
  private readonly options: ConstructorParameters<typeof SupervisedProcess>[1];

  constructor(options: SupervisorOptions) {
    this.options = {
      stateDir: options.stateDir,
      logPollMs: options.logPollMs ?? 200,
      livenessPollMs: options.livenessPollMs ?? 500,
      maxLogBytes: options.maxLogBytes ?? 16 * 1024 * 1024,
      memory: new MemorySampler(options.memoryPollMs ?? 500),
      onLog: options.onLog,
      onStatus: options.onStatus,
    };
    mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
  }

  private register(spec: ProcessSpec): SupervisedProcess {
    if (!NAME_PATTERN.test(spec.name)) throw new Error(`"${spec.name}" cannot name a supervised process`);
    if (spec.command.length === 0) throw new Error(`${spec.name} has no command`);
    if (spec.memoryLimitMb !== undefined && !(Number.isFinite(spec.memoryLimitMb) && spec.memoryLimitMb > 0)) throw new Error(`${spec.name}: the memory limit must be a positive number of MB`);
    const existing = this.processes.get(spec.name);
    if (existing?.active === true) throw new Error(`${spec.name} is already supervised (${existing.state().status})`);
    const supervised = new SupervisedProcess(spec, this.options);
    this.processes.set(spec.name, supervised);
    return supervised;
  }

  /**
   * Starts a workload and resolves with its state once it is RUNNING (readiness passed); rejects with
   * ProcessStartError otherwise, leaving nothing running. A live process from a previous agent with the same spec is
   * adopted instead of started twice; one with another spec is stopped first.
   */
  async start(spec: ProcessSpec): Promise<ProcessState> {
    const supervised = this.register(spec);
    if (!(await supervised.adopt())) await supervised.start();
    return supervised.state();
  }

  /** Re-adopts a workload a previous agent left running; undefined when it is gone (or not ready, and then ended). */
  async adopt(spec: ProcessSpec): Promise<ProcessState | undefined> {
    const supervised = this.register(spec);
    return (await supervised.adopt()) ? supervised.state() : undefined;
  }

  /** Stops a workload (stop signal, SIGKILL after the stop timeout); no process of its group is left. */
  /**
   * Stops a workload (stop signal, SIGKILL after the stop timeout); no process of its group is left. A workload this
   * agent does not supervise but whose pid file names a live process (left by a previous agent, never adopted) is
   * ended too: SIGTERM to its group, SIGKILL after 10 s.
   */
  async stop(name: string): Promise<void> {
    const supervised = this.processes.get(name);
    if (supervised !== undefined) {
      await supervised.stop();
      this.processes.delete(name);
      return;
    }
    if (!NAME_PATTERN.test(name)) return;
    const pidFile = join(this.options.stateDir, `${name}.pid.json`);
    let record: PidRecord;
    try {
      record = JSON.parse(readFileSync(pidFile, 'utf8')) as PidRecord;
    } catch {
      return;
    }
    if (isProcessAlive(record.pid, record.startTime)) {
      sendSignal(-record.pid, 'SIGTERM');
      const deadline = Date.now() + ORPHAN_STOP_TIMEOUT_MS;
      while (processGroupAlive(record.pid) && Date.now() < deadline) await sleep(50);
      sendSignal(-record.pid, 'SIGKILL');
      while (processGroupAlive(record.pid) && Date.now() < deadline + GROUP_EXIT_WAIT_MS) await sleep(20);
    }
    rmSync(pidFile, { force: true });
  }

  /** The pid file of `name`, whether or not its process still runs (adopt checks that). */
  recorded(name: string): ProcessRecord | undefined {
    if (!NAME_PATTERN.test(name)) return undefined;
    try {
      const record = JSON.parse(readFileSync(join(this.options.stateDir, `${name}.pid.json`), 'utf8')) as PidRecord;
      return { pid: record.pid, port: record.port ?? undefined, startedAt: record.startedAt };
    } catch {
      return undefined;
    }
  }

  state(name: string): ProcessState | undefined {
    return this.processes.get(name)?.state();
  }

  list(): ProcessState[] {
    return [...this.processes.values()].map((supervised) => supervised.state());
  }

  /** The files a workload's output is appended to (for a log download or a test). */
  logFiles(name: string): Record<OutputStream, string> {
    return { stdout: join(this.options.stateDir, `${name}.stdout.log`), stderr: join(this.options.stateDir, `${name}.stderr.log`) };
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.processes.keys()].map((name) => this.stop(name)));
  }

  /** Agent shutdown: workloads keep running and the next agent adopts them. */
  detachAll(): void {
    for (const supervised of this.processes.values()) supervised.detach();
    this.processes.clear();
  }
}
