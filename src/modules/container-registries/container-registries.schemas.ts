import { Type } from 'typebox';
import { BaseFields, Description, ListOf, Name, Nullable, Uuid } from '../../protocol/wire.ts';
import { REPOSITORY_NAME_PATTERN } from '../../registry/oci-distribution.ts';

/** The reference's ContainerRegistryKindEnum, every value accepted. */
export const CONTAINER_REGISTRY_KINDS = [
  'ECR',
  'SCALEWAY_CR',
  'DOCKER_HUB',
  'GITHUB_CR',
  'GITHUB_ENTERPRISE_CR',
  'GITLAB_CR',
  'PUBLIC_ECR',
  'DOCR',
  'GENERIC_CR',
  'GCP_ARTIFACT_REGISTRY',
  'AZURE_CR',
] as const;
export type ContainerRegistryKind = (typeof CONTAINER_REGISTRY_KINDS)[number];
export const ContainerRegistryKindEnum = Type.Enum(CONTAINER_REGISTRY_KINDS, { $id: 'ContainerRegistryKindEnum' });

/** One line of printable text without a colon: a Basic-auth user name cannot hold one. */
const UserName = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^:\\x00-\\x1f\\x7f]+$' });
/** Secrets travel base64-encoded in Basic auth, so any text is possible except NUL (PostgreSQL cannot store it). */
const Secret = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '^[^\\x00]+$' });
const Identifier = Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9._:/-]+$' });
const Region = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9-]+$' });
export const RegistryUrl = Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\x00-\\x20\\x7f]+$' });

/**
 * The reference's ContainerRegistryRequestConfig. ECR names an AWS credential registered with the organization
 * (`aws_credentials_id`) instead of carrying static keys: access_key_id, secret_access_key and role_arn are accepted
 * by the schema only so the refusal can say what to do instead.
 */
export const ContainerRegistryRequestConfig = Type.Object(
  {
    username: Type.Optional(UserName),
    password: Type.Optional(Secret(4096)),
    region: Type.Optional(Region),
    aws_credentials_id: Type.Optional(Uuid),
    access_key_id: Type.Optional(Type.String({ maxLength: 256 })),
    secret_access_key: Type.Optional(Type.String({ maxLength: 256 })),
    role_arn: Type.Optional(Type.String({ maxLength: 2048 })),
    scaleway_access_key: Type.Optional(Identifier),
    scaleway_secret_key: Type.Optional(Secret(256)),
    scaleway_project_id: Type.Optional(Identifier),
    json_credentials: Type.Optional(Secret(65536)),
    azure_tenant_id: Type.Optional(Identifier),
    azure_subscription_id: Type.Optional(Identifier),
  },
  { $id: 'ContainerRegistryRequestConfig', additionalProperties: false },
);

export const ContainerRegistryRequest = Type.Object(
  {
    name: Name,
    kind: ContainerRegistryKindEnum,
    description: Type.Optional(Nullable(Description)),
    url: Type.Optional(RegistryUrl),
    config: Type.Optional(ContainerRegistryRequestConfig),
  },
  {
    $id: 'ContainerRegistryRequest',
    additionalProperties: false,
    examples: [
      {
        name: 'acme-ghcr',
        kind: 'GITHUB_CR',
        description: 'Images built by the acme GitHub organization',
        url: 'https://ghcr.io',
        config: { username: 'acme-bot', password: 'ghp_EXAMPLEnotARealToken000000000000000' },
      },
    ],
  },
);

/** The config fields that may be shown; secrets (password, secret keys, JSON keys) never are. */
export const ContainerRegistryResponseConfig = Type.Object(
  {
    username: Type.Optional(Type.String()),
    region: Type.Optional(Type.String()),
    aws_credentials_id: Type.Optional(Uuid),
    scaleway_access_key: Type.Optional(Type.String()),
    scaleway_project_id: Type.Optional(Type.String()),
    azure_tenant_id: Type.Optional(Type.String()),
    azure_subscription_id: Type.Optional(Type.String()),
  },
  { $id: 'ContainerRegistryResponseConfig' },
);

export const ContainerRegistryResponse = Type.Object(
  {
    ...BaseFields,
    name: Type.String(),
    kind: ContainerRegistryKindEnum,
    description: Type.Optional(Type.String()),
    url: Type.String(),
    associated_services_count: Type.Integer(),
    config: ContainerRegistryResponseConfig,
  },
  {
    $id: 'ContainerRegistryResponse',
    examples: [
      {
        id: 'b8c4e2a1-9f3d-4a6b-8e7c-1d5f0a2b3c49',
        created_at: '2026-03-02T10:41:08.903Z',
        name: 'acme-ghcr',
        kind: 'GITHUB_CR',
        description: 'Images built by the acme GitHub organization',
        url: 'https://ghcr.io',
        associated_services_count: 0,
        config: { username: 'acme-bot' },
      },
    ],
  },
);
export const ContainerRegistryResponseList = ListOf(ContainerRegistryResponse, 'ContainerRegistryResponseList');

export const ContainerRegistryParams = Type.Object({ organizationId: Uuid, containerRegistryId: Uuid }, { additionalProperties: false });

export const RegistryCheckResponse = Type.Object(
  {
    reachable: Type.Boolean({ description: 'The registry answered over HTTP.' }),
    authenticated: Type.Boolean({ description: 'The registry granted access: with the configured credentials, or anonymously when none are configured.' }),
    message: Type.String(),
  },
  { $id: 'RegistryCheckResponse' },
);

export const ContainerVersionsQuery = Type.Object(
  {
    image_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: REPOSITORY_NAME_PATTERN })),
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\x00-\\x1f\\x7f]+$' })),
  },
  { additionalProperties: false },
);

export const ContainerVersionResponse = Type.Object(
  { image_name: Type.String(), versions: Type.Array(Type.String()) },
  { $id: 'ContainerVersionResponse' },
);
export const ContainerVersionResponseList = ListOf(ContainerVersionResponse, 'ContainerVersionResponseList');
