import { Type } from 'typebox';
import { Nullable, OrganizationParams, Uuid } from '../../protocol/wire.ts';
import { ImageName, ImageTag } from '../services/services.kind-fields.ts';

/**
 * Wire shapes of git webhooks (docs/git-webhooks.md): the reference's GitWebhookStatusResponse, the image deploys'
 * request bodies (OrganizationContainerAutoDeployRequest, OrganizationContainerPreviewRequest,
 * OrganizationJobAutoDeployRequest), and Slipway's own answer to a provider's delivery.
 */

export const ServiceParams = Type.Object({ serviceId: Uuid }, { additionalProperties: false });

export const GitWebhookStatusResponse = Type.Object(
  {
    status: Type.Enum(['ACTIVE', 'NOT_CONFIGURED', 'MISCONFIGURED', 'UNABLE_TO_VERIFY']),
    provider: Type.Enum(['GITHUB', 'GITLAB', 'BITBUCKET']),
    missing_events: Type.Array(Type.String(), { description: "The events Slipway needs that the provider's hook is not subscribed to, as the provider names them." }),
  },
  { $id: 'GitWebhookStatusResponse', examples: [{ status: 'ACTIVE', provider: 'GITHUB', missing_events: [] }] },
);

export const DeliveryParams = Type.Object({ provider: Type.Enum(['github', 'gitlab', 'bitbucket']), serviceId: Uuid }, { additionalProperties: false });

export const GitWebhookDeliveryResponse = Type.Object(
  {
    delivery_id: Type.String(),
    event: Type.String(),
    outcome: Type.Enum(['DEPLOYED', 'IGNORED', 'DUPLICATE', 'PREVIEW_DEPLOYED', 'PREVIEW_DELETED']),
    message: Type.String(),
    service_id: Uuid,
    git_commit_id: Nullable(Type.String()),
    environment_id: Nullable(Uuid),
  },
  {
    $id: 'GitWebhookDeliveryResponse',
    examples: [
      {
        delivery_id: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        event: 'push',
        outcome: 'DEPLOYED',
        message: 'deploying commit 9f2c1e7a0b4d4c6e8f1a2b3c4d5e6f7a8b9c0d1e of branch main',
        service_id: '4e1b7f9c-5d2a-4c68-b3e9-0a6d8f2c5e17',
        git_commit_id: '9f2c1e7a0b4d4c6e8f1a2b3c4d5e6f7a8b9c0d1e',
        environment_id: null,
      },
    ],
  },
);

/** An image of a registry, as CI names what it pushed: the repository path and the new tag. */
const ImageFields = { image_name: Type.Optional(ImageName), tag: Type.Optional(ImageTag) };

export const OrganizationContainerAutoDeployRequest = Type.Object(ImageFields, {
  $id: 'OrganizationContainerAutoDeployRequest',
  additionalProperties: false,
  examples: [{ image_name: 'acme/storefront', tag: '2.4.2' }],
});
export const OrganizationContainerPreviewRequest = Type.Object(ImageFields, {
  $id: 'OrganizationContainerPreviewRequest',
  additionalProperties: false,
  examples: [{ image_name: 'acme/storefront', tag: 'pr-42' }],
});
export const OrganizationJobAutoDeployRequest = Type.Object(ImageFields, {
  $id: 'OrganizationJobAutoDeployRequest',
  additionalProperties: false,
  examples: [{ image_name: 'acme/report', tag: '1.8.0' }],
});

export { OrganizationParams };
