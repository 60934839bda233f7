/**
 * The closed permission vocabulary. Every route declares one `resource:action` permission; each permission
 * needs one grant. Roles and token scopes are sets of grants, and a caller may do what its grants cover.
 *
 *   grant    what it covers
 *   read     every GET of the organization's resources (secret values stay masked)
 *   write    create/update/delete of workload resources (projects, environments, services, …), not governance
 *   deploy   deploy/stop/restart/cancel actions
 *   admin    governance: organization settings, members, API tokens, billing
 *   reveal   seeing secret values in plain text (`secrets:reveal`: hidden built-ins such as database passwords,
 *            asked for with `?reveal=true`); nothing else needs it, and no other grant implies it
 *   person   only a signed-in person, never a token (e.g. one's own onboarding record)
 *   creator  a signed-in person, or an ADMIN API token acting for the person who created it (creating an
 *            organization: that person becomes its OWNER)
 *
 * `person` and `creator` are not grants anyone holds through a role; the authorizer checks the principal.
 * `reveal` is a grant of its own rather than a part of read or write because reading the configuration and carrying
 * its credentials away are different rights: a dashboard, a CI job or an agent that lists variables must not walk
 * off with database passwords (docs/decisions.md, "Permissions").
 */
export const GRANTS = ['read', 'write', 'deploy', 'admin', 'reveal'] as const;
export type Grant = (typeof GRANTS)[number];
export type Requirement = Grant | 'person' | 'creator' | 'authenticated';

export const PERMISSIONS = {
  'organizations:list': 'authenticated',
  'organizations:create': 'creator',
  'organization:read': 'read',
  'organization:update': 'admin',
  'organization:delete': 'admin',
  'roles:read': 'read',
  // Custom roles decide who may do what: defining, changing or deleting one is governance, like members. Anyone who
  // reads the organization sees them (listOrganizationAvailableRoles lists them too).
  'roles:create': 'admin',
  'roles:update': 'admin',
  'roles:delete': 'admin',
  'onboarding:read': 'read',
  'onboarding:update': 'person',
  'api-tokens:read': 'admin',
  'api-tokens:create': 'admin',
  'api-tokens:delete': 'admin',
  'policy-tokens:read': 'admin',
  'policy-tokens:create': 'admin',
  'policy-tokens:delete': 'admin',
  'projects:read': 'read',
  'projects:create': 'write',
  'projects:update': 'write',
  'projects:delete': 'write',
  'members:read': 'read',
  'members:update': 'admin',
  'members:delete': 'admin',
  'invitations:read': 'read',
  'invitations:create': 'admin',
  'invitations:delete': 'admin',
  // The invitee is not a member yet: these routes name no organization to the authorizer (target none) and the
  // invitations service decides, from the invitation itself, who may see it (the invitee or a member) and accept it
  // (the invitee alone, by verified e-mail).
  'invitations:view': 'authenticated',
  // Catalogs that hold nothing of any organization (the advanced settings' defaults): any signed-in caller may read them.
  'catalogs:read': 'authenticated',
  'invitations:accept': 'person',
  // A person's own account (getAccountInformation, editAccountInformation): tokens have none.
  'account:read': 'person',
  'account:update': 'person',
  // Needs admin to reach the service, which then admits the OWNER alone.
  'ownership:transfer': 'admin',
  // Git tokens are the organization's credentials for its git hosts: anyone who reads the organization may see
  // that they exist (never their values); registering, replacing or removing one is governance, like API tokens.
  'git-tokens:read': 'read',
  'git-tokens:create': 'admin',
  'git-tokens:update': 'admin',
  'git-tokens:delete': 'admin',
  // Reads a repository with the organization's stored credentials; a POST and a step of creating a service, so it
  // needs write (READ-scoped tokens are GET-only).
  'git-repositories:list': 'write',
  // Lists what a stored git token reaches at its provider (repositories, branches: docs/git-providers.md), a step of
  // creating a service and a spend of the token's rate limit: write, like the directory listing, though a GET.
  'git-provider-repositories:list': 'write',
  // Which GitHub App installation the organization is connected to: governance, like git tokens.
  'github-app:update': 'admin',
  // Clusters are workload infrastructure: created and changed with write, driven (deploy, stop, restart, cancel,
  // upgrade) with deploy. Locking guards a cluster against exactly those changes, so it takes write as well.
  // The operator bootstrap mints a credential that acts for the cluster, which is governance.
  'clusters:read': 'read',
  'clusters:create': 'write',
  'clusters:update': 'write',
  'clusters:delete': 'write',
  'clusters:deploy': 'deploy',
  'clusters:lock': 'write',
  'clusters:operator-bootstrap': 'admin',
  // A cluster's kubeconfig (and the tokens taken from it) is a credential for the cluster itself: governance to read or
  // set, as the operator bootstrap is. So is choosing the versions its operator runs. The operator fleet lists the
  // clusters of every organization the caller administers: any signed-in caller may ask, the service keeps those
  // organizations where it holds admin (docs/cluster-insight.md).
  'cluster-kubeconfig:read': 'admin',
  'cluster-kubeconfig:update': 'admin',
  'cluster-operator:update': 'admin',
  'cluster-operator-fleet:read': 'authenticated',
  // Billing (docs/billing.md). What the organization costs and whether its billing is valid are readable by anyone who
  // reads the organization (a developer should see why deployments are restricted); billing info, invoices, cards and
  // the external id are governance to read, and every billing write (plan, credit codes, cards, billing info, reports,
  // mailing invoices) is governance.
  'billing-cost:read': 'read',
  'billing:read': 'admin',
  'billing:update': 'admin',
  // Cloud provider credentials are the organization's keys to its cloud accounts: governance, like git tokens.
  'cloud-credentials:read': 'read',
  'cloud-credentials:create': 'admin',
  'cloud-credentials:update': 'admin',
  'cloud-credentials:delete': 'admin',
  // Creating a cluster on an existing credential is infrastructure work, as creating any cluster is: write.
  'self-managed-clusters:create': 'write',
  // Container registries and Helm repositories hold credentials, like git tokens: managing them is governance;
  // anyone who reads the organization sees them (never the secrets) and what they contain. A check is a POST that
  // reaches out with the stored credentials, a step of setting up services, so it needs write.
  'container-registries:read': 'read',
  'container-registries:create': 'admin',
  'container-registries:update': 'admin',
  'container-registries:delete': 'admin',
  'container-registries:check': 'write',
  'helm-repositories:read': 'read',
  'helm-repositories:create': 'admin',
  'helm-repositories:update': 'admin',
  'helm-repositories:delete': 'admin',
  'helm-repositories:check': 'write',
  // Labels and annotations groups are workload configuration applied to clusters and services: write.
  'labels-groups:read': 'read',
  'labels-groups:create': 'write',
  'labels-groups:update': 'write',
  'labels-groups:delete': 'write',
  'annotations-groups:read': 'read',
  'annotations-groups:create': 'write',
  'annotations-groups:update': 'write',
  'annotations-groups:delete': 'write',
  // The template catalog is read by anyone who reads the organization; resolving a component is a POST that only
  // previews (nothing is written), so read suffices. A cluster's platform configuration is infrastructure: write.
  'platform-templates:read': 'read',
  'platform-templates:resolve': 'read',
  'cluster-platform-configuration:read': 'read',
  'cluster-platform-configuration:update': 'write',
  // Environments are workload resources: created, changed and removed with write (a clone creates one); deploy,
  // redeploy, stop, restart and cancel are actions, with deploy.
  'environments:read': 'read',
  'environments:create': 'write',
  'environments:update': 'write',
  'environments:delete': 'write',
  'environments:deploy': 'deploy',
  // Services (the seven kinds) are workload resources like environments: write to create, change and remove them;
  // deploy, stop, redeploy, restart and cancel are actions, with deploy; their logs are read like their settings.
  'services:read': 'read',
  'services:create': 'write',
  'services:update': 'write',
  'services:delete': 'write',
  'services:deploy': 'deploy',
  'service-logs:read': 'read',
  // Variables and secrets configure workloads: write to change, read to list (secret values never show, hidden
  // built-ins are masked).
  'variables:read': 'read',
  'variables:create': 'write',
  'variables:update': 'write',
  'variables:delete': 'write',
  // Seeing secret values in plain text (the hidden built-ins: database credentials, hostnames). The listings that can
  // reveal declare it for the requests that ask (`?reveal=true`, route-access.ts REVEAL_SECRETS), and the authorizer
  // requires it on top of the listing's own permission; the masked answer needs only read.
  'secrets:reveal': 'reveal',
  'secrets:read': 'read',
  'secrets:create': 'write',
  'secrets:update': 'write',
  'secrets:delete': 'write',
  // Webhooks send the organization's events to outside systems with a secret of their own: governance to manage
  // (and to redeliver), readable by anyone who reads the organization (never the secret).
  'webhooks:read': 'read',
  'webhooks:create': 'admin',
  'webhooks:update': 'admin',
  'webhooks:delete': 'admin',
  // The audit log shows who did what from which address, with masked request bodies of every write: governance,
  // read by those who answer for the organization (as the reference keeps audit logs to admins).
  'organization-events:read': 'admin',
  // Alert receivers hold credentials (SMTP passwords, webhook URLs with tokens) and send to outside systems:
  // governance to manage, as webhooks. Sending a test message stores nothing and reaches only where the receiver
  // says (the outbound guard applies): write, as the registries' checks. Rules only point at receivers: write.
  'alert-receivers:read': 'read',
  'alert-receivers:create': 'admin',
  'alert-receivers:update': 'admin',
  'alert-receivers:delete': 'admin',
  'alert-receivers:validate': 'write',
  'alert-rules:read': 'read',
  'alert-rules:create': 'write',
  'alert-rules:update': 'write',
  'alert-rules:delete': 'write',
} as const satisfies Record<string, Requirement>;

export type Permission = keyof typeof PERMISSIONS;

export function requirementOf(permission: Permission): Requirement {
  return PERMISSIONS[permission];
}

/** The four roles every organization has (rows with uuids, listed by listOrganizationAvailableRoles). */
export const BUILT_IN_ROLES = ['OWNER', 'ADMIN', 'DEVELOPER', 'VIEWER'] as const;
export type BuiltInRole = (typeof BUILT_IN_ROLES)[number];

/**
 * Only the roles that answer for the organization see secret values. DEVELOPER does not: it configures and deploys
 * services, which needs the names and the masked values, not the database passwords on its screen (docs/roles.md).
 */
const ROLE_GRANTS: Record<BuiltInRole, readonly Grant[]> = {
  OWNER: ['read', 'write', 'deploy', 'admin', 'reveal'],
  ADMIN: ['read', 'write', 'deploy', 'admin', 'reveal'],
  DEVELOPER: ['read', 'write', 'deploy'],
  VIEWER: ['read'],
};

/**
 * Token scopes of SPEC.md. Every scope includes read: a token that cannot see what it acts on is of no use. Only
 * ADMIN ("full access to all resources") reveals secret values; WRITE, DEPLOY and READ tokens see them masked.
 */
export const TOKEN_SCOPES = ['ADMIN', 'WRITE', 'DEPLOY', 'READ'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

const SCOPE_GRANTS: Record<TokenScope, readonly Grant[]> = {
  ADMIN: ['read', 'write', 'deploy', 'admin', 'reveal'],
  WRITE: ['read', 'write'],
  DEPLOY: ['read', 'deploy'],
  READ: ['read'],
};

export function isBuiltInRole(name: string): name is BuiltInRole {
  return (BUILT_IN_ROLES as readonly string[]).includes(name);
}

export function grantsOfRole(roleName: string): ReadonlySet<Grant> {
  return new Set(isBuiltInRole(roleName) ? ROLE_GRANTS[roleName] : []);
}

/**
 * The most a custom role grants anywhere. Where a request acts decides what it grants there (modules/roles/
 * roles.rules.ts, asked by the authorizer); admin is never among them, so no custom role governs the organization.
 * Reveal is, where the role grants it explicitly (per environment type).
 */
export const CUSTOM_ROLE_CEILING: ReadonlySet<Grant> = new Set<Grant>(['read', 'write', 'deploy', 'reveal']);

/**
 * A token carries a role, a scope, or both; its grants are what both allow. A custom role (`roleKind` CUSTOM) counts
 * with its ceiling here; the authorizer narrows it to what the role grants where each request acts.
 */
export function grantsOfToken(roleName: string | null, scope: TokenScope | null, roleKind = 'BUILT_IN'): ReadonlySet<Grant> {
  const fromRole = roleName === null ? undefined : roleKind === 'CUSTOM' ? CUSTOM_ROLE_CEILING : grantsOfRole(roleName);
  const fromScope = scope === null ? undefined : new Set(SCOPE_GRANTS[scope]);
  if (fromRole && fromScope) return new Set([...fromRole].filter((g) => fromScope.has(g)));
  return fromRole ?? fromScope ?? new Set();
}

export function covers(held: ReadonlySet<Grant>, wanted: ReadonlySet<Grant>): boolean {
  for (const grant of wanted) if (!held.has(grant)) return false;
  return true;
}
