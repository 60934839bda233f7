import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../../lib/crypto.ts';
import { LineTail } from './lines.ts';
import { wrongPortWatch } from './listening-ports.ts';
import { LogFollower } from './log-follower.ts';
import { describeReadinessCheck, runReadinessCheck } from './probes.ts';
import type { MemorySampler } from './memory-sampler.ts';
import { isProcessAlive, processGroupAlive, processStartTime, sendSignal } from './process-table.ts';
import type { OutputStream } from './run-command.ts';
import type { ProcessExit, ProcessSpec, ProcessState, RestartPolicy, SupervisedStatus, SupervisorOptions } from './process-supervisor.ts';

/**
 * One supervised workload: the state machine of process-supervisor.ts for a single name — its pid file, its log
 * followers, its readiness wait, its restarts with backoff, its memory watch — driven by the ProcessSupervisor that
 * owns every name. Not used on its own.
 */

/** The restarts of a long-lived workload: quick at first, at most every 30 s, forgiven after a minute's healthy run. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialDelayMs: 500, maxDelayMs: 30_000, resetAfterMs: 60_000 };

/** A first start that failed: the workload's last output lines are in the message, for the deployment's log. */
export class ProcessStartError extends Error {
  readonly output: string;
  constructor(message: string, output: string) {
    super(output === '' ? message : `${message}\n${output}`);
    this.output = output;
    this.name = 'ProcessStartError';
  }
}

export interface PidRecord {
  pid: number;
  port: number | undefined;
  startTime: string | undefined;
  fingerprint: string;
  startedAt: string;
  offsets: Record<OutputStream, number>;
}

export type SupervisedOptions = Required<Omit<SupervisorOptions, 'onLog' | 'onStatus' | 'memoryPollMs'>> &
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
  /** Set when the readiness wait ended because the group listens on these ports and not on its PORT. */
  listensElsewhere?: number[];
}

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const READINESS_INTERVAL_MS = 100;
/** How long a starting instance may listen on other ports only before its start fails (listening-ports.ts). */
const WRONG_PORT_GRACE_MS = 5_000;
const WRONG_PORT_SCAN_MS = 500;
export const GROUP_EXIT_WAIT_MS = 3_000;
export const ORPHAN_STOP_TIMEOUT_MS = 10_000;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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

function describeWrongPort(name: string, ports: readonly number[], port: number | undefined): string {
  const list = ports.length === 1 ? `port ${ports[0]}` : `ports ${ports.slice(0, -1).join(', ')} and ${ports.at(-1)}`;
  return `${name} listens on ${list}, not on $PORT (${port}): Slipway gives each instance its own port in the PORT variable; listen on process.env.PORT`;
}

export class SupervisedProcess {
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
    // Saved at every poll that read something (at most one small file write per poll): a new agent that takes over
    // after a crash goes on from here, so what was read is not sent twice. What a crash catches read but not yet
    // delivered to the control plane is lost instead — at most one poll's lines.
    if (this.instance !== undefined && offsets !== this.savedOffsets) this.writeRecord();
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
      if (instance.listensElsewhere !== undefined) throw new Error(describeWrongPort(spec.name, instance.listensElsewhere, spec.port));
      const check = spec.readiness === undefined ? 'running' : describeReadinessCheck(spec.readiness, spec.port);
      throw new Error(`${spec.name} was not ready within ${Math.round(this.startTimeoutMs() / 1000)}s (${check})`);
    }
    this.setStatus('RUNNING');
    void instance.exited.then((exit) => this.guarded(() => this.onExit(instance, exit)));
  }

  private startTimeoutMs(): number {
    return this.spec.startTimeoutMs ?? 60_000;
  }

  /**
   * Polls the readiness check until it passes (true), or the process exits, is stopped or times out (false) — or,
   * with a PORT, listens on other ports only for a while (false, `listensElsewhere` set), which no wait would mend.
   */
  private async awaitReadiness(instance: Instance): Promise<boolean> {
    const deadline = Date.now() + this.startTimeoutMs();
    const check = this.spec.readiness;
    if (check === undefined) {
      await within(instance.exited, this.spec.settleMs ?? 500);
      return !instance.hasExited && this.wanted === 'running';
    }
    const port = this.spec.port;
    const checkPort = check.kind === 'http' || check.kind === 'tcp' ? check.port : undefined;
    const wrongPort = port === undefined ? undefined : wrongPortWatch(instance.pid, checkPort === undefined ? [port] : [port, checkPort], { graceMs: WRONG_PORT_GRACE_MS, scanEveryMs: WRONG_PORT_SCAN_MS });
    for (;;) {
      if (instance.hasExited || this.wanted !== 'running') return false;
      const env = { ...this.spec.env, ...(this.spec.port === undefined ? {} : { PORT: String(this.spec.port) }) };
      if (await runReadinessCheck(check, { port: this.spec.port, cwd: this.spec.cwd, env, ...(this.spec.confine === undefined ? {} : { confine: this.spec.confine }) })) {
        return !instance.hasExited && this.wanted === 'running';
      }
      instance.listensElsewhere = wrongPort?.check();
      if (instance.listensElsewhere !== undefined || Date.now() >= deadline) return false;
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
      // Ended whether or not a stop came meanwhile: a stop() while the new process was being spawned found no
      // instance to end, and this one would outlive it.
      await this.killInstance();
      if (this.wanted !== 'running') return;
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

