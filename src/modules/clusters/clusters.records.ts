import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/db.schema.ts';
import { notFound, paymentRequired } from '../../lib/errors.ts';
import { findCluster, type ClusterRow } from './clusters.repo.ts';
import { createLocalClusterGrants } from './clusters.local-grants.ts';
import type { ClustersDeps } from './clusters.service.ts';
import { isClusterState, type ClusterState } from './clusters.states.ts';

/**
 * What every part of the clusters service reads (clusters.service.ts assembles the parts): the Kubernetes versions
 * Slipway deploys, a cluster's state and summary, the cluster of an organization (404 once deleted), and the check
 * a deployment passes before it starts workloads.
 */

/** What other modules may know of a cluster (billing prices it, platform configuration scopes to it). */
export interface ClusterSummary {
  id: string;
  organizationId: string;
  name: string;
  cloudProvider: string;
  kubernetes: string;
  region: string;
  instanceType: string | null;
  minRunningNodes: number;
  maxRunningNodes: number;
  status: string;
}

/** Kubernetes versions Slipway deploys, oldest first; upgrades go one minor version at a time. */
export const SUPPORTED_KUBERNETES_VERSIONS = ['1.29', '1.30', '1.31', '1.32'] as const;
/** New clusters start one version behind the newest, so an upgrade path exists from day one. */
export const DEFAULT_KUBERNETES_VERSION = '1.31';

export function nextKubernetesVersion(version: string): string | null {
  const index = SUPPORTED_KUBERNETES_VERSIONS.indexOf(version as (typeof SUPPORTED_KUBERNETES_VERSIONS)[number]);
  if (index === -1) return null;
  return SUPPORTED_KUBERNETES_VERSIONS[index + 1] ?? null;
}

export function summaryOf(row: ClusterRow): ClusterSummary {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    cloudProvider: row.cloud_provider,
    kubernetes: row.kubernetes,
    region: row.region,
    instanceType: row.instance_type,
    minRunningNodes: row.min_running_nodes,
    maxRunningNodes: row.max_running_nodes,
    status: row.status,
  };
}

export function stateOf(row: ClusterRow): ClusterState {
  if (!isClusterState(row.status)) throw new Error(`cluster ${row.id} holds an unknown status ${row.status}`);
  return row.status;
}

export function nameTaken(name: string): string {
  return `a cluster named "${name}" already exists in this organization`;
}

export function createClusterRecords(deps: ClustersDeps) {
  const { db, clock } = deps;
  const localGrants = createLocalClusterGrants({ db, clock });

  /**
   * The one check every deployment passes before it starts workloads on a cluster: the cluster's own deploy, upgrade
   * and restart, and the environment and service actions that start workloads (their modules ask admitDeployment).
   * On a LOCAL cluster the organization needs the installation operator's grant (403); then its billing must be valid
   * (402). Stopping, deleting and cancelling never ask: they end workloads.
   */
  async function admit(organizationId: string, cluster: Pick<ClusterRow, 'kubernetes' | 'name'> | undefined): Promise<void> {
    if (cluster?.kubernetes === 'LOCAL') await localGrants.refuseUnlessAllowed(organizationId, `deploying onto the LOCAL cluster "${cluster.name}"`);
    const gate = await deps.deploymentGate(organizationId);
    if (!gate.allowed) throw paymentRequired(`deployments are suspended while the organization's billing is not valid: ${gate.reason}`);
  }

  async function requireCluster(executor: Kysely<DB> | Transaction<DB>, organizationId: string, clusterId: string): Promise<ClusterRow> {
    const row = await findCluster(executor, organizationId, clusterId);
    if (row === undefined || row.status === 'DELETED') throw notFound(`cluster ${clusterId} not found`);
    return row;
  }

  return { localGrants, admit, requireCluster };
}

export type ClusterRecords = ReturnType<typeof createClusterRecords>;
