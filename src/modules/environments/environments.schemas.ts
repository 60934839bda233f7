import { Type, type Static } from 'typebox';
import { BaseFields, ListOf, Name, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import { ENVIRONMENT_STATES } from './environments.states.ts';

/**
 * Wire shapes of environments, following the reference's CreateEnvironmentRequest / EnvironmentEditRequest /
 * Environment / EnvironmentStatus / Status / DeploymentHistory*; CloneEnvironmentRequest is the original product's.
 */

export const ENVIRONMENT_MODES = ['PRODUCTION', 'STAGING', 'DEVELOPMENT', 'PREVIEW'] as const;

/** The reference's EnvironmentModeEnum. Creation accepts PREVIEW too (the reference's create enum lacks it). */
const EnvironmentModeEnum = Type.Enum(ENVIRONMENT_MODES);
/** The states an environment takes: a subset of the reference's StateEnum. */
const EnvironmentStateEnum = Type.Enum(ENVIRONMENT_STATES);
const DeploymentStatusEnum = Type.Enum(['NEVER_DEPLOYED', 'UP_TO_DATE', 'OUT_OF_DATE']);
const OriginEnum = Type.Enum(['API', 'CLI', 'CONSOLE', 'GIT', 'PLATFORM_INTERNAL', 'SKILL', 'TERRAFORM_PROVIDER']);
const ActionStatusEnum = Type.Enum(['QUEUED', 'ONGOING', 'SUCCESS', 'ERROR', 'CANCELED', 'CANCELING', 'NEVER']);
const WireActionEnum = Type.Enum(['DEPLOY', 'STOP', 'RESTART']);

export const ProjectEnvironmentParams = Type.Object({ projectId: Uuid }, { additionalProperties: false });
export const EnvironmentParams = Type.Object({ environmentId: Uuid }, { additionalProperties: false });

export const CreateEnvironmentRequest = Type.Object(
  {
    name: Name,
    /** The cluster it runs on; may be left out when the organization has exactly one. */
    cluster: Type.Optional(Uuid),
    mode: Type.Optional(EnvironmentModeEnum),
  },
  { $id: 'CreateEnvironmentRequest', additionalProperties: false },
);
export type CreateEnvironmentBody = Static<typeof CreateEnvironmentRequest>;

export const EnvironmentEditRequest = Type.Object(
  { name: Type.Optional(Name), mode: Type.Optional(EnvironmentModeEnum) },
  { $id: 'EnvironmentEditRequest', additionalProperties: false },
);
export type EditEnvironmentBody = Static<typeof EnvironmentEditRequest>;

export const CloneEnvironmentRequest = Type.Object(
  {
    name: Name,
    /** Defaults to the source's cluster. */
    cluster_id: Type.Optional(Uuid),
    /** Defaults to the source's mode. */
    mode: Type.Optional(EnvironmentModeEnum),
    /** Accepted for the original product's clients; deployment rules do not exist here yet, so it changes nothing. */
    apply_deployment_rule: Type.Optional(Type.Boolean()),
    /** Copies the source's environment-scoped variables and secrets (default false). */
    clone_variables: Type.Optional(Type.Boolean()),
  },
  { $id: 'CloneEnvironmentRequest', additionalProperties: false },
);
export type CloneEnvironmentBody = Static<typeof CloneEnvironmentRequest>;

export const RebootServicesRequest = Type.Object(
  {
    application_ids: Type.Optional(Type.Array(Uuid, { maxItems: 500 })),
    database_ids: Type.Optional(Type.Array(Uuid, { maxItems: 500 })),
    container_ids: Type.Optional(Type.Array(Uuid, { maxItems: 500 })),
  },
  { $id: 'RebootServicesRequest', additionalProperties: false },
);
export type RebootServicesBody = Static<typeof RebootServicesRequest>;

export const Environment = Type.Object(
  {
    ...BaseFields,
    name: Type.String(),
    organization: Type.Object({ id: Uuid }),
    project: Type.Object({ id: Uuid }),
    last_updated_by: Type.Optional(Uuid),
    cloud_provider: Type.Object({ provider: Type.Optional(Type.String()), cluster: Type.Optional(Type.String()) }),
    mode: EnvironmentModeEnum,
    cluster_id: Uuid,
    cluster_name: Type.Optional(Type.String()),
    expires_at: Nullable(Timestamp),
  },
  { $id: 'Environment' },
);
export const EnvironmentResponseList = ListOf(Environment, 'EnvironmentResponseList');

export const EnvironmentStatus = Type.Object(
  {
    id: Uuid,
    state: EnvironmentStateEnum,
    last_deployment_date: Nullable(Timestamp),
    last_deployment_state: EnvironmentStateEnum,
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
    state: EnvironmentStateEnum,
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
export const MAX_PAGE_SIZE = 100;
const PageSize = Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE });

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
        status: EnvironmentStateEnum,
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

export const DeploymentHistoryEnvironmentPaginatedResponseListV2 = Type.Object(
  {
    ...PaginationFields,
    results: Type.Array(
      Type.Object({
        identifier: Type.Object({ execution_id: Type.String(), environment_id: Uuid }),
        auditing_data: Type.Object({ created_at: Timestamp, updated_at: Timestamp, triggered_by: Type.String(), origin: OriginEnum }),
        status: EnvironmentStateEnum,
        trigger_action: WireActionEnum,
        total_duration: Type.String({ description: 'ISO-8601 duration' }),
        stages: EmptyList,
        action_status: ActionStatusEnum,
        /** Slipway's addition: why it waits or failed. */
        message: Nullable(Type.String()),
      }),
    ),
  },
  { $id: 'DeploymentHistoryEnvironmentPaginatedResponseListV2' },
);
