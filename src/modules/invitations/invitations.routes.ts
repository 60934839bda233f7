import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess, requirePrincipal } from '../../http/route-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import { InvitationParams, InviteMember, InviteMemberRequest, InviteMemberResponseList } from './invitations.schemas.ts';
import type { InvitationsService } from './invitations.service.ts';

const TAGS = ['Members'];

export function registerInvitationRoutes(app: FastifyTypeBox, invitations: InvitationsService): void {
  app.get(
    '/organization/:organizationId/inviteMember',
    {
      schema: {
        operationId: 'getOrganizationInvitedMembers',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: InviteMemberResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'invitations:read', target: 'organization' } },
    },
    async (request) => ({ results: await invitations.listInvitations(request.params.organizationId) }),
  );

  app.post(
    '/organization/:organizationId/inviteMember',
    {
      schema: {
        operationId: 'postInviteMember',
        tags: TAGS,
        params: OrganizationParams,
        body: InviteMemberRequest,
        response: { 201: InviteMember, ...authenticatedErrors('conflict', 'unavailable') },
      },
      config: { access: { permission: 'invitations:create', target: 'organization' } },
    },
    async (request, reply) => {
      const created = await invitations.inviteMember(requirePrincipal(request), requireAccess(request), request.body);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  // The invitee is not a member: the organization is not checked by the authorizer but by the service, against the
  // invitation (see 'invitations:view' and 'invitations:accept' in auth/permissions.ts).
  app.get(
    '/organization/:organizationId/inviteMember/:inviteId',
    {
      schema: {
        operationId: 'getMemberInvitation',
        tags: TAGS,
        params: InvitationParams,
        response: { 200: InviteMember, ...authenticatedErrors() },
      },
      config: { access: { permission: 'invitations:view', target: 'none' } },
    },
    async (request) => invitations.getInvitation(requirePrincipal(request), request.params.organizationId, request.params.inviteId),
  );

  app.post(
    '/organization/:organizationId/inviteMember/:inviteId',
    {
      schema: {
        operationId: 'postAcceptInviteMember',
        tags: TAGS,
        params: InvitationParams,
        response: { 201: InviteMember, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'invitations:accept', target: 'none' } },
    },
    async (request, reply) => {
      const accepted = await invitations.acceptInvitation(requirePrincipal(request), request.params.organizationId, request.params.inviteId);
      return reply.code(HTTP_STATUS.created).send(accepted);
    },
  );

  app.delete(
    '/organization/:organizationId/inviteMember/:inviteId',
    {
      schema: {
        operationId: 'deleteInviteMember',
        tags: TAGS,
        params: InvitationParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'invitations:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await invitations.withdrawInvitation(request.params.organizationId, request.params.inviteId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
