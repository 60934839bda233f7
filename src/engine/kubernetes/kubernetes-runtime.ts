import { StringDecoder } from 'node:string_decoder';
import { Writable } from 'node:stream';
import { CoreV1Api, type KubeConfig, type V1ContainerStatus, type V1Pod } from '@kubernetes/client-node';
import type { AgentWorkloadHealth } from '../../protocol/agent-protocol.ts';
import { WorkloadLogBatcher, type WorkloadLogSink } from '../workload-log-batcher.ts';
import { kubernetesErrorMessage } from './kubernetes-cluster.ts';
import { LABEL_SERVICE, MANAGED_BY, SLIPWAY } from './kubernetes-names.ts';
import { openPodLog } from './kubernetes-pod-log.ts';
import { listAndWatch } from './kubernetes-watch.ts';

/**
 * What the Kubernetes driver's workloads say while they run, outside any task (issue 19 part 5, docs/kubernetes.md
 * "Logs and health"): one watch on Slipway's pods in every namespace, and from it
 *
 *  - each running container's log, followed through the apiserver, into the service's runtime log with the pod as
 *    the instance, in batches (≤ 250 ms, ≤ 200 lines); a stream that ends while its container still runs is opened
 *    again from the last line seen, so nothing is read twice;
 *    (the run of a cron job that ended before it was seen running is read once, whole: its start and end are told
 *    beside it by kubernetes-job-runs.ts);
 *  - the health of each service from its pods' status: RESTARTING with the kubelet's reason when a pod cannot run,
 *    FAILED for a Failed pod of a long-running workload, RUNNING once recovered — sent only when it changes.
 *
 * It never throws into the agent: a watch or stream that fails is told through onTrouble and tried again with backoff.
 * client-node 2.0.1's traps are handled here (docs/kubernetes-testing.md): `Log.log` never calls done (a stream's end
 * is its sink's `finish`), an aborted follow's AbortError is caught on the piped source, and `Watch` ends after 30 s
 * without data (it is simply watched again from the last resourceVersion).
 */

export interface KubernetesRuntimeOptions {
  config: KubeConfig;
  workloadLogs?: WorkloadLogSink | undefined;
  workloadHealth?: ((serviceId: string, report: AgentWorkloadHealth) => Promise<void>) | undefined;
  onTrouble(message: string): void;
  /**
   * Lines read back from a container of a pod that already ran when the runtime started (default 100): the agent
   * before this one sent its earlier lines. A pod that appears later is read from its first line.
   */
  initialTailLines?: number;
  /** How long a service's lines wait to be sent with more (default 250 ms). */
  flushMs?: number;
  /** Most lines per batch (default 200); a full batch goes at once. */
  batchLines?: number;
  /**
   * How long a service that was RESTARTING must look healthy before RUNNING is reported (default 10 s): a crash-looping
   * container runs for a moment between its back-offs, which is no recovery.
   */
  recoveryMs?: number;
  /**
   * Asks the apiserver to end each watch after this long (`timeoutSeconds`); unset, a watch ends when client-node
   * gives up on 30 s without data. Either end is routine: the pods are watched again from where the watch was.
   */
  watchTimeoutSeconds?: number;
  /** Backoff bounds for failed watches and streams (default 500 ms doubling up to 30 s). */
  backoffMinMs?: number;
  backoffMaxMs?: number;
}

export interface KubernetesRuntime {
  /** Log streams open now (tests: none after stop). */
  openStreams(): number;
  /** Stops watching and every stream, sends the lines already read and the reports under way; never throws. */
  stop(): Promise<void>;
}

/** Container states that do not heal by waiting (as kubernetes-rollout.ts judges a rollout). */
const CANNOT_RUN = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'ErrImageNeverPull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
  'OOMKilled',
]);
/** The largest line the protocol takes. */
const MAX_LINE = 16_384;
const MAX_MESSAGE = 4_000;

/** Where a container's log was last read: the timestamp of the last line, and how many lines carried it. */
interface LogCursor {
  key: string;
  count: number;
}

/** One container's log, followed while the container runs; its cursor outlives reconnections. */
interface ContainerLog {
  cursor: LogCursor | undefined;
  /** Set while a request is open (or being opened). */
  active: { abort(): void; ended: Promise<void> } | undefined;
  retry: NodeJS.Timeout | undefined;
  failures: number;
  /** Trouble is told once per run of failures, not on every retry of a container that is still starting. */
  told: boolean;
  /** Read once, whole, after the container ended: the stream ends by itself and is not cut when the pod changes. */
  once: boolean;
}

interface PodEntry {
  uid: string;
  namespace: string;
  name: string;
  serviceId: string;
  pod: V1Pod;
  /** Seen in the runtime's first list: its earlier log lines were the previous agent's to send. */
  preexisting: boolean;
  containers: Map<string, ContainerLog>;
}

interface HealthVerdict {
  health: AgentWorkloadHealth['health'];
  restarts: number;
  message: string | undefined;
  /** What makes two verdicts the same news: the state and the reasons (not the restart count, which only grows). */
  signature: string;
}

interface ServiceHealth {
  reported: string;
  recovery: NodeJS.Timeout | undefined;
  sending: Promise<void>;
}

const HEALTHY: HealthVerdict = { health: 'RUNNING', restarts: 0, message: undefined, signature: 'RUNNING' };

export function startKubernetesRuntime(options: KubernetesRuntimeOptions): KubernetesRuntime {
  const trouble = (message: string): void => {
    try {
      options.onTrouble(message);
    } catch {
      // A complaint that cannot be told is not worth stopping for.
    }
  };
  const core = options.config.makeApiClient(CoreV1Api);
  const tailLines = options.initialTailLines ?? 100;
  const recoveryMs = options.recoveryMs ?? 10_000;
  const backoffMin = options.backoffMinMs ?? 500;
  const backoffMax = options.backoffMaxMs ?? 30_000;
  const backoff = (failures: number): number => Math.min(backoffMax, backoffMin * 2 ** Math.max(0, failures - 1));
  const batcher = new WorkloadLogBatcher(options.workloadLogs, trouble, { flushMs: options.flushMs ?? 250, batchLines: options.batchLines ?? 200 });
  const pods = new Map<string, PodEntry>();
  const health = new Map<string, ServiceHealth>();
  let stopped = false;
  let firstList = true;

  // ---------------------------------------------------------------- the watch

  const selector = `${MANAGED_BY}=${SLIPWAY}`;
  const podWatch = listAndWatch<V1Pod>({
    config: options.config,
    what: 'pods',
    path: '/api/v1/pods',
    labelSelector: selector,
    list: () => core.listPodForAllNamespaces({ labelSelector: selector }),
    timeoutSeconds: options.watchTimeoutSeconds,
    backoffMinMs: backoffMin,
    backoffMaxMs: backoffMax,
    onTrouble: trouble,
    onList(items) {
      const present = new Set<string>();
      for (const pod of items) {
        present.add(pod.metadata?.uid ?? '');
        seen(pod);
      }
      for (const uid of [...pods.keys()]) if (!present.has(uid)) gone(uid);
      firstList = false;
    },
    onEvent(type, pod) {
      if (type === 'DELETED') gone(pod.metadata?.uid ?? '');
      else seen(pod);
    },
  });

  function seen(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    const serviceId = pod.metadata?.labels?.[LABEL_SERVICE];
    if (uid === undefined || serviceId === undefined || stopped) return;
    let entry = pods.get(uid);
    if (entry === undefined) {
      entry = { uid, namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', serviceId, pod, preexisting: firstList, containers: new Map() };
      pods.set(uid, entry);
    }
    entry.pod = pod;
    followContainers(entry);
    judge(serviceId);
  }

  function gone(uid: string): void {
    const entry = pods.get(uid);
    if (entry === undefined) return;
    pods.delete(uid);
    for (const log of entry.containers.values()) closeLog(log);
    judge(entry.serviceId);
  }

  // ---------------------------------------------------------------- logs

  /** Follows the containers that run now, lets go of the others (the stream of a container that stopped ends). */
  function followContainers(entry: PodEntry): void {
    if (options.workloadLogs === undefined) return;
    const terminating = entry.pod.metadata?.deletionTimestamp !== undefined;
    const running = new Set(
      [...(entry.pod.status?.initContainerStatuses ?? []), ...(entry.pod.status?.containerStatuses ?? [])]
        .filter((status) => status.state?.running !== undefined && !terminating)
        .map((status) => status.name),
    );
    for (const name of running) {
      let log = entry.containers.get(name);
      if (log === undefined) {
        log = { cursor: undefined, active: undefined, retry: undefined, failures: 0, told: false, once: false };
        entry.containers.set(name, log);
      }
      log.once = false;
      if (log.active === undefined && log.retry === undefined) openLog(entry, name, log);
    }
    // A container that ended before it was ever seen running (a short run of a Job goes from Pending to Succeeded
    // between two events) is read once, whole: its lines are the run's output. One of a pod the agent before this one
    // saw was that agent's to read.
    if (!entry.preexisting && !terminating) {
      for (const status of entry.pod.status?.containerStatuses ?? []) {
        if (status.state?.terminated === undefined || entry.containers.has(status.name)) continue;
        const log: ContainerLog = { cursor: undefined, active: undefined, retry: undefined, failures: 0, told: false, once: true };
        entry.containers.set(status.name, log);
        openLog(entry, status.name, log);
      }
    }
    for (const [name, log] of entry.containers) if (!running.has(name) && !log.once) closeLog(log);
  }

  function closeLog(log: ContainerLog): void {
    if (log.retry !== undefined) clearTimeout(log.retry);
    log.retry = undefined;
    log.active?.abort();
  }

  /** Whether the container should still be followed: its pod is known and says it runs. */
  function stillRunning(entry: PodEntry, container: string): boolean {
    if (stopped || pods.get(entry.uid) !== entry || entry.pod.metadata?.deletionTimestamp !== undefined) return false;
    return [...(entry.pod.status?.initContainerStatuses ?? []), ...(entry.pod.status?.containerStatuses ?? [])].some(
      (status) => status.name === container && status.state?.running !== undefined,
    );
  }

  function openLog(entry: PodEntry, container: string, log: ContainerLog): void {
    const openedAt = Date.now();
    let read = 0;
    let aborted = false;
    const controller = new AbortController();
    let settle: (error: unknown) => void = () => undefined;
    const ended = new Promise<void>((resolve) => {
      let settled = false;
      settle = (error: unknown) => {
        if (settled) return;
        settled = true;
        resolve();
        afterEnd(entry, container, log, aborted ? undefined : error, read === 0 && Date.now() - openedAt < 1_000);
      };
    });
    log.active = {
      abort() {
        aborted = true;
        // Connected or not: the request goes with its signal (kubernetes-pod-log.ts), so nothing of it outlives a stop.
        controller.abort();
        settle(undefined);
      },
      ended,
    };

    // Each (re)opening replays from the cursor: lines at or before it are skipped, those sharing its timestamp by count.
    const cursor = log.cursor;
    let replayedAtCursor = 0;
    const decoder = new StringDecoder('utf8');
    let partial = '';
    const take = (text: string): void => {
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) accept(line);
    };
    const accept = (raw: string): void => {
      if (raw === '') return;
      const { key, at, line } = parseTimestamped(raw);
      if (key !== undefined) {
        if (cursor !== undefined && key < cursor.key) return;
        if (cursor !== undefined && key === cursor.key && (replayedAtCursor += 1) <= cursor.count) return;
        log.cursor = log.cursor !== undefined && log.cursor.key === key ? { key, count: log.cursor.count + 1 } : { key, count: 1 };
      }
      read += 1;
      log.failures = 0;
      log.told = false;
      batcher.add(entry.serviceId, { at, stream: 'stdout', line: line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line, instance: entry.name.slice(0, 255) });
    };
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        take(decoder.write(chunk));
        callback();
      },
      final(callback) {
        take(decoder.end());
        if (partial !== '') accept(partial);
        partial = '';
        callback();
      },
    });
    // A pipe does not forward the source's errors: an abort (ours, at stop or when the pod goes) or a dropped
    // connection would be an uncaught AbortError that ends the agent. Caught on the source.
    sink.on('pipe', (source: NodeJS.ReadableStream) => {
      let sourceEnded = false;
      source.on('error', (error: unknown) => settle(error));
      source.on('end', () => (sourceEnded = true));
      // Closed without an end or an error (a torn connection): ended too; after a proper end, the sink's finish says so.
      source.on('close', () => {
        if (!sourceEnded) settle(undefined);
      });
    });
    // The end of the log is the end of the sink.
    sink.on('finish', () => settle(undefined));
    sink.on('error', (error: unknown) => settle(error));

    const since = cursor === undefined ? undefined : sinceTimeOf(cursor.key);
    const request = since !== undefined
      ? { follow: true, timestamps: true, sinceTime: since }
      : entry.preexisting
        ? tailLines > 0
          ? { follow: true, timestamps: true, tailLines }
          : { follow: true, timestamps: true, sinceTime: new Date().toISOString() }
        : { follow: true, timestamps: true };
    openPodLog(options.config, { namespace: entry.namespace, pod: entry.name, container }, request, controller.signal).then(
      (body) => body.pipe(sink),
      (error: unknown) => settle(error),
    );
  }

  function afterEnd(entry: PodEntry, container: string, log: ContainerLog, error: unknown, empty: boolean): void {
    log.active = undefined;
    if (!stillRunning(entry, container)) return;
    // The container still runs: its stream was cut (apiserver restart, connection drop) or could not open yet (the
    // kubelet not serving it yet). Open it again from the cursor, sooner after a clean end than after an error — but a
    // clean end at once with nothing read, again and again, backs off too (a kubelet that closes every follow).
    let delay = backoffMin;
    if (error === undefined && !empty) log.failures = 0;
    if (error === undefined && empty) {
      log.failures += 1;
      delay = backoff(log.failures);
    } else if (error !== undefined) {
      log.failures += 1;
      delay = backoff(log.failures);
      if (!log.told) {
        log.told = true;
        trouble(`the log of ${entry.namespace}/${entry.name} (${container}) cannot be followed, trying again: ${kubernetesErrorMessage(error)}`);
      }
    }
    log.retry = setTimeout(() => {
      log.retry = undefined;
      if (stillRunning(entry, container) && log.active === undefined) openLog(entry, container, log);
    }, delay);
  }

  // ---------------------------------------------------------------- health

  function judge(serviceId: string): void {
    if (options.workloadHealth === undefined || stopped) return;
    const servicePods = [...pods.values()].filter((entry) => entry.serviceId === serviceId && entry.pod.metadata?.deletionTimestamp === undefined).map((entry) => entry.pod);
    let state = health.get(serviceId);
    if (servicePods.length === 0) {
      // Stopped or gone: nothing runs to be healthy or not. What was reported stays the reference for its next pods.
      if (state?.recovery !== undefined) clearTimeout(state.recovery);
      if (state !== undefined) state.recovery = undefined;
      return;
    }
    const verdict = healthOf(servicePods);
    if (state === undefined) {
      state = { reported: HEALTHY.signature, recovery: undefined, sending: Promise.resolve() };
      health.set(serviceId, state);
    }
    if (verdict.signature === state.reported) {
      if (state.recovery !== undefined) clearTimeout(state.recovery);
      state.recovery = undefined;
      return;
    }
    if (verdict.health === 'RUNNING') {
      // Healthy again after trouble: said only once it lasts (a crash loop runs between its back-offs).
      const current = state;
      current.recovery ??= setTimeout(() => {
        current.recovery = undefined;
        const again = [...pods.values()].filter((entry) => entry.serviceId === serviceId && entry.pod.metadata?.deletionTimestamp === undefined).map((entry) => entry.pod);
        if (again.length === 0 || stopped) return;
        const confirmed = healthOf(again);
        if (confirmed.health === 'RUNNING' && current.reported !== confirmed.signature) report(serviceId, current, confirmed);
        else judge(serviceId);
      }, recoveryMs);
      current.recovery.unref();
      return;
    }
    if (state.recovery !== undefined) clearTimeout(state.recovery);
    state.recovery = undefined;
    report(serviceId, state, verdict);
  }

  function report(serviceId: string, state: ServiceHealth, verdict: HealthVerdict): void {
    state.reported = verdict.signature;
    const sink = options.workloadHealth;
    if (sink === undefined) return;
    const body: AgentWorkloadHealth = { health: verdict.health, restarts: verdict.restarts, ...(verdict.message === undefined ? {} : { message: verdict.message }) };
    // One report of a service at a time, in order: the control plane keeps the last one it gets.
    state.sending = state.sending.then(() =>
      sink(serviceId, body).catch((error: unknown) => trouble(`the health of ${serviceId} (${verdict.health}) was not reported: ${(error as Error).message}`)),
    );
  }

  return {
    openStreams() {
      let open = 0;
      for (const entry of pods.values()) for (const log of entry.containers.values()) if (log.active !== undefined) open += 1;
      return open;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      podWatch.stop();
      const endings: Promise<void>[] = [];
      for (const entry of pods.values()) {
        for (const log of entry.containers.values()) {
          if (log.active !== undefined) endings.push(log.active.ended);
          closeLog(log);
        }
      }
      for (const state of health.values()) if (state.recovery !== undefined) clearTimeout(state.recovery);
      // Every stream was aborted and ends at once; the bound only keeps a connection that never answers from holding stop.
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all([podWatch.ended, ...endings]), new Promise((resolve) => (bound = setTimeout(resolve, 5_000)))]).catch(() => undefined);
      clearTimeout(bound);
      pods.clear();
      await batcher.close();
      await Promise.all([...health.values()].map((state) => state.sending));
    },
  };
}

/**
 * Splits a line of a log read with `timestamps=true` (`2024-05-01T10:00:00.123456789Z text`) into a sortable key
 * (seconds and nanoseconds, fixed width: the kubelet trims trailing zeros, so the text itself does not sort), the
 * time for the protocol, and the text. A line without a timestamp keeps no key and gets the time it was read.
 */
export function parseTimestamped(raw: string): { key: string | undefined; at: string; line: string } {
  const space = raw.indexOf(' ');
  const stamp = space < 0 ? raw : raw.slice(0, space);
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(stamp);
  const seconds = match === null ? NaN : Date.parse(`${match[1] ?? ''}${match[3] ?? ''}`) / 1000;
  if (match === null || Number.isNaN(seconds)) return { key: undefined, at: new Date().toISOString(), line: raw };
  const fraction = (match[2] ?? '').padEnd(9, '0');
  return {
    key: `${String(seconds).padStart(12, '0')}.${fraction}`,
    at: new Date(seconds * 1000 + Number(fraction.slice(0, 3))).toISOString(),
    line: space < 0 ? '' : raw.slice(space + 1),
  };
}

/**
 * The `sinceTime` to reopen a log from: the cursor's second (metav1.Time has whole seconds), so the lines of that
 * second come again and are skipped by count.
 */
function sinceTimeOf(key: string): string {
  const seconds = Number(key.slice(0, key.indexOf('.')));
  return new Date(seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

interface PodProblem {
  pod: string;
  container: string;
  reason: string;
  detail: string;
}

function problemOf(pod: string, status: V1ContainerStatus): PodProblem | undefined {
  const waiting = status.state?.waiting;
  const terminated = status.state?.terminated;
  const last = status.lastState?.terminated;
  let reason: string | undefined;
  if (waiting?.reason !== undefined && CANNOT_RUN.has(waiting.reason)) {
    // A crash loop whose last run was killed for memory is said as such: the fix is a memory limit, not the code.
    reason = waiting.reason === 'CrashLoopBackOff' && last?.reason === 'OOMKilled' ? 'OOMKilled' : waiting.reason;
  } else if (terminated?.reason === 'OOMKilled') {
    reason = 'OOMKilled';
  }
  if (reason === undefined) return undefined;
  const exited = terminated ?? last;
  const parts = [
    exited === undefined ? undefined : `last exit code ${exited.exitCode}${exited.reason === undefined ? '' : ` (${exited.reason})`}`,
    status.restartCount > 0 ? `${status.restartCount} restart(s)` : undefined,
    waiting?.message,
  ].filter((part) => part !== undefined && part !== '');
  return { pod, container: status.name, reason, detail: parts.join(', ') };
}

/** ErrImagePull and ImagePullBackOff alternate while an image cannot be pulled: one reason, not news each time. */
function reasonKey(reason: string): string {
  return reason === 'ErrImagePull' ? 'ImagePullBackOff' : reason;
}

/**
 * A service's health from its pods: RESTARTING when a container cannot run (the kubelet's reason, the restarts),
 * FAILED when a pod of a long-running workload failed and none of its pods runs (a Job's failed run is the Job's
 * to record; an evicted pod already replaced is not a failed service), RUNNING otherwise.
 */
export function healthOf(pods: readonly V1Pod[]): HealthVerdict {
  let restarts = 0;
  const problems: PodProblem[] = [];
  const failed: V1Pod[] = [];
  let runs = false;
  for (const pod of pods) {
    const name = pod.metadata?.name ?? '';
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    restarts += statuses.reduce((sum, status) => sum + status.restartCount, 0);
    const phase = pod.status?.phase;
    if (phase === 'Failed') {
      if (!(pod.metadata?.ownerReferences ?? []).some((owner) => owner.kind === 'Job')) failed.push(pod);
      continue;
    }
    if (phase === 'Succeeded') continue;
    const found = statuses.map((status) => problemOf(name, status)).filter((problem) => problem !== undefined);
    problems.push(...found);
    if (found.length === 0 && phase === 'Running') runs = true;
  }
  const first = problems[0];
  if (first !== undefined) {
    const others = new Set(problems.map((problem) => problem.pod)).size - 1;
    const message = `${first.reason}: pod ${first.pod}, container ${first.container}${first.detail === '' ? '' : `: ${first.detail}`}${others > 0 ? ` (and ${others} other pod(s))` : ''}`;
    const reasons = [...new Set(problems.map((problem) => reasonKey(problem.reason)))].sort();
    return { health: 'RESTARTING', restarts, message: message.slice(0, MAX_MESSAGE), signature: `RESTARTING:${reasons.join(',')}` };
  }
  const failure = failed[0];
  if (failure !== undefined && !runs) {
    const exited = (failure.status?.containerStatuses ?? []).map((status) => status.state?.terminated).find((terminated) => terminated !== undefined);
    const why = failure.status?.reason ?? exited?.reason ?? 'Failed';
    const detail = failure.status?.message ?? (exited === undefined ? undefined : `exit code ${exited.exitCode}`);
    const message = `pod ${failure.metadata?.name ?? ''} failed: ${why}${detail === undefined ? '' : ` (${detail})`}`;
    return { health: 'FAILED', restarts, message: message.slice(0, MAX_MESSAGE), signature: `FAILED:${why}` };
  }
  return { ...HEALTHY, restarts };
}
