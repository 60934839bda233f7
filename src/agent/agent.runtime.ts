import { hostname } from 'node:os';
import type { WorkloadIsolation } from '../config.ts';
import type { GitAccess } from '../git/git-access.ts';
import type { AgentClient } from './agent.client.ts';
import type { ImageBuildOptions } from '../engine/kubernetes/kubernetes-build.ts';
import type { KubeconfigSource } from '../engine/kubernetes/kubernetes-cluster.ts';
import { inSpan } from '../lib/tracing.ts';
import { TaskCanceled, type AgentDriver, type TaskSession } from '../protocol/agent-driver.ts';
import {
  ControlPlaneRefusal,
  parseTaskPayload,
  type AgentClusterFacts,
  type AgentLogLine,
  type AgentProgressEvent,
  type AgentTask,
  type AgentCertificateReport,
  type AgentClusterEventReport,
  type AgentWorkloadHealth,
  type AgentWorkloadLogLine,
  type ServiceDeploymentSpec,
  type ServiceTaskPayload,
  type ServiceTeardownPayload,
} from '../protocol/agent-protocol.ts';

/**
 * The agent's main loop (docs/agent-protocol.md): heartbeat on the interval the control plane asks for, lease work
 * by long-poll, carry each task out (carryOutTask: the runtime reports every phase, the driver only does the work of
 * service tasks), and send the work's log lines under the task's lease. Up to `concurrency` tasks run side by side
 * (the control plane offers a task only once what it must follow is done: docs/agent-protocol.md, "Order"), and the
 * agent leases no more than it has room for, so a leased task is a task in hand. A task whose driver throws is
 * reported failed with the reason; a lost lease (409) drops the task: another holder drives it now.
 */

export interface AgentOptions {
  client: AgentClient;
  driver: AgentDriver;
  version: string;
  /** Long-poll wait per lease request (default 25 s). */
  pollWaitSeconds?: number;
  /** How many tasks run at once (default 4): builds of different services, databases starting, teardowns. */
  concurrency?: number;
  /** Where the agent says what went wrong in its own loop (network trouble, refusals); silent by default. */
  onTrouble?: (message: string) => void;
  /** What the driver sees of its cluster, sent with each heartbeat (DriverHost.facts). */
  facts?: (() => Promise<AgentClusterFacts | undefined>) | undefined;
}

export interface RunningAgent {
  /** Stops leasing; resolves once the tasks in hand (if any) have been handed back or finished. */
  stop(): Promise<void>;
  /** Whether the last heartbeat was answered: the agent is enrolled and the control plane hears it. */
  heartbeating(): boolean;
}

const SETTLING: ReadonlySet<AgentProgressEvent> = new Set(['succeed', 'fail', 'cancel_done']);
const LOG_BATCH = 200;
const LOG_FLUSH_MS = 250;
const DEFAULT_AGENT_CONCURRENCY = 4;

export function startAgent(options: AgentOptions): RunningAgent {
  const { client, driver } = options;
  const trouble = options.onTrouble ?? (() => undefined);
  const startedAt = new Date().toISOString();
  const stopping = new AbortController();
  let heartbeatTimer: NodeJS.Timeout | undefined;
  let lastBeatAnswered = false;

  async function beat(): Promise<void> {
    try {
      const cluster = await options.facts?.().catch((error: unknown) => void trouble(`reading the cluster's facts failed: ${(error as Error).message}`));
      const answer = await client.heartbeat({
        agent_version: options.version,
        driver: driver.name,
        hostname: hostname(),
        started_at: startedAt,
        ...(cluster === undefined ? {} : { cluster }),
      });
      lastBeatAnswered = true;
      if (stopping.signal.aborted) return;
      await driver
        .reconcileRoutes?.(async (serviceIds) => (await client.resolveRoutes(serviceIds)).routes)
        .catch((error: unknown) => trouble(`updating routes failed: ${(error as Error).message}`));
      if (stopping.signal.aborted) return;
      heartbeatTimer = setTimeout(() => void beat(), Math.max(1, answer.heartbeat_interval_seconds) * 1000);
    } catch (error) {
      lastBeatAnswered = false;
      trouble(`heartbeat failed: ${(error as Error).message}`);
      if (!stopping.signal.aborted) heartbeatTimer = setTimeout(() => void beat(), 5_000);
    }
    heartbeatTimer?.unref();
  }

  async function runTask(task: AgentTask): Promise<void> {
    let seq = task.last_report_seq;
    let logSeq = task.last_log_seq;
    let settled = false;
    let pending: AgentLogLine[] = [];
    let flushTimer: NodeJS.Timeout | undefined;
    let spec: Promise<ServiceDeploymentSpec> | undefined;

    let flushing: Promise<void> = Promise.resolve();

    /**
     * Sends the lines pending now, after any send under way: one send at a time, so a report that flushes first is
     * made only once every line logged before it has arrived (a timer's send still in flight included).
     */
    function flush(): Promise<void> {
      if (flushTimer !== undefined) clearTimeout(flushTimer);
      flushTimer = undefined;
      flushing = flushing.then(sendPending);
      return flushing;
    }

    async function sendPending(): Promise<void> {
      while (pending.length > 0) {
        const batch = pending.slice(0, LOG_BATCH);
        pending = pending.slice(batch.length);
        try {
          await client.appendLogs(task.id, { lease_id: task.lease_id, lines: batch });
        } catch (error) {
          // Lines the control plane refuses (or cannot take after the retries) are lost, not a reason to stop the work.
          trouble(`${batch.length} log line(s) of task ${task.id} not sent: ${(error as Error).message}`);
        }
      }
    }

    async function report(event: AgentProgressEvent, message?: string): Promise<{ subjectStatus: string | null }> {
      await flush();
      seq += 1;
      const answer = await client.reportProgress(task.id, { lease_id: task.lease_id, seq, event, ...(message === undefined ? {} : { message }) });
      if (SETTLING.has(event)) settled = true;
      return { subjectStatus: answer.subject_status };
    }

    const session: TaskSession = {
      task,
      log(stream, line) {
        if (!task.accepts_logs) return;
        logSeq += 1;
        pending.push({ seq: logSeq, at: new Date().toISOString(), stream, line });
        if (pending.length >= LOG_BATCH) void flush();
        else flushTimer ??= setTimeout(() => void flush(), LOG_FLUSH_MS);
      },
      async cancelRequested() {
        return (await client.getTask(task.id)).subject_status === 'CANCELING';
      },
      async built() {
        if (task.action === 'restart') return true;
        return (await report('built')).subjectStatus !== 'CANCELING';
      },
      spec() {
        spec ??= client.getTaskSpec(task.id, task.lease_id).then((answer) => answer.spec);
        return spec;
      },
    };

    try {
      await carryOutTask(driver, session, report);
    } catch (error) {
      if (error instanceof ControlPlaneRefusal && error.status === 409) {
        trouble(`task ${task.id} dropped: ${error.message}`);
        return;
      }
      if (!settled) {
        await report('fail', `${task.action} failed: ${(error as Error).message}`).catch((failure: Error) => trouble(`task ${task.id}: could not report its failure: ${failure.message}`));
      }
    } finally {
      if (flushTimer !== undefined) clearTimeout(flushTimer);
    }
  }

  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_AGENT_CONCURRENCY);
  const running = new Set<Promise<void>>();

  function carryOut(task: AgentTask): void {
    const run: Promise<void> = runTask(task)
      .catch((error: unknown) => trouble(`task ${task.id}: ${(error as Error).message}`))
      .finally(() => running.delete(run));
    running.add(run);
  }

  const loop = (async () => {
    await beat();
    while (!stopping.signal.aborted) {
      if (running.size >= concurrency) {
        await Promise.race(running);
        continue;
      }
      try {
        const { tasks } = await client.leaseTasks(options.pollWaitSeconds ?? 25, stopping.signal, concurrency - running.size);
        for (const task of tasks) carryOut(task);
      } catch (error) {
        if (stopping.signal.aborted) break;
        trouble(`leasing work failed: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
    await Promise.all(running);
  })();

  return {
    async stop() {
      stopping.abort();
      if (heartbeatTimer !== undefined) clearTimeout(heartbeatTimer);
      await loop;
    },
    heartbeating: () => lastBeatAnswered && !stopping.signal.aborted,
  };
}

/**
 * What every driver's host is started with (the driver registry, agent.drivers.ts): where its state lives, the
 * installation's settings it needs, and where it sends what running workloads say outside any task.
 */
export interface DriverHostOptions {
  /** Where workloads, sources, database data and the driver's records live. */
  stateDir: string;
  appsHost: string;
  /** 0: any free port (tests); the address is answered. */
  appsPort: number;
  git: GitAccess;
  externalPostgresUrl?: string | undefined;
  /** SLIPWAY_WORKLOAD_ISOLATION: how workloads are confined. */
  isolation: WorkloadIsolation;
  /** Hidden from every workload besides the state directory: the control plane's data directory. */
  protectedPaths: readonly string[];
  /** The agent's and the driver's complaints (network trouble, a refused report, an instance not answering). */
  onTrouble(message: string): void;
  workloadLogs?: (serviceId: string, lines: AgentWorkloadLogLine[]) => Promise<void>;
  workloadHealth?: (serviceId: string, report: AgentWorkloadHealth) => Promise<void>;
  /** Where the certificates a cluster obtains itself stand (the Kubernetes driver with --cert-manager-issuer). */
  certificateReports?: ((report: AgentCertificateReport) => Promise<unknown>) | undefined;
  /** How often the cluster's certificates are looked at for changes to report (default 15 s). */
  certificateReportMs?: number | undefined;
  /** Kubernetes events of Slipway's namespaces, reported as they come and repeat (the Kubernetes driver; docs/cluster-insight.md). */
  clusterEventReports?: ((report: AgentClusterEventReport) => Promise<unknown>) | undefined;
  /** How often the cluster's events are looked at (default 15 s). */
  clusterEventReportMs?: number | undefined;
  /** The Kubernetes driver's cluster: a kubeconfig file (and context); unset, $KUBECONFIG or ~/.kube/config, or in a pod its service account. */
  kubeconfig?: KubeconfigSource | undefined;
  /** The Kubernetes driver's Ingress class for public hostnames; the cluster's default class when unset. */
  ingressClass?: string | undefined;
  /** The Kubernetes driver's cert-manager ClusterIssuer for the public hostnames' certificates; none: plain HTTP. */
  certManagerIssuer?: string | undefined;
  /** The Kubernetes driver's in-cluster image builds (APPLICATION, JOB from git): builder and registry; none without --build-registry. */
  imageBuild?: ImageBuildOptions | undefined;
  /** The Kubernetes driver's helm (HELM services) and workflow runner image (AGENTIC_WORKFLOWs). */
  helmBinary?: string | undefined;
  workflowRunnerImage?: string | undefined;
}

/** A driver, started on this host with what it needs, that an agent runtime runs over. */
export interface DriverHost {
  driver: AgentDriver;
  /** One line for the operator: where it serves ("serving apps on http://…"). */
  describe(): string;
  /** After the agent stopped: workloads keep running for the next agent, or (`withWorkloads`) stop too. */
  stop(withWorkloads: boolean): Promise<void>;
  /** What the driver sees of its cluster, for the heartbeat; kept cheap (the host caches what costs). */
  facts?(): Promise<AgentClusterFacts | undefined>;
}

/** Runs the agent loop over a started driver host; stopping stops the loop first, then the host. */
export function runAgentOnHost(host: DriverHost, options: Omit<AgentOptions, 'driver' | 'facts'>): { stop(withWorkloads: boolean): Promise<void>; heartbeating(): boolean } {
  const agent = startAgent({ ...options, driver: host.driver, facts: host.facts === undefined ? undefined : () => host.facts?.() ?? Promise.resolve(undefined) });
  let stopped: Promise<void> | undefined;
  return {
    heartbeating: () => agent.heartbeating(),
    stop: (withWorkloads) =>
      (stopped ??= (async () => {
        await agent.stop();
        await host.stop(withWorkloads);
      })()),
  };
}

/** Reports one phase of a task; answers where its subject now stands. */
export type TaskReporter = (event: AgentProgressEvent, message?: string) => Promise<{ subjectStatus: string | null }>;

/**
 * Carries one leased task out with a driver, reporting its phases: take, then the work, then how it ended — succeed
 * when the driver returns, cancel_done when it throws TaskCanceled, fail with the message of anything else. A
 * refusal of the control plane (a lost lease) is the caller's: it propagates. Environment tasks need no driver.
 *
 * The work is one span, a child of the control plane's job run that dispatched the task when the task names it
 * (`traceparent`; docs/operations.md, "Traces"): ids, the action, the attempt and how it ended, never the spec.
 */
export async function carryOutTask(driver: AgentDriver, session: TaskSession, report: TaskReporter): Promise<void> {
  const { task } = session;
  const attributes = {
    'slipway.task.id': task.id,
    'slipway.task.subject_type': task.subject_type,
    'slipway.task.subject_id': task.subject_id,
    'slipway.task.action': task.action,
    'slipway.task.attempt': task.attempt,
    'slipway.agent.driver': driver.name,
  };
  await inSpan(`agent task ${task.action}`, { parent: task.traceparent, role: 'consumer', attributes }, async (span) => {
    const settled = await performTask(driver, session, report);
    span.setAttributes({ 'slipway.task.outcome': settled });
    if (settled === 'fail') span.fail('TaskFailed');
  });
}

/** The phases of a task, reported; answers the one that settled it. */
async function performTask(driver: AgentDriver, session: TaskSession, report: TaskReporter): Promise<'succeed' | 'fail' | 'cancel_done'> {
  const { task } = session;
  await report('take');
  if (task.subject_type === 'ENVIRONMENT') {
    // The control plane fans an environment action out into service tasks of its own and offers this one only once
    // they are done (docs/agent-protocol.md, "Order"): nothing is left to run. A deploy passes its build phase.
    parseTaskPayload(task);
    if (task.action === 'deploy' || task.action === 'redeploy') await report('built');
    await report('succeed');
    return 'succeed';
  }
  try {
    await performServiceTask(driver, session);
  } catch (error) {
    if (error instanceof ControlPlaneRefusal) throw error;
    if (error instanceof TaskCanceled) {
      await report('cancel_done');
      return 'cancel_done';
    }
    await report('fail', error instanceof Error ? error.message : String(error));
    return 'fail';
  }
  await report('succeed');
  return 'succeed';
}

/** A service task, by its subject and action, handed to the driver. */
async function performServiceTask(driver: AgentDriver, session: TaskSession): Promise<void> {
  const { task } = session;
  const payload = parseTaskPayload(task) as ServiceTaskPayload | ServiceTeardownPayload;
  if (task.subject_type === 'SERVICE_TEARDOWN' || task.action === 'delete') return driver.teardown(session, payload);
  if (task.action === 'stop') return driver.stop(session, payload.service_id);
  if (task.action !== 'deploy' && task.action !== 'redeploy' && task.action !== 'restart') throw new Error(`the ${driver.name} driver does not know the action ${task.action}`);
  const spec = await session.spec();
  if (!driver.serviceKinds.includes(spec.service.kind)) {
    throw new Error(driver.unsupported?.(spec.service.kind) ?? `${spec.service.kind} services cannot run on a cluster of the ${driver.name} driver`);
  }
  await driver.deploy(session, spec);
}
