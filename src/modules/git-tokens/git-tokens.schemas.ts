import { Type } from 'typebox';
import { GIT_PROVIDERS } from '../../git/git-access.ts';
import { BaseFields, Description, ListOf, Name, Nullable, Uuid } from '../../protocol/wire.ts';

export const GitProviderEnum = Type.Enum(GIT_PROVIDERS, { $id: 'GitProviderEnum' });

/**
 * A token value as git hosts issue them: printable ASCII without spaces. Anything else (a line break above all)
 * could not travel in an HTTP header and would let a value inject headers of its own.
 */
const TokenValue = Type.String({ minLength: 1, maxLength: 4096, pattern: '^[\\x21-\\x7e]+$' });
const Workspace = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\x00-\\x1f\\x7f]+$' });
const ApiUrl = Type.String({ maxLength: 2048, format: 'uri', pattern: '^https?://[^\\x00-\\x20\\x7f]+$' });

const requestFields = {
  name: Name,
  description: Type.Optional(Nullable(Description)),
  type: GitProviderEnum,
  workspace: Type.Optional(Nullable(Workspace)),
  git_api_url: Type.Optional(Nullable(ApiUrl)),
};

export const GitTokenRequest = Type.Object(
  { ...requestFields, token: TokenValue },
  {
    $id: 'GitTokenRequest',
    additionalProperties: false,
    examples: [{ name: 'acme-github', description: 'Read access to the acme GitHub organization', type: 'GITHUB', token: 'github_pat_11EXAMPLE0000000000_notarealtoken' }],
  },
);

/** editGitToken: as GitTokenRequest, except that an absent `token` keeps the stored value. */
export const GitTokenEditRequest = Type.Object(
  { ...requestFields, token: Type.Optional(TokenValue) },
  { $id: 'GitTokenEditRequest', additionalProperties: false },
);

export const GitTokenResponse = Type.Object(
  {
    ...BaseFields,
    name: Type.String(),
    description: Type.Optional(Type.String()),
    type: GitProviderEnum,
    expired_at: Type.Optional(Type.String({ format: 'date' })),
    workspace: Type.Optional(Type.String()),
    associated_services_count: Type.Number(),
    git_api_url: Type.String(),
  },
  {
    $id: 'GitTokenResponse',
    examples: [
      {
        id: '6e3a1f9b-2c8d-4b5e-a7f0-9d1c4e2b8a73',
        created_at: '2026-03-02T10:30:12.551Z',
        name: 'acme-github',
        description: 'Read access to the acme GitHub organization',
        type: 'GITHUB',
        associated_services_count: 0,
        git_api_url: 'https://api.github.com',
      },
    ],
  },
);
export const GitTokenResponseList = ListOf(GitTokenResponse, 'GitTokenResponseList');

/** The reference's types, plus Slipway's agentic workflows, which may build from a repository too (docs/services.md). */
export const GIT_TOKEN_SERVICE_TYPES = ['APPLICATION', 'CRON', 'LIFECYCLE', 'HELM', 'TERRAFORM', 'AGENTIC_WORKFLOW'] as const;
export const GitTokenAssociatedServiceType = Type.Enum(GIT_TOKEN_SERVICE_TYPES, { $id: 'GitTokenAssociatedServiceType' });
export const GitTokenAssociatedServiceResponse = Type.Object(
  {
    project_id: Uuid,
    project_name: Type.String(),
    environment_id: Uuid,
    environment_name: Type.String(),
    service_id: Uuid,
    service_name: Type.String(),
    service_type: GitTokenAssociatedServiceType,
  },
  { $id: 'GitTokenAssociatedServiceResponse' },
);
export const GitTokenAssociatedServicesResponseList = ListOf(GitTokenAssociatedServiceResponse, 'GitTokenAssociatedServicesResponseList');

export const GitTokenParams = Type.Object({ organizationId: Uuid, gitTokenId: Uuid }, { additionalProperties: false });

/**
 * The reference's ApplicationGitRepositoryRequest. `owner` and `name` are accepted (existing clients send them) but
 * not required: the URL alone names the repository, which is what git is pointed at.
 */
export const ApplicationGitRepositoryRequest = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\x00-\\x20\\x7f]+$' }),
    owner: Type.Optional(Type.String({ maxLength: 255 })),
    name: Type.Optional(Type.String({ maxLength: 255 })),
    branch: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    root_path: Type.Optional(Type.String({ maxLength: 4096, default: '/' })),
    git_token_id: Type.Optional(Nullable(Uuid)),
    provider: GitProviderEnum,
  },
  { $id: 'ApplicationGitRepositoryRequest', additionalProperties: false },
);

export const GitDirectoryList = Type.Object({ results: Type.Array(Type.String()) }, { $id: 'GitDirectoryList' });
