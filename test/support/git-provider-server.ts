import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A test git provider server: a real HTTP server on loopback that speaks the parts of GitHub's, GitLab's and
 * Bitbucket Cloud's REST APIs that Slipway's listings read — repositories a token can see and a repository's
 * branches — each under its own prefix, with each provider's paging (GitHub's `Link` header, GitLab's
 * `X-Next-Page`, Bitbucket's `next` in the body), rate-limit headers and error answers. Tokens are registered with
 * the repositories they see; a page holds `pageSize` items whatever the client asks, so small fixtures span pages.
 */

export interface TestRepository {
  /** `owner/name` (GitLab: `group/subgroup/name`). */
  fullName: string;
  isPrivate: boolean;
  defaultBranch: string;
  branches: string[];
  /** Every branch page links to a next one, forever: for the client's page bound. */
  endlessBranches?: boolean;
}

export interface TestProviderAccount {
  repositories: TestRepository[];
  /** Requests left before the rate limit is used up (GitHub counts it down in `x-ratelimit-remaining`). */
  remaining?: number;
  /** Epoch seconds the limit resets at. */
  resetAt?: number;
  /** Every request of this token is answered with this status (a provider failing). */
  failWith?: number;
}

export interface ProviderRequest {
  provider: 'github' | 'gitlab' | 'bitbucket';
  path: string;
  authorization: string | undefined;
}

export interface TestGitProviderServer {
  githubApiUrl: string;
  gitlabApiUrl: string;
  bitbucketApiUrl: string;
  pageSize: number;
  /** Registers a token (the value a git token holds) and what it sees. */
  addAccount(token: string, account: TestProviderAccount): void;
  requests: ProviderRequest[];
  close(): Promise<void>;
}

const PROVIDERS = ['github', 'gitlab', 'bitbucket'] as const;
type Provider = (typeof PROVIDERS)[number];
const ROOTS: Record<Provider, string> = { github: '/github', gitlab: '/gitlab/api/v4', bitbucket: '/bitbucket/2.0' };

/** A stable number for a name, as providers give repositories numeric ids. */
function numericId(name: string): number {
  let hash = 7;
  for (const character of name) hash = (hash * 31 + character.charCodeAt(0)) % 2_000_000_000;
  return hash;
}

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

export interface GitProviderServerOptions {
  pageSize?: number;
  /**
   * The HTTPS clone URL a listing gives for a repository (GitHub's `clone_url`, GitLab's `http_url_to_repo`,
   * Bitbucket's https clone link); by default one on a provider host that does not exist. An end-to-end test points
   * it at a test git server, so the repository chosen from the listing can be cloned and deployed.
   */
  cloneUrlOf?: (provider: 'github' | 'gitlab' | 'bitbucket', fullName: string) => string;
}

export async function startGitProviderServer(options: GitProviderServerOptions = {}): Promise<TestGitProviderServer> {
  const pageSize = options.pageSize ?? 2;
  const cloneUrlOf = options.cloneUrlOf ?? ((provider: Provider, fullName: string) => `https://${provider === 'bitbucket' ? 'x-token-auth@' : ''}${provider}.example/${fullName}.git`);
  const accounts = new Map<string, TestProviderAccount>();
  const requests: ProviderRequest[] = [];
  let base = '';

  function tokenOf(request: IncomingMessage): string | undefined {
    const header = request.headers.authorization;
    if (header === undefined) return undefined;
    if (header.startsWith('Bearer ')) return header.slice('Bearer '.length);
    if (header.startsWith('Basic ')) return Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8');
    return undefined;
  }

  function page<T>(items: T[], number: number): T[] {
    return items.slice((number - 1) * pageSize, number * pageSize);
  }

  function handle(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', base);
    const provider = PROVIDERS.find((name) => url.pathname.startsWith(`${ROOTS[name]}/`));
    if (provider === undefined) return json(response, 404, { message: 'Not Found' });
    requests.push({ provider, path: `${url.pathname}${url.search}`, authorization: request.headers.authorization });
    const token = tokenOf(request);
    const account = token === undefined ? undefined : accounts.get(token);
    if (account === undefined) {
      return json(response, 401, provider === 'bitbucket' ? { type: 'error', error: { message: 'Unauthorized' } } : { message: 'Bad credentials' });
    }
    if (account.failWith !== undefined) return json(response, account.failWith, { message: 'Server Error' });

    const resetAt = account.resetAt ?? Math.floor(Date.now() / 1000) + 3600;
    const remaining = account.remaining ?? 5000;
    if (remaining <= 0) {
      if (provider === 'github') {
        return json(response, 403, { message: 'API rate limit exceeded' }, { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(resetAt) });
      }
      const retryAfter = String(Math.max(1, resetAt - Math.floor(Date.now() / 1000)));
      return json(response, 429, { message: 'Too Many Requests' }, provider === 'gitlab' ? { 'ratelimit-reset': String(resetAt), 'retry-after': retryAfter } : { 'retry-after': retryAfter });
    }
    account.remaining = remaining - 1;
    const limitHeaders: Record<string, string> = provider === 'github' ? { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': String(account.remaining), 'x-ratelimit-reset': String(resetAt) } : {};

    const path = url.pathname.slice(ROOTS[provider].length);
    const number = Math.max(1, Number(url.searchParams.get('page') ?? '1') || 1);
    const repositories = [...account.repositories].sort((a, b) => a.fullName.localeCompare(b.fullName));
    const findRepository = (fullName: string) => account.repositories.find((repository) => repository.fullName === fullName);

    if (provider === 'github') {
      const linkTo = (next: boolean): Record<string, string> => (next ? { link: `<${base}${url.pathname}?per_page=100&page=${number + 1}>; rel="next", <${base}${url.pathname}?page=1>; rel="first"` } : {});
      if (path === '/user/repos') {
        const items = page(repositories, number).map((repository) => ({
          id: numericId(repository.fullName),
          name: repository.fullName.split('/').at(-1),
          full_name: repository.fullName,
          private: repository.isPrivate,
          clone_url: cloneUrlOf('github', repository.fullName),
          default_branch: repository.defaultBranch,
        }));
        return json(response, 200, items, { ...limitHeaders, ...linkTo(number * pageSize < repositories.length) });
      }
      const branches = /^\/repos\/([^/]+)\/([^/]+)\/branches$/.exec(path);
      const repository = branches === null ? undefined : findRepository(`${decodeURIComponent(branches[1] ?? '')}/${decodeURIComponent(branches[2] ?? '')}`);
      if (repository === undefined) return json(response, 404, { message: 'Not Found' }, limitHeaders);
      const names = repository.endlessBranches === true ? [`branch-${number}`] : page(repository.branches, number);
      const more = repository.endlessBranches === true || number * pageSize < repository.branches.length;
      return json(response, 200, names.map((name) => ({ name, protected: false })), { ...limitHeaders, ...linkTo(more) });
    }

    if (provider === 'gitlab') {
      const nextHeaders = (total: number) => {
        const pages = Math.max(1, Math.ceil(total / pageSize));
        return { 'x-page': String(number), 'x-total-pages': String(pages), 'x-next-page': number < pages ? String(number + 1) : '' };
      };
      if (path === '/projects') {
        if (url.searchParams.get('membership') !== 'true') return json(response, 400, { message: 'membership expected' });
        const items = page(repositories, number).map((repository) => ({
          id: numericId(repository.fullName),
          path_with_namespace: repository.fullName,
          http_url_to_repo: cloneUrlOf('gitlab', repository.fullName),
          default_branch: repository.defaultBranch,
          visibility: repository.isPrivate ? 'private' : 'public',
        }));
        return json(response, 200, items, nextHeaders(repositories.length));
      }
      const branches = /^\/projects\/([^/]+)\/repository\/branches$/.exec(path);
      const key = branches === null ? undefined : decodeURIComponent(branches[1] ?? '');
      const repository = account.repositories.find((candidate) => candidate.fullName === key || String(numericId(candidate.fullName)) === key);
      if (repository === undefined) return json(response, 404, { message: '404 Project Not Found' });
      return json(response, 200, page(repository.branches, number).map((name) => ({ name })), nextHeaders(repository.branches.length));
    }

    // Bitbucket Cloud.
    const bitbucketPage = (items: unknown[], total: number) => ({
      pagelen: pageSize,
      page: number,
      size: total,
      values: items,
      ...(number * pageSize < total ? { next: `${base}${url.pathname}?pagelen=100&page=${number + 1}` } : {}),
    });
    const workspaceListing = /^\/repositories(?:\/([^/]+))?$/.exec(path);
    if (workspaceListing !== null) {
      const workspace = workspaceListing[1] === undefined ? undefined : decodeURIComponent(workspaceListing[1]);
      const visible = repositories.filter((repository) => workspace === undefined || repository.fullName.startsWith(`${workspace}/`));
      if (workspace !== undefined && visible.length === 0) return json(response, 404, { type: 'error', error: { message: 'Workspace not found' } });
      const items = page(visible, number).map((repository) => ({
        uuid: `{${numericId(repository.fullName)}}`,
        full_name: repository.fullName,
        is_private: repository.isPrivate,
        mainbranch: { type: 'branch', name: repository.defaultBranch },
        links: {
          clone: [
            { name: 'https', href: cloneUrlOf('bitbucket', repository.fullName) },
            { name: 'ssh', href: `git@bitbucket.example:${repository.fullName}.git` },
          ],
        },
      }));
      return json(response, 200, bitbucketPage(items, visible.length));
    }
    const branches = /^\/repositories\/([^/]+)\/([^/]+)\/refs\/branches$/.exec(path);
    const repository = branches === null ? undefined : findRepository(`${decodeURIComponent(branches[1] ?? '')}/${decodeURIComponent(branches[2] ?? '')}`);
    if (repository === undefined) return json(response, 404, { type: 'error', error: { message: 'Repository not found' } });
    return json(response, 200, bitbucketPage(page(repository.branches, number).map((name) => ({ name, type: 'branch' })), repository.branches.length));
  }

  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  return {
    githubApiUrl: `${base}${ROOTS.github}`,
    gitlabApiUrl: `${base}${ROOTS.gitlab}`,
    bitbucketApiUrl: `${base}${ROOTS.bitbucket}`,
    pageSize,
    addAccount(token, account) {
      accounts.set(token, account);
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
