/**
 * The API description's tag list: the groups of operations, in the order a user meets them on the documentation page
 * (an organization and who is in it, its projects and environments, the services deployed there, deployments,
 * variables and domains, then the infrastructure they run on, and last billing, the audit trail and the agents'
 * own calls). The names are the reference's tags, which the routes use; the descriptions are Slipway's own.
 *
 * The generated document lists only the tags some route uses (src/http/openapi.ts), so a tag named here ahead of its
 * routes costs nothing; a route whose tag is missing here fails test/openapi-docs.test.ts.
 */
export interface ApiTag {
  readonly name: string;
  readonly description: string;
}

/** How a service kind is named in its tags (`Application Actions`) and in prose ("an application"). */
interface ServiceKindNames {
  /** The tags' singular word, as the reference spells it. */
  readonly tagNoun: string;
  /** The tag of the kind's list-and-create operations. */
  readonly pluralTag: string;
  /** "an application", "a Helm chart". */
  readonly aService: string;
  /** "applications", "Helm charts". */
  readonly services: string;
}

const SERVICE_KINDS: readonly ServiceKindNames[] = [
  { tagNoun: 'Application', pluralTag: 'Applications', aService: 'an application', services: 'applications built from a git repository' },
  { tagNoun: 'Container', pluralTag: 'Containers', aService: 'a container', services: 'containers run from an image in a registry' },
  { tagNoun: 'Database', pluralTag: 'Databases', aService: 'a database', services: 'databases (PostgreSQL, MySQL, MongoDB, Redis)' },
  { tagNoun: 'Job', pluralTag: 'Jobs', aService: 'a job', services: 'cron and lifecycle jobs' },
  { tagNoun: 'Helm', pluralTag: 'Helms', aService: 'a Helm chart', services: 'Helm charts' },
  { tagNoun: 'Terraform', pluralTag: 'Terraforms', aService: 'a Terraform service', services: 'Terraform services' },
  { tagNoun: 'AgenticWorkflow', pluralTag: 'Agentic Workflows', aService: 'an agentic workflow', services: 'agentic workflows' },
];

function serviceKindTags(kind: ServiceKindNames): ApiTag[] {
  return [
    { name: kind.pluralTag, description: `Create, list, read, edit, clone and delete ${kind.services} in an environment.` },
    { name: `${kind.tagNoun} Main Calls`, description: `The status of ${kind.aService}, and where it is reached or built from.` },
    { name: `${kind.tagNoun} Configuration`, description: `The advanced settings of ${kind.aService}: the tuning keys beyond its main fields.` },
    { name: `${kind.tagNoun} Logs`, description: `The log of ${kind.aService}'s deployments and of what it writes while it runs.` },
  ];
}

function serviceKindDeploymentTags(kind: ServiceKindNames): ApiTag[] {
  return [
    { name: `${kind.tagNoun} Actions`, description: `Deploy, redeploy, stop and restart ${kind.aService}, or cancel its deployment under way.` },
    { name: `${kind.tagNoun} Deployment History`, description: `The past deployments of ${kind.aService}, each with what it deployed.` },
    {
      name: `${kind.tagNoun} Deployment Restriction`,
      description: `Path rules that decide whether a push to the git repository of ${kind.aService} deploys it.`,
    },
  ];
}

function serviceKindVariableTags(kind: ServiceKindNames): ApiTag[] {
  return [
    { name: `${kind.tagNoun} Environment Variable`, description: `Environment variables of ${kind.aService}: its own, and aliases and overrides of inherited ones.` },
    { name: `${kind.tagNoun} Secret`, description: `Secrets of ${kind.aService}: variables whose value is written but never read back.` },
  ];
}

export const API_TAGS: readonly ApiTag[] = [
  { name: 'Organization Main Calls', description: 'Create and manage organizations, the top of everything in Slipway: every other resource belongs to one.' },
  { name: 'Organization', description: 'Calls about the organization as a whole.' },
  { name: 'Account Info', description: 'The signed-in person’s own account: their profile and the e-mail address Slipway writes to.' },
  { name: 'Members', description: 'The people of an organization: invite them, give them a role, remove them.' },
  { name: 'Organization Custom Role', description: "Custom roles: named sets of permissions on the organization's clusters, projects and environments." },
  { name: 'Organization Api Token', description: 'API tokens for scripts and CI: a role or a scope, never more rights than their creator.' },
  {
    name: 'Organization Policy Api Token',
    description: 'Policy API tokens: tokens whose rights are decided by an Open Policy Agent (Rego) policy they carry.',
  },
  { name: 'Projects', description: 'List and create projects, the groups of environments in an organization.' },
  { name: 'Project Main Calls', description: 'Read, rename and delete a project.' },
  { name: 'Environments', description: 'List and create the environments of a project (production, staging, previews) on a cluster.' },
  {
    name: 'Environment Main Calls',
    description: 'Read, edit, clone and delete an environment; its services, their statuses and its deployment queue.',
  },
  { name: 'Environment', description: 'Where the services of an environment are reached.' },
  { name: 'Environment Logs', description: "The log lines of an environment's deployments and workloads, and its activity." },
  ...SERVICE_KINDS.flatMap(serviceKindTags),
  { name: 'Database Application', description: 'The applications that use a database through aliases of its built-in variables, and disconnecting one.' },
  { name: 'Backups', description: "Backups of a database: dumps of its data made by Slipway and kept by the installation, listed and removed." },
  { name: 'Terraform Resources', description: 'The resources a Terraform service manages, as its last apply recorded them.' },
  { name: 'Environment Export', description: "An environment's services written out as Terraform configuration." },
  { name: 'service_status', description: "The state of a service's public route, whatever the service's kind: deployed with it, or stopped." },
  { name: 'Environment Actions', description: 'Deploy, redeploy, stop and restart all the services of an environment at once, or cancel what is under way.' },
  { name: 'Environment Deployment History', description: 'The past deployments of an environment and what each deployed.' },
  { name: 'Deployment Queue Actions', description: 'Act on one queued or running deployment request by its id: cancel it.' },
  { name: 'Deployment Stage Main Calls', description: "Deployment stages: the ordered steps an environment's services are deployed in." },
  { name: 'Environment Deployment Rule', description: 'When an environment runs: its automatic start and stop schedule.' },
  { name: 'Project Deployment Rule', description: "Rules that set up the environments created in a project, chosen by the environment's name." },
  ...SERVICE_KINDS.flatMap(serviceKindDeploymentTags),
  { name: 'Project Environment Variable', description: 'Environment variables set on a project, seen by every service of its environments.' },
  { name: 'Project Secret', description: 'Secrets set on a project, seen by every service of its environments.' },
  { name: 'Environment Variable', description: 'Environment variables set on an environment, seen by all its services.' },
  { name: 'Environment Secret', description: 'Secrets set on an environment, seen by all its services.' },
  ...SERVICE_KINDS.flatMap(serviceKindVariableTags),
  { name: 'Variable Main Calls', description: 'Variables across every scope at once.' },
  { name: 'Custom Domain', description: 'Custom domains of services.' },
  { name: 'Application Custom Domain', description: "Custom domains that route to an application, with their DNS target and TLS certificate's status." },
  { name: 'Container Custom Domain', description: "Custom domains that route to a container, with their DNS target and TLS certificate's status." },
  { name: 'Helm Custom Domain', description: "Custom domains that route to a Helm chart's service, with their DNS target and TLS certificate's status." },
  { name: 'Certificates', description: "The installation's own certificate authority, to trust once so services' private names answer over HTTPS." },
  { name: 'Git repositories', description: 'Git tokens: the credentials Slipway clones private repositories and reads branches with.' },
  {
    name: 'Organization Account Git Repositories',
    description: "The repositories and branches an organization's git tokens reach at GitHub, GitLab and Bitbucket, to choose a service's source.",
  },
  { name: 'Github App', description: 'Which installation of the GitHub App an organization is connected to.' },
  { name: 'Service Main Calls', description: "Calls about any service whatever its kind: its git webhook's status at the provider, and registering it." },
  {
    name: 'Git Webhooks',
    description: 'Where GitHub, GitLab and Bitbucket deliver pushes and pull requests, verified by their signatures: push deploys and preview environments.',
  },
  { name: 'Clusters', description: "The Kubernetes clusters an organization's environments run on: create, configure, install and upgrade them." },
  { name: 'Cluster Locks', description: 'Locks that keep a cluster from being deployed, upgraded, edited or deleted until unlocked or expired.' },
  { name: 'Cluster Operator', description: 'Self-managed clusters: install the operator on a cluster you run, and the calls the operator makes to enroll and report.' },
  { name: 'Cloud Provider Credentials', description: 'Credentials of cloud accounts (AWS, GCP, Scaleway, on-premise) that Slipway creates and runs clusters with.' },
  { name: 'Cloud Provider', description: "What each cloud provider offers: regions, instance types and managed databases' versions." },
  { name: 'Container Registries', description: 'Container registries, where containers pull their images from, with their credentials.' },
  { name: 'Helm Repositories', description: 'Helm chart repositories (HTTPS or OCI) that Helm services install their charts from.' },
  { name: 'Platform Configuration', description: 'Platform templates: published layers and components with configuration fields, to start new setups from.' },
  { name: 'IPs', description: "The installation's outbound IP addresses, to allow-list in firewalls." },
  { name: 'Organization Labels Group', description: 'Groups of Kubernetes labels that services and clusters carry.' },
  { name: 'Organization Annotations Group', description: 'Groups of Kubernetes annotations that services and clusters carry.' },
  { name: 'Webhooks', description: 'HTTPS endpoints Slipway calls, signed, when deployments start, succeed, fail or are cancelled, and for audit events.' },
  { name: 'Organization Webhook', description: 'What was sent to a webhook: the events delivered, with the body sent and the answer received.' },
  { name: 'Alert Receivers', description: 'Where alerts are sent: e-mail through an SMTP smarthost, or a Slack or generic webhook, signed.' },
  { name: 'Alert Rules', description: 'Conditions on deployments and workload health that notify receivers once they have held for a while.' },
  { name: 'Billing', description: "The organization's plan, billing details, credit cards, credit codes, invoices and costs." },
  { name: 'Billing downloads', description: 'Invoice PDFs and usage reports, fetched through the signed links the billing calls answer.' },
  { name: 'Organization Event', description: 'The audit log: who did what in the organization, and when.' },
  { name: 'Cluster Agent', description: "Calls of the agent Slipway installs on a cluster (its own credential): it fetches work and reports what it did." },
];
