import { accessSync, constants } from 'node:fs';
import type { ClusterSummary } from './clusters.records.ts';

/**
 * Who carries a cluster action out, by the cluster's kind (issue 7 part 3). A driver either finishes the step,
 * asks to be called again later (waiting for something outside Slipway, e.g. an operator's report), or throws a
 * ClusterDriverError: a failure of the action itself, which puts the cluster in the action's error state with the
 * message. Any other exception is treated as transient and the job is retried.
 */

export type DriverStep = 'done' | { waitUntil: Date };

export interface ClusterActionContext {
  /** When the action was requested (ISO-8601): drivers that wait measure their timeout from it. */
  requestedAt: string;
  dryRun: boolean;
  /** The Kubernetes version to end at (an upgrade); the cluster's own version otherwise. */
  targetVersion: string;
  deleteMode: string;
  skipReconcile: boolean;
}

export interface ClusterDriver {
  /** BUILDING: validate and render what will be applied; nothing is changed yet. */
  prepare(cluster: ClusterSummary, context: ClusterActionContext): Promise<void>;
  deploy(cluster: ClusterSummary, context: ClusterActionContext): Promise<DriverStep>;
  stop(cluster: ClusterSummary, context: ClusterActionContext): Promise<DriverStep>;
  restart(cluster: ClusterSummary, context: ClusterActionContext): Promise<DriverStep>;
  delete(cluster: ClusterSummary, context: ClusterActionContext): Promise<DriverStep>;
}

export class ClusterDriverError extends Error {
  readonly reason: 'failure' | 'credentials';
  constructor(
    reason: 'failure' | 'credentials',
    message: string,
  ) {
    super(message);
    this.reason = reason;
    this.name = 'ClusterDriverError';
  }
}

/**
 * The built-in LOCAL cluster is the host Slipway runs on: there is no infrastructure to create, so its actions check
 * that the host can hold workloads (the work directory is writable) and complete. Workloads themselves are run by
 * the local agent (issue 9).
 */
export function createLocalClusterDriver(workDir: string): ClusterDriver {
  function checkHost(): DriverStep {
    try {
      accessSync(workDir, constants.W_OK);
    } catch {
      throw new ClusterDriverError('failure', `the local cluster's work directory ${workDir} is not writable`);
    }
    return 'done';
  }
  return {
    prepare: async () => void checkHost(),
    deploy: async () => checkHost(),
    stop: async () => 'done',
    restart: async () => checkHost(),
    delete: async () => 'done',
  };
}

/** Creates cloud infrastructure for MANAGED clusters; none ships with Slipway yet. */
export interface CloudProvisioner {
  readonly cloudProviders: readonly string[];
  driver: ClusterDriver;
}

/**
 * MANAGED clusters are provisioned in the customer's cloud by a provisioner. Without one configured for the
 * cluster's cloud, every action fails with a message that says so: Slipway never reports infrastructure it did not
 * create.
 */
export function createManagedClusterDriver(provisioners: readonly CloudProvisioner[]): ClusterDriver {
  function provisionerFor(cluster: ClusterSummary): ClusterDriver {
    const found = provisioners.find((p) => p.cloudProviders.includes(cluster.cloudProvider));
    if (found === undefined) {
      throw new ClusterDriverError(
        'failure',
        `no cloud provisioner is configured for ${cluster.cloudProvider} managed clusters on this installation; use a self-managed cluster with the Slipway operator, or the built-in LOCAL cluster`,
      );
    }
    return found.driver;
  }
  return {
    // Rendering belongs to the provisioner; without one the deploy step itself reports what is missing.
    prepare: async (cluster, context) => {
      if (provisioners.some((p) => p.cloudProviders.includes(cluster.cloudProvider))) await provisionerFor(cluster).prepare(cluster, context);
    },
    deploy: async (cluster, context) => provisionerFor(cluster).deploy(cluster, context),
    stop: async (cluster, context) => provisionerFor(cluster).stop(cluster, context),
    restart: async (cluster, context) => provisionerFor(cluster).restart(cluster, context),
    // Nothing was ever created without a provisioner, so there is nothing to tear down.
    delete: async (cluster, context) => (provisioners.length === 0 ? 'done' : provisionerFor(cluster).delete(cluster, context)),
  };
}

export interface OperatorReadiness {
  /** The operator's last report, if it enrolled. */
  lastReport(clusterId: string): Promise<{ status: string | null; reportedAt: string | null } | undefined>;
}

/**
 * SELF_MANAGED clusters run the Slipway operator, which enrolls and reports. Deploying completes when the operator
 * reports READY (after the action was requested); it fails when no such report arrives within the timeout.
 * Stopping and deleting release Slipway's side only: the customer's cluster is theirs to keep.
 */
export function createSelfManagedClusterDriver(options: {
  operators: OperatorReadiness;
  now: () => Date;
  readyTimeoutMs: number;
  recheckMs: number;
}): ClusterDriver {
  async function awaitReady(cluster: ClusterSummary, context: ClusterActionContext): Promise<DriverStep> {
    const report = await options.operators.lastReport(cluster.id);
    if (report?.status === 'READY' && report.reportedAt !== null && report.reportedAt >= context.requestedAt) return 'done';
    const now = options.now();
    const deadline = new Date(context.requestedAt).getTime() + options.readyTimeoutMs;
    if (now.getTime() >= deadline) {
      const minutes = Math.round(options.readyTimeoutMs / 60_000);
      const what = report === undefined ? 'no operator has enrolled for this cluster' : 'its operator did not report READY';
      throw new ClusterDriverError(
        'failure',
        `${what} within ${minutes >= 1 ? `${minutes} minute(s)` : `${options.readyTimeoutMs} ms`}; install the operator with the cluster's operator bootstrap`,
      );
    }
    return { waitUntil: new Date(Math.min(deadline, now.getTime() + options.recheckMs)) };
  }
  return {
    prepare: async () => undefined,
    deploy: awaitReady,
    restart: awaitReady,
    stop: async () => 'done',
    delete: async () => 'done',
  };
}
