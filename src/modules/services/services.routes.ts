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
  const { kind, operations, tags, prose } = definition;
  const collectionUrl = `/environment/:environmentId/${definition.collection}`;
  const itemUrl = `/${definition.item}/:${definition.idParam}`;
  const params = serviceParams(definition);

  app.get(
    collectionUrl,
    {
      schema: {
        operationId: operations.list,
        summary: `List the ${prose.services} of an environment`,
        description: `The ${prose.services} of the environment, each with its settings as stored; toUpdate=true keeps the deployed ones whose settings or variables changed since their deployment (OUT_OF_DATE).`,
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
        summary: `Create ${prose.aService}`,
        description:
          `${prose.what} It starts READY, never deployed: deploy${definition.operationNoun} deploys it. Its name is a DNS label (letters, digits and ` +
          `inner dashes; 400 otherwise), unique in the environment across every kind of service (409 otherwise). ${prose.checks}`,
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
      schema: {
        operationId: operations.get,
        summary: `Get ${prose.aService}`,
        description: `Reads ${prose.theService} with its settings as stored; what runs, and whether it is up to date, get${definition.operationNoun}Status answers.`,
        tags,
        params,
        response: { 200: definition.response, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => services.getService(kind, serviceIdOf(request, definition)),
  );

  app.put(
    itemUrl,
    {
      schema: {
        operationId: operations.edit,
        summary: `Edit ${prose.aService}`,
        description:
          `Changes the settings of ${prose.theService}: the fields the body requires are required, an optional field left out keeps its stored value. ` +
          'A deployed service whose settings change reads OUT_OF_DATE until its next deploy. A new name must be a DNS label (400) that no other ' +
          `service of the environment has (409). ${prose.checks}`,
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
        summary: `Delete ${prose.aService}`,
        description:
          `Removes ${prose.theService} with its variables, secrets and history, and has the cluster's agent tear its workload down unless skipReconcile ` +
          '(then what runs on the cluster stays). 409 while an action on it is under way.',
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
