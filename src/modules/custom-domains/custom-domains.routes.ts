import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent } from '../../protocol/wire.ts';
import { kindDefinition } from '../services/services.kinds.ts';
import { serviceParams } from '../services/services.schemas.ts';
import { CheckedCustomDomainsResponse, CustomDomain, CustomDomainRequest, CustomDomainResponseList, customDomainParams } from './custom-domains.schemas.ts';
import type { CustomDomainBody, CustomDomainsService, DomainServiceKind } from './custom-domains.service.ts';

/**
 * The same operations for applications (the reference's operation ids), containers (the original product's Container
 * Custom Domain ids, in the same pattern) and Helm charts (the reference's Helm Custom Domain ids). Applications and
 * containers read one domain by checking it in DNS (…CustomDomainStatus); a Helm chart reads it as stored
 * (getHelmCustomDomain), as the reference has it.
 */
interface DomainRoutesOf {
  kind: DomainServiceKind;
  tags: string[];
  operations: { list: string; create: string; edit: string; delete: string; check: string } & ({ status: string } | { get: string });
}

const ROUTES: DomainRoutesOf[] = [
  {
    kind: 'APPLICATION',
    tags: ['Application Custom Domain'],
    operations: {
      list: 'listApplicationCustomDomain',
      create: 'createApplicationCustomDomain',
      edit: 'editCustomDomain',
      delete: 'deleteCustomDomain',
      status: 'getCustomDomainStatus',
      check: 'checkApplicationCustomDomain',
    },
  },
  {
    kind: 'CONTAINER',
    tags: ['Container Custom Domain'],
    operations: {
      list: 'listContainerCustomDomain',
      create: 'createContainerCustomDomain',
      edit: 'editContainerCustomDomain',
      delete: 'deleteContainerCustomDomain',
      status: 'getContainerCustomDomainStatus',
      check: 'checkContainerCustomDomain',
    },
  },
  {
    kind: 'HELM',
    tags: ['Helm Custom Domain'],
    operations: {
      list: 'listHelmCustomDomain',
      create: 'createHelmCustomDomain',
      edit: 'editHelmCustomDomain',
      delete: 'deleteHelmCustomDomain',
      get: 'getHelmCustomDomain',
      check: 'checkHelmCustomDomain',
    },
  },
];

type ServiceParams = Record<string, string>;

export function registerCustomDomainRoutes(app: FastifyTypeBox, domains: CustomDomainsService): void {
  for (const routes of ROUTES) {
    const definition = kindDefinition(routes.kind);
    const noun = definition.item;
    const params = serviceParams(definition);
    const domainParams = customDomainParams(definition.idParam);
    const base = `/${definition.item}/:${definition.idParam}`;
    const serviceId = (requestParams: unknown) => (requestParams as ServiceParams)[definition.idParam] as string;
    const domainId = (params: unknown) => (params as ServiceParams).customDomainId as string;

    app.get(
      `${base}/customDomain`,
      {
        schema: {
          operationId: routes.operations.list,
          summary: `List the ${noun}'s custom domains`,
          description: `Each domain with its status as last checked, how to verify it and its certificate's state. 404 when the ${noun} does not exist.`,
          tags: routes.tags,
          params,
          response: { 200: CustomDomainResponseList, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:read', target: 'service' } },
      },
      async (request) => ({ results: await domains.listCustomDomains(routes.kind, serviceId(request.params)) }),
    );

    app.post(
      `${base}/customDomain`,
      {
        schema: {
          operationId: routes.operations.create,
          summary: `Add a custom domain to the ${noun}`,
          description:
            'Adds a domain answering for the service. It starts VALIDATION_PENDING: point a CNAME at validation_domain (or, for an apex ' +
            'domain, A/AAAA records at its addresses plus the TXT verification_record), then check it (docs/service-kinds.md). ' +
            `The ${noun} needs a public port (400), a domain that is not a host name answers 400, and a domain used by any service answers 409.`,
          tags: routes.tags,
          params,
          body: CustomDomainRequest,
          response: { 201: CustomDomain, ...authenticatedErrors('conflict') },
        },
        config: { access: { permission: 'services:update', target: 'service' } },
      },
      async (request, reply) => {
        const created = await domains.createCustomDomain(routes.kind, serviceId(request.params), request.body as CustomDomainBody);
        return reply.code(HTTP_STATUS.created).send(created);
      },
    );

    app.put(
      `${base}/customDomain/:customDomainId`,
      {
        schema: {
          operationId: routes.operations.edit,
          summary: `Replace one of the ${noun}'s custom domains`,
          description: 'A changed domain starts over as VALIDATION_PENDING with a new verification record. A domain used by another service answers 409.',
          tags: routes.tags,
          params: domainParams,
          body: CustomDomainRequest,
          response: { 200: CustomDomain, ...authenticatedErrors('conflict') },
        },
        config: { access: { permission: 'services:update', target: 'service' } },
      },
      async (request) => domains.editCustomDomain(routes.kind, serviceId(request.params), domainId(request.params), request.body as CustomDomainBody),
    );

    app.delete(
      `${base}/customDomain/:customDomainId`,
      {
        schema: {
          operationId: routes.operations.delete,
          summary: `Remove one of the ${noun}'s custom domains`,
          description: 'The domain stops being routed and its certificate stops being served. 404 when the service or the domain does not exist.',
          tags: routes.tags,
          params: domainParams,
          response: { 204: NoContent, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:update', target: 'service' } },
      },
      async (request, reply) => {
        await domains.deleteCustomDomain(routes.kind, serviceId(request.params), domainId(request.params));
        return reply.code(HTTP_STATUS.noContent).send(null);
      },
    );

    if ('status' in routes.operations) {
      app.get(
        `${base}/customDomain/:customDomainId/status`,
        {
          schema: {
            operationId: routes.operations.status,
            summary: `Check one of the ${noun}'s custom domains now`,
            description: 'Checks the domain in DNS now and answers it with the verdict, which is stored. 404 when the service or the domain does not exist.',
            tags: routes.tags,
            params: domainParams,
            response: { 200: CustomDomain, ...authenticatedErrors() },
          },
          config: { access: { permission: 'services:read', target: 'service' } },
        },
        async (request) => domains.getCustomDomainStatus(routes.kind, serviceId(request.params), domainId(request.params)),
      );
    } else {
      app.get(
        `${base}/customDomain/:customDomainId`,
        {
          schema: {
            operationId: routes.operations.get,
            summary: `Get one of the ${noun}'s custom domains`,
            description: `The domain as stored, with its last check; ${routes.operations.check} checks it in DNS again. 404 when the ${noun} or the domain does not exist.`,
            tags: routes.tags,
            params: domainParams,
            response: { 200: CustomDomain, ...authenticatedErrors() },
          },
          config: { access: { permission: 'services:read', target: 'service' } },
        },
        async (request) => domains.getCustomDomain(routes.kind, serviceId(request.params), domainId(request.params)),
      );
    }

    app.get(
      `${base}/checkCustomDomain`,
      {
        schema: {
          operationId: routes.operations.check,
          summary: `Check every custom domain of the ${noun} now`,
          description: "Checks every domain of the service in DNS now; each verdict is stored as that domain's status. 404 when the service does not exist.",
          tags: routes.tags,
          params,
          response: { 200: CheckedCustomDomainsResponse, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:read', target: 'service' } },
      },
      async (request) => ({ results: await domains.checkCustomDomains(routes.kind, serviceId(request.params)) }),
    );
  }
}
