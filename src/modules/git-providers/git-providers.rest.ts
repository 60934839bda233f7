import type { IncomingHttpHeaders } from 'node:http';
import type { GitProvider } from '../../git/git-access.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, badRequest, notFound } from '../../lib/errors.ts';
import { OutboundFailure, type OutboundHttp, type OutboundResponse } from '../../registry/outbound-http.ts';

/**
 * The git providers' REST APIs, read with an organization's git token: the repositories the token can see and the
 * branches of one. GitHub (`/user/repos`, `/repos/{owner}/{repo}/branches`, pages by the `Link` header), GitLab
 * (`/projects?membership=true`, `/projects/:id/repository/branches`, pages by `X-Next-Page`) and Bitbucket Cloud
 * (`/repositories/{workspace}`, `/repositories/{workspace}/{slug}/refs/branches`, pages by `next` in the body), each
 * under the token's `git_api_url`. Requests go through the outbound HTTP of registries and webhooks, so the same
 * address rules apply (docs/registries.md). What the provider answers is mapped to Slipway's errors here; nothing of
 * the token reaches a message.
 */

/** Where and as whom a listing reads: one git token, opened. */
export interface ProviderAccount {
  provider: GitProvider;
  gitTokenId: string;
  /** The API root, e.g. `https://api.github.com` or `https://gitlab.example.com/api/v4`. */
  apiUrl: string;
  token: string;
  /** Bitbucket's workspace of the token, when it has one. */
  workspace: string | null;
}

export interface ProviderRepository {
  id: string;
  name: string;
  url: string;
  default_branch?: string;
  is_private?: boolean;
}

export interface GitProviderRest {
  listRepositories(account: ProviderAccount): Promise<ProviderRepository[]>;
  listBranches(account: ProviderAccount, repositoryName: string): Promise<string[]>;
}

export interface GitProviderLimits {
  /** Pages followed at most per listing (100 items a page where the provider allows): the listing stops there. */
  maxPages: number;
}

/** 10 pages of 100: a thousand repositories or branches, far more than a chooser shows, and 10 requests at most. */
export const DEFAULT_GIT_PROVIDER_LIMITS: GitProviderLimits = { maxPages: 10 };

/** A provider's rate limit is used up: answered 429 with `retry-after` (set by the routes from `retryAfterSeconds`). */
export class ProviderRateLimited extends AppError {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super('rate_limited', message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

const PER_PAGE = 100;
/** When a provider says it is limited but not until when: a minute, GitHub's advice for secondary limits. */
const UNKNOWN_RESET_SECONDS = 60;

const PROVIDER_NAME: Record<GitProvider, string> = { GITHUB: 'GitHub', GITLAB: 'GitLab', BITBUCKET: 'Bitbucket' };

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function authorizationOf(account: ProviderAccount): string {
  // Bitbucket app passwords go with the account's user name (`user:app-password`); access tokens are bearer tokens.
  if (account.provider === 'BITBUCKET' && account.token.includes(':')) return `Basic ${Buffer.from(account.token).toString('base64')}`;
  return `Bearer ${account.token}`;
}

function headersOf(account: ProviderAccount): Record<string, string> {
  const headers: Record<string, string> = { authorization: authorizationOf(account), accept: 'application/json' };
  if (account.provider === 'GITHUB') {
    headers['accept'] = 'application/vnd.github+json';
    headers['x-github-api-version'] = '2022-11-28';
  }
  return headers;
}

/** The API root without a trailing slash, so paths append cleanly. */
function apiRoot(account: ProviderAccount): string {
  return account.apiUrl.replace(/\/+$/, '');
}

/** The `next` target of an RFC 8288 Link header (GitHub's pages). */
function nextOfLinkHeader(headers: IncomingHttpHeaders): string | undefined {
  const link = headerOf(headers, 'link');
  if (link === undefined) return undefined;
  for (const part of link.split(',')) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match !== null && /\brel\s*=\s*"?next"?/.test(match[2] ?? '')) return match[1];
  }
  return undefined;
}

/** A clone URL as a service takes it: credentials a provider puts in (Bitbucket's `user@`) are left out. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href;
  } catch {
    return url;
  }
}

/**
 * One segment of an API path. Encoded, and never `.` or `..`, which URL resolution would turn into another path of the
 * API (a token's workspace is free text; repository names are checked by the routes as well).
 */
function pathSegment(value: string, field = '/name'): string {
  if (value === '.' || value === '..') throw badRequest(`"${value}" cannot name a repository or workspace`, [{ field, message: 'is not a name' }]);
  return encodeURIComponent(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}

interface Page {
  items: unknown[];
  next: string | undefined;
}

export function createGitProviderRest(deps: { http: OutboundHttp; clock: Clock; limits?: GitProviderLimits }): GitProviderRest {
  const { http, clock } = deps;
  const limits = deps.limits ?? DEFAULT_GIT_PROVIDER_LIMITS;

  function rateLimited(account: ProviderAccount, headers: IncomingHttpHeaders): ProviderRateLimited {
    const nowSeconds = Math.floor(clock.now().getTime() / 1000);
    // GitHub: X-RateLimit-Reset; GitLab: RateLimit-Reset (both epoch seconds); anyone: Retry-After (seconds).
    const reset = Number(headerOf(headers, 'x-ratelimit-reset') ?? headerOf(headers, 'ratelimit-reset'));
    const retryAfter = Number(headerOf(headers, 'retry-after'));
    let seconds = UNKNOWN_RESET_SECONDS;
    if (Number.isFinite(retryAfter) && retryAfter > 0) seconds = Math.ceil(retryAfter);
    else if (Number.isFinite(reset) && reset > 0) seconds = Math.max(1, reset - nowSeconds);
    const resetsAt = new Date((nowSeconds + seconds) * 1000).toISOString();
    return new ProviderRateLimited(
      `${PROVIDER_NAME[account.provider]}'s API rate limit for git token ${account.gitTokenId} is used up; it resets at ${resetsAt} (retry in ${seconds} s)`,
      seconds,
    );
  }

  function isRateLimited(response: OutboundResponse): boolean {
    return response.status === 429 || (response.status === 403 && headerOf(response.headers, 'x-ratelimit-remaining') === '0');
  }

  function failureOf(account: ProviderAccount, response: OutboundResponse, what: string): AppError {
    const provider = PROVIDER_NAME[account.provider];
    const status = response.status;
    if (isRateLimited(response)) return rateLimited(account, response.headers);
    if (status === 401) {
      return badRequest(`${provider} refused git token ${account.gitTokenId} (401): it is invalid, expired or revoked; edit the token with a current value`, [
        { field: '/gitTokenId', message: 'refused by the provider' },
      ]);
    }
    if (status === 403) {
      return badRequest(`${provider} refused git token ${account.gitTokenId} access to ${what} (403): the token lacks the permission or scope`, [
        { field: '/gitTokenId', message: 'lacks the permission' },
      ]);
    }
    if (status === 404) return notFound(`${what} not found at ${provider}, or git token ${account.gitTokenId} cannot see it`);
    if (status >= 400 && status < 500) return badRequest(`${provider} refused to list ${what} (it answered ${status})`);
    return new AppError('unavailable', `${provider} answered ${status} when asked for ${what}; try again later`);
  }

  function outboundFailureOf(account: ProviderAccount, error: OutboundFailure): AppError {
    const provider = PROVIDER_NAME[account.provider];
    if (error.kind === 'refused') {
      return badRequest(`the API URL of git token ${account.gitTokenId} may not be reached: ${error.message}`, [{ field: '/gitTokenId', message: 'API URL refused' }]);
    }
    // A name that does not resolve is the token's API URL to fix (as a git host that does not resolve is, system-git.ts);
    // a host that does not answer or fails is an outage.
    if (error.kind === 'unresolvable') {
      return badRequest(`the API URL of git token ${account.gitTokenId} cannot be used: ${error.message}`, [{ field: '/gitTokenId', message: 'unknown API host' }]);
    }
    return new AppError('unavailable', `${provider}'s API could not be read: ${error.message}; try again later`);
  }

  async function get(account: ProviderAccount, url: string, what: string): Promise<{ response: OutboundResponse; body: unknown }> {
    let response: OutboundResponse;
    try {
      response = await http.get({ url, headers: headersOf(account) });
    } catch (error) {
      if (error instanceof OutboundFailure) throw outboundFailureOf(account, error);
      throw error;
    }
    if (response.status < 200 || response.status >= 300) throw failureOf(account, response, what);
    let body: unknown;
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new AppError('unavailable', `${PROVIDER_NAME[account.provider]} answered ${what} with something that is not JSON; try again later`);
    }
    return { response, body };
  }

  /**
   * Reads page after page until the provider has no next one or `maxPages` were read. A next page on another origin
   * than the API's is not followed (the token is for the API alone), nor one the provider's remaining quota cannot
   * serve: that is answered as the rate limit it is rather than asked for and refused.
   */
  async function readPages(account: ProviderAccount, firstUrl: string, what: string, pageOf: (response: OutboundResponse, body: unknown, url: string) => Page): Promise<unknown[]> {
    const origin = new URL(firstUrl).origin;
    const items: unknown[] = [];
    let url: string | undefined = firstUrl;
    for (let page = 0; url !== undefined && page < limits.maxPages; page += 1) {
      const { response, body } = await get(account, url, what);
      const read = pageOf(response, body, url);
      items.push(...read.items);
      url = read.next === undefined ? undefined : URL.parse(read.next, url)?.href;
      if (read.next !== undefined && url === undefined) {
        throw new AppError('unavailable', `${PROVIDER_NAME[account.provider]} gave the next page of ${what} as something that is not a URL; try again later`);
      }
      if (url === undefined || page + 1 >= limits.maxPages) break;
      if (new URL(url).origin !== origin) {
        throw new AppError('unavailable', `${PROVIDER_NAME[account.provider]} pointed the next page of ${what} at another host; it was not followed`);
      }
      if (headerOf(response.headers, 'x-ratelimit-remaining') === '0') throw rateLimited(account, response.headers);
    }
    return items;
  }

  function arrayBody(account: ProviderAccount, body: unknown, what: string): unknown[] {
    if (!Array.isArray(body)) throw new AppError('unavailable', `${PROVIDER_NAME[account.provider]} answered ${what} with an unexpected document; try again later`);
    return body;
  }

  function valuesBody(account: ProviderAccount, body: unknown, what: string): Page {
    if (!isRecord(body) || !Array.isArray(body['values'])) {
      throw new AppError('unavailable', `${PROVIDER_NAME[account.provider]} answered ${what} with an unexpected document; try again later`);
    }
    return { items: body['values'], next: typeof body['next'] === 'string' ? body['next'] : undefined };
  }

  /** GitLab's pages: the same URL with `page` set to X-Next-Page (empty on the last page). */
  function gitlabNext(response: OutboundResponse, url: string): string | undefined {
    const next = headerOf(response.headers, 'x-next-page');
    if (next === undefined || !/^[0-9]+$/.test(next)) return undefined;
    const following = new URL(url);
    following.searchParams.set('page', next);
    return following.href;
  }

  function branchNames(items: unknown[]): string[] {
    return items.flatMap((item) => {
      const name = isRecord(item) ? text(item['name']) : undefined;
      return name === undefined ? [] : [name];
    });
  }

  function repository(fields: { id: unknown; name: unknown; url: unknown; defaultBranch: unknown; isPrivate: boolean | undefined }): ProviderRepository[] {
    const id = text(fields.id);
    const name = text(fields.name);
    const url = text(fields.url);
    if (id === undefined || name === undefined || url === undefined) return [];
    const defaultBranch = text(fields.defaultBranch);
    return [
      {
        id,
        name,
        url: withoutCredentials(url),
        ...(defaultBranch === undefined ? {} : { default_branch: defaultBranch }),
        ...(fields.isPrivate === undefined ? {} : { is_private: fields.isPrivate }),
      },
    ];
  }

  async function listRepositories(account: ProviderAccount): Promise<ProviderRepository[]> {
    const root = apiRoot(account);
    switch (account.provider) {
      case 'GITHUB': {
        const what = 'the repositories';
        const items = await readPages(account, `${root}/user/repos?per_page=${PER_PAGE}&sort=full_name`, what, (response, body) => ({
          items: arrayBody(account, body, what),
          next: nextOfLinkHeader(response.headers),
        }));
        return items.flatMap((item) =>
          isRecord(item)
            ? repository({
                id: item['id'],
                name: item['full_name'],
                url: item['clone_url'],
                defaultBranch: item['default_branch'],
                isPrivate: typeof item['private'] === 'boolean' ? item['private'] : undefined,
              })
            : [],
        );
      }
      case 'GITLAB': {
        const what = 'the projects';
        const items = await readPages(account, `${root}/projects?membership=true&order_by=path&sort=asc&per_page=${PER_PAGE}`, what, (response, body, url) => ({
          items: arrayBody(account, body, what),
          next: gitlabNext(response, url),
        }));
        return items.flatMap((item) =>
          isRecord(item)
            ? repository({
                id: item['id'],
                name: item['path_with_namespace'],
                url: item['http_url_to_repo'],
                defaultBranch: item['default_branch'],
                // Not `simple=true`, which leaves visibility out; a project without one is not claimed either way.
                isPrivate: typeof item['visibility'] === 'string' ? item['visibility'] !== 'public' : undefined,
              })
            : [],
        );
      }
      case 'BITBUCKET': {
        const what = account.workspace === null ? 'the repositories' : `the repositories of workspace ${account.workspace}`;
        const first =
          account.workspace === null
            ? `${root}/repositories?role=member&pagelen=${PER_PAGE}&sort=full_name`
            : `${root}/repositories/${pathSegment(account.workspace, '/gitTokenId')}?pagelen=${PER_PAGE}&sort=full_name`;
        const items = await readPages(account, first, what, (_response, body) => valuesBody(account, body, what));
        return items.flatMap((item) => {
          if (!isRecord(item)) return [];
          const links = isRecord(item['links']) ? item['links'] : {};
          const clones = Array.isArray(links['clone']) ? links['clone'] : [];
          const https = clones.find((clone) => isRecord(clone) && clone['name'] === 'https');
          const mainBranch = isRecord(item['mainbranch']) ? item['mainbranch']['name'] : undefined;
          return repository({
            id: item['uuid'],
            name: item['full_name'],
            url: isRecord(https) ? https['href'] : undefined,
            defaultBranch: mainBranch,
            isPrivate: typeof item['is_private'] === 'boolean' ? item['is_private'] : undefined,
          });
        });
      }
    }
  }

  async function listBranches(account: ProviderAccount, repositoryName: string): Promise<string[]> {
    const root = apiRoot(account);
    const what = `repository ${repositoryName}`;
    const segments = repositoryName.split('/');
    switch (account.provider) {
      case 'GITHUB': {
        if (segments.length !== 2) throw badRequest('a GitHub repository is named `owner/repository`', [{ field: '/name', message: 'must be owner/repository' }]);
        const path = segments.map((segment) => pathSegment(segment)).join('/');
        const items = await readPages(account, `${root}/repos/${path}/branches?per_page=${PER_PAGE}`, what, (response, body) => ({
          items: arrayBody(account, body, what),
          next: nextOfLinkHeader(response.headers),
        }));
        return branchNames(items);
      }
      case 'GITLAB': {
        // GitLab takes a project by its URL-encoded full path in place of its number.
        const items = await readPages(account, `${root}/projects/${encodeURIComponent(repositoryName)}/repository/branches?per_page=${PER_PAGE}`, what, (response, body, url) => ({
          items: arrayBody(account, body, what),
          next: gitlabNext(response, url),
        }));
        return branchNames(items);
      }
      case 'BITBUCKET': {
        // A bare slug is in the token's workspace.
        const full = segments.length === 1 && account.workspace !== null ? [account.workspace, repositoryName] : segments;
        if (full.length !== 2) throw badRequest('a Bitbucket repository is named `workspace/repository`', [{ field: '/name', message: 'must be workspace/repository' }]);
        const path = full.map((segment) => pathSegment(segment)).join('/');
        const items = await readPages(account, `${root}/repositories/${path}/refs/branches?pagelen=${PER_PAGE}&sort=name`, what, (_response, body) =>
          valuesBody(account, body, what),
        );
        return branchNames(items);
      }
    }
  }

  return { listRepositories, listBranches };
}
