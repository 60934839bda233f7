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
        summary: 'List your organizations',
        description: 'The organizations the caller is a member of; an API token sees only its own organization. 401 without a valid credential.',
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
        summary: 'Create an organization',
        description:
          'Creates an organization with its built-in roles; the caller becomes its OWNER and its onboarding starts with ' +
          "the use cases given. The plan defaults to the installation's default plan. 400 for an invalid body; 409 when " +
          'an organization of that name already exists (names compare case-insensitively).',
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
        summary: 'Get an organization',
        description: "The organization's name, details, plan, owner and audit log retention. 404 when it does not exist or the caller is not a member.",
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
        summary: 'Edit an organization',
        description:
          "Replaces the organization's name and details (description, website, repository, logo, icon, admin e-mails). " +
          'The plan is not changed here: a plan other than the current one answers 400 (use changePlan). 404 when the ' +
          'caller is not a member; 409 when the new name is taken.',
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
        summary: 'Delete an organization',
        description:
          'Deletes the organization for everyone at once: its members, invitations and tokens go, its name is free again, ' +
          "and the workloads of its services are handed to their clusters' agents to tear down before the organization is " +
          "purged. 403 for a caller below ADMIN; 409, deleting nothing, while an agent works on one of its " +
          'services.',
        tags: TAGS,
        params: OrganizationParams,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'organization:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await organizations.removeOrganization(request.params.organizationId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
