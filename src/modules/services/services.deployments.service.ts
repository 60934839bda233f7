import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { VariableSnapshot } from '../variables/variables.service.ts';
import type { DeploymentEventSource, EventPublisher } from '../webhooks/webhooks.events.ts';
import type { StoredService } from './services.kinds.ts';
import { createServiceDeploymentActions } from './services.deployments.actions.ts';
import { createServiceDeploymentHistory } from './services.deployments.history.ts';
import { createServiceDeploymentLogs } from './services.deployments.logs.ts';
import { createDeploymentRecords } from './services.deployments.records.ts';
import { createServiceDeploymentWorkloads } from './services.deployments.workloads.ts';

export { SERVICE_ACTION_JOB, type ServiceActionPayload } from './services.deployments.actions.ts';
export { MAX_HISTORY_PAGE_SIZE } from './services.deployments.history.ts';
export { LOG_PAGE_SIZE, MAX_LOG_LINE_CHARS, MAX_LOG_LINES_PER_APPEND, type LogLineInput, type LogStream } from './services.deployments.logs.ts';
export { settingsHashOf } from './services.deployments.records.ts';
export { SERVICE_TEARDOWN_JOB, type ServiceTeardownPayload } from './services.deployments.workloads.ts';

/**
 * Service deployments (issue 8 part 5, docs/service-deployments.md). An action request writes, in one transaction,
 * the state change, a deployment record carrying the service's settings and its resolved variable snapshot
 * (secrets as sealed envelopes), its first log lines and the job that carries it out, and answers 202. The work is
 * the cluster's agent's (issue 9): until it takes the job the service stays QUEUED and its status says so.
 *
 * The service is assembled from its parts over one deps object: the records they all read
 * (services.deployments.records.ts), the actions and the agent's reports that move the state (.actions.ts), the
 * status and history views (.history.ts), the logs (.logs.ts) and the workload as the agent sees it (.workloads.ts).
 */

/** What a deployment carries: the service as deployed and its resolved variables (stored as JSON). */
export interface DeploymentSnapshot {
  service: {
    id: string;
    kind: ServiceKind;
    name: string;
    organizationId: string;
    environmentId: string;
    /** The cluster it runs on (the environment's at the time of the deployment). */
    clusterId: string;
    settings: Record<string, unknown>;
  };
  git_commit_id: string | null;
  image_tag: string | null;
  /** Null for databases: they consume no variables (they provide built-ins to the others). */
  variables: VariableSnapshot | null;
}

/** Running time reported to billing (its MeteringPort, resource type SERVICE). */
export interface ServiceMetering {
  resourceRunning(input: { organizationId: string; resourceType: 'SERVICE'; resourceId: string; priceKey: string; units: number; at: string }): Promise<void>;
  resourceStopped(input: { resourceType: 'SERVICE'; resourceId: string; at: string }): Promise<void>;
}

export interface ServiceDeploymentsDeps {
  db: Kysely<DB>;
  clock: Clock;
  services: {
    findService(serviceId: string): Promise<StoredService | undefined>;
    listEnvironmentServices(environmentId: string): Promise<StoredService[]>;
  };
  environments: { findEnvironmentSummary(environmentId: string): Promise<{ clusterId: string } | undefined> };
  /**
   * The variables module: the snapshot a deployment stores, the content hash OUT_OF_DATE compares with, and each
   * final variable's alias chain (a chain ending at another service's built-in is what the service needs it for).
   */
  variables: {
    resolveForDeployment(environmentId: string, serviceId?: string): Promise<VariableSnapshot>;
    explain(
      environmentId: string,
      serviceId: string | undefined,
      reveal: boolean,
    ): Promise<{ content_hash: string; results: Array<{ key: string; alias_chain: Array<{ key: string; scope: string }> }> }>;
  };
  /**
   * Refuses an action that starts workloads on the cluster by throwing (the clusters module's admitDeployment): 403
   * on a LOCAL cluster the organization holds no grant for, 402 while its billing is not valid.
   */
  deploymentGate: (organizationId: string, clusterId: string) => Promise<void>;
  metering: ServiceMetering;
  /** Wakes the in-process job worker after a commit (the agent's dispatcher may be waiting). */
  wakeWorkers?: () => void;
  /** Deployment events for the webhooks, published in the transaction of each move (none unless given). */
  events?: { publisher: EventPublisher; sourceOf(service: StoredService): Promise<DeploymentEventSource> };
}

export function createServiceDeploymentsService(deps: ServiceDeploymentsDeps) {
  const records = createDeploymentRecords(deps);
  return {
    ...createServiceDeploymentHistory(deps, records),
    ...createServiceDeploymentActions(deps, records),
    ...createServiceDeploymentLogs(deps, records),
    ...createServiceDeploymentWorkloads(deps),
  };
}

export type ServiceDeploymentsService = ReturnType<typeof createServiceDeploymentsService>;
export type ServiceStatusView = Awaited<ReturnType<ServiceDeploymentsService['getServiceStatus']>>;
