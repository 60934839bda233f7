import { Type, type Static } from 'typebox';
import { BaseFields, Description, ListOf, Name, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import { CLUSTER_STATES } from './clusters.states.ts';

/** Wire shapes of clusters, following the reference's ClusterRequest / Cluster / ClusterStatus / ClusterLock. */

export const CLOUD_VENDORS = ['AWS', 'SCW', 'GCP', 'DO', 'AZURE', 'OVH', 'CIVO', 'HETZNER', 'ORACLE', 'IBM', 'ON_PREMISE'] as const;
/**
 * How the cluster's Kubernetes is run. The reference's three values plus LOCAL: the built-in cluster of the embedded
 * default, which is the host Slipway runs on (its workloads run as supervised processes, see the agent issue).
 */
export const KUBERNETES_KINDS = ['MANAGED', 'SELF_MANAGED', 'PARTIALLY_MANAGED', 'LOCAL'] as const;
export type KubernetesKind = (typeof KUBERNETES_KINDS)[number];
export const CLUSTER_DELETE_MODES = ['DEFAULT', 'DELETE_CLUSTER_AND_PLATFORM_CONFIG', 'DELETE_PLATFORM_CONFIG'] as const;

export const ClusterStateEnum = Type.Enum(CLUSTER_STATES, { $id: 'ClusterStateEnum' });
const CloudVendorEnum = Type.Enum(CLOUD_VENDORS, { $id: 'CloudVendorEnum' });
const KubernetesEnum = Type.Enum(KUBERNETES_KINDS, { $id: 'KubernetesEnum' });
const ClusterDeploymentStatusEnum = Type.Enum(['NEVER_DEPLOYED', 'OUT_OF_DATE', 'UP_TO_DATE'], { $id: 'ClusterDeploymentStatusEnum' });

const Region = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9-]*$' });
const InstanceType = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' });
const NodeCount = Type.Integer({ minimum: 1, maximum: 200 });

/**
 * Nested settings the reference defines (metrics, charts, KEDA, secret manager accesses, features). Slipway
 * keeps them as given and hands them to whatever applies the cluster; their inner fields are the applier's to
 * judge, so only their outer type is checked here.
 */
const OpaqueObject = Type.Object({}, { additionalProperties: true });

export const ClusterRequest = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(Description)),
    region: Region,
    cloud_provider: CloudVendorEnum,
    cloud_provider_credentials: Type.Optional(
      Type.Object(
        {
          cloud_provider: Type.Optional(Type.Enum(['AWS', 'SCW', 'GCP', 'ON_PREMISE', 'AZURE'])),
          credentials: Type.Optional(
            Type.Object({ id: Type.Optional(Uuid), name: Type.Optional(Type.String({ maxLength: 255 })) }, { additionalProperties: false }),
          ),
          region: Type.Optional(Type.String({ maxLength: 64 })),
        },
        { additionalProperties: false },
      ),
    ),
    min_running_nodes: Type.Optional(NodeCount),
    max_running_nodes: Type.Optional(NodeCount),
    disk_size: Type.Optional(Type.Integer({ minimum: 10, maximum: 16_384 })),
    disk_iops: Type.Optional(Type.Integer({ minimum: 3000, maximum: 16000 })),
    disk_throughput: Type.Optional(Type.Integer({ minimum: 125, maximum: 1000 })),
    instance_type: Type.Optional(InstanceType),
    kubernetes: Type.Optional(KubernetesEnum),
    production: Type.Optional(Type.Boolean()),
    ssh_keys: Type.Optional(Type.Array(Type.String({ maxLength: 16_384 }), { maxItems: 50 })),
    features: Type.Optional(Type.Array(OpaqueObject, { maxItems: 50 })),
    metrics_parameters: Type.Optional(OpaqueObject),
    infrastructure_charts_parameters: Type.Optional(OpaqueObject),
    keda: Type.Optional(OpaqueObject),
    labels_groups: Type.Optional(Type.Array(Type.Object({ id: Uuid }, { additionalProperties: false }), { maxItems: 50 })),
    secret_manager_accesses: Type.Optional(Type.Array(OpaqueObject, { maxItems: 50 })),
  },
  {
    additionalProperties: false,
    $id: 'ClusterRequest',
    examples: [
      {
        name: 'production-eu',
        description: 'The shop and its databases, in Paris',
        region: 'eu-west-3',
        cloud_provider: 'AWS',
        cloud_provider_credentials: { cloud_provider: 'AWS', credentials: { id: '5b7e2f0a-3c41-4d8e-9a62-1f0c7d3e8b94' }, region: 'eu-west-3' },
        instance_type: 't3a.large',
        min_running_nodes: 3,
        max_running_nodes: 10,
        disk_size: 50,
        kubernetes: 'MANAGED',
        production: true,
      },
    ],
  },
);
export type ClusterRequestBody = Static<typeof ClusterRequest>;

export const ClusterResponse = Type.Object(
  {
    ...BaseFields,
    organization: Type.Object({ id: Uuid }),
    name: Type.String(),
    description: Type.Optional(Type.String()),
    region: Type.String(),
    cloud_provider: Type.String(),
    min_running_nodes: Type.Integer(),
    max_running_nodes: Type.Integer(),
    disk_size: Type.Integer(),
    disk_iops: Type.Optional(Type.Integer()),
    disk_throughput: Type.Optional(Type.Integer()),
    instance_type: Type.Optional(Type.String()),
    kubernetes: Type.String(),
    status: ClusterStateEnum,
    has_access: Type.Boolean(),
    version: Type.String(),
    is_default: Type.Boolean(),
    is_demo: Type.Boolean(),
    production: Type.Boolean(),
    ssh_keys: Type.Array(Type.String()),
    features: Type.Array(OpaqueObject),
    deployment_status: ClusterDeploymentStatusEnum,
    metrics_parameters: Type.Optional(OpaqueObject),
    infrastructure_charts_parameters: Type.Optional(OpaqueObject),
    keda: Type.Optional(OpaqueObject),
    labels_groups: Type.Array(Type.Object({ id: Uuid })),
    secret_manager_accesses: Type.Array(OpaqueObject),
  },
  {
    $id: 'Cluster',
    examples: [
      {
        id: '8c1f3b2e-6d4a-4f7e-b5c9-0e2a7d9f4b16',
        created_at: '2026-11-27T09:30:00.000Z',
        organization: { id: '3f6b9c1d-2e8a-4b7f-9d05-6a1c4e8f2b73' },
        name: 'production-eu',
        description: 'The shop and its databases, in Paris',
        region: 'eu-west-3',
        cloud_provider: 'AWS',
        min_running_nodes: 3,
        max_running_nodes: 10,
        disk_size: 50,
        instance_type: 't3a.large',
        kubernetes: 'MANAGED',
        status: 'READY',
        has_access: true,
        version: '1.31',
        is_default: false,
        is_demo: false,
        production: true,
        ssh_keys: [],
        features: [],
        deployment_status: 'NEVER_DEPLOYED',
        labels_groups: [],
        secret_manager_accesses: [],
      },
    ],
  },
);
export const ClusterResponseList = ListOf(ClusterResponse, 'ClusterResponseList');

export const ClusterLock = Type.Object(
  {
    reason: Type.String(),
    cluster_id: Uuid,
    locked_at: Timestamp,
    owner_name: Type.String(),
    ttl_in_days: Type.Optional(Type.Integer()),
  },
  { $id: 'ClusterLock' },
);
export const ClusterLockList = ListOf(ClusterLock, 'ClusterLockResponseList');

export const ClusterLockRequest = Type.Object(
  {
    reason: Type.String({ minLength: 1, maxLength: 1000, pattern: '^[^\\x00]*\\S[^\\x00]*$' }),
    ttl_in_days: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 3650 }))),
  },
  { additionalProperties: false, $id: 'ClusterLockRequest', examples: [{ reason: 'Black Friday: no changes until Monday', ttl_in_days: 3 }] },
);

/** The reference's ClusterStatus; also the answer of the upgrade operation (SPEC.md's cluster upgrade status). */
export const ClusterStatus = Type.Object(
  {
    cluster_id: Uuid,
    status: ClusterStateEnum,
    is_deployed: Type.Boolean(),
    next_k8s_available_version: Nullable(Type.String({ pattern: '^\\d+\\.\\d+$' })),
    last_execution_id: Nullable(Type.String()),
    cluster_lock: Nullable(ClusterLock),
    last_deployment_date: Nullable(Timestamp),
    reason: Type.Enum(['UNSPECIFIED', 'MAINTENANCE']),
    /** Slipway's addition: why the cluster is in an error state. */
    message: Nullable(Type.String()),
  },
  { $id: 'ClusterStatus' },
);

/** SPEC.md: the organization's status list carries only an id and a status per cluster. */
export const ClusterStatusResponseList = Type.Object(
  { results: Type.Array(Type.Object({ cluster_id: Uuid, status: ClusterStateEnum })) },
  { $id: 'ClusterStatusResponseList' },
);

export const ClusterParams = Type.Object({ organizationId: Uuid, clusterId: Uuid }, { additionalProperties: false });
export const BareClusterParams = Type.Object({ clusterId: Uuid }, { additionalProperties: false });

export const DeleteClusterQuery = Type.Object(
  {
    deleteMode: Type.Optional(Type.Enum(CLUSTER_DELETE_MODES, { $id: 'ClusterDeleteMode' })),
    skipReconcile: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export const DeployClusterQuery = Type.Object({ dry_run: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

/** What a cluster operator needs to install itself and enroll (Slipway's design; the reference has no such shape). */
export const ClusterOperatorBootstrapResponse = Type.Object(
  {
    chart_repository: Type.String(),
    chart_name: Type.String(),
    chart_version: Type.String(),
    chart_reference: Type.String(),
    namespace: Type.String(),
    release_name: Type.String(),
    values: Type.Object(
      { controlPlaneUrl: Type.String(), clusterId: Uuid, enrollmentToken: Type.String() },
      { additionalProperties: true, description: 'The chart values of the install, with its one-time enrollment token' },
    ),
    values_yaml: Type.String(),
    helm_command: Type.String(),
    cluster_id: Uuid,
    enrollment_token_expires_at: Timestamp,
  },
  { $id: 'ClusterOperatorBootstrapResponse' },
);

export const OperatorEnrollRequest = Type.Object({ enrollment_token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const OperatorEnrollResponse = Type.Object({ cluster_id: Uuid, credential: Type.String() });
export const OperatorReportRequest = Type.Object(
  {
    status: Type.Enum(['READY', 'NOT_READY']),
    kubernetes_version: Type.Optional(Type.String({ pattern: '^\\d+\\.\\d+(\\.\\d+)?$', maxLength: 32 })),
  },
  { additionalProperties: false },
);
