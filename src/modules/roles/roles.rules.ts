import type { Grant } from '../../auth/permissions.ts';
import type { Placement } from '../../auth/principal.ts';

/**
 * What a custom role allows, as grants of the closed vocabulary (auth/permissions.ts), decided by where the addressed
 * resource lives (docs/roles.md). The enums are the original product's (OrganizationCustomRoleProjectPermission,
 * OrganizationCustomRoleClusterPermission) plus Slipway's organization-level permission. A custom role never holds
 * the admin grant: governance (members, tokens, billing, credentials) stays with the built-in OWNER and ADMIN roles,
 * so nobody holding a custom role can widen their own rights. It holds the reveal grant (`secrets:reveal`) only on the
 * environment types it names explicitly (`reveal_secrets`), and only on top of at least VIEWER there.
 */

export const ENVIRONMENT_TYPES = ['DEVELOPMENT', 'PREVIEW', 'STAGING', 'PRODUCTION'] as const;
export type EnvironmentType = (typeof ENVIRONMENT_TYPES)[number];

/** From the lowest to the highest; each includes the ones before it. */
export const PROJECT_PERMISSIONS = ['NO_ACCESS', 'VIEWER', 'DEPLOYER', 'MANAGER'] as const;
export type ProjectPermission = (typeof PROJECT_PERMISSIONS)[number];

export const CLUSTER_PERMISSIONS = ['VIEWER', 'ENV_CREATOR', 'ADMIN'] as const;
export type ClusterPermission = (typeof CLUSTER_PERMISSIONS)[number];

export const ORGANIZATION_PERMISSIONS = ['VIEWER', 'MANAGER'] as const;
export type OrganizationPermission = (typeof ORGANIZATION_PERMISSIONS)[number];

export type EnvironmentTypePermissions = Record<EnvironmentType, ProjectPermission>;

/** The rules of one project: project admin, the permission per environment type, and where it reveals secret values. */
export interface ProjectRule {
  isAdmin: boolean;
  permissions: EnvironmentTypePermissions;
  /** The environment types on whose environments and services the role sees secret values in plain text. */
  revealSecrets: ReadonlySet<EnvironmentType>;
}

export interface CustomRoleDefinition {
  organizationPermission: OrganizationPermission;
  /** For every project `projects` does not list, including projects created later. */
  defaultProjectPermissions: EnvironmentTypePermissions;
  /** Where the role reveals secret values in every project `projects` does not list. */
  defaultRevealSecrets: ReadonlySet<EnvironmentType>;
  projects: ReadonlyMap<string, ProjectRule>;
  clusters: ReadonlyMap<string, ClusterPermission>;
}

export const NO_PROJECT_ACCESS: EnvironmentTypePermissions = { DEVELOPMENT: 'NO_ACCESS', PREVIEW: 'NO_ACCESS', STAGING: 'NO_ACCESS', PRODUCTION: 'NO_ACCESS' };

const PROJECT_PERMISSION_GRANTS: Record<ProjectPermission, readonly Grant[]> = {
  NO_ACCESS: [],
  // Sees the environment and what is in it (services, variables; secrets never show a value).
  VIEWER: ['read'],
  // Deploys, stops, restarts and cancels, but changes nothing.
  DEPLOYER: ['read', 'deploy'],
  // Changes the environment and what is in it: services, variables, secrets; deletes it.
  MANAGER: ['read', 'write', 'deploy'],
};

const CLUSTER_PERMISSION_GRANTS: Record<ClusterPermission, readonly Grant[]> = {
  VIEWER: ['read'],
  // The original product's "can deploy on the cluster": here the project permission decides environments, so on the
  // cluster itself this reads, as VIEWER does.
  ENV_CREATOR: ['read'],
  // Changes the cluster's settings and drives it (deploy, stop, restart, upgrade, lock).
  ADMIN: ['read', 'write', 'deploy'],
};

const ORGANIZATION_PERMISSION_GRANTS: Record<OrganizationPermission, readonly Grant[]> = {
  // Every member sees the organization: its settings, members, registries, … (never a secret).
  VIEWER: ['read'],
  // Creates organization-level workload resources: projects, clusters, labels groups, registry checks, git listings.
  MANAGER: ['read', 'write'],
};

/** The rules of a role for one project: the project's own when the role lists it, else the defaults. */
function projectRule(definition: CustomRoleDefinition, projectId: string): ProjectRule {
  return (
    definition.projects.get(projectId) ?? {
      isAdmin: false,
      permissions: definition.defaultProjectPermissions,
      revealSecrets: definition.defaultRevealSecrets,
    }
  );
}

/**
 * The grants of a custom role where a request acts:
 *   environment or service   the project's permission for the environment's type (project admin: MANAGER), plus
 *                            reveal where the role names that type for it (never without read)
 *   project                  read when any environment type is visible; everything but admin and reveal for a
 *                            project admin (nothing addressed by a project alone reveals a secret value)
 *   cluster (path names it)  the cluster's permission (clusterPermissionOf)
 *   organization             the organization-level permission
 */
export function grantsOfCustomRole(definition: CustomRoleDefinition, scope: Placement): ReadonlySet<Grant> {
  if (scope.projectId !== undefined) {
    const rule = projectRule(definition, scope.projectId);
    if (scope.environmentMode !== undefined) {
      const grants = new Set<Grant>(PROJECT_PERMISSION_GRANTS[rule.isAdmin ? 'MANAGER' : rule.permissions[scope.environmentMode]]);
      if (rule.revealSecrets.has(scope.environmentMode) && grants.has('read')) grants.add('reveal');
      return grants;
    }
    if (rule.isAdmin) return new Set(PROJECT_PERMISSION_GRANTS.MANAGER);
    const anyVisible = ENVIRONMENT_TYPES.some((type) => rule.permissions[type] !== 'NO_ACCESS');
    return new Set<Grant>(anyVisible ? ['read'] : []);
  }
  if (scope.clusterId !== undefined) return new Set(CLUSTER_PERMISSION_GRANTS[clusterPermissionOf(definition, scope.clusterId)]);
  return new Set(ORGANIZATION_PERMISSION_GRANTS[definition.organizationPermission]);
}

/** A cluster the role does not list follows the organization-level permission: a MANAGER manages clusters too. */
export function clusterPermissionOf(definition: CustomRoleDefinition, clusterId: string): ClusterPermission {
  return definition.clusters.get(clusterId) ?? (definition.organizationPermission === 'MANAGER' ? 'ADMIN' : 'VIEWER');
}
