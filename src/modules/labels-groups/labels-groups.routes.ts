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
        summary: 'List labels groups',
        description: "The organization's labels groups with their labels. 404 when the caller is not a member.",
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
        summary: 'Create a labels group',
        description:
          'Creates a named group of Kubernetes labels that clusters and services can carry. 400 when a key or value is ' +
          'not a valid Kubernetes label (the fields are named); 409 when a group of that name exists.',
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
        summary: 'Get a labels group',
        description: 'One labels group with its labels. 404 when there is no such group in the organization.',
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
        summary: 'Edit a labels group',
        description: 'Replaces a labels group (name and every label). 400 for an invalid label; 404 for an unknown group; 409 when the name is taken.',
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
        summary: 'Delete a labels group',
        description: 'Deletes a labels group nothing carries. 404 for an unknown group; 409 naming the clusters and services it is still attached to.',
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
        summary: 'List what carries a labels group',
        description: 'The clusters and services the labels group is attached to. 404 for an unknown group.',
        tags: TAGS,
        params: LabelsGroupParams,
        response: { 200: GroupAssociatedItemList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'labels-groups:read', target: 'organization' } },
    },
    async (request) => ({ results: await groups.associatedItems(request.params.organizationId, request.params.labelsGroupId) }),
  );
}
