import { Type, type Static } from 'typebox';
import { BaseFields, Description, ListOf, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';
import { WEBHOOK_EVENT_TYPES } from './webhooks.events.ts';

/** The original product's OrganizationWebhook* shapes; Slipway sends STANDARD (JSON) deliveries only. */
export const OrganizationWebhookKindEnum = Type.Enum(['STANDARD'], { $id: 'OrganizationWebhookKindEnum' });
export const OrganizationWebhookEventEnum = Type.Enum(WEBHOOK_EVENT_TYPES, { $id: 'OrganizationWebhookEventEnum' });
const EnvironmentMode = Type.Enum(['PRODUCTION', 'STAGING', 'DEVELOPMENT', 'PREVIEW']);

/** A secret travels in a header (the plain-secret one): printable ASCII without spaces, so it cannot inject headers. */
const TargetSecret = Type.String({ minLength: 8, maxLength: 512, pattern: '^[\\x21-\\x7e]+$' });
/** A project name pattern: `*` matches any run of characters; compared case-insensitively. */
const ProjectNamePattern = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\x00-\\x1f\\x7f]+$' });

/** Checked further by the service: https (or http to a private host where allowed), no credentials, a public host. */
const TargetUrl = Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\x00-\\x20\\x7f]+$' });

const requestFields = {
  kind: Type.Optional(OrganizationWebhookKindEnum),
  target_url: TargetUrl,
  description: Type.Optional(Nullable(Description)),
  enabled: Type.Optional(Type.Boolean()),
  events: Type.Array(OrganizationWebhookEventEnum, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true }),
  project_names_filter: Type.Optional(Type.Array(ProjectNamePattern, { maxItems: 50 })),
  environment_types_filter: Type.Optional(Type.Array(EnvironmentMode, { maxItems: 4, uniqueItems: true })),
};

/** Without target_secret, Slipway generates one; it is answered once, by this operation. */
export const OrganizationWebhookCreateRequest = Type.Object(
  { ...requestFields, target_secret: Type.Optional(TargetSecret) },
  {
    $id: 'OrganizationWebhookCreateRequest',
    additionalProperties: false,
    examples: [
      {
        target_url: 'https://hooks.acme.example/slipway',
        description: 'Production deployments to the #releases channel',
        events: ['DEPLOYMENT_STARTED', 'DEPLOYMENT_SUCCESSFUL', 'DEPLOYMENT_FAILURE'],
        project_names_filter: ['web-*'],
        environment_types_filter: ['PRODUCTION'],
      },
    ],
  },
);
export type WebhookCreateInput = Static<typeof OrganizationWebhookCreateRequest>;

/** As creation; an absent target_secret keeps the stored one. Enabling a disabled webhook clears its failure count. */
export const OrganizationWebhookEditRequest = Type.Object(
  { ...requestFields, target_secret: Type.Optional(TargetSecret) },
  { $id: 'OrganizationWebhookEditRequest', additionalProperties: false },
);

const responseFields = {
  ...BaseFields,
  kind: OrganizationWebhookKindEnum,
  target_url: Type.String(),
  target_secret_set: Type.Boolean(),
  description: Type.Optional(Type.String()),
  enabled: Type.Boolean(),
  events: Type.Array(OrganizationWebhookEventEnum),
  project_names_filter: Type.Array(Type.String()),
  environment_types_filter: Type.Array(Type.String()),
  /** Slipway's notice when it disabled the webhook after failed deliveries; null otherwise. */
  disabled_reason: Nullable(Type.String()),
  disabled_at: Nullable(Timestamp),
};

export const OrganizationWebhookResponse = Type.Object(responseFields, { $id: 'OrganizationWebhookResponse' });
export const OrganizationWebhookResponseList = ListOf(OrganizationWebhookResponse, 'OrganizationWebhookResponseList');
export const OrganizationWebhookCreateResponse = Type.Object(
  { ...responseFields, target_secret: Type.String({ description: 'The signing secret, answered only here.' }) },
  {
    $id: 'OrganizationWebhookCreateResponse',
    examples: [
      {
        id: 'f1b3d5c7-8a2e-4c6f-b9d0-3e5a7c9b1d28',
        created_at: '2026-03-02T11:02:33.417Z',
        kind: 'STANDARD',
        target_url: 'https://hooks.acme.example/slipway',
        target_secret_set: true,
        description: 'Production deployments to the #releases channel',
        enabled: true,
        events: ['DEPLOYMENT_STARTED', 'DEPLOYMENT_SUCCESSFUL', 'DEPLOYMENT_FAILURE'],
        project_names_filter: ['web-*'],
        environment_types_filter: ['PRODUCTION'],
        disabled_reason: null,
        disabled_at: null,
        target_secret: 'whsec_GBkaGxwdHh8gISIjJCUmJygpKissLS4v',
      },
    ],
  },
);

export const WebhookParams = Type.Object({ organizationId: Uuid, webhookId: Uuid }, { additionalProperties: false });
export const WebhookDeliveryParams = Type.Object({ organizationId: Uuid, webhookId: Uuid, deliveryId: Uuid }, { additionalProperties: false });

export const MAX_DELIVERY_PAGE_SIZE = 100;
export const WebhookDeliveryQuery = Type.Object(
  {
    /** Attempts older than this one: the next_cursor of the previous page. */
    cursor: Type.Optional(Uuid),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DELIVERY_PAGE_SIZE })),
  },
  { additionalProperties: false },
);

export const WebhookDeliveryResponse = Type.Object(
  {
    id: Uuid,
    created_at: Timestamp,
    webhook_id: Uuid,
    /** The webhook-id header: one per event, the same for every attempt and redelivery of it. */
    message_id: Uuid,
    event: OrganizationWebhookEventEnum,
    attempt: Type.Integer({ minimum: 1 }),
    trigger: Type.Enum(['EVENT', 'REDELIVERY']),
    succeeded: Type.Boolean(),
    response_status: Nullable(Type.Integer()),
    latency_ms: Type.Integer({ minimum: 0 }),
    error: Nullable(Type.String()),
  },
  { $id: 'WebhookDeliveryResponse' },
);
export const WebhookDeliveryPage = Type.Object(
  { results: Type.Array(WebhookDeliveryResponse), next_cursor: Nullable(Uuid) },
  { $id: 'WebhookDeliveryPage' },
);

export const WebhookRedeliveryResponse = Type.Object(
  { message_id: Uuid, event: OrganizationWebhookEventEnum, status: Type.Literal('QUEUED') },
  { $id: 'WebhookRedeliveryResponse' },
);
