import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent } from '../../protocol/wire.ts';
import {
  ApplicationDeploymentRestriction,
  ApplicationDeploymentRestrictionRequest,
  ApplicationDeploymentRestrictionResponseList,
  ApplicationParams,
  DeploymentRestrictionParams,
} from './deployment-restrictions.schemas.ts';
import type { DeploymentRestrictionsService } from './deployment-restrictions.service.ts';

const TAGS = ['Application Deployment Restriction'];

export function registerDeploymentRestrictionRoutes(app: FastifyTypeBox, restrictions: DeploymentRestrictionsService): void {
  app.get(
    '/application/:applicationId/deploymentRestriction',
    {
      schema: {
        operationId: 'getApplicationDeploymentRestrictions',
        tags: TAGS,
        params: ApplicationParams,
        response: { 200: ApplicationDeploymentRestrictionResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => ({ results: await restrictions.getApplicationDeploymentRestrictions(request.params.applicationId) }),
  );

  app.post(
    '/application/:applicationId/deploymentRestriction',
    {
      schema: {
        operationId: 'createApplicationDeploymentRestriction',
        description: 'A path glob (MATCH or EXCLUDE) deciding whether a git push deploys the application (docs/service-kinds.md). The same restriction twice answers 409.',
        tags: TAGS,
        params: ApplicationParams,
        body: ApplicationDeploymentRestrictionRequest,
        response: { 201: ApplicationDeploymentRestriction, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'services:update', target: 'service' } },
    },
    async (request, reply) => {
      const created = await restrictions.createApplicationDeploymentRestriction(request.params.applicationId, request.body);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.put(
    '/application/:applicationId/deploymentRestriction/:deploymentRestrictionId',
    {
      schema: {
        operationId: 'editApplicationDeploymentRestriction',
        tags: TAGS,
        params: DeploymentRestrictionParams,
        body: ApplicationDeploymentRestrictionRequest,
        response: { 200: ApplicationDeploymentRestriction, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'services:update', target: 'service' } },
    },
    async (request) =>
      restrictions.editApplicationDeploymentRestriction(request.params.applicationId, request.params.deploymentRestrictionId, request.body),
  );

  app.delete(
    '/application/:applicationId/deploymentRestriction/:deploymentRestrictionId',
    {
      schema: {
        operationId: 'deleteApplicationDeploymentRestriction',
        tags: TAGS,
        params: DeploymentRestrictionParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:update', target: 'service' } },
    },
    async (request, reply) => {
      await restrictions.deleteApplicationDeploymentRestriction(request.params.applicationId, request.params.deploymentRestrictionId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
