import { Type } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { Uuid } from '../../protocol/wire.ts';
import { CLONEABLE_KINDS } from './services.clone.ts';
import { kindDefinition } from './services.kinds.ts';
import { serviceParams } from './services.schemas.ts';
import type { ServicesService } from './services.service.ts';

/** The reference's CloneServiceRequest: the clone's name and the environment it goes to. */
export const CloneServiceRequest = Type.Object(
  {
    name: Type.String({ description: 'The clone\'s name: unique in the target environment, a DNS label (letters, digits and inner dashes).' }),
    environment_id: Uuid,
  },
  { $id: 'CloneServiceRequest', additionalProperties: false },
);

/** The reference's six clone operations (clone<Kind>, POST /<kind>/{id}/clone): services.clone.ts. */
export function registerServiceCloneRoutes(app: FastifyTypeBox, services: Pick<ServicesService, 'cloneService'>): void {
  for (const kind of CLONEABLE_KINDS) {
    const definition = kindDefinition(kind);
    app.post(
      `/${definition.item}/:${definition.idParam}/clone`,
      {
        schema: {
          operationId: `clone${definition.operationNoun}`,
          summary: `Clone ${definition.prose.aService}`,
          description:
            `Creates a copy of ${definition.prose.theService} named \`name\` in the environment \`environment_id\` (the source's own or another of the same ` +
            `organization) with the source's settings, advanced settings, labels and annotations groups, own variables and secrets, and ` +
            `deployment restrictions; never its custom domains, history or running state: the clone is READY, never deployed` +
            `${kind === 'DATABASE' ? ', and gets credentials of its own' : ''}. ` +
            '404 for an environment of another organization, 409 when the name is taken there, 400 for a name that is not a DNS label.',
          tags: definition.tags,
          params: serviceParams(definition),
          body: CloneServiceRequest,
          response: { 202: definition.response, ...authenticatedErrors('conflict') },
        },
        config: { access: { permission: 'services:create', target: 'service' } },
      },
      async (request, reply) => {
        const serviceId = (request.params as Record<string, string>)[definition.idParam] as string;
        return reply.code(HTTP_STATUS.accepted).send(await services.cloneService(kind, serviceId, request.body));
      },
    );
  }
}
