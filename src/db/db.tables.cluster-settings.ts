/** The cluster-settings module's tables (migrations/0052_cluster_settings.ts, docs/cluster-network.md). */

/** What the module adds to one cluster; a column left null means "not set". */
export interface ClusterSettingsTable {
  cluster_id: string;
  organization_id: string;
  /** JSON array of `{ destination, target, description }` routes; null: never set (an empty table). */
  routing_table: unknown;
  /** JSON of the DNS provider's showable fields (provider, domain, email, proxied, aws_region, …). */
  dns_provider: unknown;
  /** The provider's secret (Cloudflare API token, Route 53 secret access key) sealed, bound to the cluster. */
  dns_secret_envelope: string | null;
  /** The cloud provider binding set by specifyClusterCloudProviderInfo. */
  cloud_provider: string | null;
  cloud_credentials_id: string | null;
  cloud_region: string | null;
  /** The commit of the EKS Anywhere cluster definition selected by updateEksAnywhereCommit. */
  eks_anywhere_commit_id: string | null;
  /** JSON `{ zone_a, zone_b, zone_c }` arrays of private subnet ids for Karpenter's Fargate profile. */
  karpenter_fargate_subnets: unknown;
  created_at: string;
  updated_at: string;
}

export interface ClusterAnalysesTable {
  id: string;
  cluster_id: string;
  organization_id: string;
  /** COST_RECOMMENDATION or DEPRECATED_API_CHECK. */
  kind: string;
  /** TABLE, JSON or CSV: how the findings' log lines are written. */
  output_format: string;
  /** PENDING, RUNNING, SUCCEEDED, FAILED or TERMINATED. */
  status: string;
  /** JSON of the request's other fields (prometheus_url, cmd_args, target_kubernetes_version). */
  parameters: unknown;
  triggered_by: string;
  error_message: string | null;
  /** The cluster's id while PENDING or RUNNING, null after: unique, so one analysis runs per cluster at a time. */
  active_cluster_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface ClusterAnalysisLogsTable {
  analysis_id: string;
  line_order: number;
  timestamp: string;
  /** INFO, WARNING or ERROR. */
  level: string;
  message: string;
}
