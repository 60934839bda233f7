import { authenticatedErrors, HTTP_STATUS } from '../../http/errors.ts';
import type { FastifyTypeBox } from '../../http/fastify.types.ts';
import { NoContent, OrganizationParams } from '../../protocol/wire.ts';
import {
  OrganizationWebhookCreateRequest,
  OrganizationWebhookCreateResponse,
  OrganizationWebhookEditRequest,
  OrganizationWebhookResponse,
  OrganizationWebhookResponseList,
  WebhookDeliveryPage,
  WebhookDeliveryParams,
  WebhookDeliveryQuery,
  WebhookParams,
  WebhookRedeliveryResponse,
} from './webhooks.schemas.ts';
import type { WebhooksService } from './webhooks.service.ts';

const TAGS = ['Webhooks'];

export function registerWebhookRoutes(app: FastifyTypeBox, webhooks: WebhooksService): void {
  app.get(
    '/organization/:organizationId/webhook',
    {
      schema: {
        operationId: 'listOrganizationWebHooks',
        summary: 'List webhooks',
        description:
          "The organization's webhooks with their target, events, filters and whether they are enabled; never their " +
          'secret. 404 when the caller is not a member.',
        tags: TAGS,
        params: OrganizationParams,
        response: { 200: OrganizationWebhookResponseList, ...authenticatedErrors() },
      },
      config: { access: { permission: 'webhooks:read', target: 'organization' } },
    },
    async (request) => ({ results: await webhooks.listOrganizationWebHooks(request.params.organizationId) }),
  );

  app.post(
    '/organization/:organizationId/webhook',
    {
      schema: {
        operationId: 'createOrganizationWebhook',
        summary: 'Create a webhook',
        description:
          'Registers an HTTPS endpoint for deployment events (started, successful, failed, cancelled) and audit events, ' +
          'optionally only for projects whose names match project_names_filter or for some environment types. Without ' +
          'target_secret a secret is generated; either way it is answered here only, and sealed at rest. Deliveries are ' +
          'signed as Standard Webhooks (docs/webhooks.md). 400 when target_url is not an absolute https URL, carries ' +
          'credentials or resolves to a private address.',
        tags: TAGS,
        params: OrganizationParams,
        body: OrganizationWebhookCreateRequest,
        response: { 201: OrganizationWebhookCreateResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'webhooks:create', target: 'organization' } },
    },
    async (request, reply) => {
      const created = await webhooks.createOrganizationWebhook(request.params.organizationId, request.body);
      return reply.code(HTTP_STATUS.created).send(created);
    },
  );

  app.get(
    '/organization/:organizationId/webhook/:webhookId',
    {
      schema: {
        operationId: 'getOrganizationWebhook',
        summary: 'Get a webhook',
        description:
          'One webhook without its secret; disabled_reason says why Slipway disabled it after failed deliveries. 404 when ' +
          'there is no such webhook in the organization.',
        tags: TAGS,
        params: WebhookParams,
        response: { 200: OrganizationWebhookResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'webhooks:read', target: 'organization' } },
    },
    async (request) => webhooks.getOrganizationWebhook(request.params.organizationId, request.params.webhookId),
  );

  app.put(
    '/organization/:organizationId/webhook/:webhookId',
    {
      schema: {
        operationId: 'editOrganizationWebhook',
        summary: 'Edit a webhook',
        description:
          'Replaces the settings; without target_secret the stored secret is kept. Enabling a disabled webhook clears its ' +
          'failure count. 400 for an invalid target_url; 404 for an unknown webhook.',
        tags: TAGS,
        params: WebhookParams,
        body: OrganizationWebhookEditRequest,
        response: { 200: OrganizationWebhookResponse, ...authenticatedErrors() },
      },
      config: { access: { permission: 'webhooks:update', target: 'organization' } },
    },
    async (request) => webhooks.editOrganizationWebhook(request.params.organizationId, request.params.webhookId, request.body),
  );

  app.delete(
    '/organization/:organizationId/webhook/:webhookId',
    {
      schema: {
        operationId: 'deleteOrganizationWebhook',
        summary: 'Delete a webhook',
        description: 'Deletes the webhook and its delivery log; nothing more is sent to it. 404 for an unknown webhook.',
        tags: TAGS,
        params: WebhookParams,
        response: { 204: NoContent, ...authenticatedErrors() },
      },
      config: { access: { permission: 'webhooks:delete', target: 'organization' } },
    },
    async (request, reply) => {
      await webhooks.deleteOrganizationWebhook(request.params.organizationId, request.params.webhookId);
      return reply.code(HTTP_STATUS.noContent).send(null);
    },
  );

  app.get(
    '/organization/:organizationId/webhook/:webhookId/delivery',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "List a webhook's deliveries",
        description:
          'The delivery log, one entry per attempt (event, trigger, answer status, latency, error), newest first; ' +
          'next_cursor is the cursor of the next page. 400 for a cursor that names no delivery of this webhook; 404 for ' +
          'an unknown webhook.',
        tags: TAGS,
        params: WebhookParams,
        querystring: WebhookDeliveryQuery,
        response: { 200: WebhookDeliveryPage, ...authenticatedErrors() },
      },
      config: { access: { permission: 'webhooks:read', target: 'organization' } },
    },
    async (request) => webhooks.listWebhookDeliveries(request.params.organizationId, request.params.webhookId, request.query),
  );

  app.post(
    '/organization/:organizationId/webhook/:webhookId/delivery/:deliveryId/redeliver',
    {
      schema: {
        operationId: 'redeliverWebhookDelivery',
        summary: 'Redeliver an event',
        description:
          "Queues the delivery's event to be sent again (same webhook-id, new timestamp and signature) and answers 202 at " +
          'once; the attempt appears in the delivery log. 404 for an unknown webhook or delivery; 409 while the webhook ' +
          'is disabled.',
        tags: TAGS,
        params: WebhookDeliveryParams,
        response: { 202: WebhookRedeliveryResponse, ...authenticatedErrors('conflict') },
      },
      config: { access: { permission: 'webhooks:update', target: 'organization' } },
    },
    async (request, reply) => {
      const queued = await webhooks.redeliverWebhookDelivery(request.params.organizationId, request.params.webhookId, request.params.deliveryId);
      return reply.code(HTTP_STATUS.accepted).send(queued);
    },
  );
}
