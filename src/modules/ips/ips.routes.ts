import Negotiator from 'negotiator';
import { Type } from 'typebox';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';

/**
 * The public list of the installation's egress addresses (SLIPWAY_EGRESS_IPS), so customers can allow-list
 * them: JSON by default, one address per line when the Accept header prefers text/plain. An Accept header that
 * offers neither still gets JSON (the operation lists no error answers).
 */
const PlatformIpsResponse = Type.Object({ ips: Type.Array(Type.String()) }, { $id: 'PlatformIpsResponse' });
const MEDIA_TYPES = ['application/json', 'text/plain'];
/** What a client may ask for: media-range parameters must match an offer, and the text we write is UTF-8. */
const NEGOTIABLE = [...MEDIA_TYPES, 'text/plain; charset=utf-8'];
/** Accept headers that can only mean JSON (none, anything, JSON itself): answered without parsing them. */
const PLAIN_JSON_ACCEPTS = new Set([undefined, '*/*', 'application/json']);

export function registerIpRoutes(app: FastifyTypeBox, egressIps: readonly string[]): void {
  const ips = [...egressIps];
  app.get(
    '/ips',
    {
      schema: {
        operationId: 'listPlatformIps',
        summary: 'List outbound IP addresses',
        description:
          "The installation's outbound (egress) IP addresses, to allow-list in firewalls and databases that Slipway's " +
          'deployments reach: JSON by default, one address per line when the Accept header prefers text/plain. Public: no ' +
          'credential needed. An empty list when the installation has none configured.',
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
      const chosen = PLAIN_JSON_ACCEPTS.has(request.headers.accept) ? undefined : new Negotiator(request).mediaType(NEGOTIABLE);
      reply.header('vary', 'Accept');
      if (chosen?.startsWith('text/plain') === true) {
        return reply.type('text/plain; charset=utf-8').send(ips.map((ip) => `${ip}\n`).join(''));
      }
      return reply.type('application/json').send({ ips });
    },
  );
}
