import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig, PatchStrategy, Watch, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';

/**
 * A TEST DOUBLE of a kubelet, for the real control plane of test/support/kube-cluster.ts. It runs no container.
 *
 * What it does, through the real apiserver and nothing else: registers a Node (InternalIP 127.0.0.1, Ready, room
 * for 110 pods, kubeletEndpoint = its own HTTPS server) and keeps it alive by refreshing the Ready condition's
 * heartbeat, so the controller manager's node lifecycle controller never taints it unreachable; watches the pods
 * bound to it and writes the status a kubelet would for the outcome the test chose (Running and Ready, Succeeded,
 * Failed, CrashLoopBackOff, ImagePullBackOff, or left Pending); finishes the graceful deletion of its pods as a
 * kubelet does once their containers are gone (otherwise they stay Terminating and a namespace is never deleted);
 * and serves `GET /containerLogs/{namespace}/{pod}/{container}` (follow, tailLines, sinceSeconds, timestamps) with
 * the lines the test writes, so `Log.log` through the apiserver streams them. With kube-scheduler running, the
 * scheduler binds pods to its node; without it, `bindPendingPods` makes the double bind them itself.
 *
 * Not done: exec, attach and port-forward (404), images, probes, volumes, resource accounting, restarts.
 */

/** The pod annotation that picks an outcome without a callback: one of the `state`s of {@link PodOutcome}. */
export const OUTCOME_ANNOTATION = 'fake-kubelet.slipway.dev/outcome';
/** The pod annotation with the exit code of a `Failed` or `CrashLoopBackOff` outcome (default 1). */
export const EXIT_CODE_ANNOTATION = 'fake-kubelet.slipway.dev/exit-code';

export type PodOutcome =
  /** Containers running; Ready unless `ready: false` (a readiness probe that never passes). */
  | { state: 'Running'; ready?: boolean }
  /** Every container exited 0: phase Succeeded (what a Job counts). */
  | { state: 'Succeeded' }
  /** A container exited non-zero and is not restarted: phase Failed. */
  | { state: 'Failed'; exitCode?: number; reason?: string }
  /** A container keeps exiting: phase Running, not Ready, waiting in CrashLoopBackOff with the last exit code. */
  | { state: 'CrashLoopBackOff'; exitCode?: number; restartCount?: number }
  /** The image cannot be pulled: phase Pending, containers waiting in ImagePullBackOff. */
  | { state: 'ImagePullBackOff' }
  /** Nothing is written: the pod stays Pending, as on a node that never starts it. */
  | { state: 'Pending' };

export interface FakeKubeletOptions {
  /** A kubeconfig (YAML) with rights on nodes and pods: the cluster admin's (KubeCluster.kubeconfig). */
  kubeconfig: string;
  /** The Node's name. Default `fake-kubelet`. */
  nodeName?: string;
  /**
   * Decides what becomes of each pod bound to the node; called again whenever the pod changes, and the status is
   * rewritten when the answer changes. Returning undefined falls back to the default policy: the
   * {@link OUTCOME_ANNOTATION} annotation, else Succeeded for a pod of a Job or with restartPolicy Never/OnFailure,
   * else Running.
   */
  outcome?: (pod: V1Pod) => PodOutcome | undefined;
  /** Bind pending, unscheduled pods to this node (for a cluster started without kube-scheduler). Default false. */
  bindPendingPods?: boolean;
  /** How often the Node's Ready heartbeat is refreshed. Default 10 s (the node monitor's grace period is 40 s). */
  heartbeatMs?: number;
}

export interface FakeKubelet {
  nodeName: string;
  /** The port of its HTTPS server (the Node's kubeletEndpoint). */
  port: number;
  /** Appends lines to a container's log (before or after the pod exists); followers get them at once. */
  writeLog(namespace: string, pod: string, container: string, ...lines: string[]): void;
  /** Errors met while writing pod or node state, for a test that wants to assert there were none. */
  errors: unknown[];
  /** Stops watching, closes the log server and deletes the Node (best effort). */
  stop(): Promise<void>;
}

const run = promisify(execFile);

function defaultOutcome(pod: V1Pod): PodOutcome {
  const annotations = pod.metadata?.annotations ?? {};
  const named = annotations[OUTCOME_ANNOTATION];
  const exitCode = annotations[EXIT_CODE_ANNOTATION] === undefined ? undefined : Number(annotations[EXIT_CODE_ANNOTATION]);
  switch (named) {
    case 'Running':
    case 'Succeeded':
    case 'ImagePullBackOff':
    case 'Pending':
      return { state: named };
    case 'NotReady':
      return { state: 'Running', ready: false };
    case 'Failed':
    case 'CrashLoopBackOff':
      return exitCode === undefined ? { state: named } : { state: named, exitCode };
    default:
      break;
  }
  const ownedByJob = (pod.metadata?.ownerReferences ?? []).some((owner) => owner.kind === 'Job');
  if (ownedByJob || (pod.spec?.restartPolicy ?? 'Always') !== 'Always') return { state: 'Succeeded' };
  return { state: 'Running' };
}

/** metav1.Time is RFC 3339 in whole seconds. */
function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The `status` a kubelet would report for the outcome (written with a JSON merge patch, so lists are replaced whole). */
function statusFor(pod: V1Pod, outcome: Exclude<PodOutcome, { state: 'Pending' }>, podIP: string, startTime: string): Record<string, unknown> {
  const uid = pod.metadata?.uid ?? '';
  const containers = pod.spec?.containers ?? [];
  const time = now();
  const base = (name: string, image: string): Record<string, unknown> => ({
    name,
    image,
    imageID: `fake-kubelet://${image}`,
    containerID: `fake-kubelet://${uid}/${name}`,
  });
  const initContainerStatuses = (pod.spec?.initContainers ?? []).map((container) => ({
    ...base(container.name, container.image ?? ''),
    ready: true,
    restartCount: 0,
    state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: startTime, finishedAt: startTime } },
  }));
  const condition = (type: string, status: boolean, reason?: string): Record<string, unknown> => ({
    type,
    status: status ? 'True' : 'False',
    lastProbeTime: null,
    lastTransitionTime: time,
    ...(reason === undefined ? {} : { reason }),
  });
  let phase: string;
  let ready: boolean;
  let notReadyReason: string;
  let state: (container: string) => Record<string, unknown>;
  let extra: (container: string) => Record<string, unknown> = () => ({ restartCount: 0 });
  switch (outcome.state) {
    case 'Running':
      phase = 'Running';
      ready = outcome.ready ?? true;
      notReadyReason = 'ContainersNotReady';
      state = () => ({ running: { startedAt: startTime } });
      break;
    case 'Succeeded':
      phase = 'Succeeded';
      ready = false;
      notReadyReason = 'PodCompleted';
      state = () => ({ terminated: { exitCode: 0, reason: 'Completed', startedAt: startTime, finishedAt: time } });
      break;
    case 'Failed':
      phase = 'Failed';
      ready = false;
      notReadyReason = 'PodFailed';
      state = () => ({ terminated: { exitCode: outcome.exitCode ?? 1, reason: outcome.reason ?? 'Error', startedAt: startTime, finishedAt: time } });
      break;
    case 'CrashLoopBackOff':
      phase = 'Running';
      ready = false;
      notReadyReason = 'ContainersNotReady';
      state = (name) => ({ waiting: { reason: 'CrashLoopBackOff', message: `back-off 10s restarting failed container=${name} pod=${pod.metadata?.name ?? ''}` } });
      extra = () => ({
        restartCount: outcome.restartCount ?? 3,
        lastState: { terminated: { exitCode: outcome.exitCode ?? 1, reason: 'Error', startedAt: startTime, finishedAt: time } },
      });
      break;
    case 'ImagePullBackOff':
      phase = 'Pending';
      ready = false;
      notReadyReason = 'ContainersNotReady';
      state = (name) => {
        const image = containers.find((container) => container.name === name)?.image ?? '';
        return { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` } };
      };
      break;
  }
  return {
    phase,
    hostIP: '127.0.0.1',
    podIP,
    podIPs: [{ ip: podIP }],
    startTime,
    conditions: [
      condition('Initialized', true),
      condition('Ready', ready, ready ? undefined : notReadyReason),
      condition('ContainersReady', ready, ready ? undefined : notReadyReason),
      condition('PodScheduled', true),
    ],
    initContainerStatuses,
    containerStatuses: containers.map((container) => ({
      ...base(container.name, container.image ?? ''),
      ready,
      started: outcome.state === 'Running',
      state: state(container.name),
      ...extra(container.name),
    })),
  };
}

interface LogEntry {
  time: Date;
  line: string;
}

export async function startFakeKubelet(options: FakeKubeletOptions): Promise<FakeKubelet> {
  const nodeName = options.nodeName ?? 'fake-kubelet';
  const kc = new KubeConfig();
  kc.loadFromString(options.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const errors: unknown[] = [];
  let stopped = false;

  // Logs by `namespace/pod/container`; followers are open responses of `follow=true` requests.
  const logs = new Map<string, LogEntry[]>();
  const followers = new Map<string, Map<ServerResponse, { timestamps: boolean }>>();
  // Pods whose containers have exited (or that are gone): a follow on them ends after the lines there are.
  const finishedPods = new Set<string>();
  const endFollowers = (podKey: string): void => {
    for (const [key, responses] of followers) {
      if (!key.startsWith(`${podKey}/`)) continue;
      for (const response of responses.keys()) response.end();
      followers.delete(key);
    }
  };
  const formatLine = (entry: LogEntry, timestamps: boolean): string => `${timestamps ? `${entry.time.toISOString()} ` : ''}${entry.line}\n`;

  // A kubelet serves HTTPS with a certificate of its own; the apiserver does not check it here (no
  // --kubelet-certificate-authority), so a throwaway self-signed one will do.
  const certDir = mkdtempSync(join(tmpdir(), 'slipway-fake-kubelet-'));
  let key: string;
  let cert: string;
  try {
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-keyout', join(certDir, 'key.pem'), '-out', join(certDir, 'cert.pem'),
      '-subj', `/CN=${nodeName}`, '-addext', 'subjectAltName=IP:127.0.0.1',
    ]);
    key = readFileSync(join(certDir, 'key.pem'), 'utf8');
    cert = readFileSync(join(certDir, 'cert.pem'), 'utf8');
  } finally {
    rmSync(certDir, { recursive: true, force: true });
  }

  const server = createServer({ key, cert }, (request, response) => {
    const url = new URL(request.url ?? '/', 'https://fake-kubelet');
    const match = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (request.method !== 'GET' || match === null) {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end(`fake kubelet (a test double) does not serve ${request.method ?? ''} ${url.pathname}\n`);
      return;
    }
    const [, namespace = '', pod = '', container = ''] = match.map(decodeURIComponent);
    const logKey = `${namespace}/${pod}/${container}`;
    const follow = url.searchParams.get('follow') === 'true';
    const timestamps = url.searchParams.get('timestamps') === 'true';
    const tailLines = url.searchParams.get('tailLines');
    const sinceSeconds = url.searchParams.get('sinceSeconds');
    let entries = logs.get(logKey) ?? [];
    if (sinceSeconds !== null) {
      const since = Date.now() - Number(sinceSeconds) * 1000;
      entries = entries.filter((entry) => entry.time.getTime() >= since);
    }
    if (tailLines !== null) entries = Number(tailLines) === 0 ? [] : entries.slice(-Number(tailLines));
    response.writeHead(200, { 'content-type': 'text/plain' });
    for (const entry of entries) response.write(formatLine(entry, timestamps));
    if (!follow || stopped || finishedPods.has(`${namespace}/${pod}`)) {
      response.end();
      return;
    }
    // Flush the headers now: the apiserver streams the body to its client as it comes.
    response.flushHeaders();
    const open = followers.get(logKey) ?? new Map<ServerResponse, { timestamps: boolean }>();
    followers.set(logKey, open);
    open.set(response, { timestamps });
    response.once('close', () => open.delete(response));
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolveListen);
  });
  const port = (server.address() as AddressInfo).port;

  const nodeStatus = (): Record<string, unknown> => {
    const time = now();
    const condition = (type: string, status: string, reason: string): Record<string, unknown> => ({
      type,
      status,
      reason,
      message: 'fake kubelet (test double)',
      lastHeartbeatTime: time,
      lastTransitionTime: startedAt,
    });
    return {
      capacity: { cpu: '8', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi' },
      allocatable: { cpu: '8', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi' },
      conditions: [
        condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID'),
        condition('Ready', 'True', 'KubeletReady'),
      ],
      addresses: [
        { type: 'InternalIP', address: '127.0.0.1' },
        { type: 'Hostname', address: nodeName },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: port } },
      nodeInfo: {
        machineID: '', systemUUID: '', bootID: '', kernelVersion: '', osImage: 'fake kubelet (test double)',
        containerRuntimeVersion: 'fake://0', kubeletVersion: 'v1.20.2', kubeProxyVersion: 'v1.20.2',
        operatingSystem: 'linux', architecture: 'amd64',
      },
    };
  };
  const startedAt = now();
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const writeNodeStatus = async (): Promise<void> => {
    await core.patchNodeStatus({ name: nodeName, body: { status: nodeStatus() } }, mergePatch);
  };

  try {
    await core.createNode({
      body: {
        metadata: {
          name: nodeName,
          labels: { 'kubernetes.io/hostname': nodeName, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'slipway.dev/fake-kubelet': 'true' },
        },
      },
    });
    // Through the status subresource, as a kubelet writes it: the node is Ready before any pod is scheduled on it.
    await writeNodeStatus();
  } catch (error) {
    server.closeAllConnections();
    server.close();
    throw error;
  }
  const heartbeat = setInterval(() => {
    writeNodeStatus().catch((error: unknown) => {
      if (!stopped) errors.push(error);
    });
  }, options.heartbeatMs ?? 10_000);

  // What was last written for each pod (by uid), so our own status patches, seen again on the watch, change nothing.
  const written = new Map<string, string>();
  const podIPs = new Map<string, string>();
  let nextIP = 2;
  const deleting = new Set<string>();
  // One pod's events are handled in order; different pods concurrently.
  const queues = new Map<string, Promise<void>>();

  const handle = async (type: string, pod: V1Pod): Promise<void> => {
    const namespace = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const uid = pod.metadata?.uid ?? '';
    const podKey = `${namespace}/${name}`;
    if (type === 'DELETED') {
      finishedPods.add(podKey);
      endFollowers(podKey);
      written.delete(uid);
      deleting.delete(uid);
      podIPs.delete(uid);
      return;
    }
    const boundHere = pod.spec?.nodeName === nodeName;
    if (!boundHere) {
      if (options.bindPendingPods === true && (pod.spec?.nodeName ?? '') === '' && pod.metadata?.deletionTimestamp === undefined) {
        await core.createNamespacedPodBinding({
          name,
          namespace,
          body: { metadata: { name, namespace }, target: { apiVersion: 'v1', kind: 'Node', name: nodeName } },
        });
      }
      return;
    }
    if (pod.metadata?.deletionTimestamp !== undefined) {
      // A kubelet stops the containers, then deletes the pod for good (grace 0): without this the pod stays
      // Terminating forever and so does its namespace.
      if (deleting.has(uid)) return;
      deleting.add(uid);
      finishedPods.add(podKey);
      endFollowers(podKey);
      await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0, preconditions: { uid } } });
      return;
    }
    const outcome = options.outcome?.(pod) ?? defaultOutcome(pod);
    const signature = JSON.stringify(outcome);
    if (written.get(uid) === signature) return;
    if (outcome.state === 'Pending') {
      written.set(uid, signature);
      return;
    }
    let podIP = podIPs.get(uid);
    if (podIP === undefined) {
      podIP = `10.244.${Math.floor(nextIP / 250)}.${(nextIP % 250) + 2}`;
      nextIP += 1;
      podIPs.set(uid, podIP);
    }
    const startTime = pod.status?.startTime === undefined ? now() : new Date(pod.status.startTime).toISOString().replace(/\.\d+Z$/, 'Z');
    await core.patchNamespacedPodStatus({ name, namespace, body: { status: statusFor(pod, outcome, podIP, startTime) } }, mergePatch);
    // Remembered only once written: after a failed write, the pod's next event (or the next re-list) tries again.
    written.set(uid, signature);
    if (outcome.state === 'Succeeded' || outcome.state === 'Failed') {
      finishedPods.add(podKey);
      endFollowers(podKey);
    } else {
      finishedPods.delete(podKey);
    }
  };
  const enqueue = (type: string, pod: V1Pod): void => {
    const uid = pod.metadata?.uid ?? '';
    const previous = queues.get(uid) ?? Promise.resolve();
    const next = previous
      .then(() => handle(type, pod))
      .catch((error: unknown) => {
        // A 404 or 409 means the pod moved on (deleted, or changed meanwhile): the watch brings its next state.
        const code = (error as { code?: number }).code;
        if (!stopped && code !== 404 && code !== 409) errors.push(error);
      });
    queues.set(uid, next);
    void next.then(() => {
      if (queues.get(uid) === next) queues.delete(uid);
    });
  };

  // List then watch from the list's resourceVersion; on any end of the watch (error, 410 Gone, timeout), again.
  // Every pod is watched, not only this node's: with bindPendingPods the unscheduled ones matter too.
  const watch = new Watch(kc);
  let currentWatch: AbortController | undefined;
  const watching = (async () => {
    while (!stopped) {
      try {
        const list = await core.listPodForAllNamespaces();
        for (const pod of list.items) enqueue('ADDED', pod);
        await new Promise<void>((resolveDone) => {
          watch
            .watch(
              '/api/v1/pods',
              { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
              (type, object: V1Pod) => {
                if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') enqueue(type, object);
              },
              () => resolveDone(),
            )
            .then(
              (controller) => {
                currentWatch = controller;
                if (stopped) controller.abort();
              },
              () => resolveDone(),
            );
        });
      } catch (error) {
        if (!stopped) errors.push(error);
      }
      if (!stopped) await sleep(200);
    }
  })();

  return {
    nodeName,
    port,
    errors,
    writeLog(namespace, pod, container, ...lines) {
      const logKey = `${namespace}/${pod}/${container}`;
      const entries = logs.get(logKey) ?? [];
      logs.set(logKey, entries);
      for (const line of lines) {
        const entry = { time: new Date(), line };
        entries.push(entry);
        for (const [response, format] of followers.get(logKey) ?? []) response.write(formatLine(entry, format.timestamps));
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(heartbeat);
      currentWatch?.abort();
      await watching;
      await Promise.all(queues.values());
      for (const responses of followers.values()) for (const response of responses.keys()) response.end();
      followers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
      try {
        await core.deleteNode({ name: nodeName });
      } catch {
        // The cluster may be stopping already; the node dies with it.
      }
    },
  };
}
