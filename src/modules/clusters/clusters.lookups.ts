import type { Placement } from '../../auth/principal.ts';
import { readJson } from '../../db/db.json.ts';
import type { Queryable } from '../../db/db.schema.ts';
import { findCluster, findClusterById, listClusterIdsOfKind, listClusters } from './clusters.repo.ts';
import type { StoredSettings } from './clusters.definitions.ts';
import { summaryOf, type ClusterRecords, type ClusterSummary } from './clusters.records.ts';
import type { ClustersDeps } from './clusters.service.ts';

/**
 * What other modules ask of the clusters (app.ts hands these over as their ports): a cluster's summary and
 * placement, whether a deployment may start workloads on it, the LOCAL clusters, and the clusters using a labels group.
 * A deleted cluster counts as gone.
 */
async function findLiveClusterSummary(db: Queryable, organizationId: string, clusterId: string): Promise<ClusterSummary | undefined> {
  const row = await findCluster(db, organizationId, clusterId);
  return row === undefined || row.status === 'DELETED' ? undefined : summaryOf(row);
}

/**
 * A cluster's summary straight from the database, for a module the clusters service itself depends on (billing: the
 * service asks billing whether deployments are allowed, billing asks what a cluster costs) — so neither needs the
 * other built first.
 */
export function clusterSummariesOf(db: Queryable) {
  return { findClusterSummary: (organizationId: string, clusterId: string) => findLiveClusterSummary(db, organizationId, clusterId) };
}

export function createClusterLookups(deps: ClustersDeps, records: ClusterRecords) {
  const { db } = deps;
  const { admit } = records;

  return {
    findClusterSummary: (organizationId: string, clusterId: string) => findLiveClusterSummary(db, organizationId, clusterId),

    /**
     * For the environments and services modules, before an action that starts workloads on the cluster: throws the
     * 403 of a LOCAL cluster the organization holds no grant for, or the 402 of invalid billing. A cluster gone
     * meanwhile leaves only the billing check (the caller refuses what has no cluster).
     */
    async admitDeployment(organizationId: string, clusterId: string): Promise<void> {
      const cluster = await findClusterById(db, clusterId);
      await admit(organizationId, cluster === undefined || cluster.status === 'DELETED' ? undefined : cluster);
    },

    /** Whether the cluster is a LOCAL one: its workloads run on this host, by the in-process agent's local driver. */
    async isLocalCluster(clusterId: string): Promise<boolean> {
      const row = await findClusterById(db, clusterId);
      return row !== undefined && row.status !== 'DELETED' && row.kubernetes === 'LOCAL';
    },

    /** Every LOCAL cluster of the installation, for the in-process agent. */
    listLocalClusterIds(): Promise<string[]> {
      return listClusterIdsOfKind(db, 'LOCAL');
    },

    /** Where a cluster addressed without its organization in the path (`/cluster/{clusterId}/…`) lives. */
    async placementOf(clusterId: string): Promise<Placement | undefined> {
      const row = await findClusterById(db, clusterId);
      return row === undefined || row.status === 'DELETED' ? undefined : { organizationId: row.organization_id };
    },

    /** The clusters a labels group is attached to (the labels groups module refuses to delete such a group). */
    async clustersUsingLabelsGroup(organizationId: string, groupId: string) {
      const rows = await listClusters(db, organizationId);
      return rows
        .filter((row) => row.status !== 'DELETED' && (readJson<StoredSettings>(row.settings).labels_groups ?? []).some((group) => group.id === groupId))
        .map((row) => ({ item_id: row.id, item_name: row.name, item_type: 'CLUSTER' }));
    },
  };
}
