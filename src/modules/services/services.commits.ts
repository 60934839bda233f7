import { Type, type Static } from 'typebox';
import type { GitAccess, GitCredentials } from '../../git/git-access.ts';
import { readJson } from '../../db/db.json.ts';
import { badRequest } from '../../lib/errors.ts';
import { ListOf } from '../../protocol/wire.ts';
import { storedGitSourceOf, type StoredGitSource } from './services.git-sources.ts';
import { createServiceRecords } from './services.records.ts';
import type { ServicesDeps } from './services.service.ts';

/**
 * The last commits of a service's branch (listApplicationCommit, listJobCommit, listHelmCommit, listTerraformCommit),
 * read from the git host over the git protocol with the service's git token: the choices of a deployment's
 * git_commit_id. Nothing is kept: every listing asks the host.
 */

/** The kinds whose source can be a git repository, as their paths name them. */
export const COMMIT_KINDS = ['APPLICATION', 'JOB', 'HELM', 'TERRAFORM'] as const;
export type CommitKind = (typeof COMMIT_KINDS)[number];

/** How many commits one answer holds, and how far back `startId` / `gitCommitId` may point. */
export const COMMITS_PER_ANSWER = 20;
export const COMMIT_HISTORY_DEPTH = 100;

/** A full commit id or an abbreviation of at least 7 hexadecimal digits (as git shows them). */
const CommitId = Type.String({ minLength: 7, maxLength: 40, pattern: '^[0-9a-fA-F]+$' });

/**
 * The reference's two parameters (typed uuid there, which no git commit id is; Slipway takes commit ids):
 * `gitCommitId` lists from that commit, `startId` from the one after it (the next page after the last one shown).
 */
export const CommitQuery = Type.Object(
  { startId: Type.Optional(CommitId), gitCommitId: Type.Optional(CommitId) },
  { additionalProperties: false },
);
export type CommitQueryInput = Static<typeof CommitQuery>;

export const Commit = Type.Object(
  {
    git_commit_id: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    author_name: Type.String(),
    message: Type.String(),
    tag: Type.String(),
    commit_page_url: Type.Optional(Type.String()),
  },
  { $id: 'Commit' },
);
export const CommitResponseList = ListOf(Commit, 'CommitResponseList');
type CommitView = Static<typeof Commit>;

export interface ServiceCommitsDeps extends Pick<ServicesDeps, 'db' | 'kinds'> {
  git: Pick<GitAccess, 'listCommits'>;
  /** The git tokens module opens a token for a call to the host; undefined when the token no longer exists. */
  gitCredentialsOf(organizationId: string, gitTokenId: string): Promise<GitCredentials | undefined>;
}

/** The web page of a commit on the hosted providers whose page paths are known; none for other hosts. */
function commitPageOf(source: StoredGitSource, commitId: string): string | undefined {
  const url = new URL(source.url);
  const repository = `${url.origin}${url.pathname.replace(/\.git$/, '').replace(/\/+$/, '')}`;
  switch (url.hostname) {
    case 'github.com':
      return `${repository}/commit/${commitId}`;
    case 'gitlab.com':
      return `${repository}/-/commit/${commitId}`;
    case 'bitbucket.org':
      return `${repository}/commits/${commitId}`;
    default:
      return undefined;
  }
}

export function createServiceCommits(deps: ServiceCommitsDeps) {
  const records = createServiceRecords(deps);

  /** Where the page starts: the head, `gitCommitId` itself, or the commit after `startId`. */
  function firstIndex(ids: readonly string[], query: CommitQueryInput): number {
    if (query.startId !== undefined && query.gitCommitId !== undefined) {
      throw badRequest('give startId or gitCommitId, not both', [{ field: '/gitCommitId', message: 'cannot be combined with startId' }]);
    }
    const wanted = query.gitCommitId ?? query.startId;
    if (wanted === undefined) return 0;
    const prefix = wanted.toLowerCase();
    const index = ids.findIndex((id) => id.startsWith(prefix));
    if (index < 0) {
      const field = query.gitCommitId === undefined ? '/startId' : '/gitCommitId';
      throw badRequest(`commit ${wanted} is not among the last ${COMMIT_HISTORY_DEPTH} commits of the branch`, [{ field, message: 'unknown commit' }]);
    }
    return query.gitCommitId === undefined ? index + 1 : index;
  }

  return {
    async listServiceCommits(kind: CommitKind, serviceId: string, query: CommitQueryInput): Promise<CommitView[]> {
      const row = await records.requireServiceOfKind(kind, serviceId);
      const source = storedGitSourceOf(readJson<Record<string, unknown>>(row.settings));
      if (source === null) {
        throw badRequest(`${records.definitionOf(kind).item} ${serviceId} is not built from a git repository: it has no commits`);
      }
      let credentials: GitCredentials | undefined;
      if (source.git_token_id !== null) {
        credentials = await deps.gitCredentialsOf(row.organization_id, source.git_token_id);
        if (credentials === undefined) {
          throw badRequest(`the git token of ${row.name} no longer exists; give the service another one`, [{ field: '/git_token_id', message: 'git token deleted' }]);
        }
      }
      const commits = await deps.git.listCommits({ url: source.url, branch: source.branch, maxCount: COMMIT_HISTORY_DEPTH, credentials });
      const start = firstIndex(
        commits.map((commit) => commit.id),
        query,
      );
      return commits.slice(start, start + COMMITS_PER_ANSWER).map((commit) => {
        const page = commitPageOf(source, commit.id);
        return {
          git_commit_id: commit.id,
          created_at: commit.authoredAt,
          author_name: commit.authorName,
          message: commit.message,
          // Tags are not fetched (a tag's whole history would come with it): no commit is answered as tagged.
          tag: '',
          ...(page === undefined ? {} : { commit_page_url: page }),
        };
      });
    },
  };
}

export type ServiceCommits = ReturnType<typeof createServiceCommits>;
