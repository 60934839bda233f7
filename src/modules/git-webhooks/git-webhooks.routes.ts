import { authenticatedErrors, errorResponses, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { requesterOf } from '../../http/route-access.ts';
import { EnvironmentActionStatus } from '../deployments/deployments.schemas.ts';
import {
  DeliveryParams,
  GitWebhookDeliveryResponse,
  GitWebhookStatusResponse,
  OrganizationContainerAutoDeployRequest,
  OrganizationContainerPreviewRequest,
  OrganizationJobAutoDeployRequest,
  OrganizationParams,
  ServiceParams,
} from './git-webhooks.schemas.ts';
import type { ImageDeploys } from './git-webhooks.image-deploys.ts';
import type { GitWebhooksService } from './git-webhooks.service.ts';

const SERVICE_TAGS = ['Service Main Calls'];
const DELIVERY_TAGS = ['Git Webhooks'];

/** Deliveries larger than this are refused (413): a push of thousands of commits still fits; nothing legitimate is larger. */
export const MAX_DELIVERY_BYTES = 5 * 1024 * 1024;

export interface GitWebhookRouteDeps {
  gitWebhooks: GitWebhooksService;
  imageDeploys: ImageDeploys;
}

/** A service's webhook status and sync, the providers' delivery endpoint, and the registry image deploys. */
export function registerGitWebhookRoutes(app: FastifyTypeBox, deps: GitWebhookRouteDeps): void {
  const { gitWebhooks, imageDeploys } = deps;

  app.get(
    '/service/:serviceId/gitWebhookStatus',
    {
      schema: {
        operationId: 'getServiceGitWebhookStatus',
        summary: "Check the service's git webhook at its provider",
        description:
          "Whether the repository of the service has Slipway's webhook with the events it needs: ACTIVE, NOT_CONFIGURED (never synced, or the hook " +
          'is gone), MISCONFIGURED (inactive, or events missing: missing_events), UNABLE_TO_VERIFY (no git token, or the provider cannot be asked). ' +
          '400 for a service not built from git; 404 when the service does not exist.',
        tags: SERVICE_TAGS,
        params: ServiceParams,
        response: { 200: GitWebhookStatusResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'services:read', target: 'service' } },
    },
    async (request) => gitWebhooks.getServiceGitWebhookStatus(request.params.serviceId),
  );

  app.post(
    '/service/:serviceId/gitWebhook/sync',
    {
      schema: {
        operationId: 'syncServiceGitWebhook',
        summary: "Register the service's git webhook in its repository",
        description:
          "Generates the service's webhook secret once (kept sealed, never answered) and creates or updates Slipway's hook in the repository " +
          "through the provider's API with the service's git token, then answers its status. 400 for a service not built from git; 404 when " +
          'the service does not exist; 422 without a git token, or when the provider refuses (token rights) or cannot be reached.',
        tags: SERVICE_TAGS,
        params: ServiceParams,
        response: { 200: GitWebhookStatusResponse, ...authenticatedErrors('unprocessable') },
      },
      config: { access: { permission: 'services:update', target: 'service' } },
    },
    async (request) => gitWebhooks.syncServiceGitWebhook(request.params.serviceId),
  );

  const imageRoute = (url: string, operationId: string, tags: string[], body: typeof OrganizationContainerAutoDeployRequest, summary: string, description: string, run: typeof imageDeploys.autoDeployContainers) =>
    app.post(
      url,
      {
        schema: {
          operationId,
          summary,
          description:
            `${description} A service refused (busy, billing, cluster grant) is skipped, named in the message. Answers 202 with deployment_requests_count ` +
            'the number of deploys requested (0 when no service matched). 400 without image_name or tag.',
          tags,
          params: OrganizationParams,
          body,
          response: { 202: EnvironmentActionStatus, ...authenticatedErrors() },
        },
        config: { access: { permission: 'services:deploy', target: 'organization' } },
      },
      async (request, reply) => reply.code(HTTP_STATUS.accepted).send(await run(requesterOf(request), request.params.organizationId, request.body ?? {})),
    );

  imageRoute(
    '/organization/:organizationId/container/deploy',
    'autoDeployContainerEnvironments',
    ['Containers'],
    OrganizationContainerAutoDeployRequest,
    'Deploy a pushed image tag to the containers that auto-deploy it',
    'For a CI that pushed a new tag of an image: every container of the organization running that image with auto_deploy on (outside preview environments) is deployed with the tag.',
    imageDeploys.autoDeployContainers,
  );
  imageRoute(
    '/organization/:organizationId/container/preview',
    'previewContainerEnvironments',
    ['Containers'],
    OrganizationContainerPreviewRequest,
    'Deploy a pushed image tag to the preview containers that use it',
    'Every container of a PREVIEW environment of the organization running that image with auto_preview on is deployed with the tag.',
    imageDeploys.previewContainers,
  );
  imageRoute(
    '/organization/:organizationId/job/deploy',
    'autoDeployJobEnvironments',
    ['Jobs'],
    OrganizationJobAutoDeployRequest,
    'Deploy a pushed image tag to the jobs that auto-deploy it',
    'Every job of the organization run from that image with auto_deploy on (outside preview environments) is deployed with the tag.',
    imageDeploys.autoDeployJobs,
  );

  // The providers' deliveries: the raw bytes are what the signature covers, so this scope reads bodies as bytes.
  void app.register(async (scope: FastifyTypeBox) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_DELIVERY_BYTES }, (_request, body, done) => done(null, body));
    scope.post(
      '/git-webhook/:provider/:serviceId',
      {
        bodyLimit: MAX_DELIVERY_BYTES,
        schema: {
          operationId: 'receiveGitWebhookDelivery',
          summary: "Receive a git provider's webhook delivery",
          description:
            "Where GitHub, GitLab and Bitbucket deliver the events of the hook syncServiceGitWebhook registered (docs/git-webhooks.md). No credential: each delivery is verified with the service's secret by the provider's scheme " +
            '(X-Hub-Signature-256, X-Gitlab-Token, X-Hub-Signature). A push to the tracked branch of a service with auto_deploy on deploys the pushed commit (202); a pull request against it ' +
            'opens, updates or deletes a preview environment (202); anything else answers 200 IGNORED, and a delivery id already received 200 DUPLICATE. 401 for a bad signature; 400 for a ' +
            'delivery that cannot be read; 404 when the service has no webhook of this provider; 409 when the service is busy (the delivery may be sent again); 413 above 5 MiB.',
          tags: DELIVERY_TAGS,
          params: DeliveryParams,
          response: {
            200: GitWebhookDeliveryResponse,
            202: GitWebhookDeliveryResponse,
            ...errorResponses('bad_request', 'unauthenticated', 'not_found', 'conflict', 'payload_too_large'),
          },
        },
        config: { access: { public: true } },
      },
      async (request, reply) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const answer = await gitWebhooks.receiveDelivery(request.params.provider, request.params.serviceId, request.headers, body);
        const acted = answer.outcome === 'DEPLOYED' || answer.outcome === 'PREVIEW_DEPLOYED' || answer.outcome === 'PREVIEW_DELETED';
        return reply.code(acted ? HTTP_STATUS.accepted : HTTP_STATUS.ok).send(answer);
      },
    );
  });
}
