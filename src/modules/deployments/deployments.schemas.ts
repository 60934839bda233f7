import { Type, type Static } from 'typebox';
import { DEPLOYMENT_STATES } from '../../engine/deployment-states.ts';
import { WORKLOAD_HEALTH_STATES } from '../../protocol/agent-protocol.ts';
import { BaseFields, ListOf, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import { SERVICE_KINDS } from '../variables/variables.builtins.ts';
import { MAX_LOG_SEQ } from './deployments.log-query.ts';
import { LOG_PAGE_SIZE } from './deployments.logs.ts';

/**
 * Wire shapes of deployments, following the reference: an environment's EnvironmentStatus, the Status its actions
 * and every service's answer (ServiceStatus adds the workload), RebootServicesRequest, the deploy body of a service
 * (DeployRequest / ContainerDeployRequest / JobDeployRequest: one optional-field body here), the deployment
 * histories of both (DeploymentHistory*), a service's logs (LogResponseList) and the statuses that span an
 * environment or a project. Slipway's additions are named where they are.
 */

/** The states environments and services take: a subset of the reference's StateEnum. */
const DeploymentStateEnum = Type.Enum(DEPLOYMENT_STATES);
const DeploymentStatusEnum = Type.Enum(['NEVER_DEPLOYED', 'UP_TO_DATE', 'OUT_OF_DATE']);
const OriginEnum = Type.Enum(['API', 'CLI', 'CONSOLE', 'GIT', 'PLATFORM_INTERNAL', 'SKILL', 'TERRAFORM_PROVIDER']);
const ActionStatusEnum = Type.Enum(['QUEUED', 'ONGOING', 'SUCCESS', 'ERROR', 'CANCELED', 'CANCELING', 'NEVER']);
const WireActionEnum = Type.Enum(['DEPLOY', 'STOP', 'RESTART']);
const LogStreamEnum = Type.Enum(['stdout', 'stderr', 'system']);

export const RebootServicesRequest = Type.Object(
  {
    application_ids: Type.Optional(Type.Array(Uuid, { maxItems: 500 })),
    database_ids: Type.Optional(Type.Array(Uuid, { maxItems: 500 })),
    container_ids: Type.Optional(Type.Array(Uuid, { maxItems: 500 })),
  },
  { $id: 'RebootServicesRequest', additionalProperties: false },
);
export type RebootServicesBody = Static<typeof RebootServicesRequest>;

export const EnvironmentStatus = Type.Object(
  {
    id: Uuid,
    state: DeploymentStateEnum,
    last_deployment_date: Nullable(Timestamp),
    last_deployment_state: DeploymentStateEnum,
    last_deployment_id: Nullable(Type.String()),
    total_deployment_duration_in_seconds: Nullable(Type.Integer()),
    origin: Nullable(OriginEnum),
    triggered_by: Nullable(Type.String()),
    deployment_status: DeploymentStatusEnum,
    deployment_request_id: Nullable(Uuid),
    metrics: Nullable(Type.Array(Type.Object({}, { additionalProperties: true }))),
    /** Slipway's addition: why the environment waits (for the cluster's agent) or failed. */
    message: Nullable(Type.String()),
  },
  { $id: 'EnvironmentStatus' },
);

/** The reference's Status, which deployEnvironment and rebootServices answer for the environment. */
export const EnvironmentActionStatus = Type.Object(
  {
    id: Uuid,
    state: DeploymentStateEnum,
    service_deployment_status: DeploymentStatusEnum,
    last_deployment_date: Type.Optional(Timestamp),
    is_part_last_deployment: Type.Boolean(),
    execution_id: Type.Optional(Type.String()),
    status_details: Type.Object({
      action: WireActionEnum,
      status: ActionStatusEnum,
      sub_action: Type.Literal('NONE'),
    }),
    deployment_request_id: Nullable(Uuid),
    deployment_requests_count: Type.Integer(),
    /** Slipway's addition, as in EnvironmentStatus. */
    message: Nullable(Type.String()),
  },
  { $id: 'Status' },
);

/** Deployment history pages hold at most this many entries (DESIGN.md §4: long lists are paged). */
export const MAX_HISTORY_PAGE_SIZE = 100;
const PageSize = Type.Integer({ minimum: 1, maximum: MAX_HISTORY_PAGE_SIZE });

export const DeploymentHistoryQuery = Type.Object(
  {
    /** The reference's cursor: entries older than this one (a next_cursor of a previous page). */
    startId: Type.Optional(Uuid),
    pageSize: Type.Optional(PageSize),
  },
  { additionalProperties: false },
);

export const DeploymentHistoryV2Query = Type.Object(
  {
    pageSize: Type.Optional(PageSize),
    /** Entries older than this one: the next_cursor of the previous page. */
    cursor: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

const PaginationFields = {
  page: Type.Integer({ minimum: 1 }),
  page_size: Type.Integer({ minimum: 1 }),
  /** Slipway's addition: the cursor of the next page, null on the last one. */
  next_cursor: Nullable(Uuid),
};

const EmptyList = Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 0 });

export const DeploymentHistoryEnvironmentPaginatedResponseList = Type.Object(
  {
    ...PaginationFields,
    results: Type.Array(
      Type.Object({
        ...BaseFields,
        status: DeploymentStateEnum,
        origin: OriginEnum,
        triggered_by: Type.String(),
        /** Per-service entries arrive with the services of issue 8 part 2. */
        applications: EmptyList,
        containers: EmptyList,
        databases: EmptyList,
        jobs: EmptyList,
        helms: EmptyList,
      }),
    ),
  },
  { $id: 'DeploymentHistoryEnvironmentPaginatedResponseList' },
);

/** The reference's DeploymentHistoryService: one service deployment, in a service's history and in an environment's stages. */
const DeploymentHistoryServiceV2 = Type.Object({
  identifier: Type.Object({ name: Type.String(), service_id: Uuid, service_type: Type.Enum(SERVICE_KINDS), execution_id: Type.String() }),
  status: DeploymentStateEnum,
  auditing_data: Type.Object({ created_at: Timestamp, updated_at: Timestamp, triggered_by: Type.String(), origin: OriginEnum }),
  details: Type.Object({ commit: Type.Optional(Type.Object({ git_commit_id: Type.String() })), tag: Type.Optional(Type.String()) }),
  status_details: Type.Object({ action: WireActionEnum, status: ActionStatusEnum, sub_action: Type.Literal('NONE') }),
  icon_uri: Type.String({ format: 'uri' }),
  total_duration: Type.String({ description: 'ISO-8601 duration' }),
  /** Slipway's additions: the deployment record's id (getServiceDeployment, log reads) and its message. */
  deployment_id: Uuid,
  message: Nullable(Type.String()),
});

/** The reference's DeploymentHistoryStage: the services one deployment stage started (docs/deployment-stages.md). */
const DeploymentHistoryStage = Type.Object({
  name: Type.String(),
  status: Type.Enum(['QUEUED', 'ONGOING', 'DONE', 'ERROR', 'SKIPPED', 'CANCELED']),
  duration: Type.String({ description: 'ISO-8601 duration' }),
  services: Type.Array(DeploymentHistoryServiceV2),
});

export const DeploymentHistoryEnvironmentPaginatedResponseListV2 = Type.Object(
  {
    ...PaginationFields,
    results: Type.Array(
      Type.Object({
        identifier: Type.Object({ execution_id: Type.String(), environment_id: Uuid }),
        auditing_data: Type.Object({ created_at: Timestamp, updated_at: Timestamp, triggered_by: Type.String(), origin: OriginEnum }),
        status: DeploymentStateEnum,
        trigger_action: WireActionEnum,
        total_duration: Type.String({ description: 'ISO-8601 duration' }),
        /** The services the action started, stage by stage, as their stages were when it was requested. */
        stages: Type.Array(DeploymentHistoryStage),
        action_status: ActionStatusEnum,
        /** Slipway's addition: why it waits or failed. */
        message: Nullable(Type.String()),
      }),
    ),
  },
  { $id: 'DeploymentHistoryEnvironmentPaginatedResponseListV2' },
);

/**
 * The reference's Status: state, OUT_OF_DATE, the action under way — the shape environments answer — plus
 * Slipway's `workload`: how the deployed workload runs, as the cluster's agent last said (null until it said anything).
 */
export const ServiceStatus = Type.Object(
  {
    ...EnvironmentActionStatus.properties,
    workload: Type.Optional(
      Nullable(
        Type.Object({
          health: Type.Enum(WORKLOAD_HEALTH_STATES),
          restarts: Type.Integer({ description: 'Restarts after crashes since the deployment.' }),
          message: Nullable(Type.String()),
          reported_at: Timestamp,
        }),
      ),
    ),
  },
  { $id: 'ServiceStatus' },
);


/**
 * What a deploy may name: the commit to build (kinds built from git) and the image tag to run (containers and
 * jobs). Both optional: without them the agent builds the branch's head, or runs the configured tag.
 */
export const DeployServiceRequest = Type.Object(
  {
    git_commit_id: Type.Optional(Type.String({ pattern: '^[0-9a-f]{7,40}$', description: 'The full commit id (40 lower-case hex digits); an abbreviated one is refused with a 400 saying so (the build fetches one commit, by its full id).' })),
    image_tag: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$', description: 'An OCI tag.' })),
  },
  { $id: 'DeployServiceRequest', additionalProperties: false },
);
export type DeployServiceBody = Static<typeof DeployServiceRequest>;

export const DeploymentParams = (idParam: string) => Type.Object({ [idParam]: Uuid, deploymentId: Uuid }, { additionalProperties: false });

export const DeploymentHistoryPaginatedResponseList = Type.Object(
  {
    ...PaginationFields,
    results: Type.Array(
      Type.Object({
        id: Uuid,
        created_at: Timestamp,
        updated_at: Timestamp,
        name: Type.String(),
        commit: Type.Optional(Type.Object({ git_commit_id: Type.String() })),
        /** An application's outcome, absent while the action is under way; the state reached for the other kinds. */
        status: Type.Optional(Type.Union([Type.Enum(['FAILED', 'SUCCESS']), DeploymentStateEnum])),
        /** Slipway's additions: the state reached, the action, and why it waits or failed. */
        state: DeploymentStateEnum,
        action: WireActionEnum,
        message: Nullable(Type.String()),
      }),
    ),
  },
  { $id: 'DeploymentHistoryPaginatedResponseList' },
);

export const DeploymentHistoryServicePaginatedResponseListV2 = Type.Object(
  {
    ...PaginationFields,
    results: Type.Array(DeploymentHistoryServiceV2),
  },
  { $id: 'DeploymentHistoryServicePaginatedResponseListV2' },
);

const SnapshotVariable = Type.Object({
  key: Type.String(),
  scope: Type.String(),
  variable_id: Type.String(),
  mount_path: Nullable(Type.String()),
  alias_chain: Type.Array(Type.String()),
  /** True for secrets and hidden built-ins: they travel sealed, and no answer carries them. */
  sealed: Type.Boolean(),
  value: Type.Optional(Type.String()),
});

/** Slipway's: one deployment record with what it carries. */
export const ServiceDeployment = Type.Object(
  {
    id: Uuid,
    service_id: Uuid,
    action: WireActionEnum,
    state: DeploymentStateEnum,
    message: Nullable(Type.String()),
    triggered_by: Type.String(),
    execution_id: Type.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
    finished_at: Nullable(Timestamp),
    git_commit_id: Nullable(Type.String()),
    image_tag: Nullable(Type.String()),
    settings_hash: Type.String(),
    service: Type.Object({
      id: Uuid,
      kind: Type.Enum(SERVICE_KINDS),
      name: Type.String(),
      organizationId: Uuid,
      environmentId: Uuid,
      clusterId: Uuid,
      settings: Type.Object({}, { additionalProperties: true }),
    }),
    variables: Nullable(Type.Object({ content_hash: Type.String(), results: Type.Array(SnapshotVariable) })),
  },
  { $id: 'ServiceDeployment' },
);

export const ServiceLogQuery = Type.Object(
  {
    /** The deployment whose lines to read (default: the newest). */
    deploymentId: Type.Optional(Uuid),
    /** Lines after this sequence number (default 0: from the first). Also read from Last-Event-ID on a stream. */
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LOG_SEQ })),
    follow: Type.Optional(
      Type.Boolean({
        description:
          "Follow the service's output without end (a stream: text/event-stream, application/x-ndjson or text/plain): its running deployment's lines and its newest deployment's, then each deployment that begins, announced by a `deployment` event. Not with deploymentId or after.",
      }),
    ),
    cursor: Type.Optional(
      Type.String({ maxLength: 400, description: 'Resumes a followed stream after the event with this id (what Last-Event-ID sends back; NDJSON items carry it as `cursor`).' }),
    ),
    since: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Only lines printed at or after this ISO-8601 time, or this long ago: 30s, 10m, 2h, 1d, 1h30m.' }),
    ),
    tail: Type.Optional(Type.Integer({ minimum: 0, maximum: LOG_PAGE_SIZE, description: 'Only the last N lines (before following, on a stream).' })),
    instance: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "Only lines printed by this instance of the workload (a line's pod_name)." })),
    stream: Type.Optional(Type.Array(LogStreamEnum, { minItems: 1, maxItems: 3, description: 'Only lines of these streams (repeat the parameter for several).' })),
  },
  { additionalProperties: false },
);

export const Log = Type.Object({
  id: Uuid,
  created_at: Timestamp,
  message: Type.String(),
  /** The reference's: the instance of the workload that printed the line (runtime output only). */
  pod_name: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  /** Slipway's additions: the deployment, where the line came from, and its place in that deployment's log. */
  deployment_id: Uuid,
  stream: LogStreamEnum,
  seq: Type.Integer({ minimum: 1 }),
});

export const LogResponseList = Type.Object({ results: Type.Array(Log) }, { $id: 'LogResponseList' });

/**
 * A service's status inside a schema that holds several lists of them: the same shape as ServiceStatus without its
 * name, since one schema may name a component once only (the validator refuses a repeated $id).
 */
const ServiceStatusItem = Type.Object(ServiceStatus.properties);

/** The status of every service of an environment, grouped by kind, with the environment's own (getEnvironmentStatuses). */
export const EnvironmentStatuses = Type.Object(
  {
    environment: EnvironmentStatus,
    applications: Type.Array(ServiceStatusItem),
    containers: Type.Array(ServiceStatusItem),
    jobs: Type.Array(ServiceStatusItem),
    databases: Type.Array(ServiceStatusItem),
    helms: Type.Array(ServiceStatusItem),
    terraforms: Type.Array(ServiceStatusItem),
    agentic_workflows: Type.Array(ServiceStatusItem),
  },
  { $id: 'EnvironmentStatuses' },
);

/** The reference's ReferenceObjectStatus: a service's status named by the service's id (`id` is both). */
export const ReferenceObjectStatusResponseList = ListOf(ServiceStatus, 'ReferenceObjectStatusResponseList');

export const EnvironmentStatusList = ListOf(EnvironmentStatus, 'EnvironmentStatusList');

/**
 * How many services each environment holds. The reference's schema requires `number` but describes
 * `service_total_number`: both are written, with the same count, so clients generated either way decode it.
 */
export const EnvironmentStats = Type.Object(
  {
    id: Uuid,
    service_total_number: Type.Integer({ minimum: 0 }),
    number: Type.Integer({ minimum: 0, description: 'The same count as service_total_number (the reference requires this name).' }),
  },
  { $id: 'EnvironmentStats' },
);
export const EnvironmentStatsResponseList = ListOf(EnvironmentStats, 'EnvironmentStatsResponseList');

export const EnvironmentStatusParams = Type.Object({ environmentId: Uuid });
export const ProjectStatusParams = Type.Object({ projectId: Uuid });
