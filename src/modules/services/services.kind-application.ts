import { Type, type Static } from 'typebox';
import { ListOf, Nullable } from '../../protocol/wire.ts';
import { badRequest } from '../../lib/errors.ts';
import {
  anyPublicPort,
  internalTcpPorts,
  gitSourceFrom,
  GitRepositoryRequest,
  GitRepositoryResponse,
  gitSourceResponse,
  ServiceName,
  serviceResponseBase,
  ServiceResponseFields,
  kindWrites,
  settingsOf,
  withoutDefaults,
  type StoredGitSource,
} from './services.kind-fields.ts';
import { workloadResponse, WorkloadRequestFields, WorkloadResponseFields, workloadSettingsFrom, type WorkloadSettings } from './services.kind-workload.ts';
import type { LinkedRecords, ServiceKindContext, ServiceKindDefinition, StoredService } from './services.kinds.ts';

/**
 * APPLICATION: built from a git repository (a Dockerfile build, the reference's only BuildModeEnum value) and run
 * as long-lived instances. Shapes: the reference's ApplicationRequest / ApplicationEditRequest / Application.
 * Not taken from the reference: `autoscaling` (KEDA policies; no engine here runs them, so it is refused rather
 * than stored and ignored). `maximum_cpu`/`maximum_memory` answer the limits requests accept: Slipway does not know
 * a cluster's node sizes.
 */

const DockerfilePath = Nullable(Type.String({ minLength: 1, maxLength: 1024, pattern: '^[^\\x00-\\x1f\\x7f]+$' }));
export const BuildStage = Nullable(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$' }));
const DEFAULT_ICON = 'app://slipway-console/application';

const buildFields = {
  build_mode: Type.Optional(Type.Enum(['DOCKER'], { default: 'DOCKER' })),
  dockerfile_path: Type.Optional(DockerfilePath),
  docker_target_build_stage: Type.Optional(BuildStage),
};

export const ApplicationRequest = Type.Object(
  { name: ServiceName, git_repository: GitRepositoryRequest, ...buildFields, ...WorkloadRequestFields },
  {
    $id: 'ApplicationRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'shop-api',
        description: 'The shop API',
        git_repository: { url: 'https://github.com/acme/web-shop', provider: 'GITHUB', branch: 'main', root_path: '/api' },
        dockerfile_path: 'Dockerfile',
        cpu: 500,
        memory: 512,
        min_running_instances: 1,
        max_running_instances: 3,
        ports: [{ internal_port: 8080, publicly_accessible: true, name: 'http', protocol: 'HTTP' }],
        healthchecks: { readiness_probe: { type: { http: { path: '/healthz', port: 8080 } }, period_seconds: 10, timeout_seconds: 2 } },
      },
    ],
  },
);
export type ApplicationBody = Static<typeof ApplicationRequest>;

/** The reference's edit: every field but healthchecks may be left out, and what is left out keeps its value. */
export const ApplicationEditRequest = Type.Object(
  {
    name: Type.Optional(ServiceName),
    git_repository: Type.Optional(GitRepositoryRequest),
    ...withoutDefaults(buildFields),
    ...withoutDefaults(WorkloadRequestFields),
  },
  { $id: 'ApplicationEditRequest', additionalProperties: false },
);
export type ApplicationEditBody = Static<typeof ApplicationEditRequest>;

export const Application = Type.Object(
  {
    ...ServiceResponseFields,
    git_repository: GitRepositoryResponse,
    build_mode: Type.Enum(['DOCKER']),
    dockerfile_path: Nullable(Type.String()),
    docker_target_build_stage: Nullable(Type.String()),
    ...WorkloadResponseFields,
    service_type: Type.Literal('APPLICATION'),
  },
  {
    $id: 'Application',
    examples: [
      {
        id: 'a3f5c1e8-2d7b-4c94-8e06-1f9b5d2a7c34',
        created_at: '2026-03-02T11:27:08.541Z',
        updated_at: '2026-03-02T11:27:08.541Z',
        environment: { id: '7c2e9a41-3b6d-4f18-a5c0-2e8d1b4f6a93' },
        name: 'shop-api',
        description: 'The shop API',
        git_repository: {
          provider: 'GITHUB',
          owner: 'acme',
          url: 'https://github.com/acme/web-shop',
          name: 'web-shop',
          branch: 'main',
          root_path: '/api',
          git_token_id: null,
        },
        build_mode: 'DOCKER',
        dockerfile_path: 'Dockerfile',
        docker_target_build_stage: null,
        cpu: 500,
        memory: 512,
        gpu: 0,
        cpu_architecture: 'AMD64',
        min_running_instances: 1,
        max_running_instances: 3,
        healthchecks: {
          readiness_probe: {
            type: { tcp: null, http: { path: '/healthz', scheme: 'HTTP', port: 8080 }, exec: null, grpc: null },
            initial_delay_seconds: 30,
            period_seconds: 10,
            timeout_seconds: 2,
            success_threshold: 1,
            failure_threshold: 9,
          },
          liveness_probe: null,
        },
        auto_preview: true,
        ports: [
          {
            id: 'e7b2d9f4-1a6c-4d83-b5e0-8c3f2a9d6b17',
            name: 'http',
            internal_port: 8080,
            publicly_accessible: true,
            is_default: true,
            protocol: 'HTTP',
            external_port: 443,
          },
        ],
        storage: [],
        arguments: [],
        auto_deploy: true,
        annotations_groups: [],
        labels_groups: [],
        icon_uri: 'app://slipway-console/application',
        maximum_cpu: 64000,
        maximum_memory: 262144,
        maximum_gpu: 16,
        service_type: 'APPLICATION',
      },
    ],
  },
);
export const ApplicationResponseList = ListOf(Application, 'ApplicationResponseList');

/** What an application stores in `services.settings`. */
export interface ApplicationSettings extends WorkloadSettings {
  git_repository: StoredGitSource;
  build_mode: 'DOCKER';
  dockerfile_path: string;
  docker_target_build_stage: string | null;
}

const DEFAULT_DOCKERFILE = 'Dockerfile';

/** `./docker/Dockerfile` → `docker/Dockerfile`: a file inside the root path, never outside it. */
export function dockerfilePathFrom(path: string | null | undefined, field = '/dockerfile_path'): string {
  if (path === undefined || path === null) return DEFAULT_DOCKERFILE;
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.length === 0 || segments.includes('..')) {
    throw badRequest(`dockerfile_path "${path}" is not a file inside the repository's root path`, [{ field, message: 'must be a relative path without .. segments' }]);
  }
  return segments.join('/');
}

async function applicationSettings(body: ApplicationEditBody, current: ApplicationSettings | undefined, context: ServiceKindContext): Promise<ApplicationSettings> {
  let git: StoredGitSource;
  if (body.git_repository !== undefined) git = await gitSourceFrom(body.git_repository, context, '/git_repository');
  else if (current !== undefined) git = current.git_repository;
  else throw badRequest('an application needs a git_repository', [{ field: '/git_repository', message: 'required' }]);
  return {
    git_repository: git,
    build_mode: body.build_mode ?? 'DOCKER',
    dockerfile_path: body.dockerfile_path !== undefined ? dockerfilePathFrom(body.dockerfile_path) : (current?.dockerfile_path ?? DEFAULT_DOCKERFILE),
    docker_target_build_stage: body.docker_target_build_stage !== undefined ? body.docker_target_build_stage : (current?.docker_target_build_stage ?? null),
    ...(await workloadSettingsFrom(body, current, context, DEFAULT_ICON)),
  };
}

export const applicationKind: ServiceKindDefinition = {
  kind: 'APPLICATION',
  collection: 'application',
  item: 'application',
  idParam: 'applicationId',
  gitSourceField: '/git_repository',
  operations: { list: 'listApplication', create: 'createApplication', get: 'getApplication', edit: 'editApplication', delete: 'deleteApplication' },
  operationNoun: 'Application',
  tags: ['Applications'],
  prose: {
    aService: 'an application',
    theService: 'the application',
    services: 'applications',
    what: 'An application is built by Slipway from a branch of a git repository (git_repository, with the git token of a private one) and its Dockerfile, then run with its ports, resources and instance counts.',
    checks: "400 for a dockerfile_path or root_path outside the repository, a branch that is not a valid git branch name, ports or probes that do not fit together, storage that is not valid, or max_running_instances below min_running_instances; 404 for a git token or a labels or annotations group that is not the organization's.",
  },
  createBody: ApplicationRequest,
  editBody: ApplicationEditRequest,
  response: Application,
  listResponse: ApplicationResponseList,

  ...kindWrites<ApplicationBody, ApplicationEditBody, ApplicationSettings>(applicationSettings),

  toResponse(service: StoredService, linked: LinkedRecords): Static<typeof Application> {
    const settings = settingsOf<ApplicationSettings>(service.settings);
    return {
      ...serviceResponseBase(service),
      git_repository: gitSourceResponse(settings.git_repository),
      build_mode: settings.build_mode,
      dockerfile_path: settings.dockerfile_path,
      docker_target_build_stage: settings.docker_target_build_stage,
      ...workloadResponse(settings, linked),
      service_type: 'APPLICATION',
    };
  },

  references(stored: Record<string, unknown>) {
    const settings = settingsOf<ApplicationSettings>(stored);
    return {
      gitTokenId: settings.git_repository.git_token_id,
      containerRegistryId: null,
      helmRepositoryId: null,
      labelsGroupIds: settings.labels_groups,
      annotationsGroupIds: settings.annotations_groups,
      branch: settings.git_repository.branch,
      publiclyReachable: anyPublicPort(settings.ports),
      internalPorts: internalTcpPorts(settings.ports),
    };
  },
};
