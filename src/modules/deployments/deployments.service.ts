import type { Kysely } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import type { ChangeSignals } from '../../db/db.signals.ts';
import type { Clock } from '../../lib/clock.ts';
import type { ClusterSummary } from '../clusters/clusters.service.ts';
import type { EnvironmentSummary } from '../environments/environments.service.ts';
import type { StateChangePublisher } from '../organization-changes/organization-changes.signals.ts';
import type { StoredService } from '../services/services.kinds.ts';
import type { ServiceKind } from '../variables/variables.builtins.ts';
import type { VariableSnapshot } from '../variables/variables.service.ts';
import type { DeploymentEventSource, EventPublisher } from '../webhooks/webhooks.events.ts';
import { createEnvironmentRecords, type EnvironmentStatePort } from './deployments.environment-records.ts';
import { createEnvironmentRequests } from './deployments.environment-requests.ts';
import { createDeploymentHistory } from './deployments.history.ts';
import { createServiceDeploymentLogs } from './deployments.logs.ts';
import { createServiceRequests, type StartOrder } from './deployments.requests.ts';
import { createServiceRecords } from './deployments.service-records.ts';
import { createDeploymentTransitions } from './deployments.transitions.ts';
import { createServiceUninstall } from './deployments.uninstall.ts';
import { createServiceDeploymentWorkloads } from './deployments.workloads.ts';
import type { DeploymentOutcomeMetrics } from './deployments.metrics.ts';

/**
 * Deployments of environments and services (issue 8 parts 1 and 5, docs/environments.md,
 * docs/service-deployments.md): one machinery for both. An action request writes, in one transaction, the state
 * change, a deployment record (a service's carries its settings and its resolved variable snapshot, secrets as
 * sealed envelopes, and its first log lines) and the job that carries it out, and answers 202. The work is the
 * cluster's agent's (docs/agent-protocol.md): until it takes the job the subject stays QUEUED and its status says so.
 * An environment's action is fanned out into its services' own (deployments.dispatch.ts).
 *
 * The service is assembled from its parts over one deps object: the records they read (deployments.service-records.ts,
 * deployments.environment-records.ts), the requests (deployments.requests.ts for a service,
 * deployments.environment-requests.ts for an environment), the moves after a request — cancel and the agent's
 * reports — for both (deployments.transitions.ts), the status and history views (deployments.history.ts), a
 * service's logs (deployments.logs.ts) and its workload as the agent sees it (deployments.workloads.ts).
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

export interface DeploymentsDeps {
  db: Kysely<DB>;
  clock: Clock;
  services: {
    findService(serviceId: string): Promise<StoredService | undefined>;
    listEnvironmentServices(environmentId: string): Promise<StoredService[]>;
  };
  /** The environments module: where an environment lives, and its place in the state machine (its row's columns). */
  environments: EnvironmentStatePort;
  /** An environment's action is refused (409) once its cluster is gone. */
  clusters: { findClusterSummary(organizationId: string, clusterId: string): Promise<ClusterSummary | undefined> };
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
  /**
   * The deployment-stages module (docs/deployment-stages.md): each service's place in its environment's stage order
   * and whether the environment's deploy skips it. Without it, the default stages' order: databases first.
   */
  stages?: { startOrderOf(environmentId: string): Promise<StartOrder> };
  /** Wakes the in-process job worker after a commit (the agent's dispatcher may be waiting). */
  wakeWorkers?: () => void;
  /**
   * Open pages' "look again" (organization-changes.signals.ts): published in the transaction of each write of a
   * service's runtime row (its state, deployment, workload health); none unless given.
   */
  stateChanges?: Pick<StateChangePublisher, 'serviceChanged'> | undefined;
  /** Change signals between the processes sharing the database (db.signals.ts): live log streams of any replica wake. */
  signals?: Pick<ChangeSignals, 'publish' | 'subscribe'> | undefined;
  /** How often a live log stream looks for lines no signal announced (1 s unless given). */
  livePollMs?: number | undefined;
  /** A service reached DEPLOYED (its host name may now need a certificate: docs/https.md). Never fails the report. */
  serviceDeployed?: (serviceId: string) => Promise<void>;
  /** Deployment events for the webhooks, published in the transaction of each move (none unless given). */
  events?: {
    publisher: EventPublisher;
    serviceSource(service: StoredService): Promise<DeploymentEventSource>;
    environmentSource(environment: EnvironmentSummary): Promise<DeploymentEventSource>;
  };
  /** Counts service actions by how they settled (deployments.metrics.ts); none when absent. */
  metrics?: DeploymentOutcomeMetrics;
}

export function createDeploymentsService(deps: DeploymentsDeps) {
  const services = createServiceRecords(deps);
  const environments = createEnvironmentRecords(deps);
  return {
    ...createDeploymentHistory(deps, services, environments),
    ...createServiceRequests(deps, services),
    ...createEnvironmentRequests(deps, environments),
    ...createDeploymentTransitions(deps, services, environments),
    ...createServiceDeploymentLogs(deps, services),
    ...createServiceDeploymentWorkloads(deps),
    ...createServiceUninstall(deps, services),
  };
}

export type DeploymentsService = ReturnType<typeof createDeploymentsService>;
export type ServiceStatusView = Awaited<ReturnType<DeploymentsService['getServiceStatus']>>;
