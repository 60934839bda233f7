import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../../lib/crypto.ts';
import { LineTail } from './lines.ts';
import { LogFollower } from './log-follower.ts';
import { describeReadinessCheck, runReadinessCheck, type ReadinessCheck } from './probes.ts';
import { MemorySampler } from './memory-sampler.ts';
import { isProcessAlive, processGroupAlive, processStartTime, sendSignal } from './process-table.ts';
import type { OutputStream, RunAs } from './run-command.ts';

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

export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialDelayMs: 500, maxDelayMs: 30_000, resetAfterMs: 60_000 };

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
export class ProcessStartError extends Error {
  readonly output: string;
  constructor(message: string, output: string) {
    super(output === '' ? message : `${message}\n${output}`);
    this.output = output;
    this.name = 'ProcessStartError';
  }
}

interface PidRecord {
  pid: number;
  port: number | undefined;
  startTime: string | undefined;
  fingerprint: string;
  startedAt: string;
  offsets: Record<OutputStream, number>;
}

type SupervisedOptions = Required<Omit<SupervisorOptions, 'onLog' | 'onStatus' | 'memoryPollMs'>> &
  Pick<SupervisorOptions, 'onLog' | 'onStatus'> & { memory: MemorySampler };

interface Instance {
  pid: number;
  startTime: string | undefined;
  startedAtMs: number;
  exited: Promise<Omit<ProcessExit, 'at'>>;
  hasExited: boolean;
  child: ChildProcess | undefined;
  stopWatching: () => void;
  /** Set when the group was killed for more than its memory limit: by the supervisor (what it held) or the kernel. */
  memoryExceeded?: { limitMb: number; residentMb: number } | { limitMb: number; byKernel: true };
  /** The OOM-kill count of its control groups when it started (memoryCgroup). */
  oomKillsAtStart?: number;
}

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const READINESS_INTERVAL_MS = 100;
const OFFSET_SAVE_INTERVAL_MS = 2_000;
const GROUP_EXIT_WAIT_MS = 3_000;
const ORPHAN_STOP_TIMEOUT_MS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** True when `promise` settles within `ms`; the timer is cleared either way, so no stop leaves a timer behind. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

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

function specFingerprint(spec: ProcessSpec): string {
  return sha256Hex(
    JSON.stringify({
      command: launchArgv(spec),
      cwd: spec.cwd,
      env: Object.entries(spec.env).sort(),
      port: spec.port ?? null,
      ...(spec.memoryLimitMb === undefined ? {} : { memoryLimitMb: spec.memoryLimitMb }),
    }),
  );
}

/** The argv actually spawned: the command, in its confinement when it has one. */
function launchArgv(spec: ProcessSpec): readonly string[] {
  return spec.confine === undefined ? spec.command : spec.confine(spec.command);
}

function describeExit(exit: Omit<ProcessExit, 'at'>, instance?: Instance): string {
  const memory = instance?.memoryExceeded;
  if (memory !== undefined && 'byKernel' in memory) return `was killed by the kernel for going over its memory limit of ${memory.limitMb} MB`;
  if (memory !== undefined) return `was killed for holding ${memory.residentMb} MB, more than its memory limit of ${memory.limitMb} MB`;
  if (exit.signal !== null) return `was killed by ${exit.signal}`;
  if (exit.code !== null) return `exited with code ${exit.code}`;
  return 'ended';
}

class SupervisedProcess {
  private status: SupervisedStatus = 'STOPPED';
  private instance: Instance | undefined;
  private restarts = 0;
  private delayMs: number;
  private lastExit: ProcessExit | undefined;
  private message: string | undefined;
  private adopted = false;
  private wanted: 'running' | 'stopped' = 'stopped';
  private restartTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private followers: Record<OutputStream, LogFollower> | undefined;
  private savedOffsets = '';
  private lastOffsetSave = 0;
  private readonly tail = new LineTail(20);
  private readonly fingerprint: string;

  readonly spec: ProcessSpec;
  private readonly options: SupervisedOptions;
  constructor(
    spec: ProcessSpec,
    options: SupervisedOptions,
  ) {
    this.spec = spec;
    this.options = options;
    this.fingerprint = specFingerprint(spec);
    this.delayMs = this.restartPolicy()?.initialDelayMs ?? 0;
  }

  state(): ProcessState {
    return {
      name: this.spec.name,
      status: this.status,
      pid: this.instance?.pid,
      restarts: this.restarts,
      startedAt: this.instance === undefined ? undefined : new Date(this.instance.startedAtMs).toISOString(),
      lastExit: this.lastExit,
      message: this.message,
      adopted: this.adopted,
    };
  }

  get active(): boolean {
    return this.status !== 'STOPPED' && this.status !== 'FAILED';
  }

  private file(suffix: string): string {
    return join(this.options.stateDir, `${this.spec.name}.${suffix}`);
  }

  private setStatus(status: SupervisedStatus, message?: string): void {
    this.status = status;
    this.message = message;
    this.options.onStatus?.(this.state());
  }

  /**
   * Runs timer and exit-event work: an error there (a full disk, a callback that throws) must not become an uncaught
   * exception that takes the agent and its other workloads down. It is shown in the status message instead.
   */
  private async guarded(work: () => void | Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.message = `supervision error: ${(error as Error).message}`;
    }
  }

  /** A method, not a field read, so the compiler does not assume it unchanged across an await. */
  private stillWanted(): boolean {
    return this.wanted === 'running';
  }

  private restartPolicy(): RestartPolicy | undefined {
    return this.spec.restart === false ? undefined : (this.spec.restart ?? DEFAULT_RESTART_POLICY);
  }

  readRecord(): PidRecord | undefined {
    try {
      return JSON.parse(readFileSync(this.file('pid.json'), 'utf8')) as PidRecord;
    } catch {
      return undefined;
    }
  }

  private writeRecord(): void {
    if (this.instance === undefined) return;
    const record: PidRecord = {
      pid: this.instance.pid,
      port: this.spec.port,
      startTime: this.instance.startTime,
      fingerprint: this.fingerprint,
      startedAt: new Date(this.instance.startedAtMs).toISOString(),
      offsets: { stdout: this.followers?.stdout.offset ?? 0, stderr: this.followers?.stderr.offset ?? 0 },
    };
    const temporary = this.file('pid.json.tmp');
    writeFileSync(temporary, JSON.stringify(record), { mode: 0o600 });
    renameSync(temporary, this.file('pid.json'));
    this.savedOffsets = JSON.stringify(record.offsets);
    this.lastOffsetSave = Date.now();
  }

  private removeRecord(): void {
    rmSync(this.file('pid.json'), { force: true });
  }

  /** Follows the log files from the given offsets (a fresh start: from their current ends). */
  private follow(offsets: Record<OutputStream, number> | undefined): void {
    if (this.followers !== undefined) return;
    const follower = (stream: OutputStream): LogFollower => {
      const path = this.file(`${stream}.log`);
      let start = offsets?.[stream];
      if (start === undefined) {
        try {
          start = statSync(path).size;
        } catch {
          start = 0;
        }
      }
      return new LogFollower(path, start, (line) => {
        this.tail.add(line);
        this.options.onLog?.(this.spec.name, { stream, line, at: new Date() });
      }, this.options.maxLogBytes);
    };
    this.followers = { stdout: follower('stdout'), stderr: follower('stderr') };
    this.pollTimer = setInterval(() => this.guarded(() => this.pollLogs()), this.options.logPollMs);
    this.pollTimer.unref();
  }

  private pollLogs(): void {
    if (this.followers === undefined) return;
    this.followers.stdout.poll();
    this.followers.stderr.poll();
    const offsets = JSON.stringify({ stdout: this.followers.stdout.offset, stderr: this.followers.stderr.offset });
    if (this.instance !== undefined && offsets !== this.savedOffsets && Date.now() - this.lastOffsetSave >= OFFSET_SAVE_INTERVAL_MS) this.writeRecord();
  }

  private stopFollowing(finish: boolean): void {
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    if (this.followers !== undefined && finish) {
      this.followers.stdout.finish();
      this.followers.stderr.finish();
    }
    this.followers = undefined;
  }

  /** Starts the process and resolves once it is RUNNING; a failed first start leaves nothing running. */
  async start(): Promise<void> {
    this.wanted = 'running';
    this.restarts = 0;
    this.adopted = false;
    this.delayMs = this.restartPolicy()?.initialDelayMs ?? 0;
    this.follow(undefined);
    try {
      await this.launch();
    } catch (error) {
      // A stop() during the start has already ended the process and set STOPPED; the start still did not succeed.
      const stoppedMeanwhile = !this.stillWanted();
      this.wanted = 'stopped';
      await this.killInstance();
      this.stopFollowing(true);
      if (!stoppedMeanwhile) this.setStatus('FAILED', (error as Error).message);
      throw new ProcessStartError((error as Error).message, this.tail.text());
    }
  }

  /** Takes over a process a previous agent started; false when there is none to take over. */
  async adopt(): Promise<boolean> {
    const record = this.readRecord();
    if (record === undefined) return false;
    if (!isProcessAlive(record.pid, record.startTime)) {
      this.removeRecord();
      return false;
    }
    if (record.fingerprint !== this.fingerprint) {
      // Same name, another spec: the old process is superseded, and ends.
      await this.killGroup(record.pid, undefined);
      this.removeRecord();
      return false;
    }
    this.wanted = 'running';
    this.adopted = true;
    this.instance = this.watchAdopted(record);
    this.watchMemory(this.instance);
    this.follow(record.offsets);
    this.setStatus('STARTING', 'found running; checking readiness');
    if (!(await this.awaitReadiness(this.instance))) {
      this.wanted = 'stopped';
      await this.killInstance();
      this.stopFollowing(true);
      this.setStatus('STOPPED', 'found running but not ready: stopped');
      return false;
    }
    this.setStatus('RUNNING');
    const instance = this.instance;
    void instance.exited.then((exit) => this.guarded(() => this.onExit(instance, exit)));
    return true;
  }

  private watchAdopted(record: PidRecord): Instance {
    let timer: NodeJS.Timeout | undefined;
    const instance: Instance = {
      pid: record.pid,
      startTime: record.startTime,
      startedAtMs: Date.parse(record.startedAt),
      hasExited: false,
      child: undefined,
      exited: new Promise((resolve) => {
        timer = setInterval(() => {
          if (isProcessAlive(record.pid, record.startTime)) return;
          clearInterval(timer);
          instance.hasExited = true;
          resolve({ code: null, signal: null });
        }, this.options.livenessPollMs);
        timer.unref();
      }),
      stopWatching: () => clearInterval(timer),
    };
    return instance;
  }

  /** Holds the instance's process group to the spec's memory limit until the instance is no longer watched. */
  private watchMemory(instance: Instance): void {
    const limitMb = this.spec.memoryLimitMb;
    if (limitMb === undefined) return;
    const cgroup = this.spec.memoryCgroup;
    if (cgroup !== undefined) {
      // The kernel holds the limit; what it did is read when the instance ends.
      instance.oomKillsAtStart = cgroup.oomKills();
      void instance.exited.then(() => {
        if (instance.memoryExceeded === undefined && cgroup.oomKills() > (instance.oomKillsAtStart ?? 0)) instance.memoryExceeded = { limitMb, byKernel: true };
      });
      return;
    }
    const unwatch = this.options.memory.watch(instance.pid, (residentBytes) => {
      if (instance.hasExited || instance.memoryExceeded !== undefined || residentBytes <= limitMb * 1024 * 1024) return;
      instance.memoryExceeded = { limitMb, residentMb: Math.round(residentBytes / (1024 * 1024)) };
      void this.guarded(() => sendSignal(-instance.pid, 'SIGKILL'));
    });
    const stopWatching = instance.stopWatching;
    instance.stopWatching = () => {
      unwatch();
      stopWatching();
    };
    void instance.exited.then(unwatch);
  }

  private async launch(): Promise<void> {
    this.setStatus('STARTING');
    const spec = this.spec;
    mkdirSync(this.options.stateDir, { recursive: true, mode: 0o700 });
    const stdout = openSync(this.file('stdout.log'), 'a', 0o600);
    const stderr = openSync(this.file('stderr.log'), 'a', 0o600);
    let child: ChildProcess;
    try {
      const argv = launchArgv(spec);
      child = spawn(argv[0] ?? '', argv.slice(1), {
        cwd: spec.cwd,
        env: { ...spec.env, ...(spec.port === undefined ? {} : { PORT: String(spec.port) }) },
        detached: true,
        stdio: ['ignore', stdout, stderr],
        ...(spec.runAs === undefined ? {} : { uid: spec.runAs.uid, gid: spec.runAs.gid }),
      });
    } finally {
      closeSync(stdout);
      closeSync(stderr);
    }
    const spawned = await new Promise<Error | undefined>((resolve) => {
      child.once('spawn', () => resolve(undefined));
      child.once('error', (error) => resolve(error));
    });
    if (spawned !== undefined || child.pid === undefined) {
      throw new Error(`cannot start ${spec.command[0] ?? ''}: ${spawned?.message ?? 'no pid'}`);
    }
    const pid = child.pid;
    const instance: Instance = {
      pid,
      startTime: processStartTime(pid),
      startedAtMs: Date.now(),
      hasExited: false,
      child,
      exited: new Promise((resolve) => {
        child.once('exit', (code, signal) => {
          instance.hasExited = true;
          resolve({ code, signal });
        });
      }),
      stopWatching: () => undefined,
    };
    this.instance = instance;
    this.watchMemory(instance);
    this.writeRecord();
    if (!(await this.awaitReadiness(instance))) {
      if (instance.hasExited) {
        const exit = await instance.exited;
        throw new Error(`${spec.name} ${describeExit(exit, instance)} before it was ready`);
      }
      if (this.wanted === 'stopped') throw new Error(`${spec.name} was stopped before it was ready`);
      const check = spec.readiness === undefined ? 'running' : describeReadinessCheck(spec.readiness, spec.port);
      throw new Error(`${spec.name} was not ready within ${Math.round(this.startTimeoutMs() / 1000)}s (${check})`);
    }
    this.setStatus('RUNNING');
    void instance.exited.then((exit) => this.guarded(() => this.onExit(instance, exit)));
  }

  private startTimeoutMs(): number {
    return this.spec.startTimeoutMs ?? 60_000;
  }

  /** Polls the readiness check until it passes (true), or the process exits, is stopped or times out (false). */
  private async awaitReadiness(instance: Instance): Promise<boolean> {
    const deadline = Date.now() + this.startTimeoutMs();
    const check = this.spec.readiness;
    if (check === undefined) {
      await within(instance.exited, this.spec.settleMs ?? 500);
      return !instance.hasExited && this.wanted === 'running';
    }
    for (;;) {
      if (instance.hasExited || this.wanted !== 'running') return false;
      const env = { ...this.spec.env, ...(this.spec.port === undefined ? {} : { PORT: String(this.spec.port) }) };
      if (await runReadinessCheck(check, { port: this.spec.port, cwd: this.spec.cwd, env, ...(this.spec.confine === undefined ? {} : { confine: this.spec.confine }) })) {
        return !instance.hasExited && this.wanted === 'running';
      }
      if (Date.now() >= deadline) return false;
      await within(instance.exited, READINESS_INTERVAL_MS);
    }
  }

  /** A RUNNING process ended without being asked to: restart after a delay, or give up. */
  private async onExit(instance: Instance | undefined, exit: Omit<ProcessExit, 'at'>): Promise<void> {
    if (instance === undefined || instance !== this.instance || this.wanted !== 'running') return;
    this.lastExit = { ...exit, at: new Date().toISOString() };
    instance.stopWatching();
    // What the process left in its group (workers it forked) would hold its port against the restart.
    await this.killGroup(instance.pid, undefined);
    this.instance = undefined;
    this.removeRecord();
    this.pollLogs();
    // A stop() that came while the group was being cleaned up wins over the restart.
    if (!this.stillWanted()) return;
    this.scheduleRestart(`${this.spec.name} ${describeExit(exit, instance)}`, Date.now() - instance.startedAtMs);
  }

  private scheduleRestart(reason: string, ranForMs: number): void {
    const policy = this.restartPolicy();
    if (policy === undefined) {
      this.stopFollowing(true);
      this.setStatus('FAILED', `${reason}; restarts are disabled`);
      return;
    }
    if (ranForMs >= policy.resetAfterMs) {
      this.delayMs = policy.initialDelayMs;
      this.restarts = 0;
    }
    if (policy.maxRestarts !== undefined && this.restarts >= policy.maxRestarts) {
      this.stopFollowing(true);
      this.setStatus('FAILED', `${reason}; gave up after ${this.restarts} restarts`);
      return;
    }
    const delay = this.delayMs;
    this.delayMs = Math.min(policy.maxDelayMs, Math.max(policy.initialDelayMs, this.delayMs * 2));
    this.setStatus('BACKOFF', `${reason}; restarting in ${delay} ms`);
    this.restartTimer = setTimeout(() => void this.guarded(() => this.restartNow()), delay);
  }

  private async restartNow(): Promise<void> {
    if (this.wanted !== 'running') return;
    this.restarts += 1;
    const startedAt = Date.now();
    try {
      await this.launch();
    } catch (error) {
      if (this.wanted !== 'running') return;
      await this.killInstance();
      this.scheduleRestart((error as Error).message, Date.now() - startedAt);
    }
  }

  /** Ends the process group: the stop signal, then SIGKILL after the stop timeout, then whatever is left. */
  private async killGroup(pid: number, instance: Instance | undefined): Promise<void> {
    const signalGroup = this.spec.signalGroup ?? true;
    const alive = instance === undefined ? isProcessAlive(pid) : !instance.hasExited;
    if (alive) {
      sendSignal(signalGroup ? -pid : pid, this.spec.stopSignal ?? 'SIGTERM');
      const exited = instance?.exited ?? this.pollUntilDead(pid, this.spec.stopTimeoutMs ?? 10_000);
      if (!(await within(exited, this.spec.stopTimeoutMs ?? 10_000))) {
        sendSignal(-pid, 'SIGKILL');
        await within(exited, GROUP_EXIT_WAIT_MS);
      }
    }
    if (processGroupAlive(pid)) {
      sendSignal(-pid, 'SIGKILL');
      const deadline = Date.now() + GROUP_EXIT_WAIT_MS;
      while (processGroupAlive(pid) && Date.now() < deadline) await sleep(20);
    }
  }

  private async pollUntilDead(pid: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (isProcessAlive(pid) && Date.now() < deadline) await sleep(20);
  }

  private async killInstance(): Promise<void> {
    const instance = this.instance;
    if (instance === undefined) return;
    await this.killGroup(instance.pid, instance);
    instance.stopWatching();
    this.instance = undefined;
    this.removeRecord();
  }

  async stop(): Promise<void> {
    this.wanted = 'stopped';
    clearTimeout(this.restartTimer);
    if (this.instance !== undefined) this.setStatus('STOPPING');
    await this.killInstance();
    this.stopFollowing(true);
    this.setStatus('STOPPED');
  }

  /** Lets go of the process without stopping it (agent shutdown): the next agent adopts it from the pid file. */
  detach(): void {
    clearTimeout(this.restartTimer);
    this.pollLogs();
    if (this.instance !== undefined) {
      this.writeRecord();
      this.instance.stopWatching();
      this.instance.child?.unref();
    }
    this.stopFollowing(false);
    this.wanted = 'stopped';
    this.instance = undefined;
  }
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
