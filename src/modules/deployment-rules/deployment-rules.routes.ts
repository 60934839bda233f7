import { Type } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requireAccess } from '../../http/route-access.ts';
import { NoContent } from '../../protocol/wire.ts';
import {
  EnvironmentDeploymentRule,
  EnvironmentDeploymentRuleEditRequest,
  EnvironmentDeploymentRuleParams,
  EnvironmentParams,
  ProjectDeploymentRule,
  ProjectDeploymentRuleParams,
  ProjectDeploymentRuleRequest,
  ProjectDeploymentRuleResponseList,
  ProjectDeploymentRulesPriorityOrderRequest,
  ProjectParams,
} from './deployment-rules.schemas.ts';
import type { DeploymentRulesService } from './deployment-rules.service.ts';

const PROJECT_TAGS = ['Project Deployment Rule'];
const ENVIRONMENT_TAGS = ['Environment Deployment Rule'];
/** The reference's updateDeploymentRulesPriorityOrder answers 200 with no body. */
const EmptyBody = Type.Unsafe<undefined>({ description: 'No body' });

const SCHEDULE_ERRORS =
  'A bad time of day (not HH:MM or a date-time), an unknown weekday, a time zone that is not an IANA name, no weekday or the same start and stop time while auto_stop is on answer 400 naming the field.';

/** A project's deployment rules and each environment's own rule (docs/deployment-rules.md). */
export function registerDeploymentRuleRoutes(app: FastifyTypeBox, rules: DeploymentRulesService): void {
  app.get(
    '/project/:projectId/deploymentRule',
    {
      schema: {
        operationId: 'listProjectDeploymentRules',
        summary: "List the project's deployment rules",
        description: 'The rules in the order they are tried when an environment is created (priority_index 0 first). 404 when the project does not exist.',
        tags: PROJECT_TAGS,
        params: ProjectParams,
        response: { 200: ProjectDeploymentRuleResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'projects:read', target: 'project' } },
    },
    async (request) => ({ results: await rules.listProjectDeploymentRules(request.params.projectId) }),
  );

  app.post(
    '/project/:projectId/deploymentRule',
    {
      schema: {
        operationId: 'createDeploymentRule',
        summary: 'Create a deployment rule',
        description: `A new environment of the project whose name matches the rule's wildcard (\`*\` any characters; empty matches every name) and which names no cluster or mode of its own is placed on the rule's cluster with its mode, and gets its auto-stop schedule. The rule is tried after the existing ones. A cluster that is not the organization's answers 400; a name already used in the project 409. ${SCHEDULE_ERRORS}`,
        tags: PROJECT_TAGS,
        params: ProjectParams,
        body: ProjectDeploymentRuleRequest,
        response: { 201: ProjectDeploymentRule, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'projects:update', target: 'project' } },
    },
    async (request, reply) => {
      const created = await rules.createDeploymentRule(requireAccess(request).organizationId, request.params.projectId, request.body);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.put(
    '/project/:projectId/deploymentRule/order',
    {
      schema: {
        operationId: 'updateDeploymentRulesPriorityOrder',
        summary: "Set the order the project's deployment rules are tried in",
        description:
          "project_deployment_rule_ids_in_order names every rule of the project once, the first tried first; a missing, unknown or repeated id answers 400 naming it. 200 with no body.",
        tags: PROJECT_TAGS,
        params: ProjectParams,
        body: ProjectDeploymentRulesPriorityOrderRequest,
        response: { 200: EmptyBody, ...authenticatedErrors() },
      },
      config: { access: { permission: 'projects:update', target: 'project' } },
    },
    async (request, reply) => {
      await rules.updateDeploymentRulesPriorityOrder(request.params.projectId, request.body);
      return reply.code(HTTP_STATUS.ok).send(undefined);
    },
  );

  app.get(
    '/project/:projectId/deploymentRule/:deploymentRuleId',
    {
      schema: {
        operationId: 'getProjectDeploymentRule',
        summary: 'Get a deployment rule',
        description: 'One rule of the project; 404 when the project or the rule (in this project) does not exist.',
        tags: PROJECT_TAGS,
        params: ProjectDeploymentRuleParams,
        response: { 200: ProjectDeploymentRule, ...authenticatedErrors() },
      },
      config: { access: { permission: 'projects:read', target: 'project' } },
    },
    async (request) => rules.getProjectDeploymentRule(request.params.projectId, request.params.deploymentRuleId),
  );

  app.put(
    '/project/:projectId/deploymentRule/:deploymentRuleId',
    {
      schema: {
        operationId: 'editProjectDeployemtnRule',
        summary: 'Edit a deployment rule',
        description: `Replaces the rule's settings (its priority stays); environments created from now on get them, those it placed before keep theirs. 404 for an unknown rule, 409 for a name already used in the project. ${SCHEDULE_ERRORS}`,
        tags: PROJECT_TAGS,
        params: ProjectDeploymentRuleParams,
        body: ProjectDeploymentRuleRequest,
        response: { 200: ProjectDeploymentRule, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'projects:update', target: 'project' } },
    },
    async (request) =>
      rules.editProjectDeployemtnRule(requireAccess(request).organizationId, request.params.projectId, request.params.deploymentRuleId, request.body),
  );

  app.delete(
    '/project/:projectId/deploymentRule/:deploymentRuleId',
    {
      schema: {
        operationId: 'deleteProjectDeploymentRule',
        summary: 'Delete a deployment rule',
        description: 'Removes the rule (the rules after it move up); environments it placed keep their settings. 404 for an unknown rule.',
        tags: PROJECT_TAGS,
        params: ProjectDeploymentRuleParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'projects:update', target: 'project' } },
    },
    async (request, reply) => {
      await rules.deleteProjectDeploymentRule(request.params.projectId, request.params.deploymentRuleId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.get(
    '/environment/:environmentId/deploymentRule',
    {
      schema: {
        operationId: 'getEnvironmentDeploymentRule',
        summary: "Get the environment's deployment rule",
        description:
          "The environment's auto-stop schedule: with auto_stop, it is stopped at stop_time and deployed again at start_time on each listed weekday, in its time zone. An environment created before rules existed gets the defaults (no auto-stop, 08:00–19:00 UTC, Monday to Friday). 404 when the environment does not exist.",
        tags: ENVIRONMENT_TAGS,
        params: EnvironmentParams,
        response: { 200: EnvironmentDeploymentRule, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:read', target: 'environment' } },
    },
    async (request) => rules.getEnvironmentDeploymentRule(request.params.environmentId),
  );

  app.put(
    '/environment/:environmentId/deploymentRule/:deploymentRuleId',
    {
      schema: {
        operationId: 'editEnvironmentDeploymentRule',
        summary: "Edit the environment's deployment rule",
        description: `Replaces the environment's schedule, which applies from now on (times already passed are not acted on). 404 when the rule is not this environment's. ${SCHEDULE_ERRORS}`,
        tags: ENVIRONMENT_TAGS,
        params: EnvironmentDeploymentRuleParams,
        body: EnvironmentDeploymentRuleEditRequest,
        response: { 200: EnvironmentDeploymentRule, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:update', target: 'environment' } },
    },
    async (request) => rules.editEnvironmentDeploymentRule(request.params.environmentId, request.params.deploymentRuleId, request.body),
  );
}
