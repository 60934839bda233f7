/** Row types of what Slipway knows of a cluster beyond its settings (migrations/0051_cluster_insight.ts). */

/** A self-managed cluster's kubeconfig, sealed for its cluster id. */
export interface ClusterKubeconfigsTable {
  cluster_id: string;
  kubeconfig_sealed: string;
  updated_at: string;
}

/** A Kubernetes event of one of Slipway's namespaces, as the cluster's agent reported it. */
export interface ClusterInsightEventsTable {
  id: string;
  cluster_id: string;
  /** The event object's uid in the cluster: a repeat of the event updates its row. */
  uid: string;
  kind: string;
  namespace: string;
  name: string;
  reason: string;
  message: string;
  /** Normal or Warning. */
  type: string;
  reporting_component: string;
  node_name: string | null;
  pod_name: string | null;
  count: number;
  first_occurrence: string;
  last_occurrence: string;
  created_at: string;
}

/** One log line of a cluster: a step of its deploys (source WORKER) or a line its agent sent (source AGENT). */
export interface ClusterInsightLogsTable {
  id: string;
  cluster_id: string;
  at: string;
  /** info, warning or error. */
  type: string;
  /** One of the reference's ClusterLogs steps. */
  step: string;
  message: string;
  /** JSON text of the reference's ClusterLogs `error` object, for error lines. */
  error: string | null;
  source: string;
}

/** The cluster operator's attachment and the versions it should run. */
export interface ClusterOperatorTargetsTable {
  cluster_id: string;
  attached_at: string;
  desired_image_version: string | null;
  desired_chart_version: string | null;
  /** The id updateClusterOperator answered last. */
  execution_id: string | null;
  updated_at: string;
}
