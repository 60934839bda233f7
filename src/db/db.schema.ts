import type { Generated, Kysely, Transaction } from 'kysely';

/**
 * Row types of every table, as Kysely sees them. Timestamps are ISO-8601 strings on both dialects (the
 * PostgreSQL client parses timestamptz into that form, see db.client.ts); JSON columns hold JSON text on SQLite
 * and jsonb on PostgreSQL and are read through `readJson`.
 */
export interface UsersTable {
  id: string;
  issuer: string | null;
  subject: string | null;
  email: string | null;
  name: string | null;
  picture: string | null;
  /** 1 when the identity provider vouched for `email` (the email_verified claim), else 0. */
  email_verified: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  /** Normalised name (NFC, lower case) carrying the unique index, so "Acme" and "acme" collide. */
  name_key: string;
  description: string | null;
  plan: string;
  website_url: string | null;
  repository: string | null;
  logo_url: string | null;
  icon_url: string | null;
  admin_emails: unknown;
  created_at: string;
  updated_at: string;
  /** Set when the organization was deleted; the row goes once its workloads are torn down (0028_organization_deletion). */
  deleted_at: string | null;
}

export interface RolesTable {
  id: string;
  organization_id: string;
  name: string;
  /** BUILT_IN for the four roles every organization has; CUSTOM for roles an organization defines. */
  kind: string;
  created_at: string;
}

/** The definition of a CUSTOM role (migrations/0015_custom_roles.ts): permissions are roles.rules.ts's enums. */
export interface CustomRolesTable {
  role_id: string;
  description: string | null;
  /** VIEWER or MANAGER: what the role may do on organization-level resources. */
  organization_permission: string;
  /** Per environment type, the permission on the projects the role does not list in custom_role_projects. */
  development: string;
  preview: string;
  staging: string;
  production: string;
  /** Per environment type, whether the role reveals secret values there (1/0; 0027_custom_role_reveal). */
  development_reveal: number;
  preview_reveal: number;
  staging_reveal: number;
  production_reveal: number;
  updated_at: string;
}

/** A project a custom role lists: project admin (1/0), the permission and the reveal flag per environment type. */
export interface CustomRoleProjectsTable {
  role_id: string;
  project_id: string;
  is_admin: number;
  development: string;
  preview: string;
  staging: string;
  production: string;
  development_reveal: number;
  preview_reveal: number;
  staging_reveal: number;
  production_reveal: number;
}

/** A cluster a custom role lists, with its permission (VIEWER, ENV_CREATOR or ADMIN). */
export interface CustomRoleClustersTable {
  role_id: string;
  cluster_id: string;
  permission: string;
}

export interface MembersTable {
  organization_id: string;
  user_id: string;
  role_id: string;
  created_at: string;
  updated_at: string;
}

export interface OnboardingTable {
  organization_id: string;
  user_id: string;
  use_cases: string | null;
  status: string;
  created_at: string;
  updated_at: string;
}

export interface ApiTokensTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  /** SHA-256 (hex) of the whole token value; the value itself is never stored. */
  token_hash: string;
  /** The first characters of the value, shown in listings so a user can recognise a token. */
  token_start: string;
  role_id: string | null;
  scope: string | null;
  creator_user_id: string | null;
  creator_name: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ProjectsTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface PolicyTokensTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  /** The Rego source as the creator wrote it; compiled on first use and cached. */
  opa_policy: string;
  /** SHA-256 (hex) of the whole token value; the value itself is never stored. */
  token_hash: string;
  token_start: string;
  creator_user_id: string | null;
  creator_name: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface LocalAccountsTable {
  id: string;
  email: string;
  name: string | null;
  /** scrypt$N$r$p$salt$hash (salt and hash base64url); see identity/identity.passwords.ts. */
  password_hash: string;
  email_verified_at: string | null;
  verification_hash: string | null;
  verification_expires_at: string | null;
  failed_sign_ins: Generated<number>;
  locked_until: string | null;
  created_at: string;
  updated_at: string;
}

export interface IdentityKeysTable {
  id: string;
  use: string;
  material: string;
  created_at: string;
  retired_at: string | null;
}

/** Protocol state of the built-in identity provider, one row per (model, id); payload is JSON text on both dialects. */
export interface OidcRecordsTable {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  user_code: string | null;
  uid: string | null;
  expires_at: string | null;
  consumed_at: string | null;
}

export interface InvitationsTable {
  id: string;
  organization_id: string;
  email: string;
  email_key: string;
  role_id: string;
  inviter_user_id: string | null;
  inviter_name: string;
  /** PENDING or ACCEPTED; EXPIRED is computed from expires_at. */
  status: string;
  expires_at: string;
  accepted_by_user_id: string | null;
  accepted_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Mail kept instead of sent when no SMTP relay is configured. */
export interface OutboxTable {
  id: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  created_at: string;
}

export interface GitTokensTable {
  id: string;
  organization_id: string;
  name: string;
  name_key: string;
  description: string | null;
  /** GITHUB, GITLAB or BITBUCKET: the host's user-name convention for the token. */
  type: string;
  workspace: string | null;
  git_api_url: string;
  /** The token value sealed by lib/secret-box.ts (AES-256-GCM, bound to this row's id and organization). */
  token_envelope: string;
  /** The token's expiry date (YYYY-MM-DD) when known; null otherwise. */
  expired_at: string | null;
  creator_user_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface IdempotencyKeysTable {
  scope_hash: string;
  request_hash: string;
  /** PENDING while the first request runs; DONE once its answer is kept; SECRET when the answer may not be kept. */
  state: string;
  status: number | null;
  content_type: string | null;
  body: string | null;
  created_at: string;
  expires_at: string;
}

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

/** Billing (docs/billing.md). Money is integer cents; running-time prices are millicents per unit-hour. */
export interface BillingPlanChangesTable {
  id: string;
  organization_id: string;
  plan: string;
  changed_at: string;
}

/** A resource's running time at one unit count and price; `stopped_at` null while it runs. */
export interface BillingUsageIntervalsTable {
  id: string;
  organization_id: string;
  resource_type: string;
  resource_id: string;
  price_key: string;
  units: number;
  unit_price_millicents: number;
  started_at: string;
  stopped_at: string | null;
}

export interface BillingCreditCodesTable {
  id: string;
  code_hash: string;
  amount_cents: number;
  expires_at: string;
  created_at: string;
  redeemed_by_organization_id: string | null;
  redeemed_at: string | null;
}

/** The credit ledger: rows are only ever inserted; an organization's credit is the sum of its amounts. */
export interface BillingCreditEntriesTable {
  id: string;
  organization_id: string;
  amount_cents: number;
  kind: string;
  credit_code_id: string | null;
  invoice_id: string | null;
  description: string;
  created_at: string;
}

export interface BillingInvoicesTable {
  id: string;
  organization_id: string;
  period: string;
  plan: string;
  status: string;
  currency_code: string;
  subtotal_cents: number;
  allowance_cents: number;
  credit_applied_cents: number;
  total_cents: number;
  lines: unknown;
  created_at: string;
  paid_at: string | null;
  payment_reference: string | null;
}

/** What is kept of a card: never its number or cvv. */
export interface BillingCreditCardsTable {
  id: string;
  organization_id: string;
  brand: string;
  last_digits: string;
  expiry_month: number;
  expiry_year: number;
  provider_token: string | null;
  created_at: string;
}

export interface BillingInfosTable {
  organization_id: string;
  first_name: string;
  last_name: string;
  email: string;
  address: string;
  city: string;
  zip: string;
  state: string | null;
  country_code: string;
  company: string | null;
  vat_number: string | null;
  updated_at: string;
}

export interface BillingUsageReportsTable {
  id: string;
  organization_id: string;
  from_at: string;
  to_at: string;
  csv: string;
  expires_at: string;
  created_at: string;
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

export interface DB {
  agent_tasks: AgentTasksTable;
  agent_presence: AgentPresenceTable;
  idempotency_keys: IdempotencyKeysTable;
  users: UsersTable;
  organizations: OrganizationsTable;
  roles: RolesTable;
  members: MembersTable;
  custom_roles: CustomRolesTable;
  custom_role_projects: CustomRoleProjectsTable;
  custom_role_clusters: CustomRoleClustersTable;
  onboarding: OnboardingTable;
  api_tokens: ApiTokensTable;
  projects: ProjectsTable;
  policy_tokens: PolicyTokensTable;
  local_accounts: LocalAccountsTable;
  identity_keys: IdentityKeysTable;
  oidc_records: OidcRecordsTable;
  invitations: InvitationsTable;
  outbox: OutboxTable;
  git_tokens: GitTokensTable;
  cluster_platform_configurations: ClusterPlatformConfigurationsTable;
  cloud_credentials: CloudCredentialsTable;
  billing_plan_changes: BillingPlanChangesTable;
  billing_usage_intervals: BillingUsageIntervalsTable;
  billing_credit_codes: BillingCreditCodesTable;
  billing_credit_entries: BillingCreditEntriesTable;
  billing_invoices: BillingInvoicesTable;
  billing_credit_cards: BillingCreditCardsTable;
  billing_infos: BillingInfosTable;
  billing_usage_reports: BillingUsageReportsTable;
  jobs: JobsTable;
  clusters: ClustersTable;
  cluster_locks: ClusterLocksTable;
  cluster_operator_enrollments: ClusterOperatorEnrollmentsTable;
  cluster_operators: ClusterOperatorsTable;
  local_cluster_grants: LocalClusterGrantsTable;
  container_registries: ContainerRegistriesTable;
  helm_repositories: HelmRepositoriesTable;
  labels_groups: LabelsGroupsTable;
  annotations_groups: AnnotationsGroupsTable;
  environments: EnvironmentsTable;
  environment_deployments: EnvironmentDeploymentsTable;
  variables: VariablesTable;
  variable_revisions: VariableRevisionsTable;
  webhooks: WebhooksTable;
  webhook_messages: WebhookMessagesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  organization_events: OrganizationEventsTable;
  services: ServicesTable;
  service_references: ServiceReferencesTable;
  service_runtime: ServiceRuntimeTable;
  service_deployments: ServiceDeploymentsTable;
  service_deployment_logs: ServiceDeploymentLogsTable;
  service_custom_domains: ServiceCustomDomainsTable;
  service_deployment_restrictions: ServiceDeploymentRestrictionsTable;
}

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

/** One counter per project, bumped by every variable write (the resolvers' cache check). */
export interface VariableRevisionsTable {
  project_id: string;
  revision: number;
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
  /** A database's port on a local-driver host, chosen at creation (0021_service_local_ports); null for other kinds. */
  local_port: number | null;
  /** An application's or container's address on a local-driver host (0024_service_local_addresses); null for other kinds. */
  local_address: string | null;
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
}

/** Either the database or an open transaction: repositories take this so callers decide the transaction. */
export type Queryable = Kysely<DB> | Transaction<DB>;

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
}

/** What a cluster's agent last said of itself (its heartbeats). */
export interface AgentPresenceTable {
  cluster_id: string;
  agent_version: string;
  driver: string;
  hostname: string | null;
  started_at: string;
  last_seen_at: string;
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
