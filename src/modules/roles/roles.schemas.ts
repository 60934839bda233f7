import { Type } from 'typebox';
import { Description, ListOf, Name, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import { CLUSTER_PERMISSIONS, ENVIRONMENT_TYPES, ORGANIZATION_PERMISSIONS, PROJECT_PERMISSIONS } from './roles.rules.ts';

export const OrganizationAvailableRole = Type.Object(
  { id: Uuid, name: Type.String() },
  { $id: 'OrganizationAvailableRole' },
);
export const OrganizationAvailableRoleList = ListOf(OrganizationAvailableRole, 'OrganizationAvailableRoleList');

const EnvironmentModeEnum = Type.Enum(ENVIRONMENT_TYPES);
const ProjectPermission = Type.Enum(PROJECT_PERMISSIONS, { description: 'OrganizationCustomRoleProjectPermission, lowest to highest' });
const ClusterPermission = Type.Enum(CLUSTER_PERMISSIONS, { description: 'OrganizationCustomRoleClusterPermission, lowest to highest' });
const OrganizationPermission = Type.Enum(ORGANIZATION_PERMISSIONS, { description: 'Slipway: VIEWER reads the organization, MANAGER also creates its workload resources' });

const RevealSecrets = Type.Boolean({
  description:
    'Slipway: the role also reveals secret values (secrets:reveal, e.g. ?reveal=true on the variable listings) on this environment type; ' +
    'needs a permission other than NO_ACCESS. Default false.',
});

/**
 * One environment type's permission; an environment type a list leaves out is NO_ACCESS. `reveal_secrets` is Slipway's
 * addition (the reference's entry has no such field): revealing secret values is a permission of its own, granted
 * explicitly, never implied by MANAGER.
 */
const EnvironmentTypePermission = Type.Object(
  { environment_type: EnvironmentModeEnum, permission: ProjectPermission, reveal_secrets: Type.Optional(RevealSecrets) },
  { additionalProperties: false },
);
const EnvironmentTypePermissions = Type.Array(EnvironmentTypePermission, { maxItems: ENVIRONMENT_TYPES.length });

const ClusterPermissionRequest = Type.Object({ cluster_id: Uuid, permission: ClusterPermission }, { additionalProperties: false });
const ProjectPermissionRequest = Type.Object(
  {
    project_id: Uuid,
    /** Project admin: MANAGER on every environment type, and the project itself (edit, delete, create environments). */
    is_admin: Type.Optional(Type.Boolean()),
    permissions: Type.Optional(EnvironmentTypePermissions),
  },
  { additionalProperties: false },
);

/**
 * The reference's rules (cluster_permissions, project_permissions) plus Slipway's organization_permission and
 * default_project_permissions (for projects the role does not list, including ones created later). On create every
 * rule is optional; on edit the reference's lists are required and replace the role's rules, while Slipway's two
 * fields keep their value when left out (so a client that knows only the reference's fields does not reset them).
 */
const ruleFields = {
  organization_permission: Type.Optional(OrganizationPermission),
  default_project_permissions: Type.Optional(EnvironmentTypePermissions),
};
const MAX_RULES = 1000;

export const OrganizationCustomRoleCreateRequest = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(Description)),
    ...ruleFields,
    cluster_permissions: Type.Optional(Type.Array(ClusterPermissionRequest, { maxItems: MAX_RULES })),
    project_permissions: Type.Optional(Type.Array(ProjectPermissionRequest, { maxItems: MAX_RULES })),
  },
  {
    $id: 'OrganizationCustomRoleCreateRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'web-shop-release',
        description: 'Deploys the web shop to staging and reads production',
        organization_permission: 'VIEWER',
        cluster_permissions: [{ cluster_id: '1c7e5a93-4f2b-4d8e-9a06-7b3c2e1d5f84', permission: 'VIEWER' }],
        project_permissions: [
          {
            project_id: '9a1e7c44-2b8d-4f36-8c51-6d0e3b2a7f18',
            permissions: [
              { environment_type: 'STAGING', permission: 'DEPLOYER' },
              { environment_type: 'PRODUCTION', permission: 'VIEWER' },
            ],
          },
        ],
      },
    ],
  },
);

export const OrganizationCustomRoleUpdateRequest = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(Description)),
    ...ruleFields,
    cluster_permissions: Type.Array(ClusterPermissionRequest, { maxItems: MAX_RULES }),
    project_permissions: Type.Array(ProjectPermissionRequest, { maxItems: MAX_RULES }),
  },
  { $id: 'OrganizationCustomRoleUpdateRequest', additionalProperties: false },
);

const EnvironmentTypePermissionView = Type.Object({ environment_type: EnvironmentModeEnum, permission: ProjectPermission, reveal_secrets: RevealSecrets });

/** The reference's OrganizationCustomRole: one entry per cluster and per project of the organization. */
export const OrganizationCustomRole = Type.Object(
  {
    id: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
    name: Type.String(),
    description: Type.Optional(Type.String()),
    organization_permission: OrganizationPermission,
    default_project_permissions: Type.Array(EnvironmentTypePermissionView),
    cluster_permissions: Type.Array(Type.Object({ cluster_id: Uuid, cluster_name: Type.String(), permission: ClusterPermission })),
    project_permissions: Type.Array(
      Type.Object({
        project_id: Uuid,
        project_name: Type.String(),
        is_admin: Type.Boolean(),
        permissions: Type.Array(EnvironmentTypePermissionView),
      }),
    ),
  },
  { $id: 'OrganizationCustomRole' },
);
export const OrganizationCustomRoleList = ListOf(OrganizationCustomRole, 'OrganizationCustomRoleList');

export const CustomRoleParams = Type.Object({ organizationId: Uuid, customRoleId: Uuid }, { additionalProperties: false });
