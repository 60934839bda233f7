import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KINDS, type ServiceKind } from '../console/src/services/kinds.ts';
import { servedOpenApiDocument } from './openapi-snapshot.ts';

/**
 * `node scripts/console-coverage.ts`: which screen of the web console uses each operation the server serves to an
 * organization's people, printed as the Markdown of docs/console.md's "Operations and screens" (the counts, one table
 * per area: operation id, method, path, screen or "—", then the deliberate exceptions with their reasons). An
 * operation with neither a screen nor an exception is "not yet". Exits 1 when a declaration below no longer matches
 * the console's sources.
 *
 * The operations are read from the application the server runs (the document GET /openapi.json answers, as
 * scripts/openapi-snapshot.ts builds it), not from dist/ or the checked-in snapshot, which may lag behind.
 * The agent's routes (`/operator/...`, an agent's token) are not people's operations and are left out.
 *
 * The console's calls are found in two ways:
 * - the typed client, read from the sources: `api.useQuery('get', '/path/{id}', …)`, `api.useMutation(…)`,
 *   `fetchClient.GET('/path', …)`; the path is the API's own template, so it matches exactly;
 * - paths built at run time (`apiRequest('POST', `${base}/${action}`)`, one code path for the service kinds), which
 *   no reading of the source can expand honestly: they are declared in RUN_TIME_CALLS with the text of the call that
 *   must be in the file (a declaration whose text is gone fails the script), and every file calling `apiRequest`,
 *   `followLog` or `fetch` on the API's origin must have a declaration.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONSOLE_SOURCES = path.join(ROOT, 'console/src');

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
const METHODS: readonly Method[] = ['get', 'put', 'post', 'delete', 'patch'];

/**
 * A call whose path is built at run time. `paths` use `{…}` for a parameter (any name) and `<kind>` for a service
 * kind's path noun (every kind of console/src/services/kinds.ts; the combinations the API does not serve are dropped).
 */
interface RunTimeCall {
  file: string;
  /** Text that must appear in the file: the call (or the values it builds the path from). */
  evidence: readonly string[];
  method: Method;
  paths: readonly string[];
  /** The kinds whose screen makes the call (the tab or section is shown for them only); every kind when absent. */
  kinds?: (kind: ServiceKind) => boolean;
}

const withVariables = (kind: ServiceKind) => kind.hasVariables;
const withLinks = (kind: ServiceKind) => kind.hasLinks;
const withDeploymentRestrictions = (kind: ServiceKind) => kind.settings.deploymentRestrictions;
const withAdvancedSettings = (kind: ServiceKind) => kind.settings.advancedSettings !== undefined;
const withNetwork = (kind: ServiceKind) => kind.name === 'application' || kind.name === 'container';
const withCommits = (kind: ServiceKind) => kind.name === 'application' || kind.name === 'job' || kind.name === 'helm' || kind.name === 'terraform';

const RUN_TIME_CALLS: readonly RunTimeCall[] = [
  { file: 'pages/NewServicePage.tsx', evidence: ["apiRequest<{ id: string }>('POST', `/environment/${environmentId}/${kind.name}`"], method: 'post', paths: ['/environment/{}/<kind>'] },
  { file: 'pages/ResolvedVariables.tsx', evidence: ["'GET', `${base}/resolvedVariables`"], method: 'get', paths: ['/<kind>/{}/resolvedVariables'], kinds: withVariables },
  { file: 'pages/ServiceDeployments.tsx', evidence: ["'GET', `${base}/deploymentHistoryV2?pageSize=30`"], method: 'get', paths: ['/<kind>/{}/deploymentHistoryV2'] },
  { file: 'pages/ServiceDeployments.tsx', evidence: ["'GET', `${base}/log?deploymentId=${deploymentId}`"], method: 'get', paths: ['/<kind>/{}/log'] },
  { file: 'pages/ServiceLogs.tsx', evidence: ['`${context.base}/log`'], method: 'get', paths: ['/<kind>/{}/log'] },
  { file: 'pages/ServicePage.tsx', evidence: ["apiRequest<AnyService>('GET', base)", 'const base = `/${kind?.name ?? kindName}/${serviceId}`'], method: 'get', paths: ['/<kind>/{}'] },
  { file: 'pages/ServicePage.tsx', evidence: ["'GET', `${base}/status`"], method: 'get', paths: ['/<kind>/{}/status'] },
  { file: 'pages/ServicePage.tsx', evidence: ["'GET', `${base}/link`"], method: 'get', paths: ['/<kind>/{}/link'], kinds: withLinks },
  {
    file: 'pages/ServicePage.tsx',
    evidence: ["action: 'redeploy' | 'restart-service' | 'stop' | 'cancelDeployment'", "apiRequest('POST', `${base}/${action}`)"],
    method: 'post',
    paths: ['/<kind>/{}/redeploy', '/<kind>/{}/restart-service', '/<kind>/{}/stop', '/<kind>/{}/cancelDeployment'],
  },
  { file: 'pages/ServicePage.tsx', evidence: ["apiRequest('POST', `${base}/deploy`"], method: 'post', paths: ['/<kind>/{}/deploy'] },
  {
    file: 'pages/clusters/ClusterPage.tsx',
    evidence: ["{ id: 'deploy'", "{ id: 'restart'", "{ id: 'stop'", "{ id: 'cancel'", '`/organization/${organizationId}/cluster/${clusterId}/${action}`'],
    method: 'post',
    paths: ['/organization/{}/cluster/{}/deploy', '/organization/{}/cluster/{}/restart', '/organization/{}/cluster/{}/stop', '/organization/{}/cluster/{}/cancel'],
  },
  { file: 'pages/clusters/ClusterPage.tsx', evidence: ["action === 'upgrade' ? `/cluster/${clusterId}/upgrade`"], method: 'post', paths: ['/cluster/{}/upgrade'] },
  { file: 'pages/clusters/ClusterPage.tsx', evidence: ["action === 'unlock' ? `/cluster/${clusterId}/lock`", "action === 'unlock' ? 'DELETE'"], method: 'delete', paths: ['/cluster/{}/lock'] },
  {
    file: 'pages/clusters/PlatformConfigurationFields.tsx',
    evidence: ['/platformTemplate/${encodeURIComponent(template.key)}/${encodeURIComponent(template.version)}/component/${encodeURIComponent(componentKey)}/resolve', "apiRequest<Resolution>('POST', url, body)"],
    method: 'post',
    paths: ['/organization/{}/platformTemplate/{}/{}/component/{}/resolve'],
  },
  { file: 'pages/settings/BillingSettings.tsx', evidence: ["'GET', `/organization/${organizationId}/invoice/${invoice.id}/download`"], method: 'get', paths: ['/organization/{}/invoice/{}/download'] },
  { file: 'api/live-changes.ts', evidence: ['await fetch(`${location.origin}/organization/${organizationId}/changes`'], method: 'get', paths: ['/organization/{}/changes'] },
  // Links the API answers (signed, no bearer token): the browser downloads the PDF, the page reads the CSV.
  { file: 'pages/settings/BillingSettings.tsx', evidence: ['const { url } = await apiRequest<{ url: string }>', 'link.href = url;'], method: 'get', paths: ['/billing/invoice/{}/pdf'] },
  { file: 'pages/settings/BillingPayments.tsx', evidence: ['const link = new URL(answer.report_url, location.origin);', 'await fetch(href)'], method: 'get', paths: ['/billing/usageReport/{}'] },
  { file: 'pages/settings/PolicyEditor.tsx', evidence: ["'POST', `/organization/${organizationId}/policyApiToken/evaluate`"], method: 'post', paths: ['/organization/{}/policyApiToken/evaluate'] },
  { file: 'pages/settings/WebhooksSettings.tsx', evidence: ["'GET', `/organization/${organizationId}/webhook/${webhook.id}/delivery?"], method: 'get', paths: ['/organization/{}/webhook/{}/delivery'] },
  ...(['post', 'put', 'delete'] as const).map((method) => ({
    file: 'pages/settings/CloudCredentialsSettings.tsx',
    evidence: [
      "provider: 'aws' | 'gcp' | 'azure' | 'scaleway' | 'onPremise'",
      'const base = `/organization/${organizationId}/${kind.provider}/credentials`',
      "{ method: 'POST', path: base, body }",
      "{ method: 'PUT', path: `${base}/${credential.id}`, body }",
      "{ method: 'DELETE', path: `/organization/${organizationId}/${provider}/credentials/${credential.id}` }",
    ],
    method,
    paths: ['aws', 'gcp', 'azure', 'scaleway', 'onPremise'].map((provider) => `/organization/{}/${provider}/credentials${method === 'post' ? '' : '/{}'}`),
  })),
  { file: 'pages/settings/AuditLogSettings.tsx', evidence: ['`/organization/${organizationId}/events?${query.toString()}`', "apiRequest<Page>('GET', path)"], method: 'get', paths: ['/organization/{}/events'] },
  {
    file: 'pages/ProjectPage.tsx',
    evidence: ["void act(environment, 'deploy')", "{ id: 'stop'", '`/environment/${environment.id}/${action}`'],
    method: 'post',
    paths: ['/environment/{}/deploy', '/environment/{}/stop'],
  },
  { file: 'pages/ProjectPage.tsx', evidence: ["action === 'restart' ? `/environment/${environment.id}/service/restart-service`"], method: 'post', paths: ['/environment/{}/service/restart-service'] },
  { file: 'pages/ProjectPage.tsx', evidence: ["apiRequest('POST', `/project/${projectId}/environment`"], method: 'post', paths: ['/project/{}/environment'] },
  { file: 'pages/ProjectPage.tsx', evidence: ["apiRequest('POST', `/environment/${source.id}/clone`"], method: 'post', paths: ['/environment/{}/clone'] },
  { file: 'pages/ProjectPage.tsx', evidence: ["apiRequest('DELETE', `/environment/${environment.id}`)"], method: 'delete', paths: ['/environment/{}'] },
  {
    file: 'pages/VariablesImport.tsx',
    evidence: ["apiRequest<ImportAnswer>('POST', importPath, body)"],
    method: 'post',
    paths: ['/<kind>/{}/environmentVariable/import'],
    kinds: withVariables,
  },
  { file: 'pages/ServiceVariables.tsx', evidence: ['importThrough: { path: `${context.base}/environmentVariable/import`'], method: 'post', paths: ['/<kind>/{}/environmentVariable/import'], kinds: withVariables },
  { file: 'pages/EnvironmentPage.tsx', evidence: ['path: `/${importer.kind.name}/${importer.service.id}/environmentVariable/import`'], method: 'post', paths: ['/<kind>/{}/environmentVariable/import'], kinds: withVariables },
  { file: 'pages/EnvironmentPage.tsx', evidence: ["'GET', `/environment/${environmentId}/${kind.name}`"], method: 'get', paths: ['/environment/{}/<kind>'] },
  {
    file: 'pages/EnvironmentPage.tsx',
    evidence: ['`/environment/${environmentId}/deploy`', '`/environment/${environmentId}/service/restart-service`', '`/environment/${environmentId}/${action}`', "{ id: 'redeploy'", "{ id: 'stop'", "{ id: 'cancelDeployment'"],
    method: 'post',
    paths: ['/environment/{}/deploy', '/environment/{}/service/restart-service', '/environment/{}/stop', '/environment/{}/redeploy', '/environment/{}/cancelDeployment'],
  },
  {
    file: 'pages/environment/ServiceSelection.tsx',
    evidence: ['`/environment/${environmentId}/service/deploy`', '`/environment/${environmentId}/service/stop`', '`/environment/${environmentId}/service/uninstall`', '`/environment/${environmentId}/service/delete`'],
    method: 'post',
    paths: ['/environment/{}/service/deploy', '/environment/{}/service/stop', '/environment/{}/service/uninstall', '/environment/{}/service/delete'],
  },
  { file: 'pages/environment/EnvironmentDeployments.tsx', evidence: ["'GET', `/environment/${environmentId}/deploymentHistoryV2?pageSize="], method: 'get', paths: ['/environment/{}/deploymentHistoryV2'] },
  // Files served only with the bearer token: fetched, then handed to the browser as a download (environment/download.ts).
  {
    file: 'pages/environment/EnvironmentDeployments.tsx',
    evidence: ['setReportPath(new URL(answer.report_url, location.origin).pathname);', 'downloadFile(path, `build-usage-'],
    method: 'get',
    paths: ['/environment/{}/deploymentBuildUsageReport/{}'],
  },
  { file: 'pages/environment/EnvironmentSettings.tsx', evidence: ['downloadFile(`/environment/${environment.id}/terraformExport`'], method: 'get', paths: ['/environment/{}/terraformExport'] },
  {
    file: 'pages/EnvironmentPage.tsx',
    evidence: ['`/${kind.name}/${service.id}/deploy`', "{ id: 'restart-service'", '`/${kind.name}/${service.id}/${action}`'],
    method: 'post',
    paths: ['/<kind>/{}/deploy', '/<kind>/{}/restart-service', '/<kind>/{}/stop'],
  },
  ...(['environmentVariable', 'secret'] as const).map((noun) => ({
    file: 'pages/VariablesByScope.tsx',
    evidence: [
      "if (level.own === 'PROJECT') return `/project/${level.projectId}`;",
      "if (level.own === 'ENVIRONMENT') return `/environment/${level.environmentId ?? ''}`;",
      "return level.serviceBase ?? '';",
      `'GET', \`\${base}/${noun}\``,
    ],
    method: 'get' as const,
    paths: ['/project/{}', '/environment/{}', '/<kind>/{}'].map((scope) => `${scope}/${noun}`),
    kinds: withVariables,
  })),
  ...(['post', 'put', 'delete'] as const).map((method) => ({
    file: 'pages/VariablesByScope.tsx',
    evidence: [
      "const noun = secret ? 'secret' : 'environmentVariable'",
      'return `/project/${level.projectId}/${noun}`',
      "return `/environment/${level.environmentId ?? ''}/${noun}`",
      "return `${level.serviceBase ?? ''}/${noun}`",
      method === 'post' ? "apiRequest('POST', collectionPath(level, scope, secret), body)" : `apiRequest('${method.toUpperCase()}', \`\${collectionPath(level, scope, row.secret)}/\${row.id}\``,
    ],
    method,
    paths: ['/project/{}', '/environment/{}', '/<kind>/{}'].flatMap((scope) => ['environmentVariable', 'secret'].map((noun) => `${scope}/${noun}${method === 'post' ? '' : '/{}'}`)),
    kinds: withVariables,
  })),
  {
    // A row's alias and override, at the scope chosen (a project's rows are aliased there; nothing is overridden there).
    file: 'pages/VariablesByScope.tsx',
    evidence: ["type LinkKind = 'alias' | 'override'", "apiRequest<{ key: string }>('POST', `${collectionPath(level, scope, row.secret)}/${row.id}/${kind}`, body)"],
    method: 'post' as const,
    paths: [
      ...['/project/{}', '/environment/{}', '/<kind>/{}'].flatMap((scope) => ['environmentVariable', 'secret'].map((noun) => `${scope}/${noun}/{}/alias`)),
      ...['/environment/{}', '/<kind>/{}'].flatMap((scope) => ['environmentVariable', 'secret'].map((noun) => `${scope}/${noun}/{}/override`)),
    ],
    kinds: withVariables,
  },
  { file: 'pages/service-settings/ServiceSettings.tsx', evidence: ["apiRequest('PUT', context.base, { ...requiredOf(context.kind, service), ...body })"], method: 'put', paths: ['/<kind>/{}'] },
  { file: 'pages/service-settings/ServiceSettings.tsx', evidence: ['const path = `${context.base}/deploymentRestriction`', "apiRequest<{ results: Restriction[] }>('GET', path)"], method: 'get', paths: ['/<kind>/{}/deploymentRestriction'], kinds: withDeploymentRestrictions },
  { file: 'pages/service-settings/ServiceSettings.tsx', evidence: ["apiRequest('POST', path, { mode, type: 'PATH', value: value.trim() })"], method: 'post', paths: ['/<kind>/{}/deploymentRestriction'], kinds: withDeploymentRestrictions },
  { file: 'pages/service-settings/ServiceSettings.tsx', evidence: ["apiRequest('DELETE', `${path}/${restriction.id}`)"], method: 'delete', paths: ['/<kind>/{}/deploymentRestriction/{}'], kinds: withDeploymentRestrictions },
  {
    file: 'pages/service-settings/ServiceSettings.tsx',
    evidence: ['settingsKind={kind.settings.advancedSettings}', "'GET', `/default${settingsKind}AdvancedSettings`"],
    method: 'get',
    paths: KINDS.flatMap((kind) => (kind.settings.advancedSettings === undefined ? [] : [`/default${kind.settings.advancedSettings}AdvancedSettings`])),
  },
  { file: 'pages/service-settings/ServiceSettings.tsx', evidence: ["'GET', `${context.base}/advancedSettings`"], method: 'get', paths: ['/<kind>/{}/advancedSettings'], kinds: withAdvancedSettings },
  { file: 'pages/service-settings/ServiceSettings.tsx', evidence: ["apiRequest('PUT', `${context.base}/advancedSettings`, body)"], method: 'put', paths: ['/<kind>/{}/advancedSettings'], kinds: withAdvancedSettings },
  { file: 'pages/service-settings/ServiceSettings.tsx', evidence: ["kind.name === 'application' || kind.name === 'container' ? <NetworkSection", 'const path = `${context.base}/network`', "apiRequest<{ sticky_session: boolean }>('GET', path)"], method: 'get', paths: ['/<kind>/{}/network'], kinds: withNetwork },
  { file: 'pages/service-settings/ServiceSettings.tsx', evidence: ["apiRequest('PUT', path, { sticky_session: sticky })"], method: 'put', paths: ['/<kind>/{}/network'], kinds: withNetwork },
  { file: 'pages/service-settings/ServiceSettings.tsx', evidence: ["'GET', `${context.base}/version`", "enabled: kind.name === 'database'"], method: 'get', paths: ['/<kind>/{}/version'], kinds: (kind) => kind.name === 'database' },
  { file: 'pages/service-settings/ServiceSettings.tsx', evidence: ["kind.name === 'database' ? <DatabaseCredentialsSection", "'GET', `${context.base}/masterCredentials`"], method: 'get', paths: ['/<kind>/{}/masterCredentials'], kinds: (kind) => kind.name === 'database' },
  {
    file: 'pages/service-settings/CloneServiceDialog.tsx',
    evidence: ["apiRequest<{ id: string }>('POST', `${context.base}/clone`"],
    method: 'post',
    paths: ['/<kind>/{}/clone'],
    // Offered to every kind but agentic workflows, which the API does not clone.
    kinds: (kind) => kind.name !== 'agenticWorkflow',
  },
  {
    file: 'pages/service-settings/UninstallServiceDialog.tsx',
    evidence: ["apiRequest('POST', `${context.base}/uninstall`, {})"],
    method: 'post',
    paths: ['/<kind>/{}/uninstall'],
    // The danger zone offers it to every kind but agentic workflows, which the API does not uninstall.
    kinds: (kind) => kind.name !== 'agenticWorkflow',
  },
  { file: 'pages/service-settings/DeleteServiceDialog.tsx', evidence: ["apiRequest('DELETE', context.base)"], method: 'delete', paths: ['/<kind>/{}'] },
  { file: 'pages/service-settings/ServiceDomains.tsx', evidence: ["'GET', `${context.base}/customDomain`"], method: 'get', paths: ['/<kind>/{}/customDomain'], kinds: withLinks },
  { file: 'pages/service-settings/ServiceDomains.tsx', evidence: ["apiRequest('GET', `${context.base}/customDomain/${domain.id}/status`)"], method: 'get', paths: ['/<kind>/{}/customDomain/{}/status'], kinds: withLinks },
  { file: 'pages/service-settings/ServiceDomains.tsx', evidence: ["apiRequest('POST', `${context.base}/customDomain`, body)"], method: 'post', paths: ['/<kind>/{}/customDomain'], kinds: withLinks },
  { file: 'pages/service-settings/ServiceDomains.tsx', evidence: ["apiRequest('PUT', `${context.base}/customDomain/${editing.id}`, body)"], method: 'put', paths: ['/<kind>/{}/customDomain/{}'], kinds: withLinks },
  { file: 'pages/service-settings/ServiceDomains.tsx', evidence: ["apiRequest('DELETE', `${context.base}/customDomain/${domain.id}`)"], method: 'delete', paths: ['/<kind>/{}/customDomain/{}'], kinds: withLinks },
  { file: 'pages/service-settings/DomainsCheck.tsx', evidence: ["apiRequest<{ results: DomainCheck[] }>('GET', `${context.base}/checkCustomDomain`)"], method: 'get', paths: ['/<kind>/{}/checkCustomDomain'], kinds: withLinks },
  { file: 'pages/service-settings/EditRestrictionDialog.tsx', evidence: ["apiRequest('PUT', `${path}/${restriction.id}`, { mode, type: 'PATH', value: value.trim() })"], method: 'put', paths: ['/<kind>/{}/deploymentRestriction/{}'], kinds: withDeploymentRestrictions },
  { file: 'pages/service/ServiceOverviewExtras.tsx', evidence: ["apiRequest<{ results: Commit[] }>('GET', `${base}/commit"], method: 'get', paths: ['/<kind>/{}/commit'], kinds: withCommits },
  { file: 'pages/service/ServiceOverviewExtras.tsx', evidence: ["apiRequest('POST', `${base}/deploy`, { git_commit_id: commit.git_commit_id })"], method: 'post', paths: ['/<kind>/{}/deploy'], kinds: withCommits },
];

/** Files that only carry the request machinery (the definition of `apiRequest`, of `followLog`). */
const MACHINERY_FILES = new Set(['api/client.ts', 'services/log-stream.ts']);

/** Each file's screen, named as a person finds it in the console. */
const SCREENS: Readonly<Record<string, string>> = {
  'auth/permissions.ts': 'Every page (what the role allows)',
  'api/live-changes.ts': 'Every page of an organization (live states)',
  'pages/HomePage.tsx': 'Organizations (landing page)',
  'pages/NewOrganizationPage.tsx': 'New organization',
  'pages/Shell.tsx': 'Header › Organization switcher',
  'pages/AcceptInvitationPage.tsx': 'Invitation page',
  'pages/OrganizationPage.tsx': 'Projects',
  'pages/ProjectPage.tsx': 'Project › Environments',
  'pages/EnvironmentPage.tsx': 'Environment › Services',
  'pages/environment/ServiceSelection.tsx': 'Environment › Services (selected services)',
  'pages/environment/ServiceStage.tsx': 'Environment › Services (stages)',
  'pages/environment/EnvironmentDeployments.tsx': 'Environment › Deployments',
  'pages/environment/EnvironmentLogs.tsx': 'Environment › Logs',
  'pages/environment/EnvironmentSettings.tsx': 'Environment › Settings',
  'pages/environment/ServiceDeploymentQueue.tsx': 'Service › Deployments (queue)',
  'pages/environment/DeploymentRequestRow.tsx': 'Environment › Deployments; Service › Deployments (queue)',
  'pages/NewServicePage.tsx': 'Environment › New service (wizard)',
  'pages/GitRepositoryPicker.tsx': 'Environment › New service (wizard: repository from a git account)',
  'pages/TerraformVariablesFromRepository.tsx': 'Environment › New service (Terraform wizard: variables from the repository)',
  'pages/ServicePage.tsx': 'Service › Overview',
  'pages/ServiceDeployments.tsx': 'Service › Deployments',
  'pages/ServiceLogs.tsx': 'Service › Logs',
  'pages/ServiceVariables.tsx': 'Service › Variables',
  'pages/VariablesByScope.tsx': 'Project, Environment and Service › Variables',
  'pages/VariablesImport.tsx': 'Environment and Service › Variables › Import',
  'pages/ResolvedVariables.tsx': 'Environment and Service › Variables › What is resolved',
  'pages/service-settings/ServiceDomains.tsx': 'Service › Domains',
  'pages/service-settings/ServiceSettings.tsx': 'Service › Settings',
  'pages/service-settings/DeleteServiceDialog.tsx': 'Service › Settings › Danger zone',
  'pages/service-settings/UninstallServiceDialog.tsx': 'Service › Settings › Danger zone',
  'pages/service-settings/CloneServiceDialog.tsx': 'Service › Settings › Clone',
  'pages/clusters/ClustersPage.tsx': 'Clusters',
  'pages/clusters/NewClusterDialog.tsx': 'Clusters › New cluster',
  'pages/clusters/PlatformConfigurationFields.tsx': 'Clusters › New cluster (self-managed); Cluster › Platform › Edit',
  'pages/clusters/ClusterPage.tsx': 'Cluster',
  'pages/clusters/ClusterInsight.tsx': 'Cluster › Environments, Logs, Events',
  'pages/clusters/ClusterAnalyses.tsx': 'Cluster › Analyses',
  'pages/clusters/ClusterPlatform.tsx': 'Cluster › Platform',
  'pages/clusters/ClusterNetwork.tsx': 'Cluster › Network',
  'pages/clusters/ClusterSettings.tsx': 'Cluster › Settings',
  'pages/clusters/ClusterOperator.tsx': 'Cluster › Operator',
  'pages/settings/SettingsLayout.tsx': 'Settings',
  'pages/settings/GeneralSettings.tsx': 'Settings › General',
  'pages/settings/MembersSettings.tsx': 'Settings › Members',
  'pages/settings/RolesSettings.tsx': 'Settings › Roles',
  'pages/settings/ApiTokensSettings.tsx': 'Settings › API tokens',
  'pages/settings/PolicyTokensSettings.tsx': 'Settings › Policy tokens',
  'pages/settings/PolicyEditor.tsx': 'Settings › Policy tokens (editor)',
  'pages/settings/GitTokensSettings.tsx': 'Settings › Git tokens',
  'pages/settings/RepositoryDirectoryPicker.tsx': 'Settings › Git tokens › Browse',
  'pages/settings/GitHubAppSection.tsx': 'Settings › Git tokens › GitHub App',
  'pages/settings/CloudCredentialsSettings.tsx': 'Settings › Cloud credentials',
  'pages/settings/RegistriesSettings.tsx': 'Settings › Container registries',
  'pages/settings/HelmRepositoriesSettings.tsx': 'Settings › Helm repositories',
  'pages/settings/WebhooksSettings.tsx': 'Settings › Webhooks',
  'pages/settings/LabelsAnnotationsSettings.tsx': 'Settings › Labels and annotations',
  'pages/settings/BillingSettings.tsx': 'Settings › Billing',
  'pages/settings/BillingPayments.tsx': 'Settings › Billing (cards)',
  'pages/settings/AuditLogSettings.tsx': 'Settings › Audit log',
  'pages/settings/AlertsSettings.tsx': 'Settings › Alerts',
  'pages/settings/InstallationCard.tsx': 'Settings › General › Installation',
  'pages/AccountPage.tsx': 'Account (header › Account)',
  'pages/OrganizationServices.tsx': 'Projects › All services',
  'pages/OnboardingChecklist.tsx': 'Projects › Get started (onboarding)',
};

/**
 * Operations without a screen on purpose, by operation id or by a pattern of ids, with the reason. Matched in order;
 * the first match gives the reason.
 */
const EXCEPTIONS: readonly { operations: RegExp; reason: string }[] = [
  // For machines: a provider, a CI, GitOps tooling, kubectl, the installation's operator.
  { operations: /^receiveGitWebhookDelivery$/, reason: 'called by the git provider with the push event it signs, not by a person' },
  { operations: /^(autoDeployContainerEnvironments|previewContainerEnvironments|autoDeployJobEnvironments)$/, reason: 'for a CI that pushed an image tag: deploys every container or job of the organization running that image' },
  {
    operations: /^(getInstallationHelmValues|getInstallationManifests)$/,
    reason: 'the agent’s install as Helm values or kubectl manifests, for GitOps tooling; each call mints an enrollment token. The console shows the Helm and CLI commands of getClusterOperatorBootstrap instead',
  },
  { operations: /^get-cluster-token-by-clusterId$/, reason: 'the ExecCredential a kubeconfig’s exec plugin prints for kubectl, not something to read on a screen' },
  { operations: /^getDeploymentStatusByDeploymentRequestId$/, reason: 'for a client holding the id of a deployment request it made; the console follows the services’ and environments’ statuses' },
  { operations: /^deleteBillingUsageReportBySignedLink$/, reason: 'the usage report’s signed link expires on its own; deleting it early is for scripts' },
  { operations: /^listClusterOperatorFleet$/, reason: 'the installation operator’s view of every organization’s agents (an installation admin’s token), not an organization’s' },
  // The same data through an operation the screen already uses.
  {
    operations: /^(get(AWS|Scaleway|Gcp|OnPremise|Azure)Credentials|list(Scaleway|Gcp|OnPremise|Azure)Credentials)$/,
    reason: 'listOrganizationCredentials answers every provider’s credentials with the same fields (and the clusters on each); Settings › Cloud credentials reads it',
  },
  {
    operations: /^(getOrganizationGitToken|getOrganizationCustomRole|getContainerRegistry|getHelmRepository|getOrganizationLabelssGroup|getOrganizationAnnotationsGroup|getOrganizationWebhook|getHelmCustomDomain)$/,
    reason: 'one row of a list its screen reads whole, with the same fields',
  },
  {
    operations: /^(list(Application|Container|Database|Job|Helm|Terraform|AgenticWorkflow)DeploymentHistory|get(Application|Container|Database|Job|Helm|Terraform|AgenticWorkflow)Deployment)$/,
    reason: 'the first version of a service’s history and one entry of it; Service › Deployments reads deploymentHistoryV2 (the same deployments, paged by cursor)',
  },
  {
    operations: /^listEnvironmentDeploymentHistory$/,
    reason: 'the first version of an environment’s history: the same executions with their services’ lists always empty; Environment › Deployments reads deploymentHistoryV2, which names each service and how it ended',
  },
  { operations: /^getEnvironment(Application|Container|Database|Job|Helm)Status$/, reason: 'one kind’s statuses; Environment › Services reads every kind’s (and the environment’s) in one request, getEnvironmentStatuses' },
  { operations: /^getEnvironmentStatus$/, reason: 'Environment › Services reads the environment’s state with its services’ (getEnvironmentStatuses), Project › Environments every environment’s at once' },
  { operations: /^listServicesByEnvironmentId$/, reason: 'Environment › Services reads each kind’s own list, which carries the kind’s fields' },
  {
    operations: /^createProject(EnvironmentVariable|Secret)Override$/,
    reason: 'refused by design (400): nothing is broader than a project to override there, built-ins being per environment; a project’s variable is overridden from an environment’s or a service’s Variables',
  },
  {
    operations: /^(getClusterPlatformBinding|updateClusterPlatformBinding)$/,
    reason: 'the deprecated names of getClusterPlatformConfiguration and updateClusterPlatformConfiguration, which Cluster › Platform calls',
  },
  // What only a MANAGED cluster's wizard would ask, and the API creates no MANAGED cluster (docs/clusters.md).
  {
    operations:
      /^(listCloudProvider|list(AWS|Scaleway|Gcp|Azure)Features|list(AWS|AWSEKS|AzureAKS|GcpGke|Scaleway|ScalewayKapsule)InstanceType|list(AWSManagedDatabaseType|AWSManagedDatabaseInstanceType|SCWManagedDatabaseType))$/,
    reason:
      'the catalogs a MANAGED cluster is built from (providers, features, node types, cloud-managed database types); the API creates no MANAGED cluster, a self-managed cluster’s nodes are its owner’s, and a database’s instance type is not checked against them. The regions do have a screen (the cluster wizard and Cluster › Network)',
  },
  {
    operations: /^(listVariables|createVariable|editVariable|deleteVariable|createVariableAlias|createVariableOverride|importEnvironmentVariables)$/,
    reason:
      'the unified /variable API, a second door onto the rows and rules of the per-scope operations (docs/variables.md) that Project, Environment and Service › Variables call: one door for the screens, whose edit also moves a file’s mount path (editVariable cannot)',
  },
];

interface ServedOperation {
  operationId: string;
  method: Method;
  path: string;
  area: string;
}

/** `/organization/{organizationId}/x` and `/organization/{}/x` compare equal. */
function shapeOf(apiPath: string): string {
  return apiPath.replace(/\{[^}]*\}/g, '{}');
}

async function sourceFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => path.relative(CONSOLE_SOURCES, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** The path is a literal or a constant of the file (`const WEBHOOKS = '/organization/{organizationId}/webhook' as const`). */
const TYPED_QUERY = /\.(?:useQuery|useSuspenseQuery|useMutation|useInfiniteQuery|queryOptions)\(\s*'(get|put|post|delete|patch)',\s*(?:'(\/[^']*)'|([A-Z][A-Z0-9_]*)\b)/g;
const TYPED_FETCH = /\bfetchClient\.(GET|PUT|POST|DELETE|PATCH)\(\s*(?:'(\/[^']*)'|([A-Z][A-Z0-9_]*)\b)/g;
const PATH_CONSTANT = /\bconst ([A-Z][A-Z0-9_]*) = '(\/[^']*)' as const;/g;
const RUN_TIME_REQUEST = /\b(?:apiRequest|followLog)\s*(?:<[^(]*>)?\(|\bfetch\(`\$\{location\.origin\}\//;

/** Every (method, path shape) → the files calling it. Throws when a run-time declaration no longer holds. */
async function consoleCalls(servedShapes: ReadonlySet<string>): Promise<Map<string, Set<string>>> {
  const calls = new Map<string, Set<string>>();
  const record = (method: string, shape: string, file: string) => {
    const key = `${method.toLowerCase()} ${shape}`;
    calls.set(key, (calls.get(key) ?? new Set()).add(file));
  };
  const problems: string[] = [];
  const declaredFiles = new Set(RUN_TIME_CALLS.map((call) => call.file));
  for (const file of await sourceFiles(CONSOLE_SOURCES)) {
    const text = await readFile(path.join(CONSOLE_SOURCES, file), 'utf8');
    const constants = new Map([...text.matchAll(PATH_CONSTANT)].map((match) => [match[1] as string, match[2] as string]));
    for (const match of [...text.matchAll(TYPED_QUERY), ...text.matchAll(TYPED_FETCH)]) {
      const typedPath = match[2] ?? constants.get(match[3] as string);
      if (typedPath === undefined) problems.push(`${file}: the typed call's path ${match[3] as string} is not a constant of the file`);
      else record(match[1] as string, shapeOf(typedPath), file);
    }
    if (RUN_TIME_REQUEST.test(text) && !MACHINERY_FILES.has(file) && !declaredFiles.has(file)) {
      problems.push(`${file} builds request paths at run time and has no entry in RUN_TIME_CALLS`);
    }
  }
  for (const call of RUN_TIME_CALLS) {
    const text = await readFile(path.join(CONSOLE_SOURCES, call.file), 'utf8').catch(() => '');
    for (const evidence of call.evidence) if (!text.includes(evidence)) problems.push(`${call.file} no longer contains ${JSON.stringify(evidence)}`);
    for (const template of call.paths) {
      const expanded = template.includes('<kind>') ? KINDS.filter(call.kinds ?? (() => true)).map((kind) => template.replace('<kind>', kind.name)) : [template];
      const served = expanded.filter((candidate) => servedShapes.has(`${call.method} ${shapeOf(candidate)}`));
      if (served.length === 0) problems.push(`${call.file}: ${call.method.toUpperCase()} ${template} matches no served operation`);
      for (const candidate of served) record(call.method, shapeOf(candidate), call.file);
    }
  }
  if (problems.length > 0) throw new Error(`RUN_TIME_CALLS is out of date:\n${problems.join('\n')}`);
  return calls;
}

/** The area an operation is listed under: its first tag, the seven service kinds' own tags folded into one. */
function areaOf(tags: readonly string[] | undefined): string {
  const tag = tags?.[0] ?? 'Other';
  const perKind = /^(?:Application|Container|Database|Job|Helm|Terraform|AgenticWorkflow)s? (Actions|Main Calls|Deployment History|Logs|Environment Variable|Secret|Configuration|Deployment Restriction|Custom Domain)$/.exec(tag);
  return perKind === null ? tag : `Services: ${(perKind[1] as string).toLowerCase()}`;
}

export async function servedOperations(): Promise<ServedOperation[]> {
  const document = await servedOpenApiDocument();
  const operations: ServedOperation[] = [];
  for (const [apiPath, item] of Object.entries(document.paths ?? {})) {
    // The agent's protocol: an agent's token, never a person's.
    if (apiPath.startsWith('/operator/')) continue;
    for (const method of METHODS) {
      const operation = (item as Record<string, { operationId?: string; tags?: string[] } | undefined>)[method];
      if (operation === undefined) continue;
      operations.push({ operationId: operation.operationId ?? `${method} ${apiPath}`, method, path: apiPath, area: areaOf(operation.tags) });
    }
  }
  return operations;
}

export interface CoverageRow extends ServedOperation {
  screens: string[];
  exception: string | undefined;
}

export async function consoleCoverage(): Promise<CoverageRow[]> {
  const operations = await servedOperations();
  const calls = await consoleCalls(new Set(operations.map((operation) => `${operation.method} ${shapeOf(operation.path)}`)));
  return operations.map((operation) => {
    const files = [...(calls.get(`${operation.method} ${shapeOf(operation.path)}`) ?? [])];
    const screens = [...new Set(files.map((file) => SCREENS[file] ?? `console/src/${file}`))];
    const exception = screens.length > 0 ? undefined : EXCEPTIONS.find((entry) => entry.operations.test(operation.operationId))?.reason;
    return { ...operation, screens, exception };
  });
}

function markdownOf(rows: readonly CoverageRow[]): string {
  const lines: string[] = [];
  const withScreen = rows.filter((row) => row.screens.length > 0).length;
  const excepted = rows.filter((row) => row.exception !== undefined).length;
  lines.push(`${rows.length} operations served to people: ${withScreen} with a screen, ${excepted} deliberate exceptions, ${rows.length - withScreen - excepted} not yet in the console.`, '');
  const areas = [...new Set(rows.map((row) => row.area))];
  for (const area of areas) {
    const inArea = rows.filter((row) => row.area === area);
    lines.push(`### ${area} (${inArea.filter((row) => row.screens.length > 0).length} of ${inArea.length})`, '', '| Operation | Method | Path | Screen |', '|---|---|---|---|');
    for (const row of inArea) lines.push(`| ${row.operationId} | ${row.method.toUpperCase()} | \`${row.path}\` | ${row.screens.length > 0 ? row.screens.join('; ') : row.exception === undefined ? '— (not yet)' : '— (exception)'} |`);
    lines.push('');
  }
  const reasons = [...new Set(rows.flatMap((row) => (row.exception === undefined ? [] : [row.exception])))];
  lines.push('### Deliberate exceptions', '');
  for (const reason of reasons) lines.push(`- ${rows.filter((row) => row.exception === reason).map((row) => row.operationId).join(', ')}: ${reason}`);
  lines.push('');
  return lines.join('\n');
}

if (import.meta.main) {
  process.stdout.write(markdownOf(await consoleCoverage()));
}
