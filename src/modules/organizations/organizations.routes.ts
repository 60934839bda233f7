import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireActingUserId, requirePrincipal } from '../../http/route-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  Organization,
  OrganizationEditRequest,
  OrganizationRequest,
  OrganizationResponseList,
} from './organizations.schemas.ts';
import type { OrganizationsService } from './organizations.service.ts';

const TAGS = ['Organization Main Calls'];

export function registerOrganizationRoutes(app: FastifyTypeBox, organizations: OrganizationsService): void {
  app.get(
    '/organization',
    {
      schema: {
        operationId: 'listOrganization',
        tags: TAGS,
        response: { 200: OrganizationResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'organizations:list', target: 'none' } },
    },
    async (request) => ({ results: await organizations.listOrganizations(requirePrincipal(request)) }),
  );

  app.post(
    '/organization',
    {
      schema: {
        operationId: 'createOrganization',
        tags: TAGS,
        body: OrganizationRequest,
        response: { 201: Organization, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'organizations:create', target: 'none' } },
    },
    async (request, reply) => {
      const organization = await organizations.createOrganization(requireActingUserId(request), request.body);
      return reply.code(HTTP_STATUS.created).send(organization);
    },
  );

  app.get(
    '/organization/:organizationId',
    {
      schema: {
        operationId: 'getOrganization',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: Organization, ...authenticatedErrors() },
      },
      config: { access: { permission: 'organization:read', target: 'organization' } },
    },
    async (request) => organizations.getOrganization(request.params.organizationId),
  );

  app.put(
    '/organization/:organizationId',
    {
      schema: {
        operationId: 'editOrganization',
        tags: TAGS,
        params: OrganizationParams,
        body: OrganizationEditRequest,
        response: { 200: Organization, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'organization:update', target: 'organization' } },
    },
    async (request) => organizations.editOrganization(request.params.organizationId, request.body),
  );

  app.delete(
    '/organization/:organizationId',
    {
      schema: {
        operationId: 'deleteOrganization',
        tags: TAGS,
        params: OrganizationParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'organization:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await organizations.removeOrganization(request.params.organizationId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
