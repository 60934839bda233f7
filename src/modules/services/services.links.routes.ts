import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { kindDefinition } from './services.kinds.ts';
import type { LinkServiceKind, ServiceLinks } from './services.links.ts';
import { Type } from 'typebox';
import { Uuid } from '../../protocol/wire.ts';
import { LinkResponseList, serviceParams } from './services.schemas.ts';

/** The reference's two link operations, on the kinds that serve traffic on ports. */
const LINK_ROUTES: ReadonlyArray<{ kind: LinkServiceKind; item: string; idParam: 'applicationId' | 'containerId'; operationId: string; tags: string[] }> = [
  { kind: 'APPLICATION', item: 'application', idParam: 'applicationId', operationId: 'listApplicationLinks', tags: ['Application Main Calls'] },
  { kind: 'CONTAINER', item: 'container', idParam: 'containerId', operationId: 'listContainerLinks', tags: ['Container Main Calls'] },
];

export function registerServiceLinkRoutes(app: FastifyTypeBox, links: ServiceLinks): void {
  for (const route of LINK_ROUTES) {
    app.get(
      `/${route.item}/:${route.idParam}/link`,
      {
        schema: {
          operationId: route.operationId,
          summary: `List the links of ${kindDefinition(route.kind).prose.aService}`,
          description:
            'Where the service is reached from outside: its public hostname (kept for its life, renames included), then its verified custom domains. Empty without a public port.',
          tags: route.tags,
          params: serviceParams(route),
          response: { 200: LinkResponseList, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:read', target: 'service' } },
      },
      async (request) => ({ results: await links.listServiceLinks(route.kind, (request.params as Record<string, string>)[route.idParam] as string) }),
    );
  }

  app.get(
    '/environment/:environmentId/link',
    {
      schema: {
        operationId: 'listEnvironmentServicesLinks',
        summary: "List the links of an environment's services",
        description: 'The links of every application and container of the environment, as each one\'s link operation answers them.',
        tags: ['Environment'],
        params: Type.Object({ environmentId: Uuid }),
        response: { 200: LinkResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'environment' } },
    },
    async (request) => ({ results: await links.listEnvironmentLinks(request.params.environmentId) }),
  );
}
