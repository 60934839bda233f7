import type { FastifyTypeBox } from './http/fastify.types.ts';
import type { ClustersService } from './modules/clusters/clusters.service.ts';
import type { ServicesService } from './modules/services/services.service.ts';
import { requireAccessDeclarations } from './http/security.ts';
import { registerClusterRoutes } from './modules/clusters/clusters.routes.ts';
import { registerClusterAdvancedSettingsRoutes } from './modules/clusters/clusters.advanced-settings.routes.ts';
import { registerBillingRoutes } from './modules/billing/billing.routes.ts';
import { registerAnnotationsGroupRoutes } from './modules/annotations-groups/annotations-groups.routes.ts';
import { registerContainerRegistryRoutes } from './modules/container-registries/container-registries.routes.ts';
import { registerCloudCredentialsRoutes } from './modules/cloud-credentials/cloud-credentials.routes.ts';
import { registerSelfManagedClusterRoutes } from './modules/self-managed-clusters/self-managed-clusters.routes.ts';
import { registerGitTokenRoutes } from './modules/git-tokens/git-tokens.routes.ts';
import { registerGitProviderRoutes } from './modules/git-providers/git-providers.routes.ts';
import { registerHelmRepositoryRoutes } from './modules/helm-repositories/helm-repositories.routes.ts';
import { registerLabelsGroupRoutes } from './modules/labels-groups/labels-groups.routes.ts';
import { registerApiTokenRoutes } from './modules/api-tokens/api-tokens.routes.ts';
import { registerIpRoutes } from './modules/ips/ips.routes.ts';
import { registerCertificateRoutes } from './modules/certificates/certificates.routes.ts';
import { registerInvitationRoutes } from './modules/invitations/invitations.routes.ts';
import { registerMemberRoutes } from './modules/members/members.routes.ts';
import { registerOnboardingRoutes } from './modules/onboarding/onboarding.routes.ts';
import { registerOrganizationEventRoutes } from './modules/organization-events/organization-events.routes.ts';
import { registerOrganizationRoutes } from './modules/organizations/organizations.routes.ts';
import { registerPolicyTokenRoutes } from './modules/policy-tokens/policy-tokens.routes.ts';
import { registerPlatformTemplateRoutes } from './modules/platform-templates/platform-templates.routes.ts';
import { registerProjectRoutes } from './modules/projects/projects.routes.ts';
import { registerRoleRoutes } from './modules/roles/roles.routes.ts';
import { registerEnvironmentRoutes } from './modules/environments/environments.routes.ts';
import { registerAgentRoutes } from './modules/agents/agents.routes.ts';
import { registerClusterInsightRoutes } from './modules/cluster-insight/cluster-insight.routes.ts';
import { registerEnvironmentVariableRoutes, registerProjectVariableRoutes, registerServiceVariableRoutes } from './modules/variables/variables.routes.ts';
import { registerServiceImportRoute, registerUnifiedVariableRoutes, type UnifiedVariableRouteDeps } from './modules/variables/variables.unified-routes.ts';
import { SERVICE_KIND_DEFINITIONS } from './modules/services/services.kinds.ts';
import { registerServiceRoutes } from './modules/services/services.routes.ts';
import { registerServiceLinkRoutes } from './modules/services/services.links.routes.ts';
import { registerAdvancedSettingsRoutes } from './modules/services/services.advanced-settings.routes.ts';
import { registerServiceCloneRoutes } from './modules/services/services.clone.routes.ts';
import { registerNetworkSettingsRoutes } from './modules/services/services.network-settings.routes.ts';
import { registerServiceDeploymentRoutes } from './modules/deployments/deployments.service-routes.ts';
import { registerServiceUninstallRoutes } from './modules/deployments/deployments.uninstall-routes.ts';
import { registerEnvironmentDeploymentRoutes } from './modules/deployments/deployments.environment-routes.ts';
import { registerDeploymentRestrictionRoutes } from './modules/deployment-restrictions/deployment-restrictions.routes.ts';
import { registerDeploymentStageRoutes } from './modules/deployment-stages/deployment-stages.routes.ts';
import { registerDeploymentRuleRoutes } from './modules/deployment-rules/deployment-rules.routes.ts';
import { registerClusterSettingsRoutes } from './modules/cluster-settings/cluster-settings.routes.ts';
import { registerCustomDomainRoutes } from './modules/custom-domains/custom-domains.routes.ts';
import { registerWebhookRoutes } from './modules/webhooks/webhooks.routes.ts';
import { registerAlertRoutes } from './modules/alerts/alerts.routes.ts';
import { registerDeploymentStatusRoutes } from './modules/deployments/deployments.routes.ts';
import { registerDeploymentQueueRoutes } from './modules/deployments/deployments.queue-routes.ts';
import { registerEnvironmentBulkRoutes } from './modules/deployments/deployments.bulk-routes.ts';
import { registerEnvironmentOverviewRoutes } from './modules/environments/environments.overview-routes.ts';
import { registerOrganizationListingsRoutes } from './modules/organization-listings/organization-listings.routes.ts';
import { registerCatalogRoutes } from './modules/organization-listings/organization-listings.catalog-routes.ts';
import { registerServiceCommitRoutes } from './modules/services/services.commits-routes.ts';
import { registerDatabaseLinkRoutes } from './modules/services/services.database-links.routes.ts';
import { registerHelmExtrasRoutes } from './modules/services/services.helm-extras.routes.ts';
import { registerIngressStatusRoutes } from './modules/services/services.ingress-status.routes.ts';
import { registerEnvironmentCheckRoutes } from './modules/environments/environments.checks.routes.ts';
import { registerAccountRoutes } from './modules/users/users.account.routes.ts';
import { registerCloudProviderCatalogRoutes } from './modules/cloud-provider-catalogs/cloud-provider-catalogs.routes.ts';
import { registerGitWebhookRoutes, type GitWebhookRouteDeps } from './modules/git-webhooks/git-webhooks.routes.ts';
import { registerDatabaseBackupRoutes } from './modules/database-backups/database-backups.routes.ts';
import { registerServiceInsightsRoutes } from './modules/service-insights/service-insights.routes.ts';

/**
 * Every API route, registered over the services app.ts built: the one table of what the API serves. Each route
 * declares its access (requireAccessDeclarations refuses one that does not), so test/route-security.test.ts walks
 * them all.
 */
export interface ApiRouteServices {
  egressIps: readonly string[];
  certificates: Parameters<typeof registerCertificateRoutes>[1];
  organizations: Parameters<typeof registerOrganizationRoutes>[1];
  roles: Parameters<typeof registerRoleRoutes>[1];
  onboarding: Parameters<typeof registerOnboardingRoutes>[1];
  apiTokens: Parameters<typeof registerApiTokenRoutes>[1];
  policyTokens: Parameters<typeof registerPolicyTokenRoutes>[1];
  projects: Parameters<typeof registerProjectRoutes>[1];
  members: Parameters<typeof registerMemberRoutes>[1];
  invitations: Parameters<typeof registerInvitationRoutes>[1];
  gitTokens: Parameters<typeof registerGitTokenRoutes>[1];
  gitProviders: Parameters<typeof registerGitProviderRoutes>[1];
  cloudCredentials: Parameters<typeof registerCloudCredentialsRoutes>[1];
  containerRegistries: Parameters<typeof registerContainerRegistryRoutes>[1];
  helmRepositories: Parameters<typeof registerHelmRepositoryRoutes>[1];
  labelsGroups: Parameters<typeof registerLabelsGroupRoutes>[1];
  annotationsGroups: Parameters<typeof registerAnnotationsGroupRoutes>[1];
  platformTemplates: Parameters<typeof registerPlatformTemplateRoutes>[1];
  billing: Parameters<typeof registerBillingRoutes>[1];
  clusters: Parameters<typeof registerClusterRoutes>[1] & Pick<ClustersService, 'authenticateOperator' | 'findClusterSummary'>;
  clusterInsight: Parameters<typeof registerClusterInsightRoutes>[1]['insight'];
  selfManagedClusters: Parameters<typeof registerSelfManagedClusterRoutes>[1];
  environments: Parameters<typeof registerEnvironmentRoutes>[1];
  agents: Parameters<typeof registerAgentRoutes>[1]['agents'];
  variables: Parameters<typeof registerProjectVariableRoutes>[1] & Parameters<typeof registerEnvironmentVariableRoutes>[1] & Parameters<typeof registerServiceVariableRoutes>[1];
  /** The authorizer, for routes whose target is not in their path (the unified /variable operations). */
  authorize: UnifiedVariableRouteDeps['authorize'];
  environmentServices: Parameters<typeof registerServiceRoutes>[1] & Parameters<typeof registerAdvancedSettingsRoutes>[1] & Pick<ServicesService, 'requireService'>;
  deployments: Parameters<typeof registerServiceDeploymentRoutes>[1] & Parameters<typeof registerEnvironmentDeploymentRoutes>[1];
  deploymentStatuses: Parameters<typeof registerDeploymentStatusRoutes>[1];
  deploymentQueue: Parameters<typeof registerDeploymentQueueRoutes>[1];
  environmentLogs: Parameters<typeof registerDeploymentQueueRoutes>[2];
  environmentBulkActions: Parameters<typeof registerEnvironmentBulkRoutes>[1];
  environmentOverview: Parameters<typeof registerEnvironmentOverviewRoutes>[1];
  deploymentRestrictions: Parameters<typeof registerDeploymentRestrictionRoutes>[1];
  deploymentStages: Parameters<typeof registerDeploymentStageRoutes>[1];
  deploymentRules: Parameters<typeof registerDeploymentRuleRoutes>[1];
  clusterSettings: Parameters<typeof registerClusterSettingsRoutes>[1];
  customDomains: Parameters<typeof registerCustomDomainRoutes>[1];
  serviceLinks: Parameters<typeof registerServiceLinkRoutes>[1];
  webhooks: Parameters<typeof registerWebhookRoutes>[1];
  alerts: Parameters<typeof registerAlertRoutes>[1]['alerts'];
  organizationEvents: Parameters<typeof registerOrganizationEventRoutes>[1];
  organizationListings: Parameters<typeof registerOrganizationListingsRoutes>[1];
  serviceCommits: Parameters<typeof registerServiceCommitRoutes>[1];
  databaseLinks: Parameters<typeof registerDatabaseLinkRoutes>[1];
  helmExtras: Parameters<typeof registerHelmExtrasRoutes>[1];
  ingressStatus: Parameters<typeof registerIngressStatusRoutes>[1];
  environmentChecks: Parameters<typeof registerEnvironmentCheckRoutes>[1];
  account: Parameters<typeof registerAccountRoutes>[1];
  cloudProviderCatalogs: Parameters<typeof registerCloudProviderCatalogRoutes>[1];
  gitWebhooks: GitWebhookRouteDeps;
  databaseBackups: Parameters<typeof registerDatabaseBackupRoutes>[1];
  serviceInsights: Parameters<typeof registerServiceInsightsRoutes>[1];
}

export function registerApiRoutes(api: FastifyTypeBox, wired: ApiRouteServices): void {
    requireAccessDeclarations(api);
    registerIpRoutes(api, wired.egressIps);
    registerCertificateRoutes(api, wired.certificates);
    registerOrganizationRoutes(api, wired.organizations);
    registerRoleRoutes(api, wired.roles);
    registerOnboardingRoutes(api, wired.onboarding);
    registerApiTokenRoutes(api, wired.apiTokens);
    registerPolicyTokenRoutes(api, wired.policyTokens);
    registerProjectRoutes(api, wired.projects);
    registerMemberRoutes(api, wired.members);
    registerInvitationRoutes(api, wired.invitations);
    registerGitTokenRoutes(api, wired.gitTokens);
    registerGitProviderRoutes(api, wired.gitProviders);
    registerCloudCredentialsRoutes(api, wired.cloudCredentials);
    registerContainerRegistryRoutes(api, wired.containerRegistries);
    registerHelmRepositoryRoutes(api, wired.helmRepositories);
    registerLabelsGroupRoutes(api, wired.labelsGroups);
    registerAnnotationsGroupRoutes(api, wired.annotationsGroups);
    registerPlatformTemplateRoutes(api, wired.platformTemplates);
    registerBillingRoutes(api, wired.billing);
    registerClusterRoutes(api, wired.clusters);
    registerClusterAdvancedSettingsRoutes(api, wired.clusters);
    registerSelfManagedClusterRoutes(api, wired.selfManagedClusters);
    registerClusterInsightRoutes(api, { insight: wired.clusterInsight, authenticateAgent: (credential) => wired.clusters.authenticateOperator(credential) });
    registerEnvironmentRoutes(api, wired.environments);
    registerEnvironmentDeploymentRoutes(api, wired.deployments);
    registerAgentRoutes(api, {
      agents: wired.agents,
      authenticateAgent: (credential) => wired.clusters.authenticateOperator(credential),
      clusterExists: async (organizationId, clusterId) => (await wired.clusters.findClusterSummary(organizationId, clusterId)) !== undefined,
    });
    registerProjectVariableRoutes(api, wired.variables);
    registerEnvironmentVariableRoutes(api, wired.variables);
    registerServiceRoutes(api, wired.environmentServices, SERVICE_KIND_DEFINITIONS);
    registerAdvancedSettingsRoutes(api, wired.environmentServices);
    registerServiceCloneRoutes(api, wired.environmentServices);
    registerNetworkSettingsRoutes(api, wired.environmentServices);
    // Databases have no variables of their own: they provide built-ins to the other services (docs/variables.md).
    for (const kind of SERVICE_KIND_DEFINITIONS.filter((definition) => definition.kind !== 'DATABASE')) {
      registerServiceVariableRoutes(api, wired.variables, {
        noun: kind.operationNoun,
        item: kind.item,
        idParam: kind.idParam,
        prose: kind.prose,
        locate: (serviceId) => wired.environmentServices.requireService(kind.kind, serviceId),
      });
    }
    const locateService: UnifiedVariableRouteDeps['locateService'] = (kind, serviceId) => wired.environmentServices.requireService(kind, serviceId);
    registerUnifiedVariableRoutes(api, { variables: wired.variables, authorize: wired.authorize, locateService });
    for (const kind of SERVICE_KIND_DEFINITIONS) {
      if (kind.kind === 'DATABASE') continue;
      registerServiceImportRoute(api, { variables: wired.variables, locateService }, { kind: kind.kind, noun: kind.operationNoun, item: kind.item, idParam: kind.idParam });
    }
    registerServiceDeploymentRoutes(api, wired.deployments, SERVICE_KIND_DEFINITIONS);
    registerServiceUninstallRoutes(api, wired.deployments);
    registerDeploymentStatusRoutes(api, wired.deploymentStatuses);
    registerDeploymentQueueRoutes(api, wired.deploymentQueue, wired.environmentLogs);
    registerEnvironmentBulkRoutes(api, wired.environmentBulkActions);
    registerEnvironmentOverviewRoutes(api, wired.environmentOverview, SERVICE_KIND_DEFINITIONS);
    registerDeploymentRestrictionRoutes(api, wired.deploymentRestrictions);
    registerDeploymentStageRoutes(api, wired.deploymentStages);
    registerDeploymentRuleRoutes(api, wired.deploymentRules);
    registerClusterSettingsRoutes(api, wired.clusterSettings);
    registerCustomDomainRoutes(api, wired.customDomains);
    registerServiceLinkRoutes(api, wired.serviceLinks);
    registerWebhookRoutes(api, wired.webhooks);
    registerAlertRoutes(api, { alerts: wired.alerts, authorize: wired.authorize });
    registerOrganizationEventRoutes(api, wired.organizationEvents);
    registerOrganizationListingsRoutes(api, wired.organizationListings);
    registerCatalogRoutes(api);
    registerServiceCommitRoutes(api, wired.serviceCommits);
    registerDatabaseLinkRoutes(api, wired.databaseLinks);
    registerHelmExtrasRoutes(api, wired.helmExtras);
    registerIngressStatusRoutes(api, wired.ingressStatus);
    registerEnvironmentCheckRoutes(api, wired.environmentChecks);
    registerAccountRoutes(api, wired.account);
    registerCloudProviderCatalogRoutes(api, wired.cloudProviderCatalogs);
    registerGitWebhookRoutes(api, wired.gitWebhooks);
    registerDatabaseBackupRoutes(api, wired.databaseBackups);
    registerServiceInsightsRoutes(api, wired.serviceInsights);
}
