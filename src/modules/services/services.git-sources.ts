import type { Static } from 'typebox';
import type { GitProvider } from '../../git/git-access.ts';
import { parseRepositoryUrl } from '../../git/git-urls.ts';
import { AppError, badRequest, notFound } from '../../lib/errors.ts';
import type { GitRepositoryBody, GitRepositoryResponse } from './services.kind-fields.ts';
import type { ServiceKindContext } from './services.kinds.ts';

/**
 * Git sources (applications, jobs, helm charts and terraform services built from a repository) past their schemas
 * (services.kind-fields.ts, which re-exports everything here): the source as stored and where a kind keeps it, its
 * checks — URL, branch, path inside the repository, git token — and its answer.
 */

export interface StoredGitSource {
  provider: GitProvider;
  url: string;
  owner: string;
  name: string;
  branch: string;
  root_path: string;
  git_token_id: string | null;
}

/**
 * The git source a service builds from, wherever its kind keeps it: `git_repository` (applications, Terraform,
 * agentic workflows) or its source's (jobs built from a Dockerfile, Helm charts from git); null for the others.
 */
export function storedGitSourceOf(settings: Record<string, unknown>): StoredGitSource | null {
  const source = settings.source as { git_repository?: StoredGitSource } | null | undefined;
  return (settings.git_repository as StoredGitSource | null | undefined) ?? source?.git_repository ?? null;
}

/** The branch built when a request names none. */
export const DEFAULT_BRANCH = 'main';

function hasControlOrSpace(text: string, spaceToo: boolean): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || code === 0x7f || (spaceToo && code === 0x20)) return true;
  }
  return false;
}

/** git check-ref-format's rules, as far as they matter for a name typed into a form. */
function branchProblem(branch: string): string | undefined {
  if (branch.startsWith('-') || branch.startsWith('/') || branch.endsWith('/') || branch.endsWith('.')) return 'must not start with - or /, nor end with / or .';
  if (branch.endsWith('.lock')) return 'must not end with .lock';
  if (branch.includes('..') || branch.includes('//') || branch.includes('@{')) return 'must not contain .., // or @{';
  if (hasControlOrSpace(branch, true) || /[~^:?*[\\]/.test(branch)) return 'must not contain spaces, control characters or any of ~ ^ : ? * [ \\';
  if (branch.split('/').some((part) => part.startsWith('.'))) return 'no path component may start with .';
  return undefined;
}

/** `/infra/envs/` → `/infra/envs`: absolute, without `.`/`..` segments or control characters. */
export function normaliseRootPath(rootPath: string, field: string): string {
  const segments = rootPath.split('/').filter((segment) => segment !== '');
  for (const segment of segments) {
    if (segment === '.' || segment === '..' || hasControlOrSpace(segment, false)) {
      throw badRequest(`${field.slice(1)} "${rootPath}" is not a path inside the repository`, [
        { field, message: 'must not contain . or .. segments or control characters' },
      ]);
    }
  }
  return `/${segments.join('/')}`;
}

/**
 * Checks a git source and returns it as stored: an http(s) URL without credentials, query or fragment (credentials
 * belong in a git token, never in a URL that is stored and shown), a valid branch name, a path inside the
 * repository, and a git token of the organization. What the installation allows on top (https:// only, allowed
 * hosts) is checked where services are written (services.crud.ts).
 */
export async function gitSourceFrom(body: GitRepositoryBody, context: ServiceKindContext, pointer: string): Promise<StoredGitSource> {
  const url = repositoryUrl(body.url, `${pointer}/url`);
  const branch = body.branch ?? DEFAULT_BRANCH;
  const problem = branchProblem(branch);
  if (problem !== undefined) throw badRequest(`branch "${branch}" is not a valid git branch name`, [{ field: `${pointer}/branch`, message: problem }]);
  const rootPath = normaliseRootPath(body.root_path ?? '/', `${pointer}/root_path`);
  const gitTokenId = body.git_token_id ?? null;
  if (gitTokenId !== null && !(await context.gitTokenExists(gitTokenId))) {
    throw notFound(`git token ${gitTokenId} (${pointer}/git_token_id) does not exist in this organization`);
  }
  const [owner, name] = ownerAndName(url);
  return {
    provider: body.provider,
    url: url.href.replace(/\/$/, ''),
    owner: body.owner !== undefined && body.owner !== '' ? body.owner : owner,
    name: body.name !== undefined && body.name !== '' ? body.name : name,
    branch,
    root_path: rootPath,
    git_token_id: gitTokenId,
  };
}

/** A git layer refusal about `/url`, pointing at the request's field instead (`/git_repository/url`, …). */
export function atField(error: unknown, field: string): unknown {
  if (!(error instanceof AppError)) return error;
  return new AppError(error.kind, error.message, error.details?.map((detail) => (detail.field === '/url' ? { ...detail, field } : detail)));
}

/** The URL rules of every installation, as the build applies them (git/git-urls.ts), and that it names a repository. */
function repositoryUrl(raw: string, field: string): URL {
  let url: URL;
  try {
    url = parseRepositoryUrl(raw);
  } catch (error) {
    throw atField(error, field);
  }
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  if (segments.length === 0) throw badRequest('the repository url names no repository', [{ field, message: 'must name a repository' }]);
  return url;
}

/** `https://host/acme/tools/api.git` → ["acme/tools", "api"]. */
function ownerAndName(url: URL): [string, string] {
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const last = (segments.at(-1) ?? '').replace(/\.git$/, '');
  return [segments.slice(0, -1).join('/'), last];
}

export function gitSourceResponse(source: StoredGitSource): Static<typeof GitRepositoryResponse> {
  return { ...source };
}
