import { tmpdir } from 'node:os';
import path from 'node:path';
import { LETS_ENCRYPT_DIRECTORY_URL, type Config } from './config.ts';
import { createOidcVerifier } from './auth/oidc.ts';
import type { Principal } from './auth/principal.ts';
import { databaseTargetOf, type Database } from './db/db.client.ts';
import { createSystemGitAccess } from './git/system-git.ts';
import { createAuthenticator } from './http/authenticate.ts';
import { accessIn, createAuthorizer, type AuthorizationPorts } from './http/authorize.ts';
import type { FastifyTypeBox } from './http/fastify.types.ts';
import { recordOpenApiRoutes, registerOpenApiDocuments } from './http/openapi.ts';
import { redirectInvitationLinksToConsole, registerConsole } from './http/console.ts';
import { registerApiRoutes } from './app.routes.ts';
import { createBilling, createMailer, createServices, DEFAULT_PUBLIC_URL, ownerEmailOf, secretKeyOf } from './app.services.ts';
import { installAudit, organizationEventsSweepSchedule } from './http/audit.ts';
import { idempotencySweepSchedule, installIdempotency } from './http/idempotency.ts';
import { installRateLimit } from './http/rate-limit.ts';
import { createChangeSignals } from './db/db.signals.ts';
import { createOrganizationChanges } from './modules/organization-changes/organization-changes.signals.ts';
import { createOrganizationChangesService } from './modules/organization-changes/organization-changes.service.ts';
import { registerOrganizationChangeRoutes } from './modules/organization-changes/organization-changes.routes.ts';
import { installSecurity } from './http/security.ts';
import { exposeMetrics, installHttpMetrics } from './http/metrics.ts';
import { createHttpServer } from './http/server.ts';
import { installRequestTracing } from './http/tracing.ts';
import { setUpBuiltInIdentity } from './identity/identity.setup.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { deriveKey } from './lib/crypto.ts';
import { notFound } from './lib/errors.ts';
import { createSecretBox } from './lib/secret-box.ts';
import { createJobSchedules } from './jobs/job-schedules.ts';
import { createJobWorker, createWorkerWakeup, type JobWorkerOptions } from './jobs/job-worker.ts';
import {
  createLocalClusterDriver,
  createManagedClusterDriver,
  createSelfManagedClusterDriver,
} from './modules/clusters/clusters.drivers.ts';
import { createClusterActionHandler, operatorReadinessOf } from './modules/clusters/clusters.jobs.ts';

import { CLUSTER_ACTION_JOB, createClustersService } from './modules/clusters/clusters.service.ts';
import { clusterSummariesOf } from './modules/clusters/clusters.lookups.ts';

import { billingSchedule } from './modules/billing/billing.schedule.ts';
import { customDomainRecheckSchedule, DEFAULT_DOMAIN_RECHECK_INTERVAL_MS } from './modules/custom-domains/custom-domains.schedule.ts';
import { PLANS } from './modules/billing/billing.plans.ts';

import { createAnnotationsGroupsService } from './modules/annotations-groups/annotations-groups.service.ts';

import { createContainerRegistriesService } from './modules/container-registries/container-registries.service.ts';
import { createAwsAccess } from './aws/aws-access.ts';

import { createCloudCredentialsService } from './modules/cloud-credentials/cloud-credentials.service.ts';
import { createOrganizationListingsService } from './modules/organization-listings/organization-listings.service.ts';
import { createServiceCommits } from './modules/services/services.commits.ts';

import { createSelfManagedClustersService } from './modules/self-managed-clusters/self-managed-clusters.service.ts';
import { clusterAnalysisHandler, createClusterSettingsService } from './modules/cluster-settings/cluster-settings.service.ts';
import { SUPPORTED_KUBERNETES_VERSIONS } from './modules/clusters/clusters.records.ts';

import { createHelmRepositoriesService } from './modules/helm-repositories/helm-repositories.service.ts';

import { createLabelsGroupsService } from './modules/labels-groups/labels-groups.service.ts';
import { createHelmIndexReader } from './registry/helm-index.ts';
import { createOciDistributionClient } from './registry/oci-distribution.ts';
import { createOutboundHttp } from './registry/outbound-http.ts';
import { createGitTokensService } from './modules/git-tokens/git-tokens.service.ts';
import { createGitProvidersService } from './modules/git-providers/git-providers.service.ts';
import { createGitProviderRest } from './modules/git-providers/git-providers.rest.ts';





import { createOrganizationEventsService } from './modules/organization-events/organization-events.service.ts';

import { createOrganizationPurgeHandler, ORGANIZATION_PURGE_JOB } from './modules/organizations/organizations.purge.ts';

import { catalogSourceFor } from './modules/platform-templates/platform-templates.catalog-source.ts';

import { createPlatformTemplatesService } from './modules/platform-templates/platform-templates.service.ts';



import { createEnvironmentsService } from './modules/environments/environments.service.ts';
import { createAgentSubjects } from './modules/deployments/deployments.agent-subjects.ts';
import { createDeploymentStatuses } from './modules/deployments/deployments.statuses.ts';
import { createDeploymentDispatch } from './modules/deployments/deployments.dispatch.ts';
import { createDeploymentsService } from './modules/deployments/deployments.service.ts';
import { createDeploymentQueue } from './modules/deployments/deployments.queue.ts';
import { createEnvironmentLogs } from './modules/deployments/deployments.environment-logs.ts';
import { createEnvironmentBulkActions } from './modules/deployments/deployments.bulk-actions.ts';
import { createEnvironmentOverview } from './modules/environments/environments.overview.ts';

import { createAgentsService } from './modules/agents/agents.service.ts';
import { createClusterInsightService } from './modules/cluster-insight/cluster-insight.service.ts';
import { createServiceAgentSpecs } from './modules/services/services.agent-spec.ts';
import type { RunningLocalAgent } from './agent/local-agent.ts';
import { installLocalAgent } from './app.local-agent.ts';

import { createVariablesService, variablesFingerprintKey } from './modules/variables/variables.service.ts';
import { SERVICE_KIND_DEFINITIONS } from './modules/services/services.kinds.ts';

import { createServiceLinks } from './modules/services/services.links.ts';
import { createDatabaseLinks } from './modules/services/services.database-links.ts';
import { createGitFiles } from './modules/services/services.git-files.ts';
import { createHelmExtras } from './modules/services/services.helm-extras.ts';
import { createIngressStatus } from './modules/services/services.ingress-status.ts';
import { createEnvironmentChecks } from './modules/environments/environments.checks.ts';
import { createDatabaseBackupsService } from './modules/database-backups/database-backups.service.ts';
import { createLocalDatabaseDumps } from './engine/local/database-dumps.ts';
import { createServiceGitInsights } from './modules/service-insights/service-insights.git.ts';
import { createTerraformResources } from './modules/service-insights/service-insights.terraform.ts';
import { createEnvironmentExport } from './modules/service-insights/service-insights.export.ts';
import { createBuildUsageReports } from './modules/service-insights/service-insights.build-usage.ts';
import { createAccountService } from './modules/users/users.account.ts';

import { createNodeDomainResolver } from './modules/custom-domains/custom-domains.dns.ts';

import { createCustomDomainsService } from './modules/custom-domains/custom-domains.service.ts';
import { createClusterCertificateReports } from './modules/certificates/certificates.cluster-reports.ts';
import { createHttpsWiring } from './modules/certificates/certificates.wiring.ts';
import { createDeploymentRestrictionsService } from './modules/deployment-restrictions/deployment-restrictions.service.ts';
import { createDeploymentStagesService } from './modules/deployment-stages/deployment-stages.service.ts';
import { createDeploymentRulesService } from './modules/deployment-rules/deployment-rules.service.ts';
import { deploymentRulesSchedule } from './modules/deployment-rules/deployment-rules.schedule.ts';
import { createServiceReferences } from './modules/services/services.references.ts';
import { createServicesService, existsThrough, linkedRecordsThrough, missingThrough } from './modules/services/services.service.ts';
import type { EventPublisher } from './modules/webhooks/webhooks.events.ts';
import { createWebhookDeliveryHandler } from './modules/webhooks/webhooks.jobs.ts';

import { createWebhookSender } from './modules/webhooks/webhooks.sender.ts';
import { createWebhooksService, WEBHOOK_DELIVERY_JOB } from './modules/webhooks/webhooks.service.ts';
import { createAlertDelivery } from './modules/alerts/alerts.delivery.ts';
import { alertsSchedule } from './modules/alerts/alerts.schedule.ts';
import { installationBackupSchedule } from './modules/installation-backups/installation-backups.schedule.ts';
import { createAlertsService } from './modules/alerts/alerts.service.ts';
import { createGitWebhooksService } from './modules/git-webhooks/git-webhooks.service.ts';
import { createImageDeploys } from './modules/git-webhooks/git-webhooks.image-deploys.ts';
import { createCloudProviderCatalogsService } from './modules/cloud-provider-catalogs/cloud-provider-catalogs.service.ts';
import { createProviderHooks } from './modules/git-webhooks/git-webhooks.provider-api.ts';
import { createPreviews } from './modules/git-webhooks/git-webhooks.previews.ts';

/** What the composition root needs from the process: configuration, an open and migrated database, a clock. */
export interface AppDeps {
  /**
   * Without `oidc`, a `publicUrl` turns the built-in identity provider on (its issuer is `${publicUrl}/oidc`).
   * Without `smtpUrl`, outgoing mail is kept in the outbox table. Without `rateLimitPerMinute` (or with 0), no rate
   * limit applies.
   */
  config: Pick<Config, 'oidc' | 'egressIps' | 'logLevel'> &
    Partial<Pick<Config, 'logFormat'>> &
    Partial<Pick<Config, 'publicUrl' | 'smtpUrl' | 'mailFrom' | 'secretKey' | 'gitAllowPrivateHosts' | 'gitAllowedHosts' | 'rateLimitPerMinute' | 'awsEndpointUrl' | 'signUp'>> &
    Partial<Pick<Config, 'templateCatalogUrl' | 'dataDir' | 'appsDomain' | 'dnsServers' | 'localAgent' | 'appsPort' | 'agentConcurrency' | 'host' | 'localPostgresUrl' | 'workloadIsolation'>> &
    Partial<Pick<Config, 'appsHttpsPort' | 'acmeDirectoryUrl' | 'acmeEmail' | 'acmeCaBundle' | 'httpsServiceHostnames' | 'httpsPrivateNames' | 'appsHsts'>> &
    Partial<Pick<Config, 'helmBinary'>> &
    Partial<Pick<Config, 'metricsToken' | 'metricsAddress'>> &
    Partial<Pick<Config, 'redisUrl' | 'fallbackPollMs'>> &
    Partial<Pick<Config, 'backup' | 'databaseUrl'>>;
  database: Database;
  /** Background work: the in-process worker (on unless `run` is false; scheduled work runs only with it) and its timings. */
  jobs?: Partial<Pick<JobWorkerOptions, 'pollIntervalMs' | 'heartbeatIntervalMs' | 'staleAfterMs' | 'retryBaseMs'>> & { run?: boolean };
  /** How long a self-managed cluster's deploy waits for its operator's READY report, and how often it looks. */
  clusterOperator?: { readyTimeoutMs?: number; recheckMs?: number };
  /** How often pending custom domains are checked again in the background (every 5 minutes unless given). */
  customDomains?: { recheckIntervalMs?: number };
  /** How often the certificates schedule looks for orders and renewals that are due (every 10 minutes unless given). */
  certificates?: { checkIntervalMs?: number };
  /** How often a deleted organization's purge looks whether its teardowns settled, and how long it waits at most. */
  organizationPurge?: { recheckMs?: number; patienceMs?: number };
  /** Failed webhook deliveries in a row after which a webhook is disabled (20 unless given). */
  webhooks?: { disableAfterFailures?: number };
  /** Agent protocol timings (docs/agent-protocol.md): lease, heartbeat interval, long-poll look, dispatch recheck. */
  agents?: { leaseMs?: number; heartbeatIntervalMs?: number; pollMs?: number; recheckMs?: number };
  clock?: Clock;
  logStream?: NodeJS.WritableStream;
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Starts the in-process agent of the LOCAL clusters when config.localAgent asks for it (once; later calls answer
     * the running one). The server calls it after it listens, so the API answers without waiting for the engine;
     * AppsPortInUseError when the apps port is taken.
     */
    startLocalAgent(): Promise<RunningLocalAgent | undefined>;
  }
}

/** The buildable application: every route, its security and its documentation. Tests boot exactly this. */
export async function buildApp(deps: AppDeps): Promise<FastifyTypeBox> {
  const clock = deps.clock ?? systemClock;
  const app = createHttpServer({
    logLevel: deps.config.logLevel,
    logFormat: deps.config.logFormat,
    ...(deps.logStream === undefined ? {} : { logStream: deps.logStream }),
  });
  // A span per request when the process traces (main.ts started the SDK; docs/operations.md, "Traces").
  installRequestTracing(app);
  // "Look again" between the processes sharing the database: job wake-ups, agent long-polls, live logs (db.signals.ts).
  const signals = createChangeSignals(deps.database, { log: app.log });
  app.addHook('onClose', () => signals.close());
  // Open pages' "look again" (issue 20): the writers of states publish in their transactions, streams listen.
  const organizationChanges = createOrganizationChanges(signals);
  // Requests wake the workers after their commit; this process's is built last, from every module's handlers.
  const wakeup = createWorkerWakeup(signals);
  // The process's series (docs/operations.md, "What to watch: metrics"), counted only where someone can read them:
  // behind the metrics token, or on the metrics address (app.metrics.ts).
  const metrics =
    deps.config.metricsToken !== undefined || deps.config.metricsAddress !== undefined
      ? (await import('./app.metrics.ts')).createAppMetrics(deps.database, clock)
      : undefined;
  if (metrics !== undefined) installHttpMetrics(app, metrics.registry);
  const mailer = createMailer(app, deps);
  const services = createServices(
    deps.database,
    clock,
    { mailer, publicUrl: deps.config.publicUrl ?? DEFAULT_PUBLIC_URL },
    // A project's environments go with it, their workloads handed to the agents (environments and the worker are
    // created below).
    { removeProjectContents: (trx, projectId) => environments.removeProjectEnvironments(trx, projectId), wakeWorkers: wakeup.wake },
  );

  // Without an external issuer, Slipway's own provider signs users in; its tokens are verified the same way.
  const builtInIdentity =
    deps.config.oidc === undefined && deps.config.publicUrl !== undefined
      ? await setUpBuiltInIdentity({
          database: deps.database,
          clock,
          publicUrl: deps.config.publicUrl,
          mailer,
          // SLIPWAY_SIGNUP, invite unless given: sign-up asks about pending invitations and bootstrapped users here.
          signUp: { mode: deps.config.signUp ?? 'invite', invitations: services.invitations, users: services.users },
        })
      : undefined;
  const trustedIssuer = deps.config.oidc ?? builtInIdentity?.verifier;
  const verifyUserJwt = trustedIssuer === undefined ? undefined : createOidcVerifier(trustedIssuer);
  const secretKey = secretKeyOf(deps.config.secretKey);
  // Registries and repositories are user-given addresses, held to git's decision on private hosts (docs/registries.md).
  const outbound = createOutboundHttp({ allowPrivateHosts: deps.config.gitAllowPrivateHosts ?? false });
  const ownerEmail = ownerEmailOf(services);
  // State changes publish deployment events to the webhooks inside their own transactions.
  const webhooks = createWebhooksService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    policy: outbound.policy,
    sender: createWebhookSender(outbound.policy),
    wakeWorkers: wakeup.wake,
    signals,
    ...(deps.webhooks?.disableAfterFailures === undefined ? {} : { disableAfterFailures: deps.webhooks.disableAfterFailures }),
    mailer,
    ownerEmail,
    log: app.log,
  });
  const events: EventPublisher = webhooks;
  // Alerting (docs/alerts.md): receivers reached through the webhooks' sender (its outbound guard) or SMTP, rules
  // evaluated by the `alerts` schedule.
  const alerts = createAlertsService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    policy: outbound.policy,
    delivery: createAlertDelivery({ policy: outbound.policy, sender: createWebhookSender(outbound.policy), clock }),
    log: app.log,
  });
  // Billing reads cluster summaries from the database itself, so it is built before the clusters service that asks it.
  const billing = createBilling(deps.database, services, {
    clock,
    secretKey,
    publicUrl: deps.config.publicUrl ?? DEFAULT_PUBLIC_URL,
    mailer,
    clusters: clusterSummariesOf(deps.database.db),
    log: app.log,
  });
  const clusters = createClustersService({
    events,
    db: deps.database.db,
    clock,
    wakeWorkers: wakeup.wake,
    deletePlatformConfiguration: (trx, clusterId) => platformTemplates.deleteClusterPlatformConfiguration(trx, clusterId),
    publicUrl: deps.config.publicUrl ?? DEFAULT_PUBLIC_URL,
    deploymentGate: billing.deploymentsAllowed,
    labelsGroups: { resolveLabelsGroups: (organizationId, ids, pointer) => labelsGroups.resolveLabelsGroups(organizationId, ids, pointer) },
    stateChanges: organizationChanges,
  });

  // Where owned resources live: the authorizer's, and the audit log's to tell a token's own resources from others'.
  const placementOf: AuthorizationPorts['placementOf'] = {
    project: services.projects.placementOf,
    cluster: clusters.placementOf,
    environment: (environmentId) => environments.placementOf(environmentId),
    service: (serviceId) => environmentServices.placementOf(serviceId),
    deployment_stage: (stageId) => deploymentStages.placementOf(stageId),
    deployment_request: (deploymentRequestId) => deploymentQueue.placementOfDeploymentRequest(deploymentRequestId),
  };
  // Kept for the routes whose target is in their body, query or a stored row: they authorize once they have found it.
  const authorizationPorts: AuthorizationPorts = {
    membership: services.members.membershipOf,
    customRoleGrants: services.roles.customRoleGrants,
    placementOf,
    policyVerdict: services.policyTokens.policyVerdict,
  };
  const authorize = createAuthorizer(authorizationPorts);
  redirectInvitationLinksToConsole(app);
  installSecurity(app, {
    authenticate: createAuthenticator({
      resolveApiToken: services.apiTokens.resolveApiToken,
      resolvePolicyToken: services.policyTokens.resolvePolicyToken,
      resolveUserJwt:
        verifyUserJwt === undefined
          ? undefined
          : async (jwt): Promise<Principal> => {
              const user = await services.users.userForIdentity(await verifyUserJwt(jwt));
              return { kind: 'user', userId: user.id, email: user.email, name: user.name };
            },
    }),
    authorize,
  });

  // Which services use a token, a registry, a repository or a group: a reading of the services module's own tables,
  // built first so that the modules asking it need no forward reference to the services module.
  const serviceUsage = createServiceReferences({ db: deps.database.db });
  const git = createSystemGitAccess({ allowPrivateHosts: deps.config.gitAllowPrivateHosts ?? false, allowedHosts: deps.config.gitAllowedHosts ?? [] });
  const gitTokens = createGitTokensService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    git,
    usage: {
      servicesUsing: serviceUsage.servicesUsingGitToken,
      countsByToken: serviceUsage.countsByGitToken,
    },
  });
  const aws = createAwsAccess({ endpointUrl: deps.config.awsEndpointUrl });
  const cloudCredentials = createCloudCredentialsService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    aws,
    otherUsers: async (organizationId, credentialsId) => [
      ...(await containerRegistries.registriesUsingAwsCredentials(organizationId, credentialsId)),
      ...(await helmRepositories.repositoriesUsingAwsCredentials(organizationId, credentialsId)),
    ],
  });

  const oci = createOciDistributionClient(outbound);
  const containerRegistries = createContainerRegistriesService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    oci,
    policy: outbound.policy,
    usage: { countsByRegistry: serviceUsage.countsByRegistry },
    ecr: cloudCredentials,
    awsCredentials: cloudCredentials,
  });
  const helmRepositories = createHelmRepositoriesService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    oci,
    index: createHelmIndexReader(outbound),
    policy: outbound.policy,
    usage: { countsByRepository: serviceUsage.countsByRepository },
    ecr: cloudCredentials,
    awsCredentials: cloudCredentials,
  });
  const labelsGroups = createLabelsGroupsService({
    db: deps.database.db,
    clock,
    usage: {
      itemsUsing: async (organizationId, groupId) => [
        ...(await clusters.clustersUsingLabelsGroup(organizationId, groupId)),
        ...(await serviceUsage.servicesUsingLabelsGroup(organizationId, groupId)),
      ],
    },
  });
  const annotationsGroups = createAnnotationsGroupsService({
    db: deps.database.db,
    clock,
    usage: { itemsUsing: serviceUsage.servicesUsingAnnotationsGroup },
  });

  const platformTemplates = createPlatformTemplatesService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    catalog: catalogSourceFor(deps.config.templateCatalogUrl, clock),
    clusters,
  });

  const variables = createVariablesService({
    db: deps.database.db,
    dialect: deps.database.dialect,
    clock,
    secrets: createSecretBox(secretKey),
    fingerprintKey: variablesFingerprintKey(secretKey),
    environments: { findEnvironmentSummary: (environmentId) => environments.findEnvironmentSummary(environmentId) },
    services: { services: (environmentId) => environmentServices.servicesForVariables(environmentId) },
    changes: { variablesChanged: (trx, change) => environments.variablesChanged(trx, change) },
  });
  const environments = createEnvironmentsService({
    db: deps.database.db,
    clock,
    clusters,
    variables,
    services: {
      removeEnvironmentServices: (trx, environmentId, options) => environmentServices.removeEnvironmentServices(trx, environmentId, options),
      servicesRemoved: (serviceIds) => environmentServices.servicesRemoved(serviceIds),
    },
    deployments: { refuseBusyEnvironment: (trx, environmentId) => deployments.refuseBusyEnvironment(trx, environmentId) },
    stages: { copyEnvironmentStages: (trx, fromEnvironmentId, toEnvironmentId) => deploymentStages.copyEnvironmentStages(trx, fromEnvironmentId, toEnvironmentId) },
    deploymentRules: {
      placementFor: (projectId, environmentName) => deploymentRules.placementFor(projectId, environmentName),
      environmentCreated: (trx, environment) => deploymentRules.environmentCreated(trx, environment),
    },
    stateChanges: organizationChanges,
  });
  // Deployment rules (docs/deployment-rules.md): a project's rules place new environments; each environment's
  // schedule stops and deploys it again through the deployments module's own actions.
  const deploymentRules = createDeploymentRulesService({
    db: deps.database.db,
    clock,
    clusters,
    deployments: {
      findEnvironmentState: (environmentId) => deployments.findEnvironmentState(environmentId),
      stopEnvironment: (principal, environmentId) => deployments.stopEnvironment(principal, environmentId),
      deployEnvironment: (principal, environmentId) => deployments.deployEnvironment(principal, environmentId),
    },
    log: app.log,
  });
  // The seven kinds of services (docs/services.md); what their settings name is checked with the owning modules.
  const environmentServices = createServicesService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    kinds: SERVICE_KIND_DEFINITIONS,
    // What a git source may name is this installation's git access's to say, as for the builds.
    gitUrls: git,
    stateChanges: organizationChanges,
    environments: { findEnvironmentSummary: (environmentId) => environments.findEnvironmentSummary(environmentId) },
    lookups: {
      gitTokenExists: existsThrough(gitTokens.getGitToken),
      containerRegistryExists: existsThrough(containerRegistries.getContainerRegistry),
      helmRepositoryExists: existsThrough(helmRepositories.getHelmRepository),
      missingLabelsGroups: missingThrough(labelsGroups.getOrganizationLabelsGroup),
      missingAnnotationsGroups: missingThrough(annotationsGroups.getOrganizationAnnotationsGroup),
      linkedRecords: linkedRecordsThrough({
        labelsGroup: labelsGroups.getOrganizationLabelsGroup,
        annotationsGroup: annotationsGroups.getOrganizationAnnotationsGroup,
        containerRegistry: containerRegistries.getContainerRegistry,
        helmRepository: helmRepositories.getHelmRepository,
      }),
    },
    variables: { deleteServiceVariables: (trx, serviceId) => variables.deleteServiceVariables(trx, serviceId) },
    runtime: {
      refuseBusy: (trx, serviceId, options) => deployments.refuseBusyService(trx, serviceId, options),
      serviceRemoved: (serviceId) => deployments.serviceRemoved(serviceId),
      outOfDate: (serviceIds) => deployments.outOfDate(serviceIds),
    },
    clone: {
      copyServiceVariables: (trx, fromServiceId, to) => variables.copyServiceVariables(trx, fromServiceId, to),
      copyDeploymentRestrictions: (trx, fromServiceId, toServiceId) => deploymentRestrictions.copyDeploymentRestrictions(trx, fromServiceId, toServiceId),
    },
    sharedPostgres: deps.config.localPostgresUrl !== undefined,
    appsDomain: deps.config.appsDomain ?? 'localhost',
  });
  // Path globs deciding whether a git push deploys an application (docs/service-kinds.md).
  const deploymentRestrictions = createDeploymentRestrictionsService({ db: deps.database.db, clock, services: environmentServices });
  // Custom domains of applications and containers, verified in DNS (docs/service-kinds.md).
  // Automatic HTTPS (docs/https.md): certificates for verified custom domains, served by the apps proxy.
  const https = createHttpsWiring({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    settings: {
      httpsPort: deps.config.appsHttpsPort,
      directoryUrl: deps.config.acmeDirectoryUrl ?? LETS_ENCRYPT_DIRECTORY_URL,
      email: deps.config.acmeEmail,
      caBundleFile: deps.config.acmeCaBundle,
      privateNames: deps.config.httpsPrivateNames ?? 'installation-ca',
    },
    installationName: deps.config.publicUrl === undefined ? 'Slipway' : new URL(deps.config.publicUrl).hostname,
    domains: { subject: (id) => customDomains.certificateSubject(id), problemPointingHere: (id) => customDomains.problemPointingHere(id) },
    // The services' own host names (SLIPWAY_HTTPS_SERVICE_HOSTNAMES): those the apps proxy of this installation
    // routes, i.e. of services running on a LOCAL cluster.
    ...(deps.config.appsHttpsPort !== undefined && deps.config.httpsServiceHostnames !== 'off'
      ? {
          serviceHostnames: {
            async subject(serviceId: string) {
              const routed = await serviceAgentSpecs.routedHostnameOf(serviceId);
              const service = routed === undefined || !(await clusters.isLocalCluster(routed.clusterId)) ? undefined : await environmentServices.findService(serviceId);
              if (routed === undefined || service === undefined) return undefined;
              const { id, kind, name, organizationId, projectId, environmentId } = service;
              return { hostname: routed.hostname, service: { id, kind, name, organizationId, projectId, environmentId } };
            },
            candidates: () => deployments.listRunningServiceIds(),
          },
        }
      : {}),
    organizationEvents: () => organizationEvents,
    wakeWorkers: wakeup.wake,
    log: app.log,
    ...(deps.certificates?.checkIntervalMs === undefined ? {} : { checkIntervalMs: deps.certificates.checkIntervalMs }),
  });
  // Certificates Kubernetes clusters obtain themselves through cert-manager, as their agents report them (docs/https.md).
  const clusterCertificates = createClusterCertificateReports({ db: deps.database.db, clock, appsDomain: deps.config.appsDomain ?? 'localhost', log: app.log });
  const customDomains = createCustomDomainsService({
    certificates: https.certificates,
    clusterCertificates,
    db: deps.database.db,
    dialect: deps.database.dialect,
    clock,
    appsDomain: deps.config.appsDomain ?? 'localhost',
    resolver: createNodeDomainResolver({ servers: deps.config.dnsServers ?? [] }),
    services: environmentServices,
  });
  // The apps proxy's port once the in-process local agent serves (SLIPWAY_APPS_PORT 0 picks a free one).
  let appsPort: number | undefined;
  // Where applications and containers are reached from outside (listApplicationLinks, listContainerLinks).
  const serviceLinks = createServiceLinks({
    services: environmentServices,
    verifiedDomainsOf: (serviceId) => customDomains.validatedDomainsOf(serviceId),
    appsPort: () => appsPort ?? deps.config.appsPort ?? 8000,
    https: { port: () => https.httpsPort(), servedHostnames: (hostnames) => https.certificates.servedHostnames(hostnames) },
  });
  // Environment and service actions, status, history and logs (docs/environments.md, docs/service-deployments.md):
  // one deployments module; a service's deployments keep their snapshots.
  const deployments = createDeploymentsService({
    db: deps.database.db,
    clock,
    services: environmentServices,
    environments,
    clusters,
    variables,
    deploymentGate: (organizationId, clusterId) => clusters.admitDeployment(organizationId, clusterId),
    metering: billing.metering,
    stages: { startOrderOf: (environmentId) => deploymentStages.startOrderOf(environmentId) },
    wakeWorkers: wakeup.wake,
    signals,
    stateChanges: organizationChanges,
    livePollMs: deps.config.fallbackPollMs,
    serviceDeployed: (serviceId) => https.certificates.requestServiceCertificate(serviceId),
    metrics: metrics?.deployments,
    events: {
      publisher: events,
      serviceSource: async (service) => {
        const environment = await environments.findEnvironmentSummary(service.environmentId);
        if (environment === undefined) throw notFound(`environment ${service.environmentId} not found`);
        return {
          organizationId: service.organizationId,
          resource: { type: 'SERVICE', id: service.id, name: service.name },
          project: { id: service.projectId, name: (await services.projects.getProject(service.projectId)).name },
          environmentMode: environment.mode,
          serviceKind: service.kind,
        };
      },
      environmentSource: async (environment) => ({
        organizationId: environment.organizationId,
        resource: { type: 'ENVIRONMENT', id: environment.id, name: environment.name },
        project: { id: environment.projectId, name: (await services.projects.getProject(environment.projectId)).name },
        environmentMode: environment.mode,
      }),
    },
  });
  // The deployment queue, an environment's logs, bulk actions and overviews, over the deployments (docs/deployment-queue.md).
  const deploymentQueue = createDeploymentQueue({ db: deps.database.db, services: environmentServices, environments, deployments });
  const environmentLogs = createEnvironmentLogs({ db: deps.database.db, services: environmentServices, environments });
  const environmentBulkActions = createEnvironmentBulkActions({ db: deps.database.db, clock, environments, services: environmentServices, deployments, stateChanges: organizationChanges });
  const environmentOverview = createEnvironmentOverview({ environments, services: environmentServices, deployments, kinds: SERVICE_KIND_DEFINITIONS });
  // The stages an environment's deploy starts its services in (docs/deployment-stages.md).
  const deploymentStages = createDeploymentStagesService({ db: deps.database.db, clock, environments, services: environmentServices, deployments });
  // What a service task's agent reads: the deployment's snapshot plus git token, database credentials and routes.
  const serviceAgentSpecs = createServiceAgentSpecs({
    deployments,
    kinds: SERVICE_KIND_DEFINITIONS,
    databaseConnection: (serviceId) => environmentServices.databaseConnection(serviceId),
    environmentOf: (environmentId) => environments.findEnvironmentSummary(environmentId),
    imageOf: (organizationId, registryId, imageName, tag) => containerRegistries.imageOf(organizationId, registryId, imageName, tag),
    gitCredentialsOf: (organizationId, gitTokenId) => gitTokens.credentialsOf(organizationId, gitTokenId),
    helmChartOf: (organizationId, repositoryId) => helmRepositories.chartSourceOf(organizationId, repositoryId),
    verifiedDomainsOf: (serviceId) => customDomains.validatedDomainsOf(serviceId),
    hostnameOf: (serviceId) => environmentServices.publicHostnameOf(serviceId),
    internalEndpointOf: (serviceId) => environmentServices.internalEndpointOf(serviceId),
    internalPeersOf: (environmentId) => environmentServices.internalPeersOf(environmentId),
    openValue: (variable) => variables.openSnapshotValue(variable),
  });
  // Environment and service actions are carried out by their cluster's agent (docs/agent-protocol.md).
  const agents = createAgentsService({
    db: deps.database.db,
    dialect: deps.database.dialect,
    clock,
    wakeWorkers: wakeup.wake,
    leaseMs: deps.agents?.leaseMs,
    heartbeatIntervalMs: deps.agents?.heartbeatIntervalMs,
    pollMs: deps.agents?.pollMs,
    signals,
    stateChanges: organizationChanges,
    agentPermissions: clusters.noteAgentPermissions,
    certificateReports: clusterCertificates,
    metrics: metrics?.agents,
    ...createAgentSubjects({ deployments, specs: serviceAgentSpecs, log: app.log }),
  });
  // A cluster's kubeconfig, events, logs, readiness and operator (docs/cluster-insight.md).
  const clusterInsight = createClusterInsightService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    publicUrl: deps.config.publicUrl ?? DEFAULT_PUBLIC_URL,
    agentStatus: (clusterId) => agents.agentStatus(clusterId),
    grantsAt: async (principal, placement) => (await accessIn(authorizationPorts, principal, placement))?.grants,
  });
  // Rules 1–7 of SPEC.md: each collaborator writes its own rows inside the one transaction this service opens.
  const selfManagedClusters = createSelfManagedClustersService({
    db: deps.database.db,
    credentials: cloudCredentials,
    aws,
    plans: billing,
    platformConfigurations: platformTemplates,
    clusterRecords: clusters,
    clusterViews: clusters,
    registries: containerRegistries,
  });

  // A cluster's routing table, DNS provider, cloud binding, EKS Anywhere and Karpenter settings, analyses (docs/cluster-network.md).
  const clusterSettings = createClusterSettingsService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    wakeWorkers: wakeup.wake,
    platformDomain: deps.config.appsDomain ?? 'localhost',
    jwtKey: deriveKey(secretKey, 'slipway/eks-anywhere-jwt/v1'),
    publicUrl: deps.config.publicUrl ?? DEFAULT_PUBLIC_URL,
    heartbeatIntervalMs: deps.agents?.heartbeatIntervalMs ?? 15_000,
    supportedKubernetesVersions: SUPPORTED_KUBERNETES_VERSIONS,
    cloudCredentials,
    git,
    gitCredentialsOf: (organizationId, gitTokenId) => gitTokens.credentialsOf(organizationId, gitTokenId),
    platformConfiguration: platformTemplates,
  });

  const perMinute = deps.config.rateLimitPerMinute ?? 0;
  if (perMinute > 0) await installRateLimit(app, { perMinute, redisUrl: deps.config.redisUrl, database: deps.database });
  installIdempotency(app, services.idempotency, deriveKey(secretKey, 'slipway/idempotency-fingerprints/v1'));
  // After idempotency's hooks: a replay is no new write, and a claim commits before the request's event takes part.
  const organizationEvents = createOrganizationEventsService({
    db: deps.database.db,
    clock,
    retentionDaysOf: async (organizationId) => (await services.organizations.getOrganization(organizationId)).organization_plan.audit_logs_retention_in_days,
    events,
    wakeWorkers: wakeup.wake,
    projectNames: (projectIds) => services.projects.projectNames(projectIds),
    environmentNames: (environmentIds) => environments.environmentNames(environmentIds),
    maxRetentionDays: Math.max(...PLANS.map((plan) => plan.auditLogsRetentionDays)),
  });
  installAudit(app, { ...organizationEvents, placementOf });
  // Periodic work runs once per installation as jobs (src/jobs/job-schedules.ts), in the processes running a worker.
  const schedules = createJobSchedules({
    db: deps.database.db,
    clock,
    schedules: [
      billingSchedule(billing),
      customDomainRecheckSchedule(customDomains, deps.customDomains?.recheckIntervalMs ?? DEFAULT_DOMAIN_RECHECK_INTERVAL_MS),
      https.schedule,
      organizationEventsSweepSchedule(organizationEvents),
      idempotencySweepSchedule(services.idempotency),
      deploymentRulesSchedule(deploymentRules),
      alertsSchedule(alerts),
      // The installation's own backups, when SLIPWAY_BACKUP_SCHEDULE asks for them (docs/operations.md).
      ...(deps.config.backup?.schedule === undefined
        ? []
        : [
            installationBackupSchedule({
              target: databaseTargetOf({ databaseUrl: deps.config.databaseUrl, dataDir: deps.config.dataDir ?? tmpdir() }),
              secretKey,
              schedule: deps.config.backup.schedule,
              dir: deps.config.backup.dir,
              retention: deps.config.backup.retention,
              clock,
              log: app.log,
            }),
          ]),
    ],
  });

  // Backups of databases on the local engine, dumped by the worker on this host (docs/database-backups.md).
  const localDumps = createLocalDatabaseDumps({ externalPostgresUrl: deps.config.localPostgresUrl });
  const databaseBackups = createDatabaseBackupsService({
    db: deps.database.db,
    clock,
    backupsDir: path.join(deps.config.dataDir ?? tmpdir(), 'backups'),
    dumps: { dump: (request) => localDumps.dump({ ...request, stateDir: path.join(deps.config.dataDir ?? tmpdir(), 'agent') }) },
    databasePassword: async (serviceId) => (await environmentServices.databaseConnection(serviceId))?.password,
    wakeWorkers: wakeup.wake,
  });
  const clusterOperatorTimings = deps.clusterOperator ?? {};
  const worker = createJobWorker({
    database: deps.database,
    clock,
    log: app.log,
    metrics: metrics?.jobs,
    ...deps.jobs,
    handlers: new Map([
      [
        CLUSTER_ACTION_JOB,
        createClusterActionHandler({
          db: deps.database.db,
          clock,
          metering: billing.metering,
          // Each deploy's moves are also lines of the cluster's logs (listClusterLogs).
          events: clusterInsight.withClusterLogs(events),
          stateChanges: organizationChanges,
          drivers: {
            LOCAL: createLocalClusterDriver(deps.config.dataDir ?? tmpdir()),
            SELF_MANAGED: createSelfManagedClusterDriver({
              operators: operatorReadinessOf(deps.database.db),
              now: () => clock.now(),
              readyTimeoutMs: clusterOperatorTimings.readyTimeoutMs ?? 15 * 60_000,
              recheckMs: clusterOperatorTimings.recheckMs ?? 5_000,
            }),
            MANAGED: createManagedClusterDriver([]),
            PARTIALLY_MANAGED: createManagedClusterDriver([]),
          },
        }),
      ],
      [WEBHOOK_DELIVERY_JOB, createWebhookDeliveryHandler(webhooks)],
      clusterAnalysisHandler(clusterSettings),
      databaseBackups.jobHandler(),
      [ORGANIZATION_PURGE_JOB, createOrganizationPurgeHandler({ db: deps.database.db, clock, log: app.log, ...deps.organizationPurge })],
      https.handler,
      ...schedules.handlers,
      ...createDeploymentDispatch({ agents, environments, deployments, clock, recheckMs: deps.agents?.recheckMs, log: app.log }),
    ]),
  });
  wakeup.connect(worker);

  // Files of a git source read before a service exists (environment checks, a git chart's default values).
  const gitFiles = createGitFiles({ git, gitCredentialsOf: (organizationId, gitTokenId) => gitTokens.credentialsOf(organizationId, gitTokenId) });
  const organizationOfEnvironment = async (environmentId: string) => (await environments.findEnvironmentSummary(environmentId))?.organizationId;
  // A database's users, versions and credentials; a Helm chart's links, Services and default values (docs/service-extras.md).
  const databaseLinks = createDatabaseLinks({
    services: environmentServices,
    variables,
  });
  const helmExtras = createHelmExtras({
    services: environmentServices,
    verifiedDomainsOf: (serviceId) => customDomains.validatedDomainsOf(serviceId),
    appsPort: () => appsPort ?? deps.config.appsPort ?? 8000,
    https: { port: () => https.httpsPort(), servedHostnames: (hostnames) => https.certificates.servedHostnames(hostnames) },
    organizationOf: organizationOfEnvironment,
    chartSourceOf: (organizationId, repositoryId) => helmRepositories.chartSourceOf(organizationId, repositoryId),
    gitFiles,
    helmBinary: deps.config.helmBinary,
  });
  const environmentChecks = createEnvironmentChecks({ organizationOf: organizationOfEnvironment, registries: containerRegistries, gitFiles });
  const ingressStatus = createIngressStatus({ kinds: SERVICE_KIND_DEFINITIONS, services: environmentServices, deployments });
  // Git webhooks (docs/git-webhooks.md): a push deploys its commit, a pull request opens a preview environment, a
  // registry push deploys the containers and jobs running the image.
  const gitWebhooks = createGitWebhooksService({
    db: deps.database.db,
    clock,
    secrets: createSecretBox(secretKey),
    publicUrl: deps.config.publicUrl ?? DEFAULT_PUBLIC_URL,
    hooks: createProviderHooks(outbound.policy),
    services: environmentServices,
    gitTokens,
    restrictions: deploymentRestrictions,
    deployments,
    previews: createPreviews({ db: deps.database.db, clock, environments, deploymentRules, services: environmentServices, deployments }),
  });
  const imageDeploys = createImageDeploys({ db: deps.database.db, services: environmentServices, environments, deployments });

  const documentedRoutes = recordOpenApiRoutes(app);
  await app.register(async (api) => {
    registerApiRoutes(api, {
      egressIps: deps.config.egressIps,
      certificates: https.certificates,
      ...services,
      gitTokens,
      // Repositories and branches at the providers' REST APIs, read with the git tokens (docs/git-providers.md).
      gitProviders: createGitProvidersService({
        db: deps.database.db,
        clock,
        rest: createGitProviderRest({ http: outbound, clock }),
        gitTokens,
      }),
      cloudCredentials,
      containerRegistries,
      helmRepositories,
      labelsGroups,
      annotationsGroups,
      platformTemplates,
      billing,
      clusters,
      clusterInsight,
      selfManagedClusters,
      environments,
      agents,
      variables,
      authorize,
      environmentServices,
      deployments,
      deploymentStatuses: createDeploymentStatuses({ environments, services: environmentServices, deployments }),
      deploymentQueue,
      environmentLogs,
      environmentBulkActions,
      environmentOverview,
      deploymentRestrictions,
      deploymentRules,
      clusterSettings,
      deploymentStages,
      customDomains,
      serviceLinks,
      webhooks,
      alerts,
      organizationEvents,
      organizationListings: {
        listings: createOrganizationListingsService({
          db: deps.database.db,
          // The authorizer's own rule, asked where each listed environment lives.
          grantsAt: async (principal, placement) => (await accessIn(authorizationPorts, principal, placement))?.grants,
          requireContainerRegistry: containerRegistries.getContainerRegistry,
          requireHelmRepository: helmRepositories.getHelmRepository,
        }),
        credentials: cloudCredentials,
        events: organizationEvents,
        webhooks,
      },
      serviceCommits: createServiceCommits({
        db: deps.database.db,
        kinds: SERVICE_KIND_DEFINITIONS,
        git,
        gitCredentialsOf: (organizationId, gitTokenId) => gitTokens.credentialsOf(organizationId, gitTokenId),
      }),
      databaseLinks,
      helmExtras,
      ingressStatus,
      environmentChecks,
      databaseBackups,
      // An application's contributors, a Terraform module's files, resources and an environment's export (docs/service-insights.md).
      serviceInsights: {
        git: createServiceGitInsights({
          git,
          gitCredentialsOf: (organizationId, gitTokenId) => gitTokens.credentialsOf(organizationId, gitTokenId),
          requireApplication: (applicationId) => environmentServices.requireService('APPLICATION', applicationId),
          sourceOf: (organizationId, body, pointer) => gitFiles.sourceOf(organizationId, body, pointer),
        }),
        terraformResources: createTerraformResources({ requireTerraform: (terraformId) => environmentServices.requireService('TERRAFORM', terraformId) }),
        environmentExport: createEnvironmentExport({
          findEnvironment: (environmentId) => environments.findEnvironmentSummary(environmentId),
          listEnvironmentServices: (environmentId) => environmentServices.listEnvironmentServices(environmentId),
        }),
        buildUsageReports: createBuildUsageReports({
          db: deps.database.db,
          clock,
          publicUrl: deps.config.publicUrl ?? DEFAULT_PUBLIC_URL,
          organizationOf: organizationOfEnvironment,
        }),
      },
      account: createAccountService({ db: deps.database.db, clock }),
      cloudProviderCatalogs: createCloudProviderCatalogsService(),
      gitWebhooks: { gitWebhooks, imageDeploys },
    });
    registerOrganizationChangeRoutes(
      api,
      createOrganizationChangesService({
        changes: organizationChanges,
        grantsAt: async (principal, placement) => (await accessIn(authorizationPorts, principal, placement))?.grants,
        placementOf,
        policyVerdict: services.policyTokens.policyVerdict,
      }),
    );
  });
  await builtInIdentity?.registerRoutes(app);
  await registerOpenApiDocuments(app, documentedRoutes);
  await registerConsole(app, { issuer: trustedIssuer?.issuer, audience: deps.config.oidc?.audience });
  exposeMetrics(app, metrics?.registry, { token: deps.config.metricsToken, address: deps.config.metricsAddress });
  const runWorker = deps.jobs?.run !== false;
  if (runWorker) app.addHook('onClose', async () => worker.stop());
  installLocalAgent(app, {
    config: deps.config,
    agents,
    clusters,
    git,
    https,
    onAppsPort: (port) => {
      appsPort = port;
    },
  });
  await app.ready();
  if (runWorker) {
    await schedules.ensure();
    worker.start();
  }
  return app;
}

