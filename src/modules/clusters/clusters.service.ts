import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { EventPublisher } from '../webhooks/webhooks.events.ts';
import { createClusterActions } from './clusters.actions.ts';
import { createClusterAdvancedSettings } from './clusters.advanced-settings.ts';
import { createClusterDefinitions } from './clusters.definitions.ts';
import { createClusterInstallation } from './clusters.installation.ts';
import { createClusterLocks } from './clusters.locks.ts';
import { createClusterLookups } from './clusters.lookups.ts';
import { createClusterOperators } from './clusters.operators.ts';
import { createClusterRecords } from './clusters.records.ts';
import type { StateChangePublisher } from '../organization-changes/organization-changes.signals.ts';

// Names of the parts that callers import from here, where the service's contract has always been.
export { CLUSTER_ACTION_JOB, type ClusterActionPayload } from './clusters.actions.ts';
export type { ClusterView } from './clusters.definitions.ts';
export { SUPPORTED_KUBERNETES_VERSIONS, nextKubernetesVersion, summaryOf, type ClusterSummary } from './clusters.records.ts';

export interface ClustersDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** Called after a transaction that enqueued cluster work commits, so a worker picks it up at once. */
  wakeWorkers: () => void;
  /** Removes a cluster's stored platform configuration (deleteMode DELETE_PLATFORM_CONFIG). */
  deletePlatformConfiguration: (trx: Transaction<DB>, clusterId: string) => Promise<void>;
  /** Where operators reach this control plane, and the chart that installs them. */
  publicUrl: string;
  /**
   * Whether the organization's billing lets it deploy (billing's deploymentsAllowed); refused deploys answer 402.
   * admitDeployment asks it for every deployment, the environments' and services' included.
   */
  deploymentGate: (organizationId: string) => Promise<{ allowed: boolean; reason: string }>;
  /** Checks that labels group ids name groups of the organization (400 naming the unknown ones). */
  labelsGroups: { resolveLabelsGroups(organizationId: string, ids: readonly string[], pointer?: string): Promise<unknown> };
  /** Deployment events: a deploy cancelled while still queued is published here, in the cancel's transaction. */
  events?: EventPublisher;
  /** Open pages' "look again" (organization-changes.signals.ts), published in the transaction that moves the status. */
  stateChanges?: Pick<StateChangePublisher, 'clusterChanged'> | undefined;
}

/**
 * Clusters (docs/clusters.md). The service is assembled from its parts over one deps object: what every part reads
 * (clusters.records.ts), the locks (clusters.locks.ts), the cluster's definition and its views
 * (clusters.definitions.ts), what other modules ask of it (clusters.lookups.ts), the action requests
 * (clusters.actions.ts; clusters.jobs.ts carries them out), a self-managed cluster's operator
 * (clusters.operators.ts) and the cluster's advanced settings (clusters.advanced-settings.ts).
 */
export function createClustersService(deps: ClustersDeps) {
  const records = createClusterRecords(deps);
  const locks = createClusterLocks(deps);
  const definitions = createClusterDefinitions(deps, records, locks);
  const lookups = createClusterLookups(deps, records);
  const actions = createClusterActions(deps, records, locks);
  const operators = createClusterOperators(deps, records);
  const installation = createClusterInstallation(deps, operators);
  const advancedSettings = createClusterAdvancedSettings(deps, records, locks);

  return {
    listOrganizationCluster: definitions.listOrganizationCluster,
    getOrganizationClusterStatus: definitions.getOrganizationClusterStatus,
    getCluster: definitions.getCluster,
    findClusterSummary: lookups.findClusterSummary,
    admitDeployment: lookups.admitDeployment,
    isLocalCluster: lookups.isLocalCluster,
    listLocalClusterIds: lookups.listLocalClusterIds,
    placementOf: lookups.placementOf,
    clustersUsingLabelsGroup: lookups.clustersUsingLabelsGroup,
    createCluster: definitions.createCluster,
    editCluster: definitions.editCluster,
    deleteCluster: actions.deleteCluster,
    deployCluster: actions.deployCluster,
    stopCluster: actions.stopCluster,
    restartCluster: actions.restartCluster,
    upgradeCluster: actions.upgradeCluster,
    cancelClusterAction: actions.cancelClusterAction,
    getClusterStatus: actions.getClusterStatus,
    lockCluster: locks.lockCluster,
    unlockCluster: locks.unlockCluster,
    listClusterLocks: locks.listClusterLocks,
    getClusterOperatorBootstrap: operators.getClusterOperatorBootstrap,
    createSelfManagedClusterRecords: operators.createSelfManagedClusterRecords,
    bootstrapView: operators.bootstrapView,
    authenticateOperator: operators.authenticateOperator,
    checkEnrollmentToken: operators.checkEnrollmentToken,
    enrollOperator: operators.enrollOperator,
    recordOperatorReport: operators.recordOperatorReport,
    noteAgentPermissions: operators.noteAgentPermissions,
    getInstallationHelmValues: installation.getInstallationHelmValues,
    getInstallationManifests: installation.getInstallationManifests,
    getClusterAdvancedSettings: advancedSettings.getClusterAdvancedSettings,
    editClusterAdvancedSettings: advancedSettings.editClusterAdvancedSettings,
  };
}

export type ClustersService = ReturnType<typeof createClustersService>;
