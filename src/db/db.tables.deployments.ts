import type { Generated } from 'kysely';

/**
 * Row types of the tables of one area (db.schema.ts has the DB interface and the conventions). What runs on the
 * clusters: environments, services, their deployments and logs, variables, domains, webhooks, audit events.
 */

export interface EnvironmentsTable {
  id: string;
  organization_id: string;
  project_id: string;
  cluster_id: string;
  name: string;
  name_key: string;
  /** PRODUCTION, STAGING, DEVELOPMENT or PREVIEW. */
  mode: string;
  /** The environment state machine's current state (environments.states.ts). */
  status: string;
  /** Bumped by every change that a deployment carries; deployment_status compares it with the one last deployed. */
  config_revision: Generated<number>;
  deployed_revision: number | null;
  /** The newest deployment-history record, which the status describes. */
  last_deployment_id: string | null;
  last_updated_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface EnvironmentDeploymentsTable {
  id: string;
  environment_id: string;
  /** DEPLOY, REDEPLOY, STOP or RESTART. */
  action: string;
  /** The state this action has reached (the environment's while it is the newest record). */
  status: string;
  /** Why it waits or why it failed, for the status response. */
  message: string | null;
  origin: string;
  triggered_by: string;
  /** The job that carries the action out; its id is the action's execution id. */
  job_id: string;
  config_revision: number;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  /** When the action was fanned out into its services' deployments (0030_environment_fan_out); null until then. */
  services_requested_at: string | null;
}

/** Variables and secrets of the PROJECT, ENVIRONMENT and service scopes (migrations/0013_variables.ts). */
export interface VariablesTable {
  id: string;
  organization_id: string;
  project_id: string;
  environment_id: string | null;
  service_id: string | null;
  /** The project, environment or service the row is scoped to; a key is unique per owner. */
  owner_id: string;
  /** PROJECT, ENVIRONMENT or a service scope (APPLICATION, CONTAINER, JOB, HELM, TERRAFORM, AGENTIC_WORKFLOW). */
  scope: string;
  key: string;
  /** 1 for a secret: its value is sealed in value_envelope and never in value. */
  is_secret: number;
  /** VALUE, ALIAS, OVERRIDE or FILE. */
  variable_type: string;
  value: string | null;
  value_envelope: string | null;
  /** The name an alias resolves to. */
  alias_of: string | null;
  mount_path: string | null;
  description: string | null;
  enable_interpolation_in_file: number | null;
  created_at: string;
  updated_at: string;
}

/** An organization's webhook endpoint (migrations/0014_webhooks.ts); the secret only sealed. */
export interface WebhooksTable {
  id: string;
  organization_id: string;
  kind: string;
  target_url: string;
  description: string | null;
  enabled: number;
  /** JSON arrays: subscribed event types, project name patterns, environment modes. */
  events: unknown;
  project_names_filter: unknown;
  environment_types_filter: unknown;
  secret_envelope: string;
  /** Failed attempts since the last success; reaching the threshold disables the webhook. */
  consecutive_failures: Generated<number>;
  /** Why Slipway disabled the webhook (the notice), null while enabled or when a person disabled it. */
  disabled_reason: string | null;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

/** One event for one webhook: the exact body every attempt (and redelivery) sends; its id is the webhook-id header. */
export interface WebhookMessagesTable {
  id: string;
  webhook_id: string;
  event_type: string;
  body: string;
  created_at: string;
}

/** The delivery log: one row per attempt. */
export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  message_id: string;
  event_type: string;
  attempt: number;
  /** EVENT (published by a state change) or REDELIVERY (asked for by a person). */
  trigger: string;
  succeeded: number;
  response_status: number | null;
  latency_ms: number;
  error: string | null;
  created_at: string;
}

/** One audited write request (migrations/0016_organization_events.ts); `change` is the request body, secrets masked. */
export interface OrganizationEventsTable {
  id: string;
  organization_id: string;
  created_at: string;
  /** The reference's OrganizationEventType (CREATE, UPDATE, DELETE, TRIGGER_DEPLOY, …). */
  event_type: string;
  /** The reference's OrganizationEventTargetType and OrganizationEventSubTargetType. */
  target_type: string;
  target_id: string | null;
  target_name: string | null;
  sub_target_type: string | null;
  operation_id: string;
  change: string | null;
  /** The reference's OrganizationEventOrigin (API, CLI, CONSOLE, …). */
  origin: string;
  /** USER, API_TOKEN or POLICY_TOKEN, and that user's or token's id. */
  author_type: string;
  author_id: string;
  triggered_by: string;
  project_id: string | null;
  environment_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string;
  /** Null while the request that wrote the row is still being answered. */
  status_code: number | null;
  /** SUCCESS or FAILURE. */
  outcome: string;
}

/** A service of any of the seven kinds (migrations/0017_services.ts); what differs per kind is in `settings`. */
export interface ServicesTable {
  id: string;
  organization_id: string;
  project_id: string;
  environment_id: string;
  /** APPLICATION, CONTAINER, DATABASE, JOB, HELM, TERRAFORM or AGENTIC_WORKFLOW. */
  kind: string;
  name: string;
  name_key: string;
  description: string | null;
  /** JSON object: what the kind stores (services.kinds.ts). */
  settings: unknown;
  /** A database's generated credentials, sealed (JSON of username, password, database name); null for other kinds. */
  credentials_envelope: string | null;
  /**
   * The label of its public hostname, `<label>.<SLIPWAY_APPS_DOMAIN>` (0026_service_hostnames): unique in the
   * installation, kept for the service's life. Claimed right after the insert; null only until then.
   */
  hostname_label: string | null;
  created_at: string;
  updated_at: string;
}

/** One thing of another module a service's settings name (GIT_TOKEN, CONTAINER_REGISTRY, HELM_REPOSITORY, LABELS_GROUP, ANNOTATIONS_GROUP). */
export interface ServiceReferencesTable {
  service_id: string;
  kind: string;
  reference_id: string;
}

/** A service's place in its state machine (migrations/0018_service_deployments.ts); no row reads READY. */
export interface ServiceRuntimeTable {
  service_id: string;
  /** The service state machine's current state (services.states.ts). */
  status: string;
  /** The newest deployment record, which the status describes. */
  last_deployment_id: string | null;
  /** The record that last reached DEPLOYED: its snapshot is what runs, and OUT_OF_DATE compares against it. */
  deployed_deployment_id: string | null;
  /** What the agent last said of the running workload: RUNNING, RESTARTING or FAILED (0023_service_workload_health). */
  workload_health: string | null;
  workload_restarts: number | null;
  workload_message: string | null;
  workload_reported_at: string | null;
  updated_at: string;
}

/** One action of a service (deploy, redeploy, stop, restart) with what it carries. */
export interface ServiceDeploymentsTable {
  id: string;
  service_id: string;
  /** DEPLOY, REDEPLOY, STOP or RESTART. */
  action: string;
  /** The state this action has reached (the service's while it is the newest record). */
  status: string;
  /** Why it waits or why it failed. */
  message: string | null;
  origin: string;
  triggered_by: string;
  /** The job that carries the action out; its id is the action's execution id. */
  job_id: string;
  git_commit_id: string | null;
  image_tag: string | null;
  /** SHA-256 of the service's name, kind and settings as deployed. */
  settings_hash: string;
  /** The variable snapshot's content hash (null for databases, which consume no variables). */
  variables_hash: string | null;
  /** JSON: the service as deployed and its resolved variables, secrets sealed (services.deployments.service.ts). */
  snapshot: unknown;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  /** The environment action whose fan-out requested it, if one did (migrations/0038_deployment_stages.ts). */
  environment_deployment_id: string | null;
  /** The deployment stage its service was in when it was requested: name and position (0 first). */
  deployment_stage_name: string | null;
  deployment_stage_order: number | null;
  /** The seq of the deployment's last log line: writers number theirs from it (migrations/0056_deployment_log_counter.ts). */
  log_seq: Generated<number>;
}

/** One line of a deployment's log, in order. */
export interface ServiceDeploymentLogsTable {
  id: string;
  deployment_id: string;
  seq: number;
  /** stdout, stderr (the workload's or the build's) or system (Slipway's and the agent's own lines). */
  stream: string;
  message: string;
  logged_at: string;
  /** The instance (process) of the workload that printed it (0031_service_log_instances); null for build and system lines. */
  instance: string | null;
}

/** A custom domain of an application or container (migrations/0019_service_domains.ts); `domain` unique overall. */
export interface ServiceCustomDomainsTable {
  id: string;
  service_id: string;
  /** Lower-case ASCII (IDNs in punycode); `*.example.com` for a wildcard. */
  domain: string;
  generate_certificate: number;
  use_cdn: number;
  /** The value the `_slipway-challenge.<domain>` TXT record may carry to prove ownership. */
  verification_token: string;
  /** VALIDATION_PENDING, VALIDATED or VALIDATION_FAILED: the last check's verdict. */
  status: string;
  /** The reference's CheckedCustomDomainStatus of the last check, and its details. */
  check_status: string | null;
  check_details: string | null;
  checked_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A path glob deciding whether a git push deploys an application (migrations/0019_service_domains.ts). */
export interface ServiceDeploymentRestrictionsTable {
  id: string;
  service_id: string;
  /** MATCH or EXCLUDE. */
  mode: string;
  /** PATH (the reference's only DeploymentRestrictionTypeEnum value). */
  type: string;
  value: string;
  created_at: string;
  updated_at: string;
}
