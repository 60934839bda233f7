import type { Kysely, Transaction } from 'kysely';
import type { UsersTable, AccountSettingsTable, OrganizationsTable, RolesTable, CustomRolesTable, CustomRoleProjectsTable, CustomRoleClustersTable, MembersTable, OnboardingTable, ApiTokensTable, PolicyTokensTable, LocalAccountsTable, IdentityKeysTable, OidcRecordsTable, InvitationsTable, OutboxTable, IdempotencyKeysTable, GitTokensTable, ProjectsTable } from './db.tables.accounts.ts';
import type { BillingPlanChangesTable, BillingUsageIntervalsTable, BillingCreditCodesTable, BillingCreditEntriesTable, BillingInvoicesTable, BillingCreditCardsTable, BillingInfosTable, BillingUsageReportsTable } from './db.tables.billing.ts';
import type { JobsTable, ClustersTable, ClusterLocksTable, LocalClusterGrantsTable, ClusterOperatorEnrollmentsTable, ClusterOperatorsTable, CloudCredentialsTable, ContainerRegistriesTable, HelmRepositoriesTable, LabelsGroupsTable, AnnotationsGroupsTable, ClusterPlatformConfigurationsTable, AgentTasksTable, AgentPresenceTable } from './db.tables.infrastructure.ts';
import type { AcmeAccountsTable, AgentCertificatesTable, CertificatesTable, InstallationCaTable } from './db.tables.certificates.ts';
import type { ProjectDeploymentRulesTable, EnvironmentDeploymentRulesTable } from './db.tables.deployment-rules.ts';
import type { DeploymentStagesTable, DeploymentStageServicesTable } from './db.tables.deployment-stages.ts';
import type { GitWebhooksTable, GitWebhookDeliveriesTable, PreviewEnvironmentsTable } from './db.tables.git-webhooks.ts';
import type { GithubAppConnectionsTable } from './db.tables.git-providers.ts';
import type { DatabaseBackupsTable, DeploymentBuildUsageReportsTable } from './db.tables.database-backups.ts';
import type { ClusterSettingsTable, ClusterAnalysesTable, ClusterAnalysisLogsTable } from './db.tables.cluster-settings.ts';
import type { AlertReceiversTable, AlertRulesTable, AlertRuleReceiversTable, AlertFiringsTable } from './db.tables.alerts.ts';
import type { ClusterKubeconfigsTable, ClusterInsightEventsTable, ClusterInsightLogsTable, ClusterOperatorTargetsTable } from './db.tables.cluster-insight.ts';
import type { RateLimitCountersTable } from './db.tables.rate-limit.ts';
import type { ListRevisionsTable } from './db.tables.list-revisions.ts';
import type { EnvironmentsTable, EnvironmentDeploymentsTable, VariablesTable, WebhooksTable, WebhookMessagesTable, WebhookDeliveriesTable, OrganizationEventsTable, ServicesTable, ServiceReferencesTable, ServiceRuntimeTable, ServiceDeploymentsTable, ServiceDeploymentLogsTable, ServiceCustomDomainsTable, ServiceDeploymentRestrictionsTable } from './db.tables.deployments.ts';

/**
 * The database as Kysely sees it: every table by name (the row types live in db.tables.<area>.ts, re-exported here so
 * a repository imports its rows from one place). Timestamps are ISO-8601 strings on both dialects (the
 * PostgreSQL client parses timestamptz into that form, see db.client.ts); JSON columns hold JSON text on SQLite
 * and jsonb on PostgreSQL and are read through `readJson`.
 */
export interface DB {
  agent_tasks: AgentTasksTable;
  agent_presence: AgentPresenceTable;
  idempotency_keys: IdempotencyKeysTable;
  users: UsersTable;
  account_settings: AccountSettingsTable;
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
  acme_accounts: AcmeAccountsTable;
  certificates: CertificatesTable;
  installation_ca: InstallationCaTable;
  agent_certificates: AgentCertificatesTable;
  project_deployment_rules: ProjectDeploymentRulesTable;
  environment_deployment_rules: EnvironmentDeploymentRulesTable;
  deployment_stages: DeploymentStagesTable;
  deployment_stage_services: DeploymentStageServicesTable;
  github_app_connections: GithubAppConnectionsTable;
  git_webhooks: GitWebhooksTable;
  git_webhook_deliveries: GitWebhookDeliveriesTable;
  preview_environments: PreviewEnvironmentsTable;
  database_backups: DatabaseBackupsTable;
  deployment_build_usage_reports: DeploymentBuildUsageReportsTable;
  cluster_settings: ClusterSettingsTable;
  cluster_analyses: ClusterAnalysesTable;
  cluster_analysis_logs: ClusterAnalysisLogsTable;
  alert_receivers: AlertReceiversTable;
  alert_rules: AlertRulesTable;
  alert_rule_receivers: AlertRuleReceiversTable;
  alert_firings: AlertFiringsTable;
  rate_limit_counters: RateLimitCountersTable;
  list_revisions: ListRevisionsTable;
  cluster_kubeconfigs: ClusterKubeconfigsTable;
  cluster_insight_events: ClusterInsightEventsTable;
  cluster_insight_logs: ClusterInsightLogsTable;
  cluster_operator_targets: ClusterOperatorTargetsTable;
}

/** Either the database or an open transaction: repositories take this so callers decide the transaction. */
export type Queryable = Kysely<DB> | Transaction<DB>;

export type { UsersTable, AccountSettingsTable, OrganizationsTable, RolesTable, CustomRolesTable, CustomRoleProjectsTable, CustomRoleClustersTable, MembersTable, OnboardingTable, ApiTokensTable, PolicyTokensTable, LocalAccountsTable, IdentityKeysTable, OidcRecordsTable, InvitationsTable, OutboxTable, IdempotencyKeysTable, GitTokensTable, ProjectsTable } from './db.tables.accounts.ts';
export type { BillingPlanChangesTable, BillingUsageIntervalsTable, BillingCreditCodesTable, BillingCreditEntriesTable, BillingInvoicesTable, BillingCreditCardsTable, BillingInfosTable, BillingUsageReportsTable } from './db.tables.billing.ts';
export type { JobsTable, ClustersTable, ClusterLocksTable, LocalClusterGrantsTable, ClusterOperatorEnrollmentsTable, ClusterOperatorsTable, CloudCredentialsTable, ContainerRegistriesTable, HelmRepositoriesTable, LabelsGroupsTable, AnnotationsGroupsTable, ClusterPlatformConfigurationsTable, AgentTasksTable, AgentPresenceTable } from './db.tables.infrastructure.ts';
export type { AcmeAccountsTable, AgentCertificatesTable, CertificatesTable, InstallationCaTable } from './db.tables.certificates.ts';
export type { ProjectDeploymentRulesTable, EnvironmentDeploymentRulesTable } from './db.tables.deployment-rules.ts';
export type { DeploymentStagesTable, DeploymentStageServicesTable } from './db.tables.deployment-stages.ts';
export type { GitWebhooksTable, GitWebhookDeliveriesTable, PreviewEnvironmentsTable } from './db.tables.git-webhooks.ts';
export type { GithubAppConnectionsTable } from './db.tables.git-providers.ts';
export type { DatabaseBackupsTable, DeploymentBuildUsageReportsTable } from './db.tables.database-backups.ts';
export type { ClusterSettingsTable, ClusterAnalysesTable, ClusterAnalysisLogsTable } from './db.tables.cluster-settings.ts';
export type { AlertReceiversTable, AlertRulesTable, AlertRuleReceiversTable, AlertFiringsTable } from './db.tables.alerts.ts';
export type { ClusterKubeconfigsTable, ClusterInsightEventsTable, ClusterInsightLogsTable, ClusterOperatorTargetsTable } from './db.tables.cluster-insight.ts';
export type { RateLimitCountersTable } from './db.tables.rate-limit.ts';
export type { ListRevisionsTable } from './db.tables.list-revisions.ts';
export type { EnvironmentsTable, EnvironmentDeploymentsTable, VariablesTable, WebhooksTable, WebhookMessagesTable, WebhookDeliveriesTable, OrganizationEventsTable, ServicesTable, ServiceReferencesTable, ServiceRuntimeTable, ServiceDeploymentsTable, ServiceDeploymentLogsTable, ServiceCustomDomainsTable, ServiceDeploymentRestrictionsTable } from './db.tables.deployments.ts';
