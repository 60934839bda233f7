import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { createListAnswers } from '../../http/list-answers.ts';
import { requireAccess } from '../../http/route-access.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import { Project, ProjectParams, ProjectRequest, ProjectResponseList, ProjectStatsResponseList } from './projects.schemas.ts';
import type { ProjectsService } from './projects.service.ts';

/** The project lists this replica keeps serialized (list-answers.ts): 10,000 projects are about 2.4 MB. */
const KEPT_PROJECT_LISTS_BYTES = 64 * 1024 * 1024;

export function registerProjectRoutes(app: FastifyTypeBox, projects: ProjectsService): void {
  const projectLists = createListAnswers(KEPT_PROJECT_LISTS_BYTES);

  app.get(
    '/organization/:organizationId/project',
    {
      schema: {
        operationId: 'listProject',
        summary: 'List projects',
        description:
          'The projects of the organization with the number of environments of each. 404 when the caller is not a member of the organization. ' +
          'Answered from the last serialization while no project or environment of the organization has been written since.',
        tags: ['Projects'],
        params: OrganizationParams,
        response: { 200: ProjectResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'projects:read', target: 'organization' } },
    },
    async (request, reply) => {
      const { organizationId } = request.params;
      const revision = await projects.projectListRevision(organizationId);
      return projectLists.send(reply, organizationId, revision, async () => ({ results: await projects.listOrganizationProjects(organizationId) }));
    },
  );

  // SPEC.md: createProject answers 200, not 201.
  app.post(
    '/organization/:organizationId/project',
    {
      schema: {
        operationId: 'createProject',
        summary: 'Create a project',
        description:
          'Creates an empty project in the organization (answers 200, as the reference does). 400 for an invalid name or ' +
          'description; 409 when a project of that name already exists in the organization.',
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
        summary: "Count each project's environments and services",
        description:
          'For every project of the organization, how many environments and services it holds. 404 when the caller is not ' +
          'a member of the organization.',
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
        summary: 'Get a project',
        description: "The project's name, description and number of environments. 404 when there is no such project in an organization the caller belongs to.",
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
        summary: 'Edit a project',
        description:
          "Replaces the project's name and description (a description left out is cleared). 404 for an unknown project; " +
          '409 when another project of the organization has the name.',
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
        summary: 'Delete a project',
        description:
          "Deletes the project with its environments, their services, variables and history; the clusters' agents tear " +
          'the deployed workloads down. 404 for an unknown project; 409, deleting nothing, while an agent works on one of ' +
          'its services.',
        tags: ['Project Main Calls'],
        params: ProjectParams,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'projects:delete', target: 'project' } },
    },
    async (request, reply) => {
      await projects.removeProject(request.params.projectId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );
}
