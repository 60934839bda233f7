import { Type } from 'typebox';
import { CLUSTER_LOG_STEPS } from '../../protocol/agent-protocol.ts';
import { Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';

/** The reference's shapes of a cluster's kubeconfig, events, logs, metrics, environments, readiness and operator. */

export const KubeconfigQuery = Type.Object(
  {
    with_token_from_cli: Type.Optional(
      Type.Boolean({ description: 'Answer the kubeconfig without credentials: each user asks Slipway for a token when kubectl needs one (get-cluster-token-by-clusterId).' }),
    ),
    read_only: Type.Optional(Type.Boolean({ description: 'Slipway holds only the kubeconfig it was given and cannot narrow it: true answers 400.' })),
  },
  { additionalProperties: false },
);

export const ClusterTokenQuery = Type.Object({ read_only: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

/** A client.authentication.k8s.io ExecCredential, what kubectl's exec credential plugins print. */
export const ClusterExecCredential = Type.Object({
  apiVersion: Type.String(),
  kind: Type.String(),
  spec: Type.Object({}, { additionalProperties: true }),
  status: Type.Object({ token: Type.String(), expirationTimestamp: Timestamp }),
});

export const ClusterEventsQuery = Type.Object(
  {
    from_date_time: Type.String({ minLength: 1, description: 'ISO-8601: events last seen at or after it.' }),
    to_date_time: Type.String({ minLength: 1, description: 'ISO-8601: events last seen at or before it.' }),
    node_name: Type.Optional(Type.String({ maxLength: 253 })),
    pod_name: Type.Optional(Type.String({ maxLength: 253 })),
    reporting_component: Type.Optional(Type.String({ maxLength: 253 })),
  },
  { additionalProperties: false },
);

export const ClusterKubernetesEventList = Type.Object({
  results: Type.Array(
    Type.Object({
      created_at: Timestamp,
      kind: Type.String(),
      namespace: Type.String(),
      name: Type.String(),
      reason: Type.String(),
      message: Type.String(),
      type: Type.String(),
      reporting_component: Type.String(),
      count: Type.Integer(),
      first_occurrence: Timestamp,
      last_occurrence: Timestamp,
    }),
  ),
});

const Transmitter = Type.Object({ type: Type.String(), id: Type.String(), name: Type.String() });
const EventDetails = Type.Object({ provider_kind: Type.String(), region: Type.String(), transmitter: Transmitter });

export const ClusterLogs = Type.Object(
  {
    type: Type.String({ description: 'info, warning or error.' }),
    timestamp: Timestamp,
    step: Type.Enum(CLUSTER_LOG_STEPS),
    message: Type.Object({ safe_message: Type.String() }),
    error: Type.Optional(
      Type.Object({
        tag: Type.String(),
        user_log_message: Type.String(),
        link: Type.Optional(Type.String()),
        hint_message: Type.Optional(Type.String()),
        event_details: EventDetails,
        underlying_error: Type.Optional(Type.Object({ message: Type.String() })),
      }),
    ),
    details: EventDetails,
  },
  { $id: 'ClusterLogs' },
);

export const ClusterLogsResponseList = Type.Object({ results: Type.Array(ClusterLogs) }, { $id: 'ClusterLogsResponseList' });

/** The Loki-style and Prometheus-style queries of the reference: every parameter is text, as it defines them. */
const optionalText = () => Type.Optional(Type.String({ maxLength: 4096 }));

export const ClusterLogsQuery = Type.Object(
  {
    endpoint: Type.String({ minLength: 1, maxLength: 256, description: 'query_range or query.' }),
    query: Type.String({ minLength: 1, maxLength: 4096, description: 'A LogQL stream selector (`{type="error"}`) with optional `|=` / `!=` line filters.' }),
    start: optionalText(),
    end: optionalText(),
    limit: optionalText(),
    since: optionalText(),
    step: optionalText(),
    interval: optionalText(),
    direction: optionalText(),
    time: optionalText(),
  },
  { additionalProperties: false },
);

export const ClusterLogsResponse = Type.Object({ response: Type.String({ description: 'The Loki answer, as JSON text.' }) }, { $id: 'ClusterLogsResponse' });

export const ClusterMetricsQuery = Type.Object(
  {
    endpoint: Type.String({ minLength: 1, maxLength: 256 }),
    query: Type.String({ minLength: 1, maxLength: 4096 }),
    start: optionalText(),
    end: optionalText(),
    step: optionalText(),
    time: optionalText(),
    timeout: optionalText(),
    dedup: optionalText(),
    partial_response: optionalText(),
    max_source_resolution: optionalText(),
    engine: optionalText(),
    analyze: optionalText(),
    board_short_name: optionalText(),
    metric_short_name: optionalText(),
    trace_id: optionalText(),
    range: optionalText(),
  },
  { additionalProperties: false },
);

export const ClusterMetricsResponse = Type.Object({ metrics: Type.String({ description: 'The Prometheus answer, as JSON text.' }) }, { $id: 'ClusterMetricsResponse' });

export const LINKED_SERVICE_TYPES = ['APPLICATION', 'CONTAINER', 'DATABASE', 'JOB', 'HELM', 'TERRAFORM'] as const;

export const ClusterEnvironmentResponse = Type.Object(
  {
    environment_id: Uuid,
    environment_name: Type.String(),
    project_id: Uuid,
    project_name: Type.String(),
    services: Type.Array(Type.Object({ id: Uuid, name: Type.String(), type: Type.Enum(LINKED_SERVICE_TYPES) })),
  },
  { $id: 'ClusterEnvironmentResponse' },
);

export const ClusterEnvironmentResponseList = Type.Object({ results: Type.Array(ClusterEnvironmentResponse) }, { $id: 'ClusterEnvironmentResponseList' });

export const ClusterReadinessStatus = Type.Object(
  { is_ready: Type.Boolean({ description: 'Deployed (DEPLOYED or RESTARTED) with its agent heartbeating.' }) },
  { $id: 'ClusterReadinessStatus' },
);

export const CLUSTER_OPERATOR_FLEET_STATUSES = [
  'NOT_ATTACHED',
  'DISCONNECTED',
  'TARGET_UNKNOWN',
  'REPORTED_VERSION_UNKNOWN',
  'CURRENT',
  'OUTDATED_IMAGE',
  'OUTDATED_CHART',
  'OUTDATED_IMAGE_AND_CHART',
] as const;
export type ClusterOperatorFleetStatus = (typeof CLUSTER_OPERATOR_FLEET_STATUSES)[number];
const FleetStatus = Type.Enum(CLUSTER_OPERATOR_FLEET_STATUSES, { $id: 'ClusterOperatorFleetStatus' });

export const ClusterOperatorStatusResponse = Type.Object(
  {
    organization_id: Uuid,
    cluster_id: Uuid,
    operator_connected: Type.Boolean({ description: "The cluster's agent heartbeats (within three intervals)." }),
    last_heartbeat: Nullable(Timestamp),
    operator_version: Nullable(Type.String({ description: 'The version the agent reports running.' })),
    controller_version: Nullable(Type.String()),
    request_schema_version: Nullable(Type.String({ description: 'The agent protocol version.' })),
    desired_image_version: Nullable(Type.String()),
    desired_chart_version: Nullable(Type.String()),
    status: FleetStatus,
    reported_chart_version: Nullable(Type.String({ description: 'Null: the agent does not report the chart it was installed with.' })),
    reported_identity: Nullable(Type.Object({ release_digest: Type.String(), runtime_image_id: Type.String(), chart_version: Type.String(), observed_at: Nullable(Timestamp) })),
  },
  { $id: 'ClusterOperatorStatusResponse' },
);

const OperatorVersion = Type.String({ minLength: 1, maxLength: 128, pattern: '^[0-9A-Za-z][0-9A-Za-z.+_-]*$' });

export const ClusterOperatorUpdateRequest = Type.Object(
  { chart_version: OperatorVersion, image_version: Type.Optional(Nullable(OperatorVersion)) },
  { additionalProperties: false, $id: 'ClusterOperatorUpdateRequest' },
);

export const ClusterOperatorUpdateResponse = Type.Object(
  { execution_id: Type.String(), image_version: Type.String(), chart_version: Type.String() },
  { $id: 'ClusterOperatorUpdateResponse' },
);

export const SELF_MANAGED_CLUSTER_KINDS = ['EKS_SELF_MANAGED', 'SCW_SELF_MANAGED', 'GKE_SELF_MANAGED', 'AKS_SELF_MANAGED', 'SELF_MANAGED'] as const;

export const ClusterOperatorFleetInventoryResponse = Type.Object(
  {
    organization_id: Uuid,
    cluster_id: Uuid,
    cluster_name: Type.String(),
    cluster_kind: Type.Enum(SELF_MANAGED_CLUSTER_KINDS),
    attached: Type.Boolean(),
    connected: Type.Boolean(),
    last_heartbeat: Nullable(Timestamp),
    desired_image_version: Nullable(Type.String()),
    reported_image_version: Nullable(Type.String()),
    desired_chart_version: Nullable(Type.String()),
    reported_chart_version: Nullable(Type.String()),
    status: FleetStatus,
  },
  { $id: 'ClusterOperatorFleetInventoryResponse' },
);

export const ClusterOperatorFleetInventoryResponseList = Type.Object(
  { results: Type.Array(ClusterOperatorFleetInventoryResponse) },
  { $id: 'ClusterOperatorFleetInventoryResponseList' },
);
