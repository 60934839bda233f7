import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { OrganizationParams } from '../../protocol/wire.ts';
import { OrganizationEventQuery, OrganizationEventResponseList } from './organization-events.schemas.ts';
import type { OrganizationEventsService } from './organization-events.service.ts';

const TAGS = ['Organization Event'];

export function registerOrganizationEventRoutes(app: FastifyTypeBox, events: Pick<OrganizationEventsService, 'listOrganizationEvents'>): void {
  app.get(
    '/organization/:organizationId/events',
    {
      schema: {
        operationId: 'getOrganizationEvents',
        summary: 'List audit events',
        description:
          'The audit log: every write request under the organization (who, what, from where, how it ended), newest first, ' +
          'with secrets masked in `change`; filter by time, user, target, origin or event type, page with the cursor. ' +
          "Kept for the plan's audit_logs_retention_in_days (docs/audit-log.md). 400 for an invalid filter; 404 when the " +
          'caller is not a member.',
        tags: TAGS,
        params: OrganizationParams,
        querystring: OrganizationEventQuery,
        response: { 200: OrganizationEventResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'organization-events:read', target: 'organization' } },
    },
    async (request) => events.listOrganizationEvents(request.params.organizationId, request.query),
  );
}
