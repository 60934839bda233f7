import { Type } from 'typebox';
import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requesterOf, requirePrincipal } from '../../http/route-access.ts';
import { SkipReconcileQuery, Uuid } from '../../protocol/wire.ts';
import { SERVICE_KINDS } from '../variables/variables.builtins.ts';
import { EnvironmentParams } from '../environments/environments.schemas.ts';
import type { EnvironmentBulkActions } from './deployments.bulk-actions.ts';
import {
  CleanFailedJobResponse,
  CleanFailedJobsRequest,
  CleanFailedJobsResponse,
  DeployAllRequest,
  EnvironmentServiceIdsAllRequest,
  JobParams,
} from './deployments.queue-schemas.ts';
import { EnvironmentStatus, ServiceStatus } from './deployments.schemas.ts';

const ACTION_TAGS = ['Environment Actions'];

const ServiceStatusList = Type.Object({ results: Type.Array(ServiceStatus) });
const DeletedServiceList = Type.Object({ results: Type.Array(Type.Object({ id: Uuid, service_type: Type.Enum(SERVICE_KINDS), name: Type.String() })) });

const ID_CHECK =
  'Every id must name a service of this environment of its list\'s kind, named once (400 naming each one that does not, whatever organization it belongs to); ' +
  'all are checked before anything is done.';

/**
 * The state check every bulk action makes after the ids' (deployments.service-refusals.ts): all services first, then
 * one 409 for all of those in the way, so that a caller learns of each at once and knows nothing was done.
 */
function stateCheck(action: string, inTheWay: string, nothingDone: string): string {
  return (
    `Then every service's state is checked, and one 409 names each service whose state refuses ${action} (${inTheWay}) — its kind, name, id ` +
    `and state, in the message and, for each body field that named it, in details — and says ${nothingDone}. The write checks each state ` +
    'again: a service that moved meanwhile is a 409 too, and nothing is done.'
  );
}

/** An environment's bulk actions and the clean of failed jobs: docs/deployment-queue.md, "Bulk actions". */
export function registerEnvironmentBulkRoutes(app: FastifyTypeBox, bulk: EnvironmentBulkActions): void {
  app.post(
    '/environment/:environmentId/service/deploy',
    {
      schema: {
        operationId: 'deployAllServices',
        summary: "Deploy an environment's services",
        description:
          "Deploys the services named — each at the commit or image tag given — or, when none is named, every service of the environment. " +
          `${ID_CHECK} ${stateCheck('a deploy', 'an action queued or under way', 'nothing was queued')} With none named, every service of the ` +
          "environment is checked the same way (the 409's message alone names those in the way). The deploys are written in one transaction, " +
          "in stage order, or none is (402 while billing is not valid). A Helm's chart version and values, and Terraform actions other than a " +
          'deploy, are settings here: naming them is a 400. ' +
          "Answers the environment's status; the services' own statuses show their deploys.",
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        body: DeployAllRequest,
        response: { 202: EnvironmentStatus, ...authenticatedErrors('conflict', 'payment_required') },
      },
      config: { access: { permission: 'environments:deploy', target: 'environment' } },
      // The reference's body is optional: no body deploys every service, as an empty one does.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) =>
      reply.code(HTTP_STATUS.accepted).send(await bulk.deployAllServices(requesterOf(request), request.params.environmentId, request.body)),
  );

  app.post(
    '/environment/:environmentId/service/stop',
    {
      schema: {
        operationId: 'stopSelectedServices',
        summary: "Stop some of an environment's services",
        description:
          `Stops the services named, in one transaction or not at all. ${ID_CHECK} ` +
          `${stateCheck('a stop', 'never deployed, already stopped, or an action queued or under way', 'nothing was queued')} Answers their statuses.`,
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        body: EnvironmentServiceIdsAllRequest,
        response: { 200: ServiceStatusList, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:deploy', target: 'environment' } },
    },
    async (request) => bulk.stopSelectedServices(requesterOf(request), request.params.environmentId, request.body),
  );

  app.post(
    '/environment/:environmentId/service/delete',
    {
      schema: {
        operationId: 'deleteSelectedServices',
        summary: "Delete some of an environment's services",
        description:
          `Deletes the services named as each one's delete does: its record, variables and history go and the cluster's agent tears its workloads down, unless skipReconcile. ${ID_CHECK} ` +
          `${stateCheck('a delete', 'the agent works on it', 'nothing was deleted')} The deletes are one transaction, all or none. ` +
          'Answers the services deleted.',
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        querystring: SkipReconcileQuery,
        body: EnvironmentServiceIdsAllRequest,
        response: { 200: DeletedServiceList, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'services:delete', target: 'environment' } },
    },
    async (request) => bulk.deleteSelectedServices(request.params.environmentId, request.body, { skipReconcile: request.query.skipReconcile }),
  );

  app.post(
    '/environment/:environmentId/service/uninstall',
    {
      schema: {
        operationId: 'uninstallSelectedServices',
        summary: "Uninstall some of an environment's services",
        description:
          "Removes what the services named run on the cluster (the agent tears it down) and keeps the services, their configuration and history: each reads " +
          `READY, never deployed, until a deploy brings it back. ${ID_CHECK} ${stateCheck('an uninstall', 'an action queued or under way', 'nothing was uninstalled')} ` +
          'The uninstalls are one transaction, all or none. Answers their statuses.',
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        body: EnvironmentServiceIdsAllRequest,
        response: { 200: ServiceStatusList, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:deploy', target: 'environment' } },
    },
    async (request) => bulk.uninstallSelectedServices(requirePrincipal(request), request.params.environmentId, request.body),
  );

  app.post(
    '/environment/:environmentId/uninstall',
    {
      schema: {
        operationId: 'uninstallEnvironment',
        summary: 'Uninstall an environment',
        description:
          "Removes everything the environment's services run on the cluster and keeps the environment, its services and their configuration: the " +
          'environment and each service read READY, never deployed, until a deploy. One transaction: 409 while an action on the environment or on one ' +
          "of its services is queued or under way. Answers the environment's status.",
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        response: { 202: EnvironmentStatus, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'environments:deploy', target: 'environment' } },
    },
    async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await bulk.uninstallEnvironment(requirePrincipal(request), request.params.environmentId)),
  );

  app.post(
    '/environment/:environmentId/cleanFailedJobs',
    {
      schema: {
        operationId: 'cleanFailedJobs',
        summary: "Clean the failed runs of an environment's jobs",
        description:
          "Forgets the failed last run of the jobs named in job_ids, or of every job of the environment: a job whose run its agent reported FAILED reads " +
          "as not reported again (its status no longer shows the failure; its deployment's log keeps it, with who cleaned it). clean_job_ids lists the " +
          "jobs cleaned; clean_kubernetes_jobs is always empty: the Kubernetes driver replaces a run's Job at the next run and lets it expire after a day. " +
          'job_ids must name jobs of this environment (400).',
        tags: ACTION_TAGS,
        params: EnvironmentParams,
        body: CleanFailedJobsRequest,
        response: { 200: CleanFailedJobsResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'environments:deploy', target: 'environment' } },
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => bulk.cleanFailedJobs(requirePrincipal(request), request.params.environmentId, request.body),
  );

  app.post(
    '/job/:jobId/cleanFailedJob',
    {
      schema: {
        operationId: 'cleanFailedJob',
        summary: "Clean a job's failed run",
        description:
          "Forgets the job's failed last run, as cleanFailedJobs does for one job; nothing changes when its last run did not fail. 404 unless the id names a job.",
        tags: ['Job Actions'],
        params: JobParams,
        response: { 200: CleanFailedJobResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:deploy', target: 'service' } },
    },
    async (request) => bulk.cleanFailedJob(requirePrincipal(request), request.params.jobId),
  );
}
