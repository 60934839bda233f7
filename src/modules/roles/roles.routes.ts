import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  CustomRoleParams,
  OrganizationAvailableRoleList,
  OrganizationCustomRole,
  OrganizationCustomRoleCreateRequest,
  OrganizationCustomRoleList,
  OrganizationCustomRoleUpdateRequest,
} from './roles.schemas.ts';
import type { RolesService } from './roles.service.ts';

const CUSTOM_ROLE_TAGS = ['Organization Custom Role'];
const CUSTOM_ROLES = '/organization/:organizationId/customRole';
const CUSTOM_ROLE = `${CUSTOM_ROLES}/:customRoleId`;

export function registerRoleRoutes(app: FastifyTypeBox, roles: RolesService): void {
  app.get(
    '/organization/:organizationId/availableRole',
    {
      schema: {
        operationId: 'listOrganizationAvailableRoles',
        summary: 'List assignable roles',
        description: 'The built-in roles and the custom roles of the organization.',
        tags: ['Organization Main Calls'],
        params: OrganizationParams,
        response: { 200: OrganizationAvailableRoleList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'roles:read', target: 'organization' } },
    },
    async (request) => {
      const rows = await roles.listAvailableRoles(request.params.organizationId);
      return { results: rows.map((row) => ({ id: row.id, name: row.name })) };
    },
  );

  app.get(
    CUSTOM_ROLES,
    {
      schema: {
        operationId: 'listOrganizationCustomRoles',
        summary: 'List custom roles',
        description: "The organization's custom roles with their cluster and project rules. 404 when the caller is not a member.",
        tags: CUSTOM_ROLE_TAGS,
        params: OrganizationParams,
        response: { 200: OrganizationCustomRoleList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'roles:read', target: 'organization' } },
    },
    async (request) => ({ results: await roles.listCustomRoles(request.params.organizationId) }),
  );

  app.post(
    CUSTOM_ROLES,
    {
      schema: {
        operationId: 'createOrganizationCustomRole',
        summary: 'Create a custom role',
        description:
          'Creates a custom role: rules per cluster and per project and environment type; rules left out mean no access ' +
          'to projects and read access to the organization. 400 for an unknown project or cluster, or one named twice; ' +
          '409 when a role of that name exists.',
        tags: CUSTOM_ROLE_TAGS,
        params: OrganizationParams,
        body: OrganizationCustomRoleCreateRequest,
        response: { 201: OrganizationCustomRole, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'roles:create', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.created).send(await roles.createCustomRole(request.params.organizationId, request.body)),
  );

  app.get(
    CUSTOM_ROLE,
    {
      schema: {
        operationId: 'getOrganizationCustomRole',
        summary: 'Get a custom role',
        description: 'One custom role with its rules. 404 when there is no such role in the organization.',
        tags: CUSTOM_ROLE_TAGS,
        params: CustomRoleParams,
        response: { 200: OrganizationCustomRole, ...authenticatedErrors() },
      },
      config: { access: { permission: 'roles:read', target: 'organization' } },
    },
    async (request) => roles.getCustomRole(request.params.organizationId, request.params.customRoleId),
  );

  app.put(
    CUSTOM_ROLE,
    {
      schema: {
        operationId: 'editOrganizationCustomRole',
        summary: 'Edit a custom role',
        description:
          "Replaces a custom role's name, description and project and cluster rules; takes effect on the next request of " +
          'its holders. 400 for an unknown project or cluster; 404 for an unknown role; 409 when the name is taken.',
        tags: CUSTOM_ROLE_TAGS,
        params: CustomRoleParams,
        body: OrganizationCustomRoleUpdateRequest,
        response: { 200: OrganizationCustomRole, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'roles:update', target: 'organization' } },
    },
    async (request) => roles.editCustomRole(request.params.organizationId, request.params.customRoleId, request.body),
  );

  app.delete(
    CUSTOM_ROLE,
    {
      schema: {
        operationId: 'deleteOrganizationCustomRole',
        summary: 'Delete a custom role',
        description: 'Deletes a custom role nobody holds. 404 for an unknown role; 409 while members, API tokens or pending invitations carry it.',
        tags: CUSTOM_ROLE_TAGS,
        params: CustomRoleParams,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'roles:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await roles.deleteOrganizationCustomRole(request.params.organizationId, request.params.customRoleId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
