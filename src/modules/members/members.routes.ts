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
        summary: 'List members',
        description: 'The people of the organization with their role, e-mail and when they last came. 404 when the caller is not a member.',
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
        summary: "Change a member's role",
        description:
          'Gives a member another role of the organization. Nobody grants a role with rights they lack themselves, and ' +
          'the OWNER role is only given by transferring ownership (403 or 400). 400 for an unknown role; 403 to change ' +
          "the OWNER's role; 404 when the user is not a member; 409 when the member's role changed or they left " +
          'meanwhile.',
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
        summary: 'Remove a member',
        description:
          'Removes a person from the organization; their access ends with their next request. 403 to remove the OWNER ' +
          '(transfer ownership first); 404 when the user is not a member; 409 when the member changed or left meanwhile.',
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
        summary: 'Transfer ownership',
        description:
          'Makes another member the OWNER; the current OWNER becomes an ADMIN. Only the OWNER may, and only as a person ' +
          '(not with an API token): 403 otherwise. 400 when user_id is the caller; 404 when the user is not a member; 409 ' +
          'when their membership changed meanwhile.',
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
