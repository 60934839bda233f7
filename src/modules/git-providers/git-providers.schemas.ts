import { Type } from 'typebox';
import { ListOf } from '../../protocol/wire.ts';

/** The reference's GitRepository: one repository a git token can see, as its provider lists it. */
export const GitRepository = Type.Object(
  {
    id: Type.String({ description: "The provider's own id of the repository (GitHub's and GitLab's number, Bitbucket's uuid)." }),
    name: Type.String({ description: 'The full name, `owner/repository` (GitLab: the path with its namespace); what the branch listing takes as `name`.' }),
    url: Type.String({ description: 'The HTTPS clone URL, without credentials: what a service is built from.' }),
    default_branch: Type.Optional(Type.String()),
    is_private: Type.Optional(Type.Boolean()),
  },
  {
    $id: 'GitRepository',
    examples: [{ id: '123456789', name: 'acme/web-shop', url: 'https://github.com/acme/web-shop.git', default_branch: 'main', is_private: true }],
  },
);
export const GitRepositoryResponseList = ListOf(GitRepository, 'GitRepositoryResponseList');

export const GitRepositoryBranch = Type.Object({ name: Type.String() }, { $id: 'GitRepositoryBranch', examples: [{ name: 'main' }] });
export const GitRepositoryBranchResponseList = ListOf(GitRepositoryBranch, 'GitRepositoryBranchResponseList');

/** The reference's GitAuthProvider: a way the organization reaches a git provider (a git token or the GitHub App). */
export const GitAuthProvider = Type.Object(
  {
    id: Type.Optional(Type.String({ description: "The git token's id, or the GitHub App installation's id." })),
    name: Type.String({ description: 'The provider: GITHUB, GITLAB or BITBUCKET.' }),
    owner: Type.String({ description: "A git token's workspace, else its name; the GitHub App's installation id." }),
    use_bot: Type.Optional(Type.Boolean({ description: 'True for the GitHub App (its bot acts), false for a git token.' })),
  },
  { $id: 'GitAuthProvider', examples: [{ id: '6e3a1f9b-2c8d-4b5e-a7f0-9d1c4e2b8a73', name: 'GITHUB', owner: 'acme-github', use_bot: false }] },
);
export const GitAuthProviderResponseList = ListOf(GitAuthProvider, 'GitAuthProviderResponseList');

const GitTokenId = Type.Optional(
  Type.String({
    format: 'uuid',
    pattern: '^[0-9a-f-]{36}$',
    description: "The organization's git token to list with; optional when the organization has exactly one for the provider.",
  }),
);

/**
 * A repository's name as the providers spell it: `owner/repository` (GitLab: groups and subgroups, `a/b/c`). Plain
 * path characters only and no `.` or `..` segment, so the name can go into the provider's URL path without becoming
 * another path of its API.
 */
const RepositoryName = Type.String({
  minLength: 1,
  maxLength: 512,
  pattern: '^(?!\\.{1,2}(/|$))[A-Za-z0-9_.~-]+(/(?!\\.{1,2}(/|$))[A-Za-z0-9_.~-]+)*$',
  description: 'The repository as its listing names it: `owner/repository` (GitLab: `group/subgroup/project`).',
});

export const RepositoryListQuery = Type.Object({ gitTokenId: GitTokenId }, { additionalProperties: false });
export const BranchListQuery = Type.Object({ gitTokenId: GitTokenId, name: RepositoryName }, { additionalProperties: false });

/** The deprecated /account/… operations take no token: the reference's `name` only. */
export const AccountBranchListQuery = Type.Object({ name: Type.Optional(Type.String({ maxLength: 512 })) }, { additionalProperties: false });

export const OrganizationGithubAppConnectRequest = Type.Object(
  {
    installation_id: Type.String({
      minLength: 1,
      maxLength: 20,
      pattern: '^[0-9]+$',
      description: 'The id GitHub gave the installation of the App on the account (the `installation_id` of its setup redirect).',
    }),
    code: Type.String({
      minLength: 1,
      maxLength: 512,
      pattern: '^[\\x21-\\x7e]+$',
      description: "The OAuth code of the setup redirect; checked for its form and not stored with the connection (docs/git-providers.md).",
    }),
  },
  { $id: 'OrganizationGithubAppConnectRequest', additionalProperties: false, examples: [{ installation_id: '41234567', code: '1f2e3d4c5b6a79880a1b' }] },
);

export const GithubAppDisconnectQuery = Type.Object(
  { force: Type.Optional(Type.Boolean({ description: 'Accepted; nothing builds through the App, so there is nothing to force past.' })) },
  { additionalProperties: false },
);
