import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent } from '../../protocol/wire.ts';
import {
  AttachServiceRequest,
  DeploymentStageRequest,
  DeploymentStageResponse,
  DeploymentStageResponseList,
  EnvironmentParams,
  EnvironmentStatusesWithStages,
  ServiceParams,
  StageMoveParams,
  StageParams,
  StageServiceParams,
} from './deployment-stages.schemas.ts';
import type { DeploymentStagesService } from './deployment-stages.service.ts';

const TAGS = ['Deployment Stage Main Calls'];

/** How stages order an environment's deploy, for the operations' descriptions. */
const ORDER_NOTE = "An environment's deploy starts its services stage after stage, in deployment_order; the services of one stage start together.";

export function registerDeploymentStageRoutes(app: FastifyTypeBox, stages: DeploymentStagesService): void {
  app.get(
    '/environment/:environmentId/deploymentStage',
    {
      schema: {
        operationId: 'ListEnvironmentDeploymentStage',
        summary: "List the environment's deployment stages",
        description: `The environment's stages in their order, each with its services. ${ORDER_NOTE} A new environment has two: DATABASE DEFAULT, then SERVICE DEFAULT.`,
        tags: TAGS,
        params: EnvironmentParams,
        response: { 200: DeploymentStageResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => stages.listEnvironmentDeploymentStage(request.params.environmentId),
  );

  app.post(
    '/environment/:environmentId/deploymentStage',
    {
      schema: {
        operationId: 'CreateEnvironmentDeploymentStage',
        summary: 'Create a deployment stage',
        description: `A new, empty stage, last in the environment's order; attach services to it and move it where it belongs. ${ORDER_NOTE} A name already used in the environment answers 409.`,
        tags: TAGS,
        params: EnvironmentParams,
        body: DeploymentStageRequest,
        response: { 200: DeploymentStageResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:update', target: 'environment' } },
    },
    async (request) => stages.createEnvironmentDeploymentStage(request.params.environmentId, request.body),
  );

  app.get(
    '/deploymentStage/:deploymentStageId',
    {
      schema: {
        operationId: 'getDeploymentStage',
        summary: 'Get a deployment stage',
        description: 'The stage with its place in the order and its services.',
        tags: TAGS,
        params: StageParams,
        response: { 200: DeploymentStageResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'deployment_stage' } },
    },
    async (request) => stages.getDeploymentStage(request.params.deploymentStageId),
  );

  app.put(
    '/deploymentStage/:deploymentStageId',
    {
      schema: {
        operationId: 'EditDeploymentStage',
        summary: 'Edit a deployment stage',
        description: 'Renames the stage or changes its description (left out, it stays); its place and services stay. A name already used in the environment answers 409.',
        tags: TAGS,
        params: StageParams,
        body: DeploymentStageRequest,
        response: { 200: DeploymentStageResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:update', target: 'deployment_stage' } },
    },
    async (request) => stages.editDeploymentStage(request.params.deploymentStageId, request.body),
  );

  app.delete(
    '/deploymentStage/:deploymentStageId',
    {
      schema: {
        operationId: 'DeleteDeploymentStage',
        summary: 'Delete a deployment stage',
        description:
          'Deletes an empty stage; the later stages move up. A stage that still holds services answers 409 (attach them elsewhere first); a default stage, where new services land, answers 400.',
        tags: TAGS,
        params: StageParams,
        response: { 204: NoContent, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:update', target: 'deployment_stage' } },
    },
    async (request, reply) => {
      await stages.deleteDeploymentStage(request.params.deploymentStageId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.put(
    '/deploymentStage/:deploymentStageId/service/:serviceId',
    {
      schema: {
        operationId: 'AttachServiceToDeploymentStage',
        summary: 'Attach a service to a deployment stage',
        description:
          "Moves a service of the stage's environment into the stage; `is_skipped` leaves it out of the environment's deploys (kept as it was when absent). Answers the environment's stages. A service of another environment answers 400.",
        tags: TAGS,
        params: StageServiceParams,
        body: AttachServiceRequest,
        response: { 200: DeploymentStageResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:update', target: 'deployment_stage' } },
    },
    async (request) => stages.attachServiceToDeploymentStage(request.params.deploymentStageId, request.params.serviceId, request.body ?? {}),
  );

  app.put(
    '/deploymentStage/:deploymentStageId/moveBefore/:stageId',
    {
      schema: {
        operationId: 'MoveBeforeDeploymentStage',
        summary: 'Move a deployment stage before another',
        description: `Puts the stage right before stageId, a stage of the same environment (another environment's answers 400); answers the environment's stages in their new order. ${ORDER_NOTE}`,
        tags: TAGS,
        params: StageMoveParams,
        response: { 200: DeploymentStageResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:update', target: 'deployment_stage' } },
    },
    async (request) => stages.moveBeforeDeploymentStage(request.params.deploymentStageId, request.params.stageId),
  );

  app.put(
    '/deploymentStage/:deploymentStageId/moveAfter/:stageId',
    {
      schema: {
        operationId: 'MoveAfterDeploymentStage',
        summary: 'Move a deployment stage after another',
        description: `Puts the stage right after stageId, a stage of the same environment (another environment's answers 400); answers the environment's stages in their new order. ${ORDER_NOTE}`,
        tags: TAGS,
        params: StageMoveParams,
        response: { 200: DeploymentStageResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:update', target: 'deployment_stage' } },
    },
    async (request) => stages.moveAfterDeploymentStage(request.params.deploymentStageId, request.params.stageId),
  );

  app.get(
    '/service/:serviceId/deploymentStage',
    {
      schema: {
        operationId: 'getServiceDeploymentStage',
        summary: "Get a service's deployment stage",
        description: 'The stage the service (of any kind) belongs to, with the stage\'s other services.',
        tags: TAGS,
        params: ServiceParams,
        response: { 200: DeploymentStageResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => stages.getServiceDeploymentStage(request.params.serviceId),
  );

  app.get(
    '/environment/:environmentId/statusesWithStages',
    {
      schema: {
        operationId: 'getEnvironmentStatusesWithStages',
        summary: "The environment's statuses, stage by stage",
        description: `The environment's status and, for each of its deployment stages in order, the stage (with a status summing up its services' last actions) and its services' statuses grouped by kind. ${ORDER_NOTE}`,
        tags: ['Environment Main Calls'],
        params: EnvironmentParams,
        response: { 200: EnvironmentStatusesWithStages, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => stages.getEnvironmentStatusesWithStages(request.params.environmentId),
  );
}
