import type { Access } from '../../auth/principal.ts';
import { uniqueOrConflict } from '../../db/db.errors.ts';
import { readJson, writeJson } from '../../db/db.json.ts';
import { badRequest } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName, nameKey } from '../../lib/names.ts';
import { insertCluster, listClusters, updateCluster, type ClusterRow } from './clusters.repo.ts';
import type { ClusterLocks } from './clusters.locks.ts';
import { DEFAULT_KUBERNETES_VERSION, nameTaken, stateOf, type ClusterRecords } from './clusters.records.ts';
import type { ClusterRequestBody } from './clusters.schemas.ts';
import type { ClustersDeps } from './clusters.service.ts';

/**
 * A cluster as its organization defines it: where it runs and its size, with the request's other settings kept as
 * given; listing, reading, creating and editing it, and the view every answer shows.
 */

export interface StoredSettings {
  ssh_keys?: string[];
  features?: Record<string, unknown>[];
  metrics_parameters?: Record<string, unknown>;
  infrastructure_charts_parameters?: Record<string, unknown>;
  keda?: Record<string, unknown>;
  labels_groups?: { id: string }[];
  secret_manager_accesses?: Record<string, unknown>[];
  disk_iops?: number;
  disk_throughput?: number;
  cloud_provider_credentials?: Record<string, unknown>;
}

function deploymentStatus(row: ClusterRow): 'NEVER_DEPLOYED' | 'OUT_OF_DATE' | 'UP_TO_DATE' {
  if (row.deployed_revision === null) return 'NEVER_DEPLOYED';
  return row.deployed_revision === row.config_revision ? 'UP_TO_DATE' : 'OUT_OF_DATE';
}

function clusterView(row: ClusterRow) {
  const settings = readJson<StoredSettings>(row.settings);
  return {
    id: row.id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    organization: { id: row.organization_id },
    name: row.name,
    // Not nullable in the reference: what a cluster does not have is left out.
    ...(row.description === null ? {} : { description: row.description }),
    region: row.region,
    cloud_provider: row.cloud_provider,
    min_running_nodes: row.min_running_nodes,
    max_running_nodes: row.max_running_nodes,
    disk_size: row.disk_size,
    ...(settings.disk_iops === undefined ? {} : { disk_iops: settings.disk_iops }),
    ...(settings.disk_throughput === undefined ? {} : { disk_throughput: settings.disk_throughput }),
    ...(row.instance_type === null ? {} : { instance_type: row.instance_type }),
    kubernetes: row.kubernetes,
    status: stateOf(row),
    has_access: true,
    version: row.version,
    is_default: false,
    is_demo: false,
    production: row.production === 1,
    ssh_keys: settings.ssh_keys ?? [],
    features: settings.features ?? [],
    deployment_status: deploymentStatus(row),
    ...(settings.metrics_parameters === undefined ? {} : { metrics_parameters: settings.metrics_parameters }),
    ...(settings.infrastructure_charts_parameters === undefined ? {} : { infrastructure_charts_parameters: settings.infrastructure_charts_parameters }),
    ...(settings.keda === undefined ? {} : { keda: settings.keda }),
    labels_groups: settings.labels_groups ?? [],
    secret_manager_accesses: settings.secret_manager_accesses ?? [],
  };
}
export type ClusterView = ReturnType<typeof clusterView>;

const SETTINGS_FIELDS = [
  'ssh_keys',
  'features',
  'metrics_parameters',
  'infrastructure_charts_parameters',
  'keda',
  'labels_groups',
  'secret_manager_accesses',
  'disk_iops',
  'disk_throughput',
  'cloud_provider_credentials',
] as const satisfies ReadonlyArray<keyof StoredSettings & keyof ClusterRequestBody>;

/** The request's fields that have no column of their own, kept as given. */
function settingsOf(body: ClusterRequestBody): StoredSettings {
  const settings: Record<string, unknown> = {};
  for (const field of SETTINGS_FIELDS) if (body[field] !== undefined) settings[field] = body[field];
  return settings as StoredSettings;
}

function nodeRange(body: { min_running_nodes?: number | undefined; max_running_nodes?: number | undefined }): { min: number; max: number } {
  const min = body.min_running_nodes ?? 1;
  const max = body.max_running_nodes ?? Math.max(1, min);
  if (min > max) {
    throw badRequest('invalid cluster size', [{ field: '/min_running_nodes', message: `must not exceed max_running_nodes (${max})` }]);
  }
  return { min, max };
}

export function createClusterDefinitions(deps: ClustersDeps, records: ClusterRecords, locks: ClusterLocks) {
  const { db, clock } = deps;
  const { localGrants, requireCluster } = records;
  const { refuseIfLocked } = locks;

  return {
    async listOrganizationCluster(organizationId: string): Promise<ClusterView[]> {
      return (await listClusters(db, organizationId)).filter((r) => r.status !== 'DELETED').map(clusterView);
    },

    async getOrganizationClusterStatus(organizationId: string) {
      const rows = (await listClusters(db, organizationId)).filter((r) => r.status !== 'DELETED');
      return rows.map((r) => ({ cluster_id: r.id, status: stateOf(r) }));
    },

    async getCluster(organizationId: string, clusterId: string): Promise<ClusterView> {
      return clusterView(await requireCluster(db, organizationId, clusterId));
    },

    async createCluster(access: Access, body: ClusterRequestBody): Promise<ClusterView> {
      const kubernetes = body.kubernetes ?? 'MANAGED';
      if (kubernetes === 'SELF_MANAGED') {
        throw badRequest('self-managed clusters are created with createSelfManagedCluster (POST /v1/organization/{organizationId}/selfManagedCluster)', [
          { field: '/kubernetes', message: 'SELF_MANAGED is not created here' },
        ]);
      }
      if (kubernetes === 'LOCAL' && body.cloud_provider !== 'ON_PREMISE') {
        throw badRequest('a LOCAL cluster runs on this host', [{ field: '/cloud_provider', message: 'must be ON_PREMISE for a LOCAL cluster' }]);
      }
      if (kubernetes === 'LOCAL') await localGrants.refuseUnlessAllowed(access.organizationId, 'creating a LOCAL cluster');
      const { min, max } = nodeRange(body);
      if (body.labels_groups !== undefined) await deps.labelsGroups.resolveLabelsGroups(access.organizationId, body.labels_groups.map((g) => g.id));
      const now = clock.now().toISOString();
      const id = newId();
      const name = cleanName(body.name);
      await uniqueOrConflict(
        () =>
          insertCluster(db, {
            id,
            organization_id: access.organizationId,
            name,
            name_key: nameKey(name),
            description: body.description ?? null,
            region: body.region,
            cloud_provider: body.cloud_provider,
            kubernetes,
            instance_type: body.instance_type ?? null,
            min_running_nodes: min,
            max_running_nodes: max,
            disk_size: body.disk_size ?? 40,
            production: body.production === true ? 1 : 0,
            credentials_id: body.cloud_provider_credentials?.credentials?.id ?? null,
            dns_provider: null,
            build_provider: null,
            settings: writeJson(settingsOf(body)),
            version: DEFAULT_KUBERNETES_VERSION,
            status: 'READY',
            status_message: null,
            deployed_revision: null,
            last_execution_id: null,
            last_deployment_date: null,
            created_at: now,
            updated_at: now,
          }),
        nameTaken(name),
      );
      return this.getCluster(access.organizationId, id);
    },

    /**
     * Edits a cluster. Where it runs (cloud, region, kind) is fixed at creation; any other change makes a deployed
     * cluster OUT_OF_DATE until its next deploy. A locked cluster refuses changes.
     */
    async editCluster(organizationId: string, clusterId: string, body: ClusterRequestBody): Promise<ClusterView> {
      const current = await requireCluster(db, organizationId, clusterId);
      await refuseIfLocked(db, clusterId);
      const fixed: Array<[string, string, string]> = [
        ['cloud_provider', current.cloud_provider, body.cloud_provider],
        ['region', current.region, body.region],
        ['kubernetes', current.kubernetes, body.kubernetes ?? current.kubernetes],
      ];
      const changedFixed = fixed.filter(([, was, now]) => was !== now);
      if (changedFixed.length > 0) {
        throw badRequest(
          'a cluster cannot move to another cloud, region or kind; create a new cluster instead',
          changedFixed.map(([field, was]) => ({ field: `/${field}`, message: `cannot change from ${was}` })),
        );
      }
      const { min, max } = nodeRange(body);
      if (body.labels_groups !== undefined) await deps.labelsGroups.resolveLabelsGroups(organizationId, body.labels_groups.map((g) => g.id));
      const name = cleanName(body.name);
      await uniqueOrConflict(
        () =>
          updateCluster(db, clusterId, {
            name,
            name_key: nameKey(name),
            description: body.description ?? null,
            instance_type: body.instance_type ?? null,
            min_running_nodes: min,
            max_running_nodes: max,
            disk_size: body.disk_size ?? current.disk_size,
            production: body.production === true ? 1 : 0,
            credentials_id: body.cloud_provider_credentials?.credentials?.id ?? current.credentials_id,
            settings: writeJson(settingsOf(body)),
            config_revision: current.config_revision + 1,
            updated_at: clock.now().toISOString(),
          }),
        nameTaken(name),
      );
      return this.getCluster(organizationId, clusterId);
    },
  };
}
