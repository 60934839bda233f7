import { ControlPlaneRefusal, type AgentControlPlane, type AgentTask } from '../../protocol/agent-protocol.ts';
import { statusOf } from '../../http/errors.ts';
import { AppError } from '../../lib/errors.ts';
import type { AgentsService } from './agents.service.ts';

/**
 * The agent protocol without the network, for the agent `slipway server` runs in its own process for the LOCAL
 * clusters (SLIPWAY_LOCAL_AGENT): the same runtime and driver as `slipway agent`, calling the agents service
 * directly. LOCAL clusters have no operator enrollment (their "cluster" is this host), so instead of one credential
 * per cluster this client serves every LOCAL cluster of the installation: it leases from each in turn, starting
 * one cluster further each round, and remembers which cluster each task came from. The control plane's refusals
 * arrive as they would over HTTP (ControlPlaneRefusal with the status the API would answer), so the runtime treats a
 * lost lease the same way.
 */
export interface InProcessAgentOptions {
  agents: AgentsService;
  /** The clusters this agent serves, asked again on every lease round (clusters come and go). */
  clusterIds(): Promise<string[]>;
  /** How often an idle lease round looks again when nothing was dispatched in this process (default 1 s). */
  pollMs?: number;
}

async function asRefusal<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof AppError) throw new ControlPlaneRefusal(statusOf(error.kind), error.message);
    throw error;
  }
}

/** What one lease round takes when the runtime does not say: the HTTP route's default. */
const DEFAULT_LEASE_MAX = 5;

export function createInProcessAgentClient(options: InProcessAgentOptions): AgentControlPlane {
  const { agents } = options;
  const pollMs = options.pollMs ?? 1_000;
  const clusterOfTask = new Map<string, string>();
  let rounds = 0;

  function clusterOf(taskId: string): string {
    const clusterId = clusterOfTask.get(taskId);
    if (clusterId === undefined) throw new ControlPlaneRefusal(statusOf('not_found'), `task ${taskId} not found`);
    return clusterId;
  }

  /** A workload belongs to one of the served clusters: the services module says which (404 for the others). */
  async function onServedCluster<T>(serviceId: string, call: (clusterId: string) => Promise<T>): Promise<T> {
    let refusal: unknown;
    for (const clusterId of await options.clusterIds()) {
      try {
        return await asRefusal(() => call(clusterId));
      } catch (error) {
        refusal = error;
      }
    }
    throw refusal ?? new ControlPlaneRefusal(statusOf('not_found'), `no deployed service ${serviceId} on this host`);
  }

  return {
    async leaseTasks(waitSeconds, signal, max = DEFAULT_LEASE_MAX) {
      const deadline = Date.now() + waitSeconds * 1000;
      for (;;) {
        // Each round starts one cluster further, so a busy cluster does not keep the others waiting.
        const clusterIds = await options.clusterIds();
        const first = rounds++ % Math.max(1, clusterIds.length);
        const leased: AgentTask[] = [];
        for (const clusterId of [...clusterIds.slice(first), ...clusterIds.slice(0, first)]) {
          if (leased.length >= max) break;
          const { tasks } = await agents.leaseTasks(clusterId, { max: max - leased.length, waitMs: 0 });
          for (const task of tasks) clusterOfTask.set(task.id, clusterId);
          leased.push(...(tasks as AgentTask[]));
        }
        if (leased.length > 0) return { tasks: leased };
        if (Date.now() >= deadline || signal?.aborted === true) return { tasks: [] };
        // Woken at once by a dispatch of this process, the usual case for the clusters of the server it runs in.
        await agents.waitForAnyWork(Math.min(pollMs, Math.max(1, deadline - Date.now())), signal);
      }
    },
    getTask: (taskId) => asRefusal(() => agents.getTask(clusterOf(taskId), taskId)),
    getTaskSpec: (taskId, leaseId) => asRefusal(() => agents.getTaskSpec(clusterOf(taskId), taskId, leaseId)),
    async reportProgress(taskId, report) {
      const answer = await asRefusal(() => agents.reportProgress(clusterOf(taskId), taskId, report));
      if (answer.task_status === 'DONE') clusterOfTask.delete(taskId);
      return answer;
    },
    appendLogs: (taskId, batch) => asRefusal(() => agents.appendLogs(clusterOf(taskId), taskId, batch)),
    appendWorkloadLogs: (serviceId, lines) => onServedCluster(serviceId, (clusterId) => agents.appendWorkloadLogs(clusterId, serviceId, lines)),
    async resolveRoutes(serviceIds) {
      const routes = [];
      for (const clusterId of await options.clusterIds()) routes.push(...(await agents.resolveRoutes(clusterId, serviceIds)).routes);
      return { routes };
    },
    reportWorkloadHealth: (serviceId, report) => onServedCluster(serviceId, (clusterId) => agents.recordWorkloadHealth(clusterId, serviceId, report)),
    async heartbeat(beat) {
      for (const clusterId of await options.clusterIds()) await agents.recordHeartbeat(clusterId, beat);
      return agents.heartbeatAnswer();
    },
  };
}
