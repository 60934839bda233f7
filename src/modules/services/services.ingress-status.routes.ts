import { Type } from 'typebox';
import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { Uuid } from '../../protocol/wire.ts';
import { INGRESS_SERVICE_TYPES, IngressDeploymentStatusResponse, type IngressStatus } from './services.ingress-status.ts';

/**
 * A path that starts with a parameter: the kinds' own routes (`/application/:applicationId/…`) are static in their
 * first segment and win over it, and the service types here are upper case, which no static first segment is, so
 * neither swallows the other (test/helm-extras.test.ts asks neighbours of both).
 */
export function registerIngressStatusRoutes(app: FastifyTypeBox, ingress: IngressStatus): void {
  app.get(
    '/:serviceType/:serviceId/ingressDeploymentStatus',
    {
      schema: {
        operationId: 'getIngressDeploymentStatus',
        summary: "Get the state of a service's public route",
        description:
          "The deployment state of the service's route: its own deployment state when it has a public port (the route is " +
          'deployed with it), STOPPED when nothing is routed to it. serviceType is CONTAINER, APPLICATION or HELM; 404 ' +
          'for a service that is not of that type.',
        tags: ['service_status'],
        params: Type.Object({ serviceType: Type.Enum(INGRESS_SERVICE_TYPES), serviceId: Uuid }, { additionalProperties: false }),
        response: { 200: IngressDeploymentStatusResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => ingress.getIngressDeploymentStatus(request.params.serviceType, request.params.serviceId),
  );
}
