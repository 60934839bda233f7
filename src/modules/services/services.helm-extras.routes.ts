import { Type } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { Uuid } from '../../protocol/wire.ts';
import { HelmDefaultValuesRequest, KubernetesServiceResponseList, type HelmExtras } from './services.helm-extras.ts';
import { LinkResponseList } from './services.schemas.ts';

const HelmParams = Type.Object({ helmId: Uuid }, { additionalProperties: false });

export function registerHelmExtrasRoutes(app: FastifyTypeBox, helm: HelmExtras): void {
  app.get(
    '/helm/:helmId/link',
    {
      schema: {
        operationId: 'listHelmLinks',
        summary: "List a Helm chart's links",
        description:
          'Where the chart is reached from outside: its public hostname, then its verified custom domains, on the port its ' +
          'Ingress routes (its default HTTP or gRPC port). Empty without such a port; 404 for an unknown chart.',
        tags: ['Helm Main Calls'],
        params: HelmParams,
        response: { 200: LinkResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => ({ results: await helm.listHelmLinks(request.params.helmId) }),
  );

  app.get(
    '/helm/:helmId/listServices',
    {
      schema: {
        operationId: 'getHelmKubernetesServices',
        summary: "List a Helm chart's Kubernetes Services",
        description:
          "The chart's Kubernetes Services as its ports declare them: one per Service name, with the ports exposed on it. " +
          'Slipway keeps no copy of what a chart rendered, so Services no port names are not listed. 404 for an unknown chart.',
        tags: ['Helm Main Calls'],
        params: HelmParams,
        response: { 200: KubernetesServiceResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => ({ results: await helm.getHelmKubernetesServices(request.params.helmId) }),
  );

  app.post(
    '/environment/:environmentId/helmDefaultValues',
    {
      schema: {
        operationId: 'createHelmDefaultValues',
        summary: "Read a chart's default values",
        description:
          "The chart's values.yaml as text, before a Helm service is created from it: read from the branch head of a git " +
          "source (empty when the chart has none), or asked of the control plane's helm for a chart of one of the " +
          "organization's Helm repositories. 400 for a source that is not exactly one of the two, a chart that cannot be " +
          'read, or no helm on the control plane; 404 for an unknown environment, repository or git token.',
        tags: ['Helms'],
        params: Type.Object({ environmentId: Uuid }, { additionalProperties: false }),
        body: HelmDefaultValuesRequest,
        produces: ['text/plain'],
        response: {
          201: { description: "The chart's default values (YAML)", content: { 'text/plain': { schema: Type.String() } } },
          ...authenticatedErrors(),
        },
      },
      config: { access: { permission: 'services:create', target: 'environment' } },
    },
    async (request, reply) => {
      const values = await helm.createHelmDefaultValues(request.params.environmentId, request.body);
      return reply.code(HTTP_STATUS.created).type('text/plain; charset=utf-8').send(values);
    },
  );
}
