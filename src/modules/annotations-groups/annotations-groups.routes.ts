import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  
  AnnotationsGroupParams,
  OrganizationAnnotationsGroupCreateRequest,
  OrganizationAnnotationsGroupResponse,
  OrganizationAnnotationsGroupResponseList,
} from './annotations-groups.schemas.ts';
import { GroupAssociatedItemList } from '../labels-groups/labels-groups.schemas.ts';
import type { AnnotationsGroupsService } from './annotations-groups.service.ts';

const TAGS = ['Organization Annotations Group'];
const COLLECTION = '/organization/:organizationId/annotationsGroups';
const ITEM = `${COLLECTION}/:annotationsGroupId`;

export function registerAnnotationsGroupRoutes(app: FastifyTypeBox, groups: AnnotationsGroupsService): void {
  app.get(
    COLLECTION,
    {
      schema: {
        operationId: 'listOrganizationAnnotationsGroup',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: OrganizationAnnotationsGroupResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'annotations-groups:read', target: 'organization' } },
    },
    async (request) => ({ results: await groups.listOrganizationAnnotationsGroup(request.params.organizationId) }),
  );

  app.post(
    COLLECTION,
    {
      schema: {
        operationId: 'createOrganizationAnnotationsGroup',
        description: 'Creates an annotations group; keys are checked as Kubernetes annotation keys, values total at most 256 KiB. 409 when the name is taken.',
        tags: TAGS,
        params: OrganizationParams,
        body: OrganizationAnnotationsGroupCreateRequest,
        response: { 201: OrganizationAnnotationsGroupResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'annotations-groups:create', target: 'organization' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.created).send(await groups.createOrganizationAnnotationsGroup(request.params.organizationId, request.body)),
  );

  app.get(
    ITEM,
    {
      schema: {
        operationId: 'getOrganizationAnnotationsGroup',
        tags: TAGS,
        params: AnnotationsGroupParams,
        response: { 200: OrganizationAnnotationsGroupResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'annotations-groups:read', target: 'organization' } },
    },
    async (request) => groups.getOrganizationAnnotationsGroup(request.params.organizationId, request.params.annotationsGroupId),
  );

  app.put(
    ITEM,
    {
      schema: {
        operationId: 'editOrganizationAnnotationsGroup',
        description: 'Replaces an annotations group (name, every annotation and the scopes).',
        tags: TAGS,
        params: AnnotationsGroupParams,
        body: OrganizationAnnotationsGroupCreateRequest,
        response: { 200: OrganizationAnnotationsGroupResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'annotations-groups:update', target: 'organization' } },
    },
    async (request) => groups.editOrganizationAnnotationsGroup(request.params.organizationId, request.params.annotationsGroupId, request.body),
  );

  app.delete(
    ITEM,
    {
      schema: {
        operationId: 'deleteOrganizationAnnotationsGroup',
        description: 'Deletes an annotations group; 409 naming the clusters and services it is still attached to.',
        tags: TAGS,
        params: AnnotationsGroupParams,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'annotations-groups:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await groups.deleteOrganizationAnnotationsGroup(request.params.organizationId, request.params.annotationsGroupId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.get(
    `${ITEM}/associatedItems`,
    {
      schema: {
        operationId: 'getOrganizationAnnotationsGroupAssociatedItems',
        tags: TAGS,
        params: AnnotationsGroupParams,
        response: { 200: GroupAssociatedItemList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'annotations-groups:read', target: 'organization' } },
    },
    async (request) => ({ results: await groups.associatedItems(request.params.organizationId, request.params.annotationsGroupId) }),
  );
}
