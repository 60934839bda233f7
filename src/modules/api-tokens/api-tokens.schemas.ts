import { Type } from 'typebox';
import { TOKEN_SCOPES } from '../../auth/permissions.ts';
import { BaseFields, Description, ListOf, Name, Nullable, Timestamp, Uuid } from '../../protocol/wire.ts';

export const TokenScopeSchema = Type.Enum(TOKEN_SCOPES, { $id: 'OrganizationApiTokenScope' });

/**
 * The reference's create request plus `expires_at`. A token carries a role (`role_id`, any role but OWNER), a
 * scope, or both; its rights are what both allow and never more than its creator's.
 */
export const OrganizationApiTokenCreateRequest = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(Description)),
    scope: Type.Optional(Nullable(TokenScopeSchema)),
    role_id: Type.Optional(Nullable(Uuid)),
    expires_at: Type.Optional(Nullable(Timestamp)),
  },
  {
    $id: 'OrganizationApiTokenCreateRequest',
    additionalProperties: false,
    examples: [{ name: 'ci-deployer', description: 'Deploys from the CI pipeline', scope: 'DEPLOY', expires_at: '2027-03-01T00:00:00.000Z' }],
  },
);

const tokenFields = {
  ...BaseFields,
  name: Type.String(),
  description: Type.Optional(Type.String()),
  role_name: Type.Optional(Type.String()),
  role_id: Type.Optional(Uuid),
  scope: Nullable(Type.String()),
  expires_at: Nullable(Timestamp),
  creator_name: Nullable(Type.String()),
  /** The first characters of the value, to recognise a token; never the value itself. */
  token_start: Type.String(),
};

export const OrganizationApiToken = Type.Object(tokenFields, { $id: 'OrganizationApiToken' });
export const OrganizationApiTokenCreate = Type.Object(
  { ...tokenFields, token: Type.String() },
  {
    $id: 'OrganizationApiTokenCreate',
    examples: [
      {
        id: 'c2d8f1a7-6e4b-4f09-a3c5-8b7e2d1f0a96',
        created_at: '2026-03-02T10:04:51.230Z',
        name: 'ci-deployer',
        description: 'Deploys from the CI pipeline',
        scope: 'DEPLOY',
        expires_at: '2027-03-01T00:00:00.000Z',
        creator_name: 'Ada Lovelace',
        token_start: 'slw_k3Qx9v',
        token: 'slw_k3Qx9vT2mWb7LzR4pN8sHc1YdE6uJa0fG7hK2q',
      },
    ],
  },
);
export const OrganizationApiTokenResponseList = ListOf(OrganizationApiToken, 'OrganizationApiTokenResponseList');

export const ApiTokenListQuery = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 255 })), creatorName: Type.Optional(Type.String({ maxLength: 255 })) },
  { additionalProperties: false },
);

export const ApiTokenParams = Type.Object({ organizationId: Uuid, apiTokenId: Uuid }, { additionalProperties: false });
