import { createHash } from 'node:crypto';
import { mkdtemp, open, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import type { GitAccess, GitCommit, GitCredentials } from '../../git/git-access.ts';
import { badRequest } from '../../lib/errors.ts';
import { Nullable } from '../../protocol/wire.ts';
import { atField, normaliseRootPath, storedGitSourceOf, type StoredGitSource } from '../services/services.git-sources.ts';
import { GitRepositoryRequest, type GitRepositoryBody } from '../services/services.kind-fields.ts';
import { HclSyntaxError, parseHcl, type HclAttribute } from './service-insights.hcl.ts';

/**
 * What Slipway reads of a git repository for a form or a page (docs/service-insights.md): an application's
 * contributors (listApplicationContributor, from the history of its branch), the `.tfvars` files of a Terraform module
 * (listTfVarsFilesFromGitRepo) and the variables it declares (parseTerraformVariablesFromGitRepo). Everything goes
 * through the git access port — the installation's URL rules, the git token's credentials — and nothing is kept: the
 * history is fetched without files, a module's files in a checkout of one commit removed after the read.
 */

/** How many commits of the branch the contributors are counted over (newest first). */
export const CONTRIBUTOR_HISTORY_DEPTH = 500;
/** Bounds of what a module's listing reads. */
const MAX_MODULE_FILES = 200;
const MAX_FILE_BYTES = 1_048_576;
const MAX_SPECIFIC_PATHS = 50;

export const ContributorUser = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Stable for the author name within this application.' }),
    first_name: Type.String(),
    last_name: Type.String(),
    created_at: Type.String({ format: 'date-time', description: 'The date of their oldest commit counted.' }),
    updated_at: Type.String({ format: 'date-time', description: 'The date of their newest commit.' }),
    commits: Type.Integer({ description: `Their commits among the last ${CONTRIBUTOR_HISTORY_DEPTH} of the branch.` }),
  },
  { $id: 'User' },
);
export const UserResponseList = Type.Object({ results: Type.Array(ContributorUser) }, { $id: 'UserResponseList' });
type ContributorView = Static<typeof ContributorUser>;

const RepositoryFilePath = Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\x00-\\x1f\\x7f]+$' });
export const TfVarsListRequest = Type.Object(
  {
    git_repository: GitRepositoryRequest,
    mode: Type.Union([
      Type.Object({ type: Type.Literal('AutoDiscover') }, { additionalProperties: false }),
      Type.Object({ type: Type.Literal('SpecificPaths'), paths: Type.Array(RepositoryFilePath, { minItems: 1, maxItems: MAX_SPECIFIC_PATHS }) }, { additionalProperties: false }),
    ]),
  },
  { $id: 'TfVarsListRequest', additionalProperties: false },
);
export type TfVarsListBody = Static<typeof TfVarsListRequest>;
export const TfVarsFileResponse = Type.Object(
  {
    source: Type.String({ description: 'The file, relative to root_path.' }),
    variables: Type.Record(Type.String(), Type.String(), { description: 'Each assignment: a string as its value, any other expression as written.' }),
  },
  { $id: 'TfVarsFileResponse' },
);
export const TfVarsFileResponseList = Type.Object({ results: Type.Array(TfVarsFileResponse) });

export const TerraformVariableParsingRequest = Type.Object({ git_repository: GitRepositoryRequest }, { $id: 'TerraformVariableParsingRequest', additionalProperties: false });
export const TerraformVariableDefinition = Type.Object(
  {
    key: Type.String(),
    default: Nullable(Type.String({ description: 'A string default as its value, any other as written; null without one.' })),
    description: Nullable(Type.String()),
    nullable: Type.Boolean(),
    sensitive: Type.Boolean(),
    source: Type.String({ description: 'The .tf file declaring it, relative to root_path.' }),
  },
  { $id: 'TerraformVariableDefinition' },
);
export const TerraformVariableDefinitionList = Type.Object({ results: Type.Array(TerraformVariableDefinition) });
type TerraformVariableView = Static<typeof TerraformVariableDefinition>;

export interface ServiceGitInsightsDeps {
  git: Pick<GitAccess, 'listCommits' | 'checkout'>;
  /** The git tokens module opens a token for a call to the host; undefined when the organization has no such token. */
  gitCredentialsOf(organizationId: string, gitTokenId: string): Promise<GitCredentials | undefined>;
  /** An application's organization and stored settings; 404 unless the id names an application. */
  requireApplication(applicationId: string): Promise<{ organizationId: string; name: string; settings: Record<string, unknown> }>;
  /** A git source as a service would store it from this request (URL, branch, path and token checked). */
  sourceOf(organizationId: string, body: GitRepositoryBody, pointer: string): Promise<StoredGitSource>;
}

/** A uuid-shaped id derived from the application and the author's name: the same author keeps it across listings. */
function contributorId(applicationId: string, authorName: string): string {
  const hex = createHash('sha256').update(`${applicationId}\0${authorName}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function splitName(authorName: string): { first_name: string; last_name: string } {
  const parts = authorName.trim().split(/\s+/);
  return parts.length <= 1 ? { first_name: parts[0] ?? '', last_name: '' } : { first_name: parts.slice(0, -1).join(' '), last_name: parts[parts.length - 1] ?? '' };
}

/** Commits by author name (the port gives names, not e-mail addresses), most commits first. */
export function contributorsOf(applicationId: string, commits: readonly GitCommit[]): ContributorView[] {
  const byAuthor = new Map<string, { commits: number; oldest: string; newest: string }>();
  for (const commit of commits) {
    const at = new Date(commit.authoredAt).toISOString();
    const seen = byAuthor.get(commit.authorName);
    if (seen === undefined) byAuthor.set(commit.authorName, { commits: 1, oldest: at, newest: at });
    else {
      seen.commits += 1;
      if (at < seen.oldest) seen.oldest = at;
      if (at > seen.newest) seen.newest = at;
    }
  }
  return [...byAuthor.entries()]
    .sort(([nameA, a], [nameB, b]) => b.commits - a.commits || (nameA < nameB ? -1 : nameA > nameB ? 1 : 0))
    .map(([authorName, seen]) => ({
      id: contributorId(applicationId, authorName),
      ...splitName(authorName),
      created_at: seen.oldest,
      updated_at: seen.newest,
      commits: seen.commits,
    }));
}

/** The file at `relative` under `root` if it is a regular file inside the checkout `top` (no way out through `..` or links). */
async function readInside(top: string, root: string, relative: string): Promise<string | undefined> {
  let resolved: string;
  try {
    resolved = await realpath(path.join(root, relative));
  } catch {
    return undefined;
  }
  if (!resolved.startsWith(`${top}${path.sep}`)) return undefined;
  const handle = await open(resolved, 'r').catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return undefined;
    if (stats.size > MAX_FILE_BYTES) throw badRequest(`${relative} is larger than ${MAX_FILE_BYTES} bytes`);
    const buffer = Buffer.alloc(stats.size);
    await handle.read(buffer, 0, stats.size, 0);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

/** What an attribute gives as a string: a literal's value, else its expression as written. */
function valueOf(attribute: HclAttribute): string {
  return attribute.text ?? attribute.expression;
}

/** The assignments of a `.tfvars` (HCL) or `.tfvars.json` file. */
function tfVarsOf(file: string, content: string): Record<string, string> {
  const variables: Record<string, string> = {};
  if (file.endsWith('.json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(content);
    } catch {
      throw badRequest(`${file} is not valid JSON`, [{ field: '/mode', message: `${file} does not parse` }]);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badRequest(`${file} is not a JSON object of variables`);
    for (const [key, value] of Object.entries(parsed)) variables[key] = typeof value === 'string' ? value : JSON.stringify(value);
    return variables;
  }
  const body = parseFile(file, content);
  for (const attribute of body.attributes) variables[attribute.name] = valueOf(attribute);
  return variables;
}

function parseFile(file: string, content: string) {
  try {
    return parseHcl(content);
  } catch (error) {
    if (error instanceof HclSyntaxError) throw badRequest(`${file} does not parse: ${error.message}`, [{ field: '/git_repository/root_path', message: `${file}: ${error.message}` }]);
    throw error;
  }
}

export function createServiceGitInsights(deps: ServiceGitInsightsDeps) {
  /** Checks out the head of the source's branch and lets `read` see its root path; the checkout is removed afterwards. */
  async function withCheckout<T>(organizationId: string, source: StoredGitSource, read: (top: string, root: string) => Promise<T>): Promise<T> {
    const credentials = source.git_token_id === null ? undefined : await deps.gitCredentialsOf(organizationId, source.git_token_id);
    const workspace = await mkdtemp(path.join(tmpdir(), 'slipway-terraform-module-'));
    try {
      const destination = path.join(workspace, 'checkout');
      try {
        await deps.git.checkout({ url: source.url, branch: source.branch, credentials, destination });
      } catch (error) {
        throw atField(error, '/git_repository/url');
      }
      const top = await realpath(destination);
      const root = path.join(top, source.root_path);
      const rootReal = await realpath(root).catch(() => undefined);
      if (rootReal === undefined || (rootReal !== top && !rootReal.startsWith(`${top}${path.sep}`))) {
        throw badRequest(`root_path ${source.root_path} is not a directory of the branch`, [{ field: '/git_repository/root_path', message: 'no such directory' }]);
      }
      return await read(top, rootReal);
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }

  /** The regular files directly in `root` whose names pass `wanted`, sorted. */
  async function filesIn(root: string, wanted: (name: string) => boolean): Promise<string[]> {
    const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
    const names = entries.filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && wanted(entry.name)).map((entry) => entry.name);
    if (names.length > MAX_MODULE_FILES) throw badRequest(`the module has more than ${MAX_MODULE_FILES} such files`, [{ field: '/git_repository/root_path', message: 'too many files' }]);
    return names.sort();
  }

  return {
    async listApplicationContributors(applicationId: string): Promise<ContributorView[]> {
      const application = await deps.requireApplication(applicationId);
      const source = storedGitSourceOf(application.settings);
      if (source === null) throw badRequest(`application ${application.name} is not built from a git repository: it has no contributors`);
      let credentials: GitCredentials | undefined;
      if (source.git_token_id !== null) {
        credentials = await deps.gitCredentialsOf(application.organizationId, source.git_token_id);
        if (credentials === undefined) throw badRequest(`the git token of ${application.name} no longer exists; give the application another one`, [{ field: '/git_token_id', message: 'git token deleted' }]);
      }
      const commits = await deps.git.listCommits({ url: source.url, branch: source.branch, maxCount: CONTRIBUTOR_HISTORY_DEPTH, credentials });
      return contributorsOf(applicationId, commits);
    },

    async listTfVarsFiles(organizationId: string, body: TfVarsListBody): Promise<Array<Static<typeof TfVarsFileResponse>>> {
      const source = await deps.sourceOf(organizationId, body.git_repository, '/git_repository');
      const mode = body.mode;
      const wanted = mode.type === 'SpecificPaths' ? mode.paths.map((file, index) => ({ file: normaliseRootPath(file, `/mode/paths/${index}`).slice(1), index })) : undefined;
      return withCheckout(organizationId, source, async (top, root) => {
        const files = wanted ?? (await filesIn(root, (name) => name.endsWith('.tfvars') || name.endsWith('.tfvars.json'))).map((file, index) => ({ file, index }));
        const results = [];
        for (const { file, index } of files) {
          const content = await readInside(top, root, file);
          if (content === undefined) throw badRequest(`${file} is not a file under ${source.root_path} of the branch`, [{ field: `/mode/paths/${index}`, message: 'no such file' }]);
          results.push({ source: file, variables: tfVarsOf(file, content) });
        }
        return results;
      });
    },

    async parseTerraformVariables(organizationId: string, body: { git_repository: GitRepositoryBody }): Promise<TerraformVariableView[]> {
      const source = await deps.sourceOf(organizationId, body.git_repository, '/git_repository');
      return withCheckout(organizationId, source, async (top, root) => {
        const files = await filesIn(root, (name) => name.endsWith('.tf'));
        if (files.length === 0) throw badRequest(`there is no Terraform file (.tf) at ${source.root_path} of the branch`, [{ field: '/git_repository/root_path', message: 'no .tf files here' }]);
        const declared = new Map<string, TerraformVariableView>();
        for (const file of files) {
          const content = await readInside(top, root, file);
          if (content === undefined) continue;
          for (const block of parseFile(file, content).blocks) {
            if (block.type !== 'variable') continue;
            const key = block.labels[0];
            if (key === undefined || block.labels.length !== 1) throw badRequest(`${file} line ${block.line}: a variable block needs exactly one name`);
            const previous = declared.get(key);
            if (previous !== undefined) throw badRequest(`variable "${key}" is declared twice: in ${previous.source} and in ${file}`, [{ field: '/git_repository/root_path', message: 'duplicate variable' }]);
            const attribute = (name: string) => block.body.attributes.find((candidate) => candidate.name === name);
            const fallback = attribute('default');
            const description = attribute('description');
            declared.set(key, {
              key,
              default: fallback === undefined || (fallback.text === undefined && fallback.expression === 'null') ? null : valueOf(fallback),
              description: description === undefined ? null : valueOf(description),
              nullable: attribute('nullable')?.expression !== 'false',
              sensitive: attribute('sensitive')?.expression === 'true',
              source: file,
            });
          }
        }
        return [...declared.values()];
      });
    },
  };
}

export type ServiceGitInsights = ReturnType<typeof createServiceGitInsights>;

