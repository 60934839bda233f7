import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent, SkipReconcileQuery } from '../../protocol/wire.ts';
import type { ServiceKindDefinition } from './services.kinds.ts';
import { ServiceEnvironmentParams, serviceParams } from './services.schemas.ts';
import type { ServicesService } from './services.service.ts';

/** The id a kind's item route names (`applicationId`, `databaseId`, …). */
function serviceIdOf(request: FastifyRequest, definition: ServiceKindDefinition): string {
  return (request.params as Record<string, string>)[definition.idParam] as string;
}

function environmentIdOf(request: FastifyRequest): string {
  return (request.params as { environmentId: string }).environmentId;
}

/** The reference's list parameter (listApplication, listJobs; every kind here): only the services to redeploy. */
const ListServicesQuery = Type.Object(
  { toUpdate: Type.Optional(Type.Boolean({ default: false, description: 'Only the deployed services whose settings or variables changed since (OUT_OF_DATE).' })) },
  { additionalProperties: false },
);

/** One kind's five operations: list and create under its environment, get, edit and delete by its own id. */
function registerKindRoutes(app: FastifyTypeBox, services: ServicesService, definition: ServiceKindDefinition): void {
  const { kind, operations, tags } = definition;
  const collectionUrl = `/environment/:environmentId/${definition.collection}`;
  const itemUrl = `/${definition.item}/:${definition.idParam}`;
  const params = serviceParams(definition);

  app.get(
    collectionUrl,
    {
      schema: {
        operationId: operations.list,
        tags,
        params: ServiceEnvironmentParams,
        querystring: ListServicesQuery,
        response: { 200: definition.listResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'environment' } },
    },
    async (request) => ({ results: await services.listServices(kind, environmentIdOf(request), { toUpdate: request.query.toUpdate }) }),
  );

  app.post(
    collectionUrl,
    {
      schema: {
        operationId: operations.create,
        description: 'Names are unique per environment across every kind of service (409), and are DNS labels: letters, digits and inner dashes.',
        tags,
        params: ServiceEnvironmentParams,
        body: definition.createBody,
        response: { 201: definition.response, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'services:create', target: 'environment' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.created).send(await services.createService(kind, environmentIdOf(request), request.body)),
  );

  app.get(
    itemUrl,
    {
      schema: { operationId: operations.get, tags, params, response: { 200: definition.response, ...authenticatedErrors() } },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => services.getService(kind, serviceIdOf(request, definition)),
  );

  app.put(
    itemUrl,
    {
      schema: {
        operationId: operations.edit,
        description: 'A deployed service whose settings change reads OUT_OF_DATE until its next deploy.',
        tags,
        params,
        body: definition.editBody,
        response: { 200: definition.response, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'services:update', target: 'service' } },
    },
    async (request) => services.editService(kind, serviceIdOf(request, definition), request.body),
  );

  app.delete(
    itemUrl,
    {
      schema: {
        operationId: operations.delete,
        description:
          "Removes the service with its variables, secrets and history, and has the cluster's agent tear its workload down unless skipReconcile; 409 while an action on it is under way.",
        tags,
        params,
        querystring: SkipReconcileQuery,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'services:delete', target: 'service' } },
    },
    async (request, reply) => {
      await services.deleteService(kind, serviceIdOf(request, definition), { skipReconcile: request.query.skipReconcile });
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}

/** Every kind's routes (SERVICE_KIND_DEFINITIONS), through the one generic implementation. */
export function registerServiceRoutes(app: FastifyTypeBox, services: ServicesService, definitions: readonly ServiceKindDefinition[]): void {
  for (const definition of definitions) registerKindRoutes(app, services, definition);
}
