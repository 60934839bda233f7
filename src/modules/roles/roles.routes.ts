import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { authenticatedErrors } from '../../http/errors.ts';
import { OrganizationParams } from '../../http/schema.ts';
import { OrganizationAvailableRoleList } from './roles.schemas.ts';
import type { RolesService } from './roles.service.ts';

export function registerRoleRoutes(app: FastifyTypeBox, roles: RolesService): void {
  app.get(
    '/organization/:organizationId/availableRole',
    {
      schema: {
        operationId: 'listOrganizationAvailableRoles',
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
}
