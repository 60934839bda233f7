import { Type } from 'typebox';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { notFound } from '../../lib/errors.ts';

/**
 * The installation CA's root certificate (docs/https.md, "Private names"), for people to trust once so the services'
 * private names (`*.localhost`, `.internal`) answer over HTTPS without warnings. Slipway's own operation (the
 * reference has none). Public: a root certificate is meant to be handed out, and holds nothing secret. 404 while the
 * installation has none (it serves no HTTPS, or another issuer signs its private names).
 */
export function registerCertificateRoutes(app: FastifyTypeBox, certificates: { installationRootCertificate(): Promise<string | undefined> }): void {
  app.get(
    '/certificateAuthority',
    {
      schema: {
        operationId: 'getInstallationCertificateAuthority',
        summary: "Download the installation's root certificate",
        description:
          "The root certificate (PEM) of the installation's own certificate authority, which signs the HTTPS certificates " +
          "of the services' private names (`*.localhost`, `.internal`); trust it once and they open without warnings. " +
          'Public: a root certificate holds nothing secret. 404 when the installation has no authority of its own (it ' +
          'serves no HTTPS, or an ACME directory issues its private names).',
        tags: ['Certificates'],
        security: [],
        produces: ['application/x-pem-file'],
        response: { 200: { description: "The installation CA's root certificate (PEM)", content: { 'application/x-pem-file': { schema: Type.String() } } } },
      },
      config: { access: { public: true } },
    },
    async (_request, reply) => {
      const pem = await certificates.installationRootCertificate();
      if (pem === undefined) throw notFound('this installation has no certificate authority of its own: it serves no HTTPS, or its private names are issued by its ACME directory');
      return reply.type('application/x-pem-file').header('content-disposition', 'attachment; filename="slipway-installation-ca.pem"').send(pem);
    },
  );
}
