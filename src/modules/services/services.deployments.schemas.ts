import { Type, type Static } from 'typebox';
import { WORKLOAD_HEALTH_STATES } from '../../protocol/agent-protocol.ts';
import { Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import { EnvironmentActionStatus } from '../environments/environments.schemas.ts';
import { SERVICE_KINDS } from '../variables/variables.builtins.ts';
import { MAX_LOG_SEQ } from './services.deployments.log-query.ts';
import { LOG_PAGE_SIZE } from './services.deployments.logs.ts';
import { SERVICE_STATES } from './services.states.ts';

/**
 * Wire shapes of service actions, status, history and logs: the reference's DeployRequest / ContainerDeployRequest /
 * JobDeployRequest (one optional-field body here), Status (the environments module's, which services share),
 * DeploymentHistoryPaginatedResponseList, DeploymentHistoryServicePaginatedResponseListV2 and LogResponseList, with
 * Slipway's additions named where they are.
 */

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

const ServiceStateEnum = Type.Enum(SERVICE_STATES);
const ActionStatusEnum = Type.Enum(['QUEUED', 'ONGOING', 'SUCCESS', 'ERROR', 'CANCELED', 'CANCELING', 'NEVER']);
const WireActionEnum = Type.Enum(['DEPLOY', 'STOP', 'RESTART']);
const OriginEnum = Type.Enum(['API', 'CLI', 'CONSOLE', 'GIT', 'PLATFORM_INTERNAL', 'SKILL', 'TERRAFORM_PROVIDER']);
const LogStreamEnum = Type.Enum(['stdout', 'stderr', 'system']);

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

const PaginationFields = {
  page: Type.Integer({ minimum: 1 }),
  page_size: Type.Integer({ minimum: 1 }),
  /** Slipway's addition: the cursor of the next page, null on the last one. */
  next_cursor: Nullable(Uuid),
};

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
        status: Type.Optional(Type.Union([Type.Enum(['FAILED', 'SUCCESS']), ServiceStateEnum])),
        /** Slipway's additions: the state reached, the action, and why it waits or failed. */
        state: ServiceStateEnum,
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
    results: Type.Array(
      Type.Object({
        identifier: Type.Object({ name: Type.String(), service_id: Uuid, service_type: Type.Enum(SERVICE_KINDS), execution_id: Type.String() }),
        status: ServiceStateEnum,
        auditing_data: Type.Object({ created_at: Timestamp, updated_at: Timestamp, triggered_by: Type.String(), origin: OriginEnum }),
        details: Type.Object({ commit: Type.Optional(Type.Object({ git_commit_id: Type.String() })), tag: Type.Optional(Type.String()) }),
        status_details: Type.Object({ action: WireActionEnum, status: ActionStatusEnum, sub_action: Type.Literal('NONE') }),
        icon_uri: Type.String({ format: 'uri' }),
        total_duration: Type.String({ description: 'ISO-8601 duration' }),
        /** Slipway's additions: the deployment record's id (getServiceDeployment, log reads) and its message. */
        deployment_id: Uuid,
        message: Nullable(Type.String()),
      }),
    ),
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
    state: ServiceStateEnum,
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
