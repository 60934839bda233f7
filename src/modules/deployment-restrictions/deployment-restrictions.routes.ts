import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent } from '../../protocol/wire.ts';
import { kindDefinition } from '../services/services.kinds.ts';
import { serviceParams } from '../services/services.schemas.ts';
import { DEPLOYMENT_RESTRICTION_ROUTES, type DeploymentRestrictionRoutesOf } from './deployment-restrictions.kinds.ts';
import { deploymentRestrictionSchemas, restrictionParams } from './deployment-restrictions.schemas.ts';
import type { DeploymentRestrictionsService } from './deployment-restrictions.service.ts';

/** One kind's four operations, under its service's own path (`/application/{applicationId}/deploymentRestriction`, …). */
function registerKindRoutes(app: FastifyTypeBox, restrictions: DeploymentRestrictionsService, routes: DeploymentRestrictionRoutesOf): void {
  const { kind, tags, operations } = routes;
  const definition = kindDefinition(kind);
  const schemas = deploymentRestrictionSchemas(kind);
  const params = serviceParams(definition);
  const itemParams = restrictionParams(definition.idParam);
  const collectionUrl = `/${definition.item}/:${definition.idParam}/deploymentRestriction`;
  const itemUrl = `${collectionUrl}/:deploymentRestrictionId`;
  const serviceId = (requestParams: unknown) => (requestParams as Record<string, string>)[definition.idParam] as string;
  const restrictionId = (requestParams: unknown) => (requestParams as { deploymentRestrictionId: string }).deploymentRestrictionId;
  const noun = definition.item;
  const gitNote = kind === 'APPLICATION' ? '' : ` They count only while the ${noun} deploys from a git repository.`;

  app.get(
    collectionUrl,
    {
      schema: {
        operationId: operations.list,
        summary: `List the ${noun}'s deployment restrictions`,
        description: `The path globs (MATCH or EXCLUDE) deciding whether a git push deploys the ${noun}, oldest first.${gitNote} 404 when the ${noun} does not exist.`,
        tags,
        params,
        response: { 200: schemas.list, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => ({ results: await restrictions.listDeploymentRestrictions(kind, serviceId(request.params)) }),
  );

  app.post(
    collectionUrl,
    {
      schema: {
        operationId: operations.create,
        summary: `Add a deployment restriction to the ${noun}`,
        description:
          `A path glob relative to the repository root: MATCH deploys only pushes changing a matching path, EXCLUDE skips pushes changing nothing else (docs/service-kinds.md).${gitNote} ` +
          'A glob that is absolute, has . or .. segments or does not parse answers 400; the same restriction twice answers 409.',
        tags,
        params,
        body: schemas.request,
        response: { 201: schemas.response, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'services:update', target: 'service' } },
    },
    async (request, reply) => {
      const created = await restrictions.createDeploymentRestriction(kind, serviceId(request.params), request.body);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.put(
    itemUrl,
    {
      schema: {
        operationId: operations.edit,
        summary: `Replace one of the ${noun}'s deployment restrictions`,
        description: 'Replaces the mode and the glob; the glob is checked as on creation (400). Another restriction with the same mode and glob answers 409.',
        tags,
        params: itemParams,
        body: schemas.request,
        response: { 200: schemas.response, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'services:update', target: 'service' } },
    },
    async (request) => restrictions.editDeploymentRestriction(kind, serviceId(request.params), restrictionId(request.params), request.body),
  );

  app.delete(
    itemUrl,
    {
      schema: {
        operationId: operations.delete,
        summary: `Remove one of the ${noun}'s deployment restrictions`,
        description: `The next pushes are decided without it. 404 when the ${noun} or the restriction does not exist.`,
        tags,
        params: itemParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:update', target: 'service' } },
    },
    async (request, reply) => {
      await restrictions.deleteDeploymentRestriction(kind, serviceId(request.params), restrictionId(request.params));
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}

/** Every kind's restrictions (DEPLOYMENT_RESTRICTION_ROUTES), through the one generic implementation. */
export function registerDeploymentRestrictionRoutes(app: FastifyTypeBox, restrictions: DeploymentRestrictionsService): void {
  for (const routes of DEPLOYMENT_RESTRICTION_ROUTES) registerKindRoutes(app, restrictions, routes);
}
