import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { kindDefinition } from './services.kinds.ts';
import { createNetworkSettings, networkSettingsSchemas, type NetworkSettings, type NetworkSettingsKind } from './services.network-settings.ts';
import { serviceParams } from './services.schemas.ts';

/** The reference's four network operations (services.network-settings.ts): an application's and a container's. */
const ROUTES: ReadonlyArray<{ kind: NetworkSettingsKind; getId: string; editId: string; tags: string[] }> = [
  { kind: 'APPLICATION', getId: 'getApplicationNetwork', editId: 'editApplicationNetwork', tags: ['Application Configuration'] },
  { kind: 'CONTAINER', getId: 'getContainerNetwork', editId: 'editContainerNetwork', tags: ['Container Configuration'] },
];

export function registerNetworkSettingsRoutes(app: FastifyTypeBox, services: Parameters<typeof createNetworkSettings>[0]): void {
  const network = createNetworkSettings(services);
  for (const route of ROUTES) {
    const definition = kindDefinition(route.kind);
    const schemas = networkSettingsSchemas(route.kind);
    const url = `/${definition.item}/:${definition.idParam}/network`;
    const idOf = (params: unknown) => (params as Record<string, string>)[definition.idParam] as string;

    app.get(
      url,
      {
        schema: {
          operationId: route.getId,
          summary: `Get the ${definition.item}'s network settings`,
          description: `Whether sticky sessions are on (the advanced setting network.ingress.enable_sticky_session). 404 when the ${definition.item} does not exist.`,
          tags: route.tags,
          params: serviceParams(definition),
          response: { 200: schemas.response, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:read', target: 'service' } },
      },
      async (request) => network.getNetworkSettings(route.kind, idOf(request.params)),
    );

    app.put(
      url,
      {
        schema: {
          operationId: route.editId,
          summary: `Replace the ${definition.item}'s network settings`,
          description:
            `sticky_session left out is false. The ${definition.item}'s other advanced settings are kept; a deployed ${definition.item} becomes OUT_OF_DATE and its next deployment carries the change ` +
            '(docs/network-settings.md). An unknown field or a non-boolean answers 400.',
          tags: route.tags,
          params: serviceParams(definition),
          body: schemas.request,
          response: { 201: schemas.response, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:update', target: 'service' } },
      },
      async (request, reply) => reply.code(HTTP_STATUS.created).send(await network.editNetworkSettings(route.kind, idOf(request.params), request.body as Partial<NetworkSettings>)),
    );
  }
}
