import { Type } from 'typebox';
import { principalDisplayName } from '../../auth/principal.ts';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requirePrincipal } from '../../http/route-access.ts';
import { kindDefinition } from '../services/services.kinds.ts';
import { serviceParams } from '../services/services.schemas.ts';
import type { DeploymentsService } from './deployments.service.ts';
import { ServiceStatus } from './deployments.schemas.ts';

/** The reference's uninstall body: an empty object (clients may send it, or nothing). */
const UninstallServiceRequest = Type.Object({}, { additionalProperties: false });

/** The reference's query parameter of uninstallTerraform: SKIP_DESTROY leaves the infrastructure as it is. */
const UninstallTerraformQuery = Type.Object(
  {
    force_terraform_action: Type.Optional(
      Type.Enum(['SKIP_DESTROY'], { description: 'SKIP_DESTROY: the Terraform service reads uninstalled, but its infrastructure is not destroyed.' }),
    ),
  },
  { additionalProperties: false },
);

const UNINSTALLABLE_KINDS = ['APPLICATION', 'CONTAINER', 'DATABASE', 'JOB', 'HELM', 'TERRAFORM'] as const;

/** The reference's six uninstall operations (uninstall<Kind>, POST /<kind>/{id}/uninstall): deployments.uninstall.ts. */
export function registerServiceUninstallRoutes(app: FastifyTypeBox, deployments: Pick<DeploymentsService, 'uninstallService'>): void {
  for (const kind of UNINSTALLABLE_KINDS) {
    const definition = kindDefinition(kind);
    const terraform = kind === 'TERRAFORM';
    app.post(
      `/${definition.item}/:${definition.idParam}/uninstall`,
      {
        schema: {
          operationId: `uninstall${definition.operationNoun}`,
          summary: `Uninstall ${definition.prose.aService}`,
          description:
            `Removes what ${definition.prose.theService} runs on its cluster (the cluster's agent tears it down${kind === 'DATABASE' ? ', its data included' : ''}) ` +
            `and keeps ${definition.prose.theService} itself: its settings, variables, domains and deployment history. It then reads READY, never ` +
            'deployed, until a deploy brings it back (that deploy reaches the agent once the teardown ended). ' +
            `${terraform ? 'force_terraform_action=SKIP_DESTROY leaves its infrastructure in place. ' : ''}` +
            'A service never deployed is left as it is. 409 while an action on it is queued or under way (cancel it, or wait).',
          tags: [`${definition.operationNoun} Actions`],
          params: serviceParams(definition),
          ...(terraform ? { querystring: UninstallTerraformQuery } : {}),
          body: UninstallServiceRequest,
          response: { 202: ServiceStatus, ...authenticatedErrors('conflict') },
        },
        config: { access: { permission: 'services:deploy', target: 'service' } },
      },
      async (request, reply) => {
        const serviceId = (request.params as Record<string, string>)[definition.idParam] as string;
        const query = request.query as { force_terraform_action?: 'SKIP_DESTROY' } | undefined;
        const status = await deployments.uninstallService(kind, serviceId, principalDisplayName(requirePrincipal(request)), {
          skipTeardown: query?.force_terraform_action === 'SKIP_DESTROY',
        });
        return reply.code(HTTP_STATUS.accepted).send(status);
      },
    );
  }
}
