import { Type } from 'typebox';
import { authenticatedErrors } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { Uuid } from '../../protocol/wire.ts';
import {
  ContainerImageCheckRequest,
  ContainerImageCheckResponse,
  DockerfileCheckRequest,
  DockerfileCheckResponse,
  GitFileCheckRequest,
  GitFileCheckResponse,
  HelmCheckRequest,
  HelmCheckResponse,
  type EnvironmentChecks,
} from './environments.checks.ts';

const TAGS = ['Environment'];
const EnvironmentParams = Type.Object({ environmentId: Uuid }, { additionalProperties: false });
/** The checks use the organization's registry logins and git tokens on the caller's behalf: as creating a service does. */
const ACCESS = { access: { permission: 'services:create', target: 'environment' } } as const;

export function registerEnvironmentCheckRoutes(app: FastifyTypeBox, checks: EnvironmentChecks): void {
  app.post(
    '/environment/:environmentId/checkContainerImage',
    {
      schema: {
        operationId: 'checkContainerImage',
        summary: 'Check that an image tag exists',
        description:
          "Asks the registry, with its stored login, for the image's tags and says whether the tag is among them. 404 for " +
          'an unknown environment or registry; 400 for an invalid name or tag, or a registry that cannot be read.',
        tags: TAGS,
        params: EnvironmentParams,
        body: ContainerImageCheckRequest,
        response: { 200: ContainerImageCheckResponse, ...authenticatedErrors() },
      },
      config: ACCESS,
    },
    async (request) => checks.checkContainerImage(request.params.environmentId, request.body),
  );

  app.post(
    '/environment/:environmentId/checkDockerfile',
    {
      schema: {
        operationId: 'checkDockerfile',
        summary: 'Read a Dockerfile of a repository',
        description:
          'Fetches the head of the branch (with the git token, when given) and reads the Dockerfile at dockerfile_path ' +
          'under root_path: its build arguments (ARG) and the images it builds FROM. 400 when the file is not there, the ' +
          'branch or repository cannot be read or the URL is not allowed; 404 for an unknown environment or git token.',
        tags: TAGS,
        params: EnvironmentParams,
        body: DockerfileCheckRequest,
        response: { 200: DockerfileCheckResponse, ...authenticatedErrors() },
      },
      config: ACCESS,
    },
    async (request) => checks.checkDockerfile(request.params.environmentId, request.body),
  );

  app.post(
    '/environment/:environmentId/checkGitFile',
    {
      schema: {
        operationId: 'checkGitFile',
        summary: 'Check that files exist in a repository',
        description:
          'Fetches the head of the branch and says, for each path under root_path, whether it is a file there (a ' +
          'directory, or a link out of the repository, is not). 400 for a path with . or .. segments, or a branch or ' +
          'repository that cannot be read; 404 for an unknown environment or git token.',
        tags: TAGS,
        params: EnvironmentParams,
        body: GitFileCheckRequest,
        response: { 200: GitFileCheckResponse, ...authenticatedErrors() },
      },
      config: ACCESS,
    },
    async (request) => checks.checkGitFile(request.params.environmentId, request.body),
  );

  app.post(
    '/environment/:environmentId/checkHelmRepository',
    {
      schema: {
        operationId: 'checkHelmRepository',
        summary: 'Check a Helm chart in a repository',
        description:
          "Fetches the head of the branch and reads the chart at root_path: its Chart.yaml's name and version, and " +
          'whether it has default values. 400 when there is no valid Chart.yaml there or the branch or repository cannot ' +
          'be read; 404 for an unknown environment or git token.',
        tags: TAGS,
        params: EnvironmentParams,
        body: HelmCheckRequest,
        response: { 200: HelmCheckResponse, ...authenticatedErrors() },
      },
      config: ACCESS,
    },
    async (request) => checks.checkHelmRepository(request.params.environmentId, request.body),
  );
}
