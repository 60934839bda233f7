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
        summary: 'List pending invitations',
        description:
          'The invitations of the organization that were not accepted yet, with their role, inviter and expiry. 404 when ' +
          'the caller is not a member.',
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
        summary: 'Invite someone',
        description:
          'Invites a person by e-mail to join with a role (by role name or role_id), and mails them a link. One ' +
          'invitation per e-mail address. 400 for an unknown role, or role and role_id naming different ones; 403 to give ' +
          'a role with rights the caller lacks; 409 when the person is already a member or already invited; 503 when the ' +
          'e-mail cannot be sent (nothing is saved).',
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
        summary: 'Get an invitation',
        description:
          'One invitation, for the invited person (signed in with the invited e-mail address) or for a member who may ' +
          'read invitations. 404 for anyone else, and for an unknown invitation.',
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
        summary: 'Accept an invitation',
        description:
          "The invited person joins the organization with the invitation's role. Only the invited person may accept, " +
          'signed in with the invited, verified e-mail address (403 otherwise). 400 when the invitation expired; 404 when ' +
          'it does not exist or was withdrawn; 409 when it was already accepted.',
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
        summary: 'Withdraw an invitation',
        description: 'Deletes a pending invitation; its link stops working. 404 when there is no such invitation in the organization.',
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
