import { Cron } from 'croner';
import { Type, type Static } from 'typebox';
import { ListOf, Nullable, Uuid } from '../../protocol/wire.ts';
import { badRequest } from '../../lib/errors.ts';
import { BuildStage, dockerfilePathFrom } from './services.kind-application.ts';
import {
  AnnotationsGroupResponseList,
  annotationsGroupsResponse,
  Arguments,
  checkRegistry,
  CpuArchitectureEnum,
  Entrypoint,
  GitRepositoryRequest,
  GitRepositoryResponse,
  gitSourceFrom,
  gitSourceResponse,
  groupIdsFrom,
  GroupReferenceList,
  HealthcheckRequest,
  HealthcheckResponse,
  healthchecksFrom,
  healthchecksResponse,
  ImageName,
  ImageTag,
  kindWrites,
  LabelsGroupResponseList,
  labelsGroupsResponse,
  LIMITS,
  Line,
  type ProbedPort,
  RegistryResponse,
  registryResponse,
  RESOURCE_MAXIMUMS,
  ResourceMaximumResponseFields,
  ResourceRequestFields,
  ServiceDescription,
  ServiceName,
  serviceResponseBase,
  ServiceResponseFields,
  settingsOf,
  type StoredGitSource,
  type StoredHealthchecks,
  withoutDefaults,
} from './services.kind-fields.ts';
import { IconUri } from './services.kind-workload.ts';
import type { LinkedRecords, ServiceKindContext, ServiceKindDefinition, StoredService } from './services.kinds.ts';

/**
 * JOB: a run-to-completion workload, either a CRON job (schedule.cronjob) or a LIFECYCLE job run on environment
 * events (schedule.on_start / on_stop / on_delete). Its source is an image of a registry or a Dockerfile build from
 * git. Shapes: the reference's JobRequest (create and edit) and its LifecycleJobResponse / CronJobResponse, answered
 * as one object whose `job_type` says which. Rules (docs/service-kinds.md): exactly one source; a cron job or a
 * lifecycle job, not both; the cron expression has the five fields of Kubernetes CronJobs (or an @hourly-style
 * nickname), parses with croner and fires at least once; the timezone is an IANA name.
 */

const DEFAULT_ICON = 'app://slipway-console/job';
const DEFAULT_TIMEZONE = 'Etc/UTC';
const DEFAULT_MAX_DURATION_SECONDS = 300;
const MAX_DURATION_SECONDS = 86_400;
const DOCKERFILE_RAW_MAX = 65_536;

export const JOB_LIFECYCLE_TYPES = ['GENERIC', 'TERRAFORM', 'CLOUDFORMATION'] as const;
const LIFECYCLE_EVENTS = ['on_start', 'on_stop', 'on_delete'] as const;
const CRON_NICKNAMES = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@hourly'];

const Command = Type.Object({ arguments: Type.Optional(Arguments), entrypoint: Type.Optional(Entrypoint) }, { additionalProperties: false });
const CronSchedule = Type.Object(
  {
    arguments: Type.Optional(Arguments),
    entrypoint: Type.Optional(Entrypoint),
    timezone: Type.Optional(Line(64, 1)),
    scheduled_at: Line(255, 1),
  },
  { additionalProperties: false },
);

const ImageSource = Type.Object({ image_name: ImageName, tag: ImageTag, registry_id: Uuid }, { additionalProperties: false });
const DockerSource = Type.Object(
  {
    git_repository: GitRepositoryRequest,
    dockerfile_path: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 1024 }))),
    dockerfile_raw: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: DOCKERFILE_RAW_MAX, pattern: '^[^\\x00]*$' }))),
    docker_target_build_stage: Type.Optional(BuildStage),
  },
  { additionalProperties: false },
);

const jobFields = {
  description: Type.Optional(ServiceDescription),
  ...ResourceRequestFields,
  gpu: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.gpu.max, default: 0 })),
  ephemeral_storage_in_gib: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.ephemeralStorageGib.max })),
  max_nb_restart: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 0 })),
  max_duration_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DURATION_SECONDS, default: DEFAULT_MAX_DURATION_SECONDS })),
  auto_preview: Type.Optional(Type.Boolean({ default: true })),
  port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65_535 }))),
  source: Type.Object({ image: Type.Optional(Nullable(ImageSource)), docker: Type.Optional(Nullable(DockerSource)) }, { additionalProperties: false }),
  cpu_architecture: Type.Optional(Nullable(CpuArchitectureEnum)),
  healthchecks: HealthcheckRequest,
  schedule: Type.Object(
    {
      on_start: Type.Optional(Command),
      on_stop: Type.Optional(Command),
      on_delete: Type.Optional(Command),
      cronjob: Type.Optional(CronSchedule),
      lifecycle_type: Type.Optional(Type.Enum(JOB_LIFECYCLE_TYPES)),
    },
    { additionalProperties: false },
  ),
  auto_deploy: Type.Optional(Nullable(Type.Boolean())),
  annotations_groups: Type.Optional(GroupReferenceList),
  labels_groups: Type.Optional(GroupReferenceList),
  icon_uri: Type.Optional(IconUri),
};

/**
 * The reference's JobRequest requires only name and healthchecks; a job without a source or a schedule cannot run,
 * so both are required here too.
 */
export const JobRequest = Type.Object(
  { name: ServiceName, ...jobFields },
  {
    $id: 'JobRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'nightly-report',
        description: 'Mails the sales report',
        source: {
          docker: {
            git_repository: { url: 'https://github.com/acme/web-shop', provider: 'GITHUB', branch: 'main', root_path: '/jobs/report' },
            dockerfile_path: 'Dockerfile',
          },
        },
        schedule: { cronjob: { scheduled_at: '0 3 * * *', timezone: 'Europe/Paris', arguments: ['node', 'report.js'] } },
        healthchecks: {},
      },
    ],
  },
);
type JobBody = Static<typeof JobRequest>;

/** editJob takes a JobRequest; optional fields left out keep their value. */
const JobEditRequest = Type.Object({ name: ServiceName, ...withoutDefaults(jobFields) }, { $id: 'JobEditRequest', additionalProperties: false });
type JobEditBody = Static<typeof JobEditRequest>;

const CommandResponse = Type.Object({ arguments: Type.Array(Type.String()), entrypoint: Type.Optional(Type.String()) });

export const JobResponse = Type.Object(
  {
    ...ServiceResponseFields,
    job_type: Type.Enum(['LIFECYCLE', 'CRON']),
    ...ResourceMaximumResponseFields,
    cpu: Type.Integer(),
    memory: Type.Integer(),
    gpu: Type.Integer(),
    ephemeral_storage_in_gib: Type.Optional(Type.Integer()),
    cpu_architecture: CpuArchitectureEnum,
    max_nb_restart: Type.Integer(),
    max_duration_seconds: Type.Integer(),
    auto_preview: Type.Boolean(),
    port: Nullable(Type.Integer()),
    source: Type.Object({
      image: Type.Optional(Type.Object({ image_name: Type.String(), tag: Type.String(), registry_id: Uuid, registry: RegistryResponse })),
      docker: Type.Optional(
        Type.Object({
          git_repository: GitRepositoryResponse,
          dockerfile_path: Nullable(Type.String()),
          dockerfile_raw: Nullable(Type.String()),
          docker_target_build_stage: Nullable(Type.String()),
        }),
      ),
    }),
    healthchecks: HealthcheckResponse,
    schedule: Type.Object({
      on_start: Type.Optional(CommandResponse),
      on_stop: Type.Optional(CommandResponse),
      on_delete: Type.Optional(CommandResponse),
      lifecycle_type: Type.Optional(Type.Enum(JOB_LIFECYCLE_TYPES)),
      cronjob: Type.Optional(Type.Object({ arguments: Type.Array(Type.String()), entrypoint: Type.Optional(Type.String()), timezone: Type.String(), scheduled_at: Type.String() })),
    }),
    auto_deploy: Type.Boolean(),
    annotations_groups: AnnotationsGroupResponseList,
    labels_groups: LabelsGroupResponseList,
    icon_uri: Type.String(),
    service_type: Type.Literal('JOB'),
  },
  {
    $id: 'JobResponse',
    examples: [
      {
        id: '4e1b7f9c-5d2a-4c68-b3e9-0a6d8f2c5e17',
        created_at: '2026-03-02T11:27:09.742Z',
        updated_at: '2026-03-02T11:27:09.742Z',
        environment: { id: '7c2e9a41-3b6d-4f18-a5c0-2e8d1b4f6a93' },
        name: 'nightly-report',
        description: 'Mails the sales report',
        job_type: 'CRON',
        maximum_cpu: 64000,
        maximum_memory: 262144,
        maximum_gpu: 16,
        cpu: 500,
        memory: 512,
        gpu: 0,
        cpu_architecture: 'AMD64',
        max_nb_restart: 0,
        max_duration_seconds: 300,
        auto_preview: true,
        port: null,
        source: {
          docker: {
            git_repository: {
              provider: 'GITHUB',
              owner: 'acme',
              url: 'https://github.com/acme/web-shop',
              name: 'web-shop',
              branch: 'main',
              root_path: '/jobs/report',
              git_token_id: null,
            },
            dockerfile_path: 'Dockerfile',
            dockerfile_raw: null,
            docker_target_build_stage: null,
          },
        },
        healthchecks: { readiness_probe: null, liveness_probe: null },
        schedule: { cronjob: { arguments: ['node', 'report.js'], timezone: 'Europe/Paris', scheduled_at: '0 3 * * *' } },
        auto_deploy: true,
        annotations_groups: [],
        labels_groups: [],
        icon_uri: 'app://slipway-console/job',
        service_type: 'JOB',
      },
    ],
  },
);
export const JobResponseList = ListOf(JobResponse, 'JobResponseList');

interface StoredCommand {
  arguments: string[];
  entrypoint: string | null;
}

type StoredJobSource =
  | { kind: 'image'; image_name: string; tag: string; registry_id: string }
  | { kind: 'docker'; git_repository: StoredGitSource; dockerfile_path: string | null; dockerfile_raw: string | null; docker_target_build_stage: string | null };

type StoredSchedule =
  | { kind: 'CRON'; cronjob: StoredCommand & { timezone: string; scheduled_at: string } }
  | { kind: 'LIFECYCLE'; lifecycle_type: (typeof JOB_LIFECYCLE_TYPES)[number]; on_start: StoredCommand | null; on_stop: StoredCommand | null; on_delete: StoredCommand | null };

export interface JobSettings {
  cpu: number;
  memory: number;
  gpu: number;
  ephemeral_storage_in_gib: number | null;
  cpu_architecture: 'AMD64' | 'ARM64';
  max_nb_restart: number;
  max_duration_seconds: number;
  auto_preview: boolean;
  port: number | null;
  source: StoredJobSource;
  healthchecks: StoredHealthchecks;
  schedule: StoredSchedule;
  auto_deploy: boolean;
  annotations_groups: string[];
  labels_groups: string[];
  icon_uri: string;
}

/** Checks a cron expression as a Kubernetes CronJob would run it; answers the expression as stored (trimmed). */
export function cronExpressionFrom(expression: string, timezone: string, field: string): string {
  const trimmed = expression.trim().replace(/\s+/g, ' ');
  const isNickname = CRON_NICKNAMES.includes(trimmed.toLowerCase());
  if (!isNickname && trimmed.split(' ').length !== 5) {
    throw badRequest(`"${expression}" is not a cron expression of five fields (minute hour day-of-month month day-of-week)`, [
      { field, message: 'must have five fields or be one of @yearly, @monthly, @weekly, @daily, @hourly' },
    ]);
  }
  let next: Date | null;
  try {
    const cron = new Cron(trimmed, { paused: true, timezone });
    next = cron.nextRun();
    cron.stop();
  } catch (error) {
    throw badRequest(`"${expression}" is not a valid cron expression: ${(error as Error).message.replace(/^CronPattern: /, '')}`, [{ field, message: 'does not parse' }]);
  }
  if (next === null) throw badRequest(`"${expression}" never fires`, [{ field, message: 'matches no date' }]);
  return trimmed;
}

export function timezoneFrom(timezone: string | undefined, field: string): string {
  const zone = timezone ?? DEFAULT_TIMEZONE;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
  } catch {
    throw badRequest(`"${zone}" is not an IANA time zone`, [{ field, message: 'must be an IANA time zone such as Europe/Paris' }]);
  }
  return zone;
}

function commandFrom(command: { arguments?: string[]; entrypoint?: string } | undefined): StoredCommand | null {
  return command === undefined ? null : { arguments: command.arguments ?? [], entrypoint: command.entrypoint ?? null };
}

function scheduleFrom(schedule: JobEditBody['schedule'] | undefined, current: StoredSchedule | undefined): StoredSchedule {
  if (schedule === undefined) {
    if (current === undefined) throw badRequest('a job needs a schedule', [{ field: '/schedule', message: 'required' }]);
    return current;
  }
  const events = LIFECYCLE_EVENTS.filter((event) => schedule[event] !== undefined);
  if (schedule.cronjob !== undefined) {
    if (events.length > 0 || schedule.lifecycle_type !== undefined) {
      throw badRequest('a job is either a cron job or a lifecycle job', [{ field: '/schedule', message: 'cronjob excludes on_start, on_stop, on_delete and lifecycle_type' }]);
    }
    const timezone = timezoneFrom(schedule.cronjob.timezone, '/schedule/cronjob/timezone');
    return {
      kind: 'CRON',
      cronjob: {
        ...(commandFrom(schedule.cronjob) as StoredCommand),
        timezone,
        scheduled_at: cronExpressionFrom(schedule.cronjob.scheduled_at, timezone, '/schedule/cronjob/scheduled_at'),
      },
    };
  }
  if (events.length === 0) {
    throw badRequest('a job needs a cronjob or at least one lifecycle event', [{ field: '/schedule', message: 'set cronjob, or one of on_start, on_stop, on_delete' }]);
  }
  return {
    kind: 'LIFECYCLE',
    lifecycle_type: schedule.lifecycle_type ?? 'GENERIC',
    on_start: commandFrom(schedule.on_start),
    on_stop: commandFrom(schedule.on_stop),
    on_delete: commandFrom(schedule.on_delete),
  };
}

async function sourceFrom(source: JobEditBody['source'] | undefined, current: StoredJobSource | undefined, context: ServiceKindContext): Promise<StoredJobSource> {
  if (source === undefined) {
    if (current === undefined) throw badRequest('a job needs a source', [{ field: '/source', message: 'required' }]);
    return current;
  }
  const image = source.image ?? null;
  const docker = source.docker ?? null;
  if ((image === null) === (docker === null)) {
    throw badRequest('a job has exactly one source', [{ field: '/source', message: 'set exactly one of image, docker' }]);
  }
  if (image !== null) {
    await checkRegistry(image.registry_id, context, 'source.image.registry_id');
    return { kind: 'image', image_name: image.image_name, tag: image.tag, registry_id: image.registry_id };
  }
  const build = docker as NonNullable<typeof docker>;
  const raw = build.dockerfile_raw ?? null;
  if (raw !== null && build.dockerfile_path !== undefined && build.dockerfile_path !== null) {
    throw badRequest('a job builds from a Dockerfile in the repository or from one given inline, not both', [
      { field: '/source/docker/dockerfile_raw', message: 'excludes dockerfile_path' },
    ]);
  }
  return {
    kind: 'docker',
    git_repository: await gitSourceFrom(build.git_repository, context, '/source/docker/git_repository'),
    dockerfile_path: raw === null ? dockerfilePathFrom(build.dockerfile_path, '/source/docker/dockerfile_path') : null,
    dockerfile_raw: raw,
    docker_target_build_stage: build.docker_target_build_stage ?? null,
  };
}

/** A job's probes check its one port, when it has one. */
function portAsList(port: number | null): ProbedPort[] {
  return port === null ? [] : [{ internal_port: port, is_default: true }];
}

async function jobSettings(body: JobEditBody, current: JobSettings | undefined, context: ServiceKindContext): Promise<JobSettings> {
  const port = body.port !== undefined ? body.port : (current?.port ?? null);
  return {
    cpu: body.cpu ?? current?.cpu ?? 500,
    memory: body.memory ?? current?.memory ?? 512,
    gpu: body.gpu ?? current?.gpu ?? 0,
    ephemeral_storage_in_gib: body.ephemeral_storage_in_gib ?? current?.ephemeral_storage_in_gib ?? null,
    cpu_architecture: body.cpu_architecture ?? current?.cpu_architecture ?? 'AMD64',
    max_nb_restart: body.max_nb_restart ?? current?.max_nb_restart ?? 0,
    max_duration_seconds: body.max_duration_seconds ?? current?.max_duration_seconds ?? DEFAULT_MAX_DURATION_SECONDS,
    auto_preview: body.auto_preview ?? current?.auto_preview ?? true,
    port,
    source: await sourceFrom(body.source, current?.source, context),
    healthchecks: healthchecksFrom(body.healthchecks, portAsList(port)),
    schedule: scheduleFrom(body.schedule, current?.schedule),
    auto_deploy: body.auto_deploy ?? current?.auto_deploy ?? true,
    annotations_groups: body.annotations_groups !== undefined ? await groupIdsFrom(body.annotations_groups, 'annotations', context) : (current?.annotations_groups ?? []),
    labels_groups: body.labels_groups !== undefined ? await groupIdsFrom(body.labels_groups, 'labels', context) : (current?.labels_groups ?? []),
    icon_uri: body.icon_uri ?? current?.icon_uri ?? DEFAULT_ICON,
  };
}

function commandResponse(command: StoredCommand) {
  return { arguments: command.arguments, ...(command.entrypoint !== null ? { entrypoint: command.entrypoint } : {}) };
}

function scheduleResponse(schedule: StoredSchedule): Static<typeof JobResponse>['schedule'] {
  if (schedule.kind === 'CRON') return { cronjob: { ...commandResponse(schedule.cronjob), timezone: schedule.cronjob.timezone, scheduled_at: schedule.cronjob.scheduled_at } };
  return {
    lifecycle_type: schedule.lifecycle_type,
    ...(schedule.on_start !== null ? { on_start: commandResponse(schedule.on_start) } : {}),
    ...(schedule.on_stop !== null ? { on_stop: commandResponse(schedule.on_stop) } : {}),
    ...(schedule.on_delete !== null ? { on_delete: commandResponse(schedule.on_delete) } : {}),
  };
}

function sourceResponse(source: StoredJobSource, linked: LinkedRecords): Static<typeof JobResponse>['source'] {
  if (source.kind === 'image') {
    return { image: { image_name: source.image_name, tag: source.tag, registry_id: source.registry_id, registry: registryResponse(source.registry_id, linked) } };
  }
  return {
    docker: {
      git_repository: gitSourceResponse(source.git_repository),
      dockerfile_path: source.dockerfile_path,
      dockerfile_raw: source.dockerfile_raw,
      docker_target_build_stage: source.docker_target_build_stage,
    },
  };
}

/** CRON or LIFECYCLE: what getGitTokenAssociatedServices calls a job, and the job_type of the answer. */
export function jobTypeOf(settings: Record<string, unknown>): 'CRON' | 'LIFECYCLE' {
  return settingsOf<JobSettings>(settings).schedule.kind;
}

export const jobKind: ServiceKindDefinition = {
  kind: 'JOB',
  collection: 'job',
  item: 'job',
  idParam: 'jobId',
  gitSourceField: '/source/docker/git_repository',
  operations: { list: 'listJobs', create: 'createJob', get: 'getJob', edit: 'editJob', delete: 'deleteJob' },
  operationNoun: 'Job',
  tags: ['Jobs'],
  prose: {
    aService: 'a job',
    theService: 'the job',
    services: 'jobs',
    what: "A job runs to completion: on a cron schedule (schedule.cronjob: five fields and an IANA time zone) or at its environment's lifecycle events (on_start, on_stop, on_delete), from an image of a container registry (source.image) or built from a git repository's Dockerfile (source.docker).",
    checks: "400 for a cron expression that does not parse or never fires, a time zone that is not an IANA one, both kinds of schedule or neither, both sources or neither, or a Dockerfile given both by path and inline; 404 for a container registry, a git token or a labels or annotations group that is not the organization's.",
  },
  createBody: JobRequest,
  editBody: JobEditRequest,
  response: JobResponse,
  listResponse: JobResponseList,

  ...kindWrites<JobBody, JobEditBody, JobSettings>(jobSettings),

  toResponse(service: StoredService, linked: LinkedRecords): Static<typeof JobResponse> {
    const settings = settingsOf<JobSettings>(service.settings);
    return {
      ...serviceResponseBase(service),
      job_type: settings.schedule.kind,
      ...RESOURCE_MAXIMUMS,
      cpu: settings.cpu,
      memory: settings.memory,
      gpu: settings.gpu,
      ...(settings.ephemeral_storage_in_gib !== null ? { ephemeral_storage_in_gib: settings.ephemeral_storage_in_gib } : {}),
      cpu_architecture: settings.cpu_architecture,
      max_nb_restart: settings.max_nb_restart,
      max_duration_seconds: settings.max_duration_seconds,
      auto_preview: settings.auto_preview,
      port: settings.port,
      source: sourceResponse(settings.source, linked),
      healthchecks: healthchecksResponse(settings.healthchecks),
      schedule: scheduleResponse(settings.schedule),
      auto_deploy: settings.auto_deploy,
      annotations_groups: annotationsGroupsResponse(settings.annotations_groups, linked),
      labels_groups: labelsGroupsResponse(settings.labels_groups, linked),
      icon_uri: settings.icon_uri,
      service_type: 'JOB',
    };
  },

  references(stored: Record<string, unknown>) {
    const settings = settingsOf<JobSettings>(stored);
    const source = settings.source;
    return {
      gitTokenId: source.kind === 'docker' ? source.git_repository.git_token_id : null,
      containerRegistryId: source.kind === 'image' ? source.registry_id : null,
      helmRepositoryId: null,
      labelsGroupIds: settings.labels_groups,
      annotationsGroupIds: settings.annotations_groups,
      branch: source.kind === 'docker' ? source.git_repository.branch : null,
      // A job's port serves its own probes; jobs are never exposed.
      publiclyReachable: false,
      internalPorts: [],
    };
  },
};
