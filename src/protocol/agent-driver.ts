import type { AgentLogLine, AgentTask, ServiceDeploymentSpec, ServiceRoute, ServiceTaskPayload, ServiceTeardownPayload } from './agent-protocol.ts';

/**
 * The contract between the agent runtime (src/agent/agent.runtime.ts) and the drivers that run work on a cluster
 * (src/engine/local/ today). It lives beside the wire protocol so that neither side imports the other: the runtime
 * speaks the protocol and picks a driver from the registry (src/agent/agent.drivers.ts); a driver knows nothing of
 * leases, reports or retries.
 */

/**
 * One leased service task as a driver sees it. The runtime has taken it (`take`) and reports how it ends: the
 * driver returns (succeed), throws TaskCanceled (cancel_done) or throws anything else (fail, with its message).
 */
export interface TaskSession {
  readonly task: AgentTask;
  /** Queues a log line of the work (sent in batches, and before every report; dropped where the subject keeps none). */
  log(stream: AgentLogLine['stream'], line: string): void;
  /** Whether the control plane asks the work to stop (its subject is CANCELING). */
  cancelRequested(): Promise<boolean>;
  /**
   * Reports the build phase done (a deploy or redeploy; a restart has none and answers true at once). False when the
   * deployment was canceled meanwhile: the driver undoes what it started and throws TaskCanceled.
   */
  built(): Promise<boolean>;
  /** The deployment's spec, checked against the protocol (settings as deployed, variables with secrets opened); read once. */
  spec(): Promise<ServiceDeploymentSpec>;
}

/** Thrown by a driver that stopped a task because its deployment was canceled: the runtime reports cancel_done. */
export class TaskCanceled extends Error {
  constructor() {
    super('the deployment was canceled');
  }
}

/**
 * What runs the work on a cluster: the local driver on this host, a Kubernetes driver in a cluster. The runtime
 * owns the protocol — leases, reports, retries, cancel, environment tasks, which need nothing of a driver — and
 * hands a driver only service work: deploy (deploy, redeploy and restart: `session.task.action` says which),
 * stop and teardown. Runtime output of running workloads goes through the sink each driver is given.
 */
export interface AgentDriver {
  readonly name: string;
  /** The service kinds it runs; a task for another fails at once with `unsupported(kind)`'s message. */
  readonly serviceKinds: readonly string[];
  unsupported?(kind: string): string;
  deploy(session: TaskSession, spec: ServiceDeploymentSpec): Promise<void>;
  stop(session: TaskSession, serviceId: string): Promise<void>;
  /** Removes everything of a deleted service (no spec any more: the payload and the driver's own records say what). */
  teardown(session: TaskSession, payload: ServiceTeardownPayload | ServiceTaskPayload): Promise<void>;
  /**
   * After each heartbeat: brings the routes of the services it routes up to date (a custom domain verified or removed
   * since their deployment), asking the control plane through `resolve`.
   */
  reconcileRoutes?(resolve: (serviceIds: readonly string[]) => Promise<ServiceRoute[]>): Promise<void>;
}

