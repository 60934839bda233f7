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
        summary: 'List annotations groups',
        description: "The organization's annotations groups with their annotations and scopes. 404 when the caller is not a member.",
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
        summary: 'Create an annotations group',
        description:
          'Creates a named group of Kubernetes annotations and the kinds of objects they go on (deployments, services, ' +
          'ingresses, ...). Keys are checked as Kubernetes annotation keys and the values total at most 256 KiB: 400 ' +
          'naming the field otherwise; 409 when a group of that name exists.',
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
        summary: 'Get an annotations group',
        description: 'One annotations group with its annotations and scopes. 404 when there is no such group in the organization.',
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
        summary: 'Edit an annotations group',
        description:
          'Replaces an annotations group (name, every annotation and the scopes). 400 for an invalid annotation; 404 for ' +
          'an unknown group; 409 when the name is taken.',
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
        summary: 'Delete an annotations group',
        description: 'Deletes an annotations group nothing carries. 404 for an unknown group; 409 naming the clusters and services it is still attached to.',
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
        summary: 'List what carries an annotations group',
        description: 'The clusters and services the annotations group is attached to. 404 for an unknown group.',
        tags: TAGS,
        params: AnnotationsGroupParams,
        response: { 200: GroupAssociatedItemList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'annotations-groups:read', target: 'organization' } },
    },
    async (request) => ({ results: await groups.associatedItems(request.params.organizationId, request.params.annotationsGroupId) }),
  );
}
