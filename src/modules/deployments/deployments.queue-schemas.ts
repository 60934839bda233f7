import { Type, type Static } from 'typebox';
import { DEPLOYMENT_STATES } from '../../engine/deployment-states.ts';
import { Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import { SERVICE_KINDS } from '../variables/variables.builtins.ts';

/**
 * Wire shapes of the deployment queue (QueuedDeploymentRequestWithStages, QueuedDeploymentRequestForService,
 * EnvDeploymentStatus), an environment's logs (EnvironmentLogs, EnvironmentLogResponseList) and its bulk actions
 * (DeployAllRequest, EnvironmentServiceIdsAllRequest, the clean of failed jobs), after the reference. Slipway's
 * additions are named where they are.
 */

const DeploymentStateEnum = Type.Enum(DEPLOYMENT_STATES);
const OriginEnum = Type.Enum(['API', 'CLI', 'CONSOLE', 'GIT', 'PLATFORM_INTERNAL', 'SKILL', 'TERRAFORM_PROVIDER']);
const WireActionEnum = Type.Enum(['DEPLOY', 'STOP', 'RESTART']);
const ActionStatusEnum = Type.Enum(['QUEUED', 'ONGOING', 'SUCCESS', 'ERROR', 'CANCELED', 'CANCELING', 'NEVER']);
const StageStatusEnum = Type.Enum(['QUEUED', 'ONGOING', 'DONE', 'ERROR', 'SKIPPED', 'CANCELED']);
const ServiceTypeEnum = Type.Enum(SERVICE_KINDS);
const AuditingData = Type.Object({ triggered_by: Type.String(), origin: Type.Optional(OriginEnum) });

export const ServiceQueueParams = Type.Object({ serviceId: Uuid }, { additionalProperties: false });
export const DeploymentRequestParams = Type.Object({ deploymentRequestId: Uuid }, { additionalProperties: false });
export const DeploymentStatusQuery = Type.Object({ deploymentRequestId: Uuid }, { additionalProperties: false });

export const QueuedDeploymentRequestWithStages = Type.Object(
  {
    identifier: Type.Object({ deployment_request_id: Uuid, environment_id: Uuid }),
    auditing_data: AuditingData,
    trigger_action: WireActionEnum,
    stages: Type.Array(
      Type.Object({
        name: Type.String(),
        status: StageStatusEnum,
        services: Type.Array(
          Type.Object({
            identifier: Type.Object({ service_id: Uuid, service_type: ServiceTypeEnum, name: Type.String() }),
            status: StageStatusEnum,
            icon_uri: Type.String(),
          }),
        ),
      }),
    ),
    /** Slipway's additions: the state the request reached and when it was asked. */
    status: DeploymentStateEnum,
    created_at: Timestamp,
  },
  { $id: 'QueuedDeploymentRequestWithStages' },
);
export const QueuedDeploymentRequestWithStagesList = Type.Object({ results: Type.Array(QueuedDeploymentRequestWithStages) });

export const QueuedDeploymentRequestForService = Type.Object(
  {
    identifier: Type.Object({ deployment_request_id: Uuid, service_id: Uuid, service_type: ServiceTypeEnum, name: Type.String() }),
    auditing_data: AuditingData,
    status_details: Type.Object({ action: WireActionEnum, status: ActionStatusEnum, sub_action: Type.Literal('NONE') }),
    icon_uri: Type.String(),
    /** Slipway's additions: whose request it is (the environment's action, or the service's own), its state, when asked. */
    requested_for: Type.Enum(['ENVIRONMENT', 'SERVICE']),
    status: DeploymentStateEnum,
    created_at: Timestamp,
  },
  { $id: 'QueuedDeploymentRequestForService' },
);
export const QueuedDeploymentRequestForServiceList = Type.Object({ results: Type.Array(QueuedDeploymentRequestForService) });

export const EnvDeploymentStatus = Type.Object(
  { deployment_request_id: Uuid, environment_id: Uuid, status: DeploymentStateEnum },
  { $id: 'EnvDeploymentStatus' },
);

/** The reference's `version` of listEnvironmentLogs: here a deployment request of the environment. */
export const EnvironmentLogsQuery = Type.Object(
  {
    version: Type.Optional(
      Type.String({
        format: 'uuid',
        pattern: '^[0-9a-f-]{36}$',
        description: "A deployment request of the environment (an environment's action or a service's): its lines only. Without it, each service's newest deployment.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const EnvironmentLogs = Type.Object(
  {
    type: Type.String({ description: 'The stream the line was printed on: STDOUT, STDERR or SYSTEM (Slipway\'s and the agent\'s own lines).' }),
    timestamp: Timestamp,
    details: Type.Object({
      organization_id: Uuid,
      cluster_id: Uuid,
      execution_id: Type.String(),
      transmitter: Type.Object({ id: Uuid, name: Type.String(), type: Type.String() }),
      stage: Type.Object({ step: Type.String() }),
    }),
    error: Nullable(Type.Object({ tag: Type.String(), user_log_message: Type.String() })),
    message: Nullable(Type.Object({ safe_message: Type.String() })),
    /** Slipway's additions: the deployment the line belongs to and its place in that deployment's log. */
    deployment_id: Uuid,
    seq: Type.Integer(),
  },
  { $id: 'EnvironmentLogs' },
);
export const EnvironmentLogsResponseList = Type.Array(EnvironmentLogs, { $id: 'EnvironmentLogsResponseList' });

const StatusKindEnum = Type.Enum([
  'CANCELED',
  'CANCELING',
  'DELETED',
  'DELETE_ERROR',
  'DELETE_IN_PROGRESS',
  'DEPLOYED',
  'DEPLOYMENT_ERROR',
  'DEPLOYMENT_IN_PROGRESS',
  'ERROR',
  'PAUSED',
  'PAUSE_ERROR',
  'PAUSE_IN_PROGRESS',
  'WAITING',
]);

export const EnvironmentLog = Type.Object(
  {
    id: Uuid,
    created_at: Timestamp,
    scope: Type.Object({ type: Type.Optional(Type.Enum(['APPLICATION', 'DATABASE', 'ENVIRONMENT'])), name: Type.String(), id: Uuid }),
    state: StatusKindEnum,
    message: Nullable(Type.String()),
    execution_id: Type.String(),
    /** The reference requires these two: the service the entry is of (null for the environment's own), and its state. */
    service: Nullable(Type.Object({ id: Uuid, name: Type.String(), service_type: ServiceTypeEnum })),
    status: DeploymentStateEnum,
    /** Slipway's addition: the action. */
    action: WireActionEnum,
  },
  { $id: 'EnvironmentLog' },
);
export const EnvironmentLogResponseList = Type.Object({ results: Type.Array(EnvironmentLog) }, { $id: 'EnvironmentLogResponseList' });

const MAX_NAMED = 500;
const CommitId = Type.String({ pattern: '^[0-9a-f]{7,40}$', description: 'The full commit id (40 lower-case hex digits).' });
const ImageTag = Type.String({ pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$', description: 'An OCI tag.' });

export const DeployAllRequest = Type.Object(
  {
    applications: Type.Optional(Type.Array(Type.Object({ application_id: Uuid, git_commit_id: Type.Optional(CommitId) }, { additionalProperties: false }), { maxItems: MAX_NAMED })),
    databases: Type.Optional(Type.Array(Uuid, { maxItems: MAX_NAMED })),
    containers: Type.Optional(Type.Array(Type.Object({ id: Uuid, image_tag: Type.Optional(ImageTag) }, { additionalProperties: false }), { maxItems: MAX_NAMED })),
    jobs: Type.Optional(
      Type.Array(Type.Object({ id: Uuid, image_tag: Type.Optional(ImageTag), git_commit_id: Type.Optional(CommitId) }, { additionalProperties: false }), { maxItems: MAX_NAMED }),
    ),
    helms: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Uuid,
            git_commit_id: Type.Optional(CommitId),
            chart_version: Type.Optional(Type.String({ description: 'Refused (400): a Helm\'s chart version is part of its settings here; edit the Helm.' })),
            values_override_git_commit_id: Type.Optional(Type.String({ description: 'Refused (400): the values of a Helm are part of its settings here.' })),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_NAMED },
      ),
    ),
    terraforms: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Uuid,
            git_commit_id: Type.Optional(CommitId),
            action: Type.Optional(Nullable(Type.Enum(['PLAN', 'FORCE_UNLOCK', 'MIGRATE_STATE'], { description: 'Only null is accepted: a deploy applies.' }))),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_NAMED },
      ),
    ),
  },
  { $id: 'DeployAllRequest', additionalProperties: false },
);
export type DeployAllBody = Static<typeof DeployAllRequest>;

export const EnvironmentServiceIdsAllRequest = Type.Object(
  {
    application_ids: Type.Optional(Type.Array(Uuid, { maxItems: MAX_NAMED })),
    container_ids: Type.Optional(Type.Array(Uuid, { maxItems: MAX_NAMED })),
    database_ids: Type.Optional(Type.Array(Uuid, { maxItems: MAX_NAMED })),
    job_ids: Type.Optional(Type.Array(Uuid, { maxItems: MAX_NAMED })),
    helm_ids: Type.Optional(Type.Array(Uuid, { maxItems: MAX_NAMED })),
    terraform_ids: Type.Optional(Type.Array(Uuid, { maxItems: MAX_NAMED })),
  },
  { $id: 'EnvironmentServiceIdsAllRequest', additionalProperties: false },
);
export type EnvironmentServiceIdsBody = Static<typeof EnvironmentServiceIdsAllRequest>;

export const CleanFailedJobsRequest = Type.Object({ job_ids: Type.Optional(Type.Array(Uuid, { maxItems: MAX_NAMED })) }, { additionalProperties: false });
export type CleanFailedJobsBody = Static<typeof CleanFailedJobsRequest>;
export const CleanFailedJobsResponse = Type.Object({ clean_job_ids: Type.Array(Uuid), clean_kubernetes_jobs: Type.Array(Type.String()) });
export const CleanFailedJobResponse = Type.Object({ clean_kubernetes_jobs: Type.Array(Type.String()) });
export const JobParams = Type.Object({ jobId: Uuid }, { additionalProperties: false });
