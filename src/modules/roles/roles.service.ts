import type { Kysely } from 'kysely';
import { BUILT_IN_ROLES, type BuiltInRole, type Grant } from '../../auth/permissions.ts';
import type { Placement } from '../../auth/principal.ts';
import { isForeignKeyViolation, uniqueOrConflict } from '../../db/db.errors.ts';
import type { DB, Queryable } from '../../db/db.schema.ts';
import { isoTimestamp, type Clock } from '../../lib/clock.ts';
import { badRequest, conflict, notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { cleanName } from '../../lib/names.ts';
import {
  countRoleHolders,
  deleteCustomRole,
  findCustomRole,
  findCustomRoleById,
  findCustomRoleCluster,
  findCustomRoleProject,
  findRole,
  insertCustomRole,
  insertRoles,
  listCustomRoleClusters,
  listCustomRoleProjects,
  listCustomRoles,
  listOrganizationClusters,
  listOrganizationProjects,
  listRoles,
  replaceCustomRoleRules,
  updateCustomRole,
  type CustomRoleClusterRow,
  type CustomRoleProjectRow,
  type CustomRoleRow,
  type CustomRoleWithName,
  type RoleRow,
} from './roles.repo.ts';
import {
  clusterPermissionOf,
  ENVIRONMENT_TYPES,
  grantsOfCustomRole,
  NO_PROJECT_ACCESS,
  type ClusterPermission,
  type CustomRoleDefinition,
  type EnvironmentType,
  type EnvironmentTypePermissions,
  type OrganizationPermission,
  type ProjectPermission,
} from './roles.rules.ts';

export interface RolesDeps {
  db: Kysely<DB>;
  clock: Clock;
}

interface EnvironmentTypePermissionInput {
  environment_type: EnvironmentType;
  permission: ProjectPermission;
  reveal_secrets?: boolean | undefined;
}

export interface CustomRoleInput {
  name: string;
  description?: string | null | undefined;
  organization_permission?: OrganizationPermission | undefined;
  default_project_permissions?: EnvironmentTypePermissionInput[] | undefined;
  cluster_permissions?: { cluster_id: string; permission: ClusterPermission }[] | undefined;
  project_permissions?: { project_id: string; is_admin?: boolean | undefined; permissions?: EnvironmentTypePermissionInput[] | undefined }[] | undefined;
}

const MODE_COLUMNS = { DEVELOPMENT: 'development', PREVIEW: 'preview', STAGING: 'staging', PRODUCTION: 'production' } as const;
const REVEAL_COLUMNS = {
  DEVELOPMENT: 'development_reveal',
  PREVIEW: 'preview_reveal',
  STAGING: 'staging_reveal',
  PRODUCTION: 'production_reveal',
} as const;

type ModeColumns = Record<(typeof MODE_COLUMNS)[EnvironmentType], string>;
type RevealColumns = Record<(typeof REVEAL_COLUMNS)[EnvironmentType], number>;

/** One list of the reference's shape (plus `reveal_secrets`): the permission per type and where the role reveals. */
interface EnvironmentTypeRules {
  permissions: EnvironmentTypePermissions;
  revealSecrets: ReadonlySet<EnvironmentType>;
}

function rulesOfColumns(row: ModeColumns & RevealColumns): EnvironmentTypeRules {
  return {
    permissions: Object.fromEntries(ENVIRONMENT_TYPES.map((type) => [type, row[MODE_COLUMNS[type]] as ProjectPermission])) as EnvironmentTypePermissions,
    revealSecrets: new Set(ENVIRONMENT_TYPES.filter((type) => row[REVEAL_COLUMNS[type]] === 1)),
  };
}

function columnsOfRules(rules: EnvironmentTypeRules): ModeColumns & RevealColumns {
  return Object.fromEntries(
    ENVIRONMENT_TYPES.flatMap((type) => [
      [MODE_COLUMNS[type], rules.permissions[type]],
      [REVEAL_COLUMNS[type], rules.revealSecrets.has(type) ? 1 : 0],
    ]),
  ) as ModeColumns & RevealColumns;
}

function permissionList(rules: EnvironmentTypeRules) {
  return ENVIRONMENT_TYPES.map((type) => ({ environment_type: type, permission: rules.permissions[type], reveal_secrets: rules.revealSecrets.has(type) }));
}

/**
 * A list of environment-type permissions as a full map: a type left out has NO_ACCESS and reveals nothing, a type
 * named twice is refused. Revealing comes on top of reading, so `reveal_secrets` with NO_ACCESS is refused rather than
 * stored as a right that could never be used.
 */
function environmentTypeRules(list: EnvironmentTypePermissionInput[], field: string): EnvironmentTypeRules {
  const permissions: EnvironmentTypePermissions = { ...NO_PROJECT_ACCESS };
  const revealSecrets = new Set<EnvironmentType>();
  const seen = new Set<EnvironmentType>();
  list.forEach((entry, index) => {
    if (seen.has(entry.environment_type)) {
      throw badRequest('an environment type is named twice', [{ field: `${field}/${index}/environment_type`, message: `${entry.environment_type} is already given` }]);
    }
    seen.add(entry.environment_type);
    permissions[entry.environment_type] = entry.permission;
    if (entry.reveal_secrets === true) {
      if (entry.permission === 'NO_ACCESS') {
        throw badRequest('revealing secret values needs access to the environment type', [
          { field: `${field}/${index}/reveal_secrets`, message: 'needs a permission other than NO_ACCESS' },
        ]);
      }
      revealSecrets.add(entry.environment_type);
    }
  });
  return { permissions, revealSecrets };
}

function definitionOf(role: CustomRoleRow, projects: CustomRoleProjectRow[], clusters: CustomRoleClusterRow[]): CustomRoleDefinition {
  const defaults = rulesOfColumns(role);
  return {
    organizationPermission: role.organization_permission as OrganizationPermission,
    defaultProjectPermissions: defaults.permissions,
    defaultRevealSecrets: defaults.revealSecrets,
    projects: new Map(projects.map((row) => [row.project_id, { isAdmin: row.is_admin === 1, ...rulesOfColumns(row) }])),
    clusters: new Map(clusters.map((row) => [row.cluster_id, row.permission as ClusterPermission])),
  };
}

/**
 * Roles are rows per organization: the four built-in ones are created with the organization; custom roles are
 * defined by it (docs/roles.md) and answer the authorizer with grants that depend on where a request acts.
 */
export function createRolesService(deps: RolesDeps) {
  const { db, clock } = deps;

  /** Creates the built-in roles of a new organization inside the caller's transaction. */
  async function createBuiltInRoles(trx: Queryable, organizationId: string): Promise<Record<BuiltInRole, RoleRow>> {
    const now = isoTimestamp(clock);
    const rows = BUILT_IN_ROLES.map((name) => ({
      id: newId(),
      organization_id: organizationId,
      name,
      kind: 'BUILT_IN',
      created_at: now,
    }));
    await insertRoles(trx, rows);
    return Object.fromEntries(rows.map((row) => [row.name, row])) as Record<BuiltInRole, RoleRow>;
  }

  /** The projects and clusters a definition names must be the organization's; each named once. */
  async function rulesOf(organizationId: string, roleId: string, input: CustomRoleInput) {
    const [projects, clusters] = await Promise.all([listOrganizationProjects(db, organizationId), listOrganizationClusters(db, organizationId)]);
    const projectIds = new Set(projects.map((project) => project.id));
    const clusterIds = new Set(clusters.map((cluster) => cluster.id));
    const projectRows: CustomRoleProjectRow[] = [];
    const namedProjects = new Set<string>();
    (input.project_permissions ?? []).forEach((entry, index) => {
      const field = `/project_permissions/${index}`;
      if (!projectIds.has(entry.project_id)) throw badRequest('unknown project', [{ field: `${field}/project_id`, message: 'is not a project of this organization' }]);
      if (namedProjects.has(entry.project_id)) throw badRequest('a project is named twice', [{ field: `${field}/project_id`, message: 'is already given' }]);
      namedProjects.add(entry.project_id);
      const rules = environmentTypeRules(entry.permissions ?? [], `${field}/permissions`);
      projectRows.push({ role_id: roleId, project_id: entry.project_id, is_admin: entry.is_admin === true ? 1 : 0, ...columnsOfRules(rules) });
    });
    const clusterRows: CustomRoleClusterRow[] = [];
    const namedClusters = new Set<string>();
    (input.cluster_permissions ?? []).forEach((entry, index) => {
      const field = `/cluster_permissions/${index}/cluster_id`;
      if (!clusterIds.has(entry.cluster_id)) throw badRequest('unknown cluster', [{ field, message: 'is not a cluster of this organization' }]);
      if (namedClusters.has(entry.cluster_id)) throw badRequest('a cluster is named twice', [{ field, message: 'is already given' }]);
      namedClusters.add(entry.cluster_id);
      clusterRows.push({ role_id: roleId, cluster_id: entry.cluster_id, permission: entry.permission });
    });
    return { projectRows, clusterRows };
  }

  /** A project or cluster deleted between the checks and the write is a bad reference, as if it had never existed. */
  async function writeRules<T>(write: () => Promise<T>, name: string): Promise<T> {
    try {
      return await uniqueOrConflict(write, `a role named "${name}" already exists in this organization`);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw badRequest('a project or cluster the role names no longer exists; read them again');
      throw error;
    }
  }

  async function viewsOf(organizationId: string, roles: CustomRoleWithName[]) {
    const roleIds = roles.map((role) => role.role_id);
    const [projects, clusters, projectRules, clusterRules] = await Promise.all([
      listOrganizationProjects(db, organizationId),
      listOrganizationClusters(db, organizationId),
      listCustomRoleProjects(db, roleIds),
      listCustomRoleClusters(db, roleIds),
    ]);
    return roles.map((role) => {
      const definition = definitionOf(
        role,
        projectRules.filter((row) => row.role_id === role.role_id),
        clusterRules.filter((row) => row.role_id === role.role_id),
      );
      return {
        id: role.role_id,
        created_at: role.created_at,
        updated_at: role.updated_at,
        name: role.name,
        // Not nullable in the reference: a role without a description leaves the field out.
        ...(role.description === null ? {} : { description: role.description }),
        organization_permission: definition.organizationPermission,
        default_project_permissions: permissionList({ permissions: definition.defaultProjectPermissions, revealSecrets: definition.defaultRevealSecrets }),
        cluster_permissions: clusters.map((cluster) => ({
          cluster_id: cluster.id,
          cluster_name: cluster.name,
          permission: clusterPermissionOf(definition, cluster.id),
        })),
        project_permissions: projects.map((project) => {
          const rule = definition.projects.get(project.id);
          return {
            project_id: project.id,
            project_name: project.name,
            is_admin: rule?.isAdmin ?? false,
            permissions: permissionList(rule ?? { permissions: definition.defaultProjectPermissions, revealSecrets: definition.defaultRevealSecrets }),
          };
        }),
      };
    });
  }

  async function requireCustomRole(organizationId: string, roleId: string): Promise<CustomRoleWithName> {
    const role = await findCustomRole(db, organizationId, roleId);
    if (role === undefined) throw notFound(`custom role ${roleId} not found`);
    return role;
  }

  async function viewOf(organizationId: string, roleId: string) {
    const [view] = await viewsOf(organizationId, [await requireCustomRole(organizationId, roleId)]);
    if (view === undefined) throw notFound(`custom role ${roleId} not found`);
    return view;
  }

  async function createCustomRole(organizationId: string, input: CustomRoleInput) {
    const id = newId();
    const name = cleanName(input.name);
    const { projectRows, clusterRows } = await rulesOf(organizationId, id, input);
    const defaults = environmentTypeRules(input.default_project_permissions ?? [], '/default_project_permissions');
    const now = isoTimestamp(clock);
    await writeRules(
      () =>
        db.transaction().execute(async (trx) => {
          await insertCustomRole(
            trx,
            { id, organization_id: organizationId, name, kind: 'CUSTOM', created_at: now },
            {
              role_id: id,
              description: input.description ?? null,
              organization_permission: input.organization_permission ?? 'VIEWER',
              ...columnsOfRules(defaults),
              updated_at: now,
            },
          );
          await replaceCustomRoleRules(trx, id, projectRows, clusterRows);
        }),
      name,
    );
    return viewOf(organizationId, id);
  }

  async function editCustomRole(organizationId: string, roleId: string, input: CustomRoleInput) {
    const current = await requireCustomRole(organizationId, roleId);
    const name = cleanName(input.name);
    const { projectRows, clusterRows } = await rulesOf(organizationId, roleId, input);
    const defaults =
      input.default_project_permissions === undefined
        ? rulesOfColumns(current)
        : environmentTypeRules(input.default_project_permissions, '/default_project_permissions');
    const updated = await writeRules(
      () =>
        db.transaction().execute(async (trx) => {
          const found = await updateCustomRole(trx, roleId, name, {
            description: input.description === undefined ? current.description : input.description,
            organization_permission: input.organization_permission ?? current.organization_permission,
            ...columnsOfRules(defaults),
            updated_at: isoTimestamp(clock),
          });
          if (found) await replaceCustomRoleRules(trx, roleId, projectRows, clusterRows);
          return found;
        }),
      name,
    );
    if (!updated) throw notFound(`custom role ${roleId} not found`);
    return viewOf(organizationId, roleId);
  }

  /**
   * A role someone holds is not deleted (409 naming who): deleting it would silently drop API tokens and pending
   * invitations with it, and leave members without a role. Accepted or expired invitations go with the role.
   */
  async function deleteOrganizationCustomRole(organizationId: string, roleId: string): Promise<void> {
    await requireCustomRole(organizationId, roleId);
    try {
      await db.transaction().execute(async (trx) => {
        const holders = await countRoleHolders(trx, roleId, isoTimestamp(clock));
        if (holders.members + holders.apiTokens + holders.invitations > 0) {
          throw conflict(
            `the custom role is in use by ${holders.members} member(s), ${holders.apiTokens} API token(s) and ${holders.invitations} pending invitation(s); give them another role first`,
          );
        }
        if (!(await deleteCustomRole(trx, organizationId, roleId))) throw notFound(`custom role ${roleId} not found`);
      });
    } catch (error) {
      // A member given the role between the count and the delete still references it.
      if (isForeignKeyViolation(error)) throw conflict('the custom role was given to someone meanwhile; read the members again');
      throw error;
    }
  }

  /** The grants of a custom role where a request acts; none once the role is gone. */
  async function customRoleGrants(roleId: string, placement: Placement): Promise<ReadonlySet<Grant>> {
    const role = await findCustomRoleById(db, roleId);
    if (role === undefined) return new Set();
    const [project, cluster] = await Promise.all([
      placement.projectId === undefined ? undefined : findCustomRoleProject(db, roleId, placement.projectId),
      placement.clusterId === undefined ? undefined : findCustomRoleCluster(db, roleId, placement.clusterId),
    ]);
    return grantsOfCustomRole(definitionOf(role, project === undefined ? [] : [project], cluster === undefined ? [] : [cluster]), placement);
  }

  return {
    createBuiltInRoles,
    listAvailableRoles: (organizationId: string) => listRoles(db, organizationId),
    findRole: (organizationId: string, roleId: string) => findRole(db, organizationId, roleId),
    listCustomRoles: async (organizationId: string) => viewsOf(organizationId, await listCustomRoles(db, organizationId)),
    getCustomRole: viewOf,
    createCustomRole,
    editCustomRole,
    deleteOrganizationCustomRole,
    customRoleGrants,
  };
}

export type RolesService = ReturnType<typeof createRolesService>;
