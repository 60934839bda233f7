import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requirePrincipal, requireUserId } from '../../http/route-access.ts';
import { OrganizationParams } from '../../protocol/wire.ts';
import { OrganizationOnboardingPatchRequest, OrganizationOnboardingResponse } from './onboarding.schemas.ts';
import type { OnboardingService } from './onboarding.service.ts';

export function registerOnboardingRoutes(app: FastifyTypeBox, onboarding: OnboardingService): void {
  app.get(
    '/organization/:organizationId/onboarding',
    {
      schema: {
        operationId: 'getOrganizationOnboarding',
        summary: 'Get the onboarding status',
        description:
          "The use cases chosen when the organization was created and the caller's own onboarding status (IN_PROGRESS " +
          'until they change it). An API token, acting for no one, reads the status of the person who created the ' +
          'organization. 404 when the caller is not a member.',
        tags: ['Organization Main Calls'],
        params: OrganizationParams,
        response: { 200: OrganizationOnboardingResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'onboarding:read', target: 'organization' } },
    },
    async (request) => {
      const principal = requirePrincipal(request);
      return onboarding.getOnboarding(request.params.organizationId, principal.kind === 'user' ? principal.userId : null);
    },
  );

  app.post(
    '/organization/:organizationId/onboarding',
    {
      schema: {
        operationId: 'updateOrganizationOnboarding',
        summary: 'Update your onboarding status',
        description:
          "Sets the calling user's own onboarding status in this organization; nobody else's changes. Only people have an " +
          'onboarding: an API token answers 403. 400 for an unknown status.',
        tags: ['Organization Main Calls'],
        params: OrganizationParams,
        body: OrganizationOnboardingPatchRequest,
        response: { 200: OrganizationOnboardingResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'onboarding:update', target: 'organization' } },
    },
    async (request) => {
      const userId = requireUserId(request);
      return onboarding.updateOwnOnboarding(request.params.organizationId, userId, request.body.status);
    },
  );
}
