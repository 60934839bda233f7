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
        description:
          'The audit log: every write request under the organization (who, what, from where, how it ended), newest ' +
          'first, secrets masked in `change`. Kept for the plan\'s audit_logs_retention_in_days (docs/audit-log.md).',
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
