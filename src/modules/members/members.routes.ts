import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import { EmptyOk, MemberDeleteRequest, MemberResponseList, MemberRoleUpdateRequest, TransferOwnershipRequest } from './members.schemas.ts';
import type { MembersService } from './members.service.ts';

const TAGS = ['Members'];

export function registerMemberRoutes(app: FastifyTypeBox, members: MembersService): void {
  app.get(
    '/organization/:organizationId/member',
    {
      schema: {
        operationId: 'getOrganizationMembers',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: MemberResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'members:read', target: 'organization' } },
    },
    async (request) => ({ results: await members.listOrganizationMembers(request.params.organizationId) }),
  );

  app.put(
    '/organization/:organizationId/member',
    {
      schema: {
        operationId: 'editOrganizationMemberRole',
        tags: TAGS,
        params: OrganizationParams,
        body: MemberRoleUpdateRequest,
        response: { 200: EmptyOk, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'members:update', target: 'organization' } },
    },
    async (request, reply) => {
      await members.changeMemberRole(requireAccess(request), request.body);
      return reply.code(HTTP_STATUS.ok).send(undefined);
    },
  );

  app.delete(
    '/organization/:organizationId/member',
    {
      schema: {
        operationId: 'deleteMember',
        tags: TAGS,
        params: OrganizationParams,
        body: MemberDeleteRequest,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'members:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await members.removeMember(requireAccess(request), request.body.user_id);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.post(
    '/organization/:organizationId/transferOwnership',
    {
      schema: {
        operationId: 'postOrganizationTransferOwnership',
        tags: TAGS,
        params: OrganizationParams,
        body: TransferOwnershipRequest,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'ownership:transfer', target: 'organization' } },
    },
    async (request, reply) => {
      await members.transferOwnership(requirePrincipal(request), requireAccess(request), request.body.user_id);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
