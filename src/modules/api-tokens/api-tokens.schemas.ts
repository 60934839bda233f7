import { Type } from 'typebox';
import { TOKEN_SCOPES } from '../../auth/permissions.ts';
import { BaseFields, ListOf, Nullable, Timestamp, Uuid } from '../../http/schema.ts';

/**
 * The shared Name and Description (http/schema.ts), minus control characters: PostgreSQL text cannot hold NUL
 * (storing one is a server error there, while SQLite keeps it), and a name is one line of printable text. The
 * name pattern is "optional non-control spaces, one printable character, then printable text": its parts cannot
 * overlap, so it runs in linear time whatever the input length.
 */
const TokenName = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[^\\S\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f]*$',
});
const TokenDescription = Type.String({ maxLength: 2000, pattern: '^[^\\x00]*$' });

export const TokenScopeSchema = Type.Enum(TOKEN_SCOPES, { $id: 'OrganizationApiTokenScope' });

/**
 * The reference's create request plus `expires_at`. A token carries a role (`role_id`, any role but OWNER), a
 * scope, or both; its rights are what both allow and never more than its creator's.
 */
export const OrganizationApiTokenCreateRequest = Type.Object(
  {
    name: TokenName,
    description: Type.Optional(Nullable(TokenDescription)),
    scope: Type.Optional(Nullable(TokenScopeSchema)),
    role_id: Type.Optional(Nullable(Uuid)),
    expires_at: Type.Optional(Nullable(Timestamp)),
  },
  { $id: 'OrganizationApiTokenCreateRequest', additionalProperties: false },
);

const tokenFields = {
  ...BaseFields,
  name: Type.String(),
  description: Nullable(Type.String()),
  role_name: Nullable(Type.String()),
  role_id: Nullable(Uuid),
  scope: Nullable(Type.String()),
  expires_at: Nullable(Timestamp),
  creator_name: Nullable(Type.String()),
  /** The first characters of the value, to recognise a token; never the value itself. */
  token_start: Type.String(),
};

export const OrganizationApiToken = Type.Object(tokenFields, { $id: 'OrganizationApiToken' });
export const OrganizationApiTokenCreate = Type.Object(
  { ...tokenFields, token: Type.String() },
  { $id: 'OrganizationApiTokenCreate' },
);
export const OrganizationApiTokenResponseList = ListOf(OrganizationApiToken, 'OrganizationApiTokenResponseList');

export const ApiTokenListQuery = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 255 })), creatorName: Type.Optional(Type.String({ maxLength: 255 })) },
  { additionalProperties: false },
);

export const ApiTokenParams = Type.Object({ organizationId: Uuid, apiTokenId: Uuid }, { additionalProperties: false });
