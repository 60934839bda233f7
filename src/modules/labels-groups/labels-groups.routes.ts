import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  GroupAssociatedItemList,
  LabelsGroupParams,
  OrganizationLabelsGroupCreateRequest,
  OrganizationLabelsGroupResponse,
  OrganizationLabelsGroupResponseList,
} from './labels-groups.schemas.ts';
import type { LabelsGroupsService } from './labels-groups.service.ts';

const TAGS = ['Organization Labels Group'];
const COLLECTION = '/organization/:organizationId/labelsGroups';
const ITEM = `${COLLECTION}/:labelsGroupId`;

export function registerLabelsGroupRoutes(app: FastifyTypeBox, groups: LabelsGroupsService): void {
  app.get(
    COLLECTION,
    {
      schema: {
        operationId: 'listOrganizationLabelsGroup',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: OrganizationLabelsGroupResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'labels-groups:read', target: 'organization' } },
    },
    async (request) => ({ results: await groups.listOrganizationLabelsGroup(request.params.organizationId) }),
  );

  app.post(
    COLLECTION,
    {
      schema: {
        operationId: 'createOrganizationLabelsGroup',
        description: 'Creates a labels group; keys and values are checked as Kubernetes labels. 409 when the name is taken.',
        tags: TAGS,
        params: OrganizationParams,
        body: OrganizationLabelsGroupCreateRequest,
        response: { 201: OrganizationLabelsGroupResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'labels-groups:create', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.created).send(await groups.createOrganizationLabelsGroup(request.params.organizationId, request.body)),
  );

  app.get(
    ITEM,
    {
      schema: {
        // The reference's own spelling: clients generated from it call the method by this name.
        operationId: 'getOrganizationLabelssGroup',
        tags: TAGS,
        params: LabelsGroupParams,
        response: { 200: OrganizationLabelsGroupResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'labels-groups:read', target: 'organization' } },
    },
    async (request) => groups.getOrganizationLabelsGroup(request.params.organizationId, request.params.labelsGroupId),
  );

  app.put(
    ITEM,
    {
      schema: {
        operationId: 'editOrganizationLabelsGroup',
        description: 'Replaces a labels group (name and every label).',
        tags: TAGS,
        params: LabelsGroupParams,
        body: OrganizationLabelsGroupCreateRequest,
        response: { 200: OrganizationLabelsGroupResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'labels-groups:update', target: 'organization' } },
    },
    async (request) => groups.editOrganizationLabelsGroup(request.params.organizationId, request.params.labelsGroupId, request.body),
  );

  app.delete(
    ITEM,
    {
      schema: {
        operationId: 'deleteOrganizationLabelsGroup',
        description: 'Deletes a labels group; 409 naming the clusters and services it is still attached to.',
        tags: TAGS,
        params: LabelsGroupParams,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'labels-groups:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await groups.deleteOrganizationLabelsGroup(request.params.organizationId, request.params.labelsGroupId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.get(
    `${ITEM}/associatedItems`,
    {
      schema: {
        operationId: 'getOrganizationLabelsGroupAssociatedItems',
        tags: TAGS,
        params: LabelsGroupParams,
        response: { 200: GroupAssociatedItemList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'labels-groups:read', target: 'organization' } },
    },
    async (request) => ({ results: await groups.associatedItems(request.params.organizationId, request.params.labelsGroupId) }),
  );
}
