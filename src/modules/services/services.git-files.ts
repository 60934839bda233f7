import { mkdtemp, open, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { GitAccess, GitCredentials } from '../../git/git-access.ts';
import { badRequest } from '../../lib/errors.ts';
import { atField, gitSourceFrom, normaliseRootPath, type StoredGitSource } from './services.git-sources.ts';
import type { GitRepositoryBody } from './services.kind-fields.ts';

/**
 * Files of a git source at the head of its branch, read before any service is created from it: the environment's
 * checks (checkDockerfile, checkGitFile, checkHelmRepository) and a git chart's default values (createHelmDefaultValues).
 * The repository is fetched as a build fetches it (the git access's checkout: one commit, no history, the
 * installation's URL rules, the git token's credentials) into a temporary directory removed after the read.
 */

/** More than any Dockerfile, Chart.yaml or values.yaml a form needs to show: the rest is not read. */
export const MAX_GIT_FILE_BYTES = 1_048_576;

export interface GitFilesDeps {
  git: Pick<GitAccess, 'checkout'>;
  /** The git tokens module opens a token for a call to the host; undefined when the organization has no such token. */
  gitCredentialsOf(organizationId: string, gitTokenId: string): Promise<GitCredentials | undefined>;
}

/** A file of the checkout: undefined when the path names no regular file inside the repository. */
export type GitFileReader = (relativePath: string) => Promise<string | undefined>;

export function createGitFiles(deps: GitFilesDeps) {
  /** The request's git source as a service would store it: the same URL, branch, path and token checks. */
  async function sourceOf(organizationId: string, body: GitRepositoryBody, pointer: string): Promise<StoredGitSource> {
    const gitTokenExists = async (gitTokenId: string) => (await deps.gitCredentialsOf(organizationId, gitTokenId)) !== undefined;
    // A git source names no other record than its token: the other lookups of a kind's context are never asked.
    const nothingElse = async () => false;
    return gitSourceFrom(body, {
      organizationId,
      environmentId: '',
      gitTokenExists,
      containerRegistryExists: nothingElse,
      helmRepositoryExists: nothingElse,
      missingLabelsGroups: async (ids) => ids,
      missingAnnotationsGroups: async (ids) => ids,
    }, pointer);
  }

  /**
   * Checks out the source's branch head and lets `read` open files relative to its root path; the checkout is removed
   * afterwards whatever happens. Refusals of the git host (unknown branch, repository or token) are 400s naming
   * `<pointer>/url` as the git access words them.
   */
  async function withSourceFiles<T>(organizationId: string, source: StoredGitSource, pointer: string, read: (file: GitFileReader) => Promise<T>): Promise<T> {
    const credentials = source.git_token_id === null ? undefined : await deps.gitCredentialsOf(organizationId, source.git_token_id);
    const workspace = await mkdtemp(path.join(tmpdir(), 'slipway-git-files-'));
    try {
      const destination = path.join(workspace, 'checkout');
      try {
        await deps.git.checkout({ url: source.url, branch: source.branch, credentials, destination });
      } catch (error) {
        throw atField(error, `${pointer}/url`);
      }
      const top = await realpath(destination);
      const root = path.join(top, source.root_path);
      return await read(async (relativePath) => readInside(top, root, relativePath));
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }

  return { sourceOf, withSourceFiles };
}

/**
 * The file at `relativePath` under `root`, if it is a regular file inside the checkout `top`: a path with `..`, or a
 * symbolic link leading out of the repository, reads as absent rather than as a file of this machine.
 */
async function readInside(top: string, root: string, relativePath: string): Promise<string | undefined> {
  const normalised = normaliseRootPath(relativePath, '/path');
  let resolved: string;
  try {
    resolved = await realpath(path.join(root, normalised));
  } catch {
    return undefined;
  }
  if (resolved !== top && !resolved.startsWith(`${top}${path.sep}`)) return undefined;
  const handle = await open(resolved, 'r').catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return undefined;
    if (stats.size > MAX_GIT_FILE_BYTES) throw badRequest(`${normalised.slice(1)} is larger than ${MAX_GIT_FILE_BYTES} bytes`);
    const buffer = Buffer.alloc(stats.size);
    await handle.read(buffer, 0, stats.size, 0);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

interface ChartFacts {
  chart_name: string;
  chart_version: string;
  app_version?: string;
  has_default_values: boolean;
}

/** The chart at the source's root path: its Chart.yaml read, a 400 naming root_path when there is none or it is broken. */
export async function chartAt(file: GitFileReader, rootPath: string, pointer: string): Promise<ChartFacts> {
  const field = `${pointer}/root_path`;
  const manifest = await file('Chart.yaml');
  if (manifest === undefined) throw badRequest(`there is no Helm chart (Chart.yaml) at ${rootPath} of the branch`, [{ field, message: 'no Chart.yaml here' }]);
  let chart: unknown;
  try {
    chart = parseYaml(manifest);
  } catch {
    throw badRequest(`the Chart.yaml at ${rootPath} is not valid YAML`, [{ field, message: 'Chart.yaml does not parse' }]);
  }
  const { name, version, appVersion } = (typeof chart === 'object' && chart !== null ? chart : {}) as Record<string, unknown>;
  if (typeof name !== 'string' || name === '' || (typeof version !== 'string' && typeof version !== 'number')) {
    throw badRequest(`the Chart.yaml at ${rootPath} names no chart name and version`, [{ field, message: 'Chart.yaml needs name and version' }]);
  }
  return {
    chart_name: name,
    chart_version: String(version),
    ...(typeof appVersion === 'string' || typeof appVersion === 'number' ? { app_version: String(appVersion) } : {}),
    has_default_values: (await file('values.yaml')) !== undefined,
  };
}

export type GitFiles = ReturnType<typeof createGitFiles>;
