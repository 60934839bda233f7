import { Type, type Static } from 'typebox';
import { BaseFields, Description, ListOf, Name, Nullable, Uuid } from '../../protocol/wire.ts';
import { EnvironmentStatus, ServiceStatus } from '../deployments/deployments.schemas.ts';

/**
 * Wire shapes of deployment stages, the reference's: DeploymentStageRequest, DeploymentStageResponse(List) with
 * its DeploymentStageServiceResponse entries, the body of AttachServiceToDeploymentStage, and
 * EnvironmentStatusesWithStages (getEnvironmentStatusesWithStages).
 */

export const DeploymentStageRequest = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(Description)),
  },
  {
    $id: 'DeploymentStageRequest',
    additionalProperties: false,
    examples: [{ name: 'migrations', description: 'Database migrations, before the services start' }],
  },
);
export type DeploymentStageBody = Static<typeof DeploymentStageRequest>;

export const DeploymentStageServiceResponse = Type.Object(
  {
    ...BaseFields,
    service_id: Uuid,
    service_type: Type.String(),
    is_skipped: Type.Boolean(),
  },
  { $id: 'DeploymentStageServiceResponse' },
);

export const DeploymentStageResponse = Type.Object(
  {
    ...BaseFields,
    environment: Type.Object({ id: Uuid }),
    name: Type.String(),
    description: Type.String(),
    deployment_order: Type.Integer({ minimum: 0, description: 'Its place among the environment’s stages, 0 first: stage N+1 starts after stage N.' }),
    services: Type.Array(DeploymentStageServiceResponse),
  },
  {
    $id: 'DeploymentStageResponse',
    examples: [
      {
        id: '9f4b2d8e-1c7a-4a65-b3d0-5e8c2a6f1b97',
        created_at: '2026-03-02T11:27:12.225Z',
        environment: { id: '7c2e9a41-3b6d-4f18-a5c0-2e8d1b4f6a93' },
        name: 'migrations',
        description: 'Database migrations, before the services start',
        deployment_order: 2,
        services: [],
        updated_at: '2026-03-02T11:27:12.225Z',
      },
    ],
  },
);
export const DeploymentStageResponseList = ListOf(DeploymentStageResponse, 'DeploymentStageResponseList');

/** AttachServiceToDeploymentStage's body (optional as a whole): whether the environment's deploy leaves it out. */
export const AttachServiceRequest = Type.Object(
  { is_skipped: Type.Optional(Type.Boolean({ description: 'Leave the service out of the environment’s deploys (its own deploy still runs). Kept as it was when absent.' })) },
  { $id: 'AttachServiceToDeploymentStageRequest', additionalProperties: false },
);

export const EnvironmentParams = Type.Object({ environmentId: Uuid }, { additionalProperties: false });
export const StageParams = Type.Object({ deploymentStageId: Uuid }, { additionalProperties: false });
export const StageServiceParams = Type.Object({ deploymentStageId: Uuid, serviceId: Uuid }, { additionalProperties: false });
export const StageMoveParams = Type.Object({ deploymentStageId: Uuid, stageId: Uuid }, { additionalProperties: false });
export const ServiceParams = Type.Object({ serviceId: Uuid }, { additionalProperties: false });

export const STAGE_STATUSES = ['QUEUED', 'ONGOING', 'DONE', 'ERROR', 'SKIPPED', 'CANCELED'] as const;
export type StageStatus = (typeof STAGE_STATUSES)[number];

const StatusItem = Type.Object(ServiceStatus.properties);

/** The reference's DeploymentStageWithServicesStatuses: one stage and its services' statuses, grouped by kind. */
const DeploymentStageWithServicesStatuses = Type.Object({
  applications: Type.Array(StatusItem),
  containers: Type.Array(StatusItem),
  jobs: Type.Array(StatusItem),
  databases: Type.Array(StatusItem),
  helms: Type.Array(StatusItem),
  terraforms: Type.Array(StatusItem),
  agentic_workflows: Type.Array(StatusItem),
  stage: Type.Object({
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    /** Absent while none of its services was ever acted on. */
    status: Type.Optional(Type.Enum(STAGE_STATUSES)),
  }),
});

export const EnvironmentStatusesWithStages = Type.Object(
  {
    environment: Type.Object(EnvironmentStatus.properties),
    stages: Type.Array(DeploymentStageWithServicesStatuses),
  },
  { $id: 'EnvironmentStatusesWithStages' },
);
