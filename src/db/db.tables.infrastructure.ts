import type { Generated } from 'kysely';

/**
 * Row types of the tables of one area (db.schema.ts has the DB interface and the conventions). Clusters and what
 * they are built from: the job queue, clusters and their operators and agents, credentials, registries, groups.
 */

/** A unit of background work (src/jobs/job-queue.ts): QUEUED → RUNNING → SUCCEEDED | FAILED | CANCELLED. */
export interface JobsTable {
  id: string;
  kind: string;
  payload: unknown;
  /**
   * Jobs sharing a serial key run one at a time, oldest first (e.g. `cluster:<id>`). A `schedule:<name>` key has at
   * most one job queued or running (migration 0029, jobs/job-schedules.ts).
   */
  serial_key: string | null;
  status: string;
  attempts: Generated<number>;
  max_attempts: number;
  run_at: string;
  claimed_by: string | null;
  heartbeat_at: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  /** The W3C traceparent its runs continue: the span active when it was enqueued (0053_trace_context); null for none. */
  trace_context: string | null;
  /** 1 when something the job waits for happened while it ran: its deferral then ends at once (0057). */
  woken: Generated<number>;
}

export interface ClustersTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  region: string;
  cloud_provider: string;
  kubernetes: string;
  instance_type: string | null;
  min_running_nodes: number;
  max_running_nodes: number;
  disk_size: number;
  production: Generated<number>;
  credentials_id: string | null;
  dns_provider: string | null;
  build_provider: string | null;
  /** The rest of ClusterRequest (features, metrics, keda, labels groups, …) as given, JSON. */
  settings: unknown;
  /** Kubernetes major.minor. */
  version: string;
  status: string;
  /** Why the cluster is in an error state, for the status response; null otherwise. */
  status_message: string | null;
  is_deployed: Generated<number>;
  /** Bumped by every edit; deployment_status compares it with the revision last deployed. */
  config_revision: Generated<number>;
  deployed_revision: number | null;
  /** The advanced settings the cluster sets away from their defaults (clusters.advanced-settings.ts), JSON; null: none. */
  advanced_settings: unknown;
  last_execution_id: string | null;
  last_deployment_date: string | null;
  created_at: string;
  updated_at: string;
}

export interface ClusterLocksTable {
  cluster_id: string;
  organization_id: string;
  reason: string;
  owner_name: string;
  ttl_in_days: number | null;
  locked_at: string;
}

/** An organization the installation's operator allows to create LOCAL clusters and deploy onto them (0025_local_cluster_grants). */
export interface LocalClusterGrantsTable {
  organization_id: string;
  /** Which operator command gave it (`slipway admin bootstrap`, `slipway admin local-clusters allow`). */
  granted_by: string;
  granted_at: string;
}

export interface ClusterOperatorEnrollmentsTable {
  id: string;
  cluster_id: string;
  token_hash: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export interface ClusterOperatorsTable {
  cluster_id: string;
  credential_hash: string;
  reported_status: string | null;
  kubernetes_version: string | null;
  reported_at: string | null;
  enrolled_at: string;
}

/** Cloud provider credentials (0010): public fields shown, secrets sealed and never returned. */
export interface CloudCredentialsTable {
  id: string;
  organization_id: string;
  /** AWS, SCW, GCP, AZURE or ON_PREMISE: the provider whose paths manage it. */
  cloud_provider: string;
  /** The request variant it was made from: AWS_STATIC, AWS_ROLE, EKS_ANYWHERE_VSPHERE_STATIC, …, SCW, GCP, … */
  kind: string;
  name: string;
  name_key: string;
  /** Showable fields (access_key_id, role_arn, vsphere_user, project ids), JSON. */
  public_fields: unknown;
  /** Secret fields as one JSON object sealed by lib/secret-box.ts, bound to this row; null when there are none. */
  secret_envelope: string | null;
  creator_user_id: string | null;
  created_at: string;
  updated_at: string;
}

/** Container registries (0011): `config` is JSON of the showable fields; `secret_envelope` the sealed secret ones. */
export interface ContainerRegistriesTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  /** A ContainerRegistryKindEnum value. */
  kind: string;
  url: string;
  config: unknown;
  /** JSON of the secret config fields sealed by lib/secret-box.ts (bound to this row); null when there are none. */
  secret_envelope: string | null;
  created_at: string;
  updated_at: string;
}

export interface HelmRepositoriesTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  /** A HelmRepositoryKindEnum value. */
  kind: string;
  url: string;
  /** 1 to accept any TLS certificate. */
  skip_tls_verification: number;
  config: unknown;
  secret_envelope: string | null;
  created_at: string;
  updated_at: string;
}

export interface LabelsGroupsTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  /** JSON array of { key, value, propagate_to_cloud_provider }. */
  labels: unknown;
  created_at: string;
  updated_at: string;
}

export interface AnnotationsGroupsTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  /** JSON array of { key, value }. */
  annotations: unknown;
  /** JSON array of OrganizationAnnotationsGroupScopeEnum values. */
  scopes: unknown;
  created_at: string;
  updated_at: string;
}

/** The platform configuration of a cluster (modules/platform-templates): one row per cluster. */
export interface ClusterPlatformConfigurationsTable {
  cluster_id: string;
  organization_id: string;
  template_key: string;
  template_version: string;
  /** The cluster context the configuration was validated for (PlatformClusterMode, PlatformCloudVendor). */
  cluster_mode: string;
  cloud_provider: string;
  layer_selections: unknown;
  /** Profile values per component, without the values of sensitive fields. */
  managed_config: unknown;
  /** Customer-provided runtime inputs per component, without the values of sensitive inputs. */
  customer_provided_inputs: unknown;
  /** The sensitive values (`{ managedConfig, customerProvidedInputs }`) sealed by lib/secret-box.ts; null when none. */
  sensitive_envelope: string | null;
  created_at: string;
  updated_at: string;
}

/** Work for a cluster's agent: one environment or service action (migrations/0020_agent_tasks.ts). */
export interface AgentTasksTable {
  id: string;
  cluster_id: string;
  organization_id: string;
  /** ENVIRONMENT or SERVICE: whose state machine the agent's reports move. */
  subject_type: string;
  subject_id: string;
  /** The environment's or service's deployment record the task carries out (one task per deployment). */
  deployment_id: string;
  action: string;
  payload: unknown;
  /** The control-plane job that dispatched the task and waits for it to settle. */
  job_id: string;
  /** PENDING (offered), LEASED (an agent holds it until leased_until) or DONE. */
  status: string;
  lease_id: string | null;
  leased_until: string | null;
  leases: number;
  /** The highest progress and log sequence numbers applied: retried reports at or below them change nothing. */
  last_report_seq: number;
  last_log_seq: number;
  /** How a DONE task ended: SUCCEEDED, FAILED or CANCELED. */
  outcome: string | null;
  /** When the action it carries out was requested: tasks are offered in this order (0022_agent_task_order). */
  requested_at: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  /** The W3C traceparent the agent's work continues: its dispatching job run's span (0053_trace_context); null for none. */
  trace_context: string | null;
}

/** What a cluster's agent last said of itself (its heartbeats). */
export interface AgentPresenceTable {
  cluster_id: string;
  agent_version: string;
  driver: string;
  hostname: string | null;
  started_at: string;
  last_seen_at: string;
  /** What a Kubernetes agent reported of its cluster (0034_agent_cluster_facts); null when it reports nothing. */
  kubernetes_version: string | null;
  node_count: number | null;
  /** JSON array of the permissions it lacks (`verb resource scope`). */
  missing_permissions: unknown;
  /** The cert-manager ClusterIssuer its Ingresses name (0045_agent_certificates); null without one. */
  cert_manager_issuer: string | null;
}
