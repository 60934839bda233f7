import type { TObject } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent } from '../../protocol/wire.ts';
import {
  ApplicationDomainParams,
  ApplicationParams,
  CheckedCustomDomainsResponse,
  ContainerDomainParams,
  ContainerParams,
  CustomDomain,
  CustomDomainRequest,
  CustomDomainResponseList,
} from './custom-domains.schemas.ts';
import type { CustomDomainBody, CustomDomainsService, DomainServiceKind } from './custom-domains.service.ts';

/**
 * The same six operations for applications (the reference's operation ids) and containers (the original product's
 * Container Custom Domain ids, in the same pattern).
 */
interface DomainRoutesOf {
  kind: DomainServiceKind;
  item: 'application' | 'container';
  idParam: 'applicationId' | 'containerId';
  tags: string[];
  params: TObject;
  domainParams: TObject;
  operations: { list: string; create: string; edit: string; delete: string; status: string; check: string };
}

const ROUTES: DomainRoutesOf[] = [
  {
    kind: 'APPLICATION',
    item: 'application',
    idParam: 'applicationId',
    tags: ['Application Custom Domain'],
    params: ApplicationParams,
    domainParams: ApplicationDomainParams,
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
    item: 'container',
    idParam: 'containerId',
    tags: ['Container Custom Domain'],
    params: ContainerParams,
    domainParams: ContainerDomainParams,
    operations: {
      list: 'listContainerCustomDomain',
      create: 'createContainerCustomDomain',
      edit: 'editContainerCustomDomain',
      delete: 'deleteContainerCustomDomain',
      status: 'getContainerCustomDomainStatus',
      check: 'checkContainerCustomDomain',
    },
  },
];

type ServiceParams = Record<string, string>;

export function registerCustomDomainRoutes(app: FastifyTypeBox, domains: CustomDomainsService): void {
  for (const routes of ROUTES) {
    const base = `/${routes.item}/:${routes.idParam}`;
    const serviceId = (params: unknown) => (params as ServiceParams)[routes.idParam] as string;
    const domainId = (params: unknown) => (params as ServiceParams).customDomainId as string;

    app.get(
      `${base}/customDomain`,
      {
        schema: { operationId: routes.operations.list, tags: routes.tags, params: routes.params, response: { 200: CustomDomainResponseList, ...authenticatedErrors() } },
        config: { access: { permission: 'services:read', target: 'service' } },
      },
      async (request) => ({ results: await domains.listCustomDomains(routes.kind, serviceId(request.params)) }),
    );

    app.post(
      `${base}/customDomain`,
      {
        schema: {
          operationId: routes.operations.create,
          description:
            'Adds a domain answering for the service. It starts VALIDATION_PENDING: point a CNAME at validation_domain (or, for an apex ' +
            'domain, A/AAAA records at its addresses plus the TXT verification_record), then check it (docs/service-kinds.md). ' +
            'The service needs a public port; a domain used by any service answers 409.',
          tags: routes.tags,
          params: routes.params,
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
          description: 'A changed domain starts over as VALIDATION_PENDING with a new verification record.',
          tags: routes.tags,
          params: routes.domainParams,
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
        schema: { operationId: routes.operations.delete, tags: routes.tags, params: routes.domainParams, response: { 204: NoContent, ...authenticatedErrors() } },
        config: { access: { permission: 'services:update', target: 'service' } },
      },
      async (request, reply) => {
        await domains.deleteCustomDomain(routes.kind, serviceId(request.params), domainId(request.params));
        return reply.code(HTTP_STATUS.noContent).send(null);
      },
    );

    app.get(
      `${base}/customDomain/:customDomainId/status`,
      {
        schema: {
          operationId: routes.operations.status,
          description: 'Checks the domain in DNS now and answers it with the verdict, which is stored.',
          tags: routes.tags,
          params: routes.domainParams,
          response: { 200: CustomDomain, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:read', target: 'service' } },
      },
      async (request) => domains.getCustomDomainStatus(routes.kind, serviceId(request.params), domainId(request.params)),
    );

    app.get(
      `${base}/checkCustomDomain`,
      {
        schema: {
          operationId: routes.operations.check,
          description: "Checks every domain of the service in DNS now; each verdict is stored as that domain's status.",
          tags: routes.tags,
          params: routes.params,
          response: { 200: CheckedCustomDomainsResponse, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:read', target: 'service' } },
      },
      async (request) => ({ results: await domains.checkCustomDomains(routes.kind, serviceId(request.params)) }),
    );
  }
}
