import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess } from '../../http/route-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import { Project, ProjectParams, ProjectRequest, ProjectResponseList, ProjectStatsResponseList } from './projects.schemas.ts';
import type { ProjectsService } from './projects.service.ts';

export function registerProjectRoutes(app: FastifyTypeBox, projects: ProjectsService): void {
  app.get(
    '/organization/:organizationId/project',
    {
      schema: {
        operationId: 'listProject',
        tags: ['Projects'],
        params: OrganizationParams,
        response: { 200: ProjectResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'projects:read', target: 'organization' } },
    },
    async (request) => ({ results: await projects.listOrganizationProjects(request.params.organizationId) }),
  );

  // SPEC.md: createProject answers 200, not 201.
  app.post(
    '/organization/:organizationId/project',
    {
      schema: {
        operationId: 'createProject',
        tags: ['Projects'],
        params: OrganizationParams,
        body: ProjectRequest,
        response: { 200: Project, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'projects:create', target: 'organization' } },
    },
    async (request) => projects.createProject(requireAccess(request).organizationId, request.body),
  );

  app.get(
    '/organization/:organizationId/project/stats',
    {
      schema: {
        operationId: 'getOrganizationProjectStats',
        tags: ['Projects'],
        params: OrganizationParams,
        response: { 200: ProjectStatsResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'projects:read', target: 'organization' } },
    },
    async (request) => ({ results: await projects.projectStats(request.params.organizationId) }),
  );

  app.get(
    '/project/:projectId',
    {
      schema: {
        operationId: 'getProject',
        tags: ['Project Main Calls'],
        params: ProjectParams,
        response: { 200: Project, ...authenticatedErrors() },
      },
      config: { access: { permission: 'projects:read', target: 'project' } },
    },
    async (request) => projects.getProject(request.params.projectId),
  );

  app.put(
    '/project/:projectId',
    {
      schema: {
        operationId: 'editProject',
        tags: ['Project Main Calls'],
        params: ProjectParams,
        body: ProjectRequest,
        response: { 200: Project, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'projects:update', target: 'project' } },
    },
    async (request) => projects.editProject(request.params.projectId, request.body),
  );

  app.delete(
    '/project/:projectId',
    {
      schema: {
        operationId: 'deleteProject',
        tags: ['Project Main Calls'],
        params: ProjectParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'projects:delete', target: 'project' } },
    },
    async (request, reply) => {
      await projects.removeProject(request.params.projectId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
