import { Type, type Static } from 'typebox';
import { ListOf, Timestamp, Uuid } from '../../protocol/wire.ts';
import { CONTAINER_REGISTRY_KINDS } from '../container-registries/container-registries.schemas.ts';
import { HELM_REPOSITORY_KINDS } from '../helm-repositories/helm-repositories.schemas.ts';
import { TERRAFORM_ENGINES } from '../services/services.kind-terraform.ts';
import { SERVICE_KINDS } from '../variables/variables.builtins.ts';
import { ClusterCredentials } from '../cloud-credentials/cloud-credentials.schemas.ts';
import { CREDENTIAL_PROVIDERS } from '../cloud-credentials/cloud-credentials.service.ts';

/** The reference's shapes of the organization-wide listings and of the catalogs of supported kinds and versions. */

const ENVIRONMENT_MODES = ['DEVELOPMENT', 'PREVIEW', 'PRODUCTION', 'STAGING'] as const;

export const OrganizationEnvironmentResponse = Type.Object(
  {
    id: Uuid,
    created_at: Timestamp,
    updated_at: Type.Optional(Timestamp),
    name: Type.String(),
    organization: Type.Object({ id: Uuid }),
    project: Type.Object({ id: Uuid }),
    mode: Type.Enum(ENVIRONMENT_MODES),
  },
  { $id: 'OrganizationEnvironmentResponse' },
);
export const OrganizationEnvironmentResponseList = ListOf(OrganizationEnvironmentResponse, 'OrganizationEnvironmentResponseList');

export const ServiceLightResponse = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    icon_uri: Type.String(),
    service_type: Type.Enum(SERVICE_KINDS),
    project_id: Uuid,
    project_name: Type.String(),
    environment_id: Uuid,
    environment_name: Type.String(),
    cluster_id: Uuid,
    job_type: Type.Optional(Type.Enum(['CRON', 'LIFECYCLE'])),
  },
  { $id: 'ServiceLightResponse' },
);
export const ServiceLightResponseList = ListOf(ServiceLightResponse, 'ServiceLightResponseList');

/** The reference's filters of listServicesByOrganizationId: all optional, combined with AND. */
export const OrganizationServicesQuery = Type.Object(
  { project_id: Type.Optional(Uuid), environment_id: Type.Optional(Uuid), cluster_id: Type.Optional(Uuid) },
  { additionalProperties: false },
);
export type OrganizationServicesFilter = Static<typeof OrganizationServicesQuery>;

export const OrganizationCredentialsResponseList = Type.Object(
  {
    results: Type.Array(
      Type.Object({
        credential: ClusterCredentials,
        clusters: Type.Array(Type.Object({ id: Uuid, name: Type.String(), cloud_provider: Type.Enum(CREDENTIAL_PROVIDERS) })),
      }),
    ),
  },
  { $id: 'OrganizationCrendentialsResponseList' },
);

const placementFields = {
  project_id: Uuid,
  project_name: Type.String(),
  environment_id: Uuid,
  environment_name: Type.String(),
  service_id: Uuid,
  service_name: Type.String(),
};
export const ContainerRegistryAssociatedServicesResponseList = ListOf(
  Type.Object({ ...placementFields, service_type: Type.Enum(['CONTAINER', 'LIFECYCLE', 'CRON']) }, { $id: 'ContainerRegistryAssociatedServicesResponse' }),
  'ContainerRegistryAssociatedServicesResponseList',
);
export const HelmRepositoryAssociatedServicesResponseList = ListOf(
  Type.Object({ ...placementFields, service_type: Type.Literal('HELM') }, { $id: 'HelmRepositoryAssociatedServicesResponse' }),
  'HelmRepositoryAssociatedServicesResponseList',
);
export const ContainerRegistryAssociatedParams = Type.Object({ organizationId: Uuid, containerRegistryId: Uuid }, { additionalProperties: false });
export const HelmRepositoryAssociatedParams = Type.Object({ organizationId: Uuid, helmRepositoryId: Uuid }, { additionalProperties: false });

export const AvailableContainerRegistryResponseList = ListOf(
  Type.Object(
    { kind: Type.Enum(CONTAINER_REGISTRY_KINDS), required_config: Type.Object({}, { additionalProperties: true }), is_mandatory: Type.Boolean() },
    { $id: 'AvailableContainerRegistryResponse' },
  ),
  'AvailableContainerRegistryResponseList',
);
export const AvailableHelmRepositoryResponseList = ListOf(
  Type.Object(
    { kind: Type.Enum(HELM_REPOSITORY_KINDS), required_config: Type.Object({}, { additionalProperties: true }), is_mandatory: Type.Boolean() },
    { $id: 'AvailableHelmRepositoryResponse' },
  ),
  'AvailableHelmRepositoryResponseList',
);
export const TerraformVersionResponseList = ListOf(
  Type.Object({ engine: Type.Enum(TERRAFORM_ENGINES), version: Type.String() }, { $id: 'TerraformVersionResponse' }),
  'TerraformVersionResponseList',
);

export const WebhookEventResponseList = ListOf(
  Type.Object(
    {
      id: Uuid,
      created_at: Timestamp,
      kind: Type.Literal('STANDARD'),
      matched_event: Type.Enum(['DEPLOYMENT_STARTED', 'DEPLOYMENT_CANCELLED', 'DEPLOYMENT_FAILURE', 'DEPLOYMENT_SUCCESSFUL']),
      target_url_used: Type.String(),
      request: Type.Object({}, { additionalProperties: true }),
      target_response_status_code: Type.Integer(),
      target_response_body: Type.Union([Type.String(), Type.Null()]),
    },
    { $id: 'WebhookEventResponse' },
  ),
  'WebhookEventResponseList',
);
