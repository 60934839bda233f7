import negotiate from '@fastify/accept-negotiator';
import { Type } from 'typebox';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';

/**
 * The public list of the installation's egress addresses (SLIPWAY_EGRESS_IPS), so customers can allow-list
 * them: JSON by default, one address per line when the Accept header prefers text/plain.
 */
const PlatformIpsResponse = Type.Object({ ips: Type.Array(Type.String()) }, { $id: 'PlatformIpsResponse' });
const MEDIA_TYPES = ['application/json', 'text/plain'];

export function registerIpRoutes(app: FastifyTypeBox, egressIps: readonly string[]): void {
  const ips = [...egressIps];
  app.get(
    '/ips',
    {
      schema: {
        operationId: 'listPlatformIps',
        tags: ['IPs'],
        security: [],
        produces: MEDIA_TYPES,
        response: {
          200: {
            description: 'The egress IP addresses',
            content: {
              'application/json': { schema: PlatformIpsResponse },
              'text/plain': { schema: Type.String() },
            },
          },
        },
      },
      config: { access: { public: true } },
    },
    async (request, reply) => {
      const accept = request.headers.accept;
      const chosen = accept === undefined ? 'application/json' : negotiate(accept, MEDIA_TYPES);
      reply.header('vary', 'Accept');
      if (chosen === 'text/plain') {
        return reply.type('text/plain; charset=utf-8').send(ips.map((ip) => `${ip}\n`).join(''));
      }
      return reply.type('application/json').send({ ips });
    },
  );
}
