import { Type } from 'typebox';
import { BaseFields, Description, ListOf, Name, Nullable, Uuid } from '../../protocol/wire.ts';
import { RegistryUrl } from '../container-registries/container-registries.schemas.ts';

/** The original product's HelmRepositoryKindEnum: an HTTPS chart repository, or charts in an OCI registry. */
export const HELM_REPOSITORY_KINDS = [
  'HTTPS',
  'OCI_ECR',
  'OCI_SCALEWAY_CR',
  'OCI_DOCKER_HUB',
  'OCI_PUBLIC_ECR',
  'OCI_GENERIC_CR',
  'OCI_GITHUB_CR',
  'OCI_GITLAB_CR',
] as const;
export type HelmRepositoryKind = (typeof HELM_REPOSITORY_KINDS)[number];
export const HelmRepositoryKindEnum = Type.Enum(HELM_REPOSITORY_KINDS, { $id: 'HelmRepositoryKindEnum' });

const UserName = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^:\\x00-\\x1f\\x7f]+$' });
const Secret = Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\x00]+$' });
const Identifier = Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9._:/-]+$' });

/**
 * The original product's HelmRepositoryRequestConfig. OCI_ECR names a registered AWS credential
 * (`aws_credentials_id`) instead of static keys; access_key_id and secret_access_key are accepted by the schema only
 * so the refusal can say so.
 */
export const HelmRepositoryRequestConfig = Type.Object(
  {
    username: Type.Optional(UserName),
    password: Type.Optional(Secret),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9-]+$' })),
    aws_credentials_id: Type.Optional(Uuid),
    access_key_id: Type.Optional(Type.String({ maxLength: 256 })),
    secret_access_key: Type.Optional(Type.String({ maxLength: 256 })),
    scaleway_access_key: Type.Optional(Identifier),
    scaleway_secret_key: Type.Optional(Secret),
    scaleway_project_id: Type.Optional(Identifier),
  },
  { $id: 'HelmRepositoryRequestConfig', additionalProperties: false },
);

export const HelmRepositoryRequest = Type.Object(
  {
    name: Name,
    kind: HelmRepositoryKindEnum,
    description: Type.Optional(Nullable(Description)),
    url: RegistryUrl,
    skip_tls_verification: Type.Optional(Type.Boolean({ default: false })),
    config: Type.Optional(HelmRepositoryRequestConfig),
  },
  {
    $id: 'HelmRepositoryRequest',
    additionalProperties: false,
    examples: [{ name: 'bitnami', kind: 'HTTPS', description: 'Bitnami public charts', url: 'https://charts.bitnami.com/bitnami' }],
  },
);

export const HelmRepositoryResponseConfig = Type.Object(
  {
    username: Type.Optional(Type.String()),
    region: Type.Optional(Type.String()),
    aws_credentials_id: Type.Optional(Uuid),
    scaleway_access_key: Type.Optional(Type.String()),
    scaleway_project_id: Type.Optional(Type.String()),
  },
  { $id: 'HelmRepositoryResponseConfig' },
);

export const HelmRepositoryResponse = Type.Object(
  {
    ...BaseFields,
    name: Type.String(),
    kind: HelmRepositoryKindEnum,
    description: Type.Optional(Type.String()),
    url: Type.String(),
    skip_tls_verification: Type.Boolean(),
    associated_services_count: Type.Integer(),
    config: HelmRepositoryResponseConfig,
  },
  { $id: 'HelmRepositoryResponse' },
);
export const HelmRepositoryResponseList = ListOf(HelmRepositoryResponse, 'HelmRepositoryResponseList');

export const HelmRepositoryParams = Type.Object({ organizationId: Uuid, helmRepositoryId: Uuid }, { additionalProperties: false });

export const HelmChartsQuery = Type.Object(
  { chart_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\x00-\\x20\\x7f/]+$' })) },
  { additionalProperties: false },
);

export const HelmVersionResponse = Type.Object({ chart_name: Type.String(), versions: Type.Array(Type.String()) }, { $id: 'HelmVersionResponse' });
export const HelmVersionResponseList = ListOf(HelmVersionResponse, 'HelmVersionResponseList');
