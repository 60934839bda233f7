import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { badRequest } from '../lib/errors.ts';
import {
  TOKEN_USER_NAME,
  type CheckoutRequest,
  type CommitListingRequest,
  type DirectoryListingRequest,
  type GitAccess,
  type GitCommit,
  type GitCredentials,
} from './git-access.ts';
import { resolveGitHost } from './git-addresses.ts';
import { checkRepositoryUrl } from './git-urls.ts';

export interface SystemGitOptions {
  /** Lets git reach loopback and private addresses, and plain http:// (tests, on-premise git servers). */
  allowPrivateHosts: boolean;
  /** Host names git may reach (`*.example.com` covers subdomains); empty allows any host. */
  allowedHosts?: readonly string[];
  /** Upper bound of one git command; a host that does not answer is reported unreachable after it. */
  timeoutMs?: number;
  /** Upper bound of the fetch of a checkout (a whole commit's files, not a listing); default 10 minutes. */
  checkoutTimeoutMs?: number;
  /** Upper bound of what one git command may print (the tree listing); more is refused rather than buffered. */
  maxOutputBytes?: number;
  /** Upper bound of the number of entries of a listed directory. */
  maxEntries?: number;
  /** The git executable. */
  gitBinary?: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_CHECKOUT_TIMEOUT_MS = 10 * 60_000;
const COMMIT_ID_PATTERN = /^[0-9a-f]{40}$/;
const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
const DEFAULT_MAX_ENTRIES = 10_000;

interface GitResult {
  stdout: string;
  stderr: string;
  /** Exit code, or null when git was killed (timeout, output limit). */
  code: number | null;
  killed: boolean;
  outputTooLarge: boolean;
  aborted: boolean;
}

interface RepositoryTarget {
  url: string;
  host: string;
  /** `host:port:address` for http.curloptResolve, pinning git to the address that was checked. */
  pinnedResolve: string | undefined;
}

/** Control characters and the space: never part of a branch name or of a path segment Slipway accepts. */
function hasControlOrSpace(text: string, spaceToo: boolean): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || code === 0x7f || (spaceToo && code === 0x20)) return true;
  }
  return false;
}

/** Git's ref-name rules are checked by git itself (check-ref-format); this keeps options out of argv. */
function isBranchShaped(branch: string): boolean {
  return branch.length > 0 && branch.length <= 255 && !branch.startsWith('-') && !hasControlOrSpace(branch, true);
}

function describeBranch(branch: string | undefined): string {
  return branch === undefined ? 'the default branch' : `branch "${branch}"`;
}

/** `/infra/envs/` → `infra/envs`; `.`/`..` segments and control characters are refused. */
export function normaliseRepositoryPath(rootPath: string): string {
  const segments = rootPath.split('/').filter((segment) => segment !== '');
  for (const segment of segments) {
    if (segment === '.' || segment === '..' || hasControlOrSpace(segment, false)) {
      throw badRequest(`root_path "${rootPath}" is not a path inside the repository`, [{ field: '/root_path', message: 'must not contain . or .. segments or control characters' }]);
    }
  }
  return segments.join('/');
}

/** The repository as git will be pointed at it, or a 400 saying why the URL cannot be used. */
async function targetOf(rawUrl: string, allowPrivateHosts: boolean, allowedHosts: readonly string[]): Promise<RepositoryTarget> {
  const url = checkRepositoryUrl(rawUrl, { allowPrivateHosts, allowedHosts });
  const host = url.hostname;
  const resolved = await resolveGitHost(host, allowPrivateHosts);
  if (!resolved.ok) {
    if (resolved.reason === 'unresolvable') throw badRequest(`git host ${host} could not be resolved`, [{ field: '/url', message: 'unknown host' }]);
    throw badRequest(
      // The address itself is not answered: it would map the internal network for whoever asks.
      `git host ${host} is a loopback or private address; Slipway only reaches public git hosts unless SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true`,
      [{ field: '/url', message: 'host is not public' }],
    );
  }
  const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  const isLiteral = host.startsWith('[') || /^\d+\.\d+\.\d+\.\d+$/.test(host);
  const address = resolved.address.includes(':') ? `[${resolved.address}]` : resolved.address;
  return { url: url.href, host, pinnedResolve: isLiteral ? undefined : `${host}:${port}:${address}` };
}

function basicAuthorization(credentials: GitCredentials): string {
  const pair = `${TOKEN_USER_NAME[credentials.provider]}:${credentials.token}`;
  return `Authorization: Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

/** The system `git` behind the git access port: argv arrays only, credentials in the environment, never in argv. */
export function createSystemGitAccess(options: SystemGitOptions): GitAccess {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const checkoutTimeoutMs = options.checkoutTimeoutMs ?? DEFAULT_CHECKOUT_TIMEOUT_MS;
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const gitBinary = options.gitBinary ?? 'git';

  /**
   * A clean environment: no user or system git configuration, no proxy variables, no terminal prompt, C locale for
   * parseable messages. Extra configuration (the Authorization header among it) goes through GIT_CONFIG_COUNT /
   * GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n, which other users cannot read (unlike argv in the process list).
   */
  function gitEnvironment(home: string, config: Array<[string, string]>, network: boolean): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      LC_ALL: 'C',
      LANG: 'C',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      // Local steps (ls-tree) must never reach the network: a blob-less repository would otherwise fetch a missing
      // object lazily, from an unchecked address and without the token. No transport is named "none".
      GIT_ALLOW_PROTOCOL: !network ? 'none' : options.allowPrivateHosts ? 'https:http' : 'https',
      GIT_NO_LAZY_FETCH: '1',
      GIT_LITERAL_PATHSPECS: '1',
      GIT_CONFIG_COUNT: String(config.length),
    };
    config.forEach(([key, value], index) => {
      env[`GIT_CONFIG_KEY_${index}`] = key;
      env[`GIT_CONFIG_VALUE_${index}`] = value;
    });
    return env;
  }

  function runGit(args: string[], cwd: string, env: NodeJS.ProcessEnv, limits: { timeoutMs?: number; signal?: AbortSignal | undefined } = {}): Promise<GitResult> {
    return new Promise((resolve, reject) => {
      execFile(
        gitBinary,
        args,
        {
          cwd,
          env,
          timeout: limits.timeoutMs ?? timeoutMs,
          killSignal: 'SIGKILL',
          maxBuffer: maxOutputBytes,
          encoding: 'utf8',
          windowsHide: true,
          ...(limits.signal === undefined ? {} : { signal: limits.signal }),
        },
        (error, stdout, stderr) => {
          if (error === null) {
            resolve({ stdout, stderr, code: 0, killed: false, outputTooLarge: false, aborted: false });
            return;
          }
          const failure = error as NodeJS.ErrnoException & { code?: unknown; killed?: boolean };
          if (failure.code === 'ENOENT') {
            reject(new Error(`the git executable "${gitBinary}" was not found`));
            return;
          }
          resolve({
            stdout,
            stderr,
            code: typeof failure.code === 'number' ? failure.code : null,
            killed: failure.killed === true,
            outputTooLarge: failure.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER',
            aborted: limits.signal?.aborted === true,
          });
        },
      );
    });
  }

  /** Turns a failed fetch into the 400 the user can act on; git's own text is not echoed (it may name internals). */
  function fetchFailure(result: GitResult, target: RepositoryTarget, branch: string | undefined, credentials: GitCredentials | undefined, limitMs = timeoutMs): Error {
    const text = result.stderr;
    if (result.killed && !result.outputTooLarge) {
      return badRequest(`git host ${target.host} did not answer within ${Math.round(limitMs / 1000)} s`, [{ field: '/url', message: 'host unreachable' }]);
    }
    if (/couldn't find remote ref/i.test(text)) {
      return badRequest(`${describeBranch(branch)} does not exist in ${target.url}`, [{ field: '/branch', message: 'unknown branch' }]);
    }
    if (/could not read (Username|Password)|Authentication failed|terminal prompts disabled|returned error: 40[13]/i.test(text)) {
      return credentials === undefined
        ? badRequest(`${target.url} requires authentication: give a git_token_id`, [{ field: '/git_token_id', message: 'authentication required' }])
        : badRequest(`git host ${target.host} refused the git token for ${target.url} (wrong, expired or without access to this repository)`, [
            { field: '/git_token_id', message: 'authentication refused' },
          ]);
    }
    if (/repository .* not found|returned error: 404|not a git repository|does not appear to be a git repository/i.test(text)) {
      return badRequest(`repository ${target.url} was not found (or the token cannot see it)`, [{ field: '/url', message: 'repository not found' }]);
    }
    if (/Could not resolve host|Failed to connect|Connection refused|timed out|Couldn't connect|Network is unreachable|No route to host|SSL|TLS|Empty reply|Recv failure|Connection reset/i.test(text)) {
      return badRequest(`git host ${target.host} is unreachable`, [{ field: '/url', message: 'host unreachable' }]);
    }
    if (/redirect/i.test(text)) {
      return badRequest(`${target.url} answered with a redirect; give the repository's final URL`, [{ field: '/url', message: 'redirected' }]);
    }
    return badRequest(`git could not read ${target.url} (${describeBranch(branch)})`, [{ field: '/url', message: 'repository unreadable' }]);
  }

  /** The configuration of a command that reaches the repository: pinned address, no redirects, the token if any. */
  function remoteConfigOf(target: RepositoryTarget, credentials: GitCredentials | undefined): Array<[string, string]> {
    const config: Array<[string, string]> = [
      ['credential.helper', ''],
      // A redirect could lead to an address that was never checked; the repository's own URL is expected.
      ['http.followRedirects', 'false'],
      // A host that stalls below 1 KB/s for 10 s is given up before the overall timeout.
      ['http.lowSpeedLimit', '1024'],
      ['http.lowSpeedTime', '10'],
      ['protocol.version', '2'],
    ];
    if (target.pinnedResolve !== undefined) config.push(['http.curloptResolve', target.pinnedResolve]);
    if (credentials !== undefined) config.push(['http.extraHeader', basicAuthorization(credentials)]);
    return config;
  }

  async function checkBranch(branch: string | undefined, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
    if (branch === undefined) return;
    const refCheck = isBranchShaped(branch) ? await runGit(['check-ref-format', `refs/heads/${branch}`], cwd, env) : undefined;
    if (refCheck === undefined || refCheck.code !== 0) {
      throw badRequest(`branch ${JSON.stringify(branch)} is not a valid branch name`, [{ field: '/branch', message: 'invalid branch name' }]);
    }
  }

  async function checkout(request: CheckoutRequest): Promise<string> {
    const { branch, commitId, credentials, destination, signal } = request;
    if (commitId !== undefined && !COMMIT_ID_PATTERN.test(commitId)) {
      throw badRequest(`commit ${JSON.stringify(commitId)} is not a full commit id (40 hexadecimal digits)`, [{ field: '/git_commit_id', message: 'invalid commit id' }]);
    }
    const target = await targetOf(request.url, options.allowPrivateHosts, options.allowedHosts ?? []);
    await mkdir(destination, { recursive: true });
    if ((await readdir(destination)).length > 0) throw new Error(`the checkout destination ${destination} is not empty`);
    // git's HOME (no configuration is read from it) lives beside the working tree, never inside it.
    const home = await mkdtemp(path.join(tmpdir(), 'slipway-git-'));
    try {
      const localEnv = gitEnvironment(home, [], false);
      await checkBranch(branch, home, localEnv);
      const init = await runGit(['init', '--quiet', destination], home, localEnv);
      if (init.code !== 0) throw new Error(`git init failed: ${init.stderr.trim()}`);
      const wanted = commitId ?? (branch === undefined ? 'HEAD' : `refs/heads/${branch}`);
      const fetch = await runGit(['fetch', '--quiet', '--no-tags', '--depth=1', '--', target.url, wanted], destination, gitEnvironment(home, remoteConfigOf(target, credentials), true), {
        timeoutMs: checkoutTimeoutMs,
        signal,
      });
      if (fetch.aborted) throw new Error(`the checkout of ${target.url} was canceled`);
      if (fetch.code !== 0) {
        if (commitId !== undefined && /not our ref|unadvertised object|no such remote ref|couldn't find remote ref|upload-pack: not our/i.test(fetch.stderr)) {
          throw badRequest(`commit ${commitId} does not exist in ${target.url}`, [{ field: '/git_commit_id', message: 'unknown commit' }]);
        }
        throw fetchFailure(fetch, target, branch, credentials, checkoutTimeoutMs);
      }
      const switched = await runGit(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', '--detach', 'FETCH_HEAD'], destination, localEnv, { timeoutMs: checkoutTimeoutMs, signal });
      if (switched.aborted) throw new Error(`the checkout of ${target.url} was canceled`);
      if (switched.code !== 0) throw new Error(`git checkout failed: ${switched.stderr.trim()}`);
      const head = await runGit(['rev-parse', 'HEAD'], destination, localEnv);
      const checkedOut = head.stdout.trim();
      if (head.code !== 0 || !COMMIT_ID_PATTERN.test(checkedOut)) throw new Error(`git rev-parse failed: ${head.stderr.trim()}`);
      return checkedOut;
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }

  async function listDirectories(request: DirectoryListingRequest): Promise<string[]> {
    const { branch, credentials } = request;
    const repositoryPath = normaliseRepositoryPath(request.rootPath);
    if (branch !== undefined && !isBranchShaped(branch)) {
      throw badRequest(`branch ${JSON.stringify(branch)} is not a valid branch name`, [{ field: '/branch', message: 'invalid branch name' }]);
    }
    const target = await targetOf(request.url, options.allowPrivateHosts, options.allowedHosts ?? []);
    const workDir = await mkdtemp(path.join(tmpdir(), 'slipway-git-'));
    try {
      const localEnv = gitEnvironment(workDir, [], false);
      const refCheck = branch === undefined ? undefined : await runGit(['check-ref-format', `refs/heads/${branch}`], workDir, localEnv);
      if (refCheck !== undefined && refCheck.code !== 0) {
        throw badRequest(`branch ${JSON.stringify(branch)} is not a valid branch name`, [{ field: '/branch', message: 'invalid branch name' }]);
      }
      const repository = path.join(workDir, 'repository.git');
      const init = await runGit(['init', '--bare', '--quiet', repository], workDir, localEnv);
      if (init.code !== 0) throw new Error(`git init failed: ${init.stderr.trim()}`);

      const remoteEnv = gitEnvironment(workDir, remoteConfigOf(target, credentials), true);
      const fetch = await runGit(
        ['fetch', '--quiet', '--no-tags', '--depth=1', '--filter=blob:none', '--', target.url, branch === undefined ? 'HEAD' : `refs/heads/${branch}`],
        repository,
        remoteEnv,
      );
      if (fetch.code !== 0) throw fetchFailure(fetch, target, branch, credentials);

      if (repositoryPath !== '') {
        // The entry itself, read from its parent tree: a file's blob was not fetched, so it cannot be opened.
        const entry = await runGit(['ls-tree', '-z', 'FETCH_HEAD', '--', repositoryPath], repository, localEnv);
        const type = entry.code === 0 ? entry.stdout.split('\t')[0]?.split(' ')[1] : undefined;
        if (type === undefined) {
          throw badRequest(`root_path "/${repositoryPath}" does not exist on ${describeBranch(branch)}`, [{ field: '/root_path', message: 'path not found' }]);
        }
        if (type !== 'tree') {
          throw badRequest(`root_path "/${repositoryPath}" is not a directory on ${describeBranch(branch)}`, [
            { field: '/root_path', message: 'not a directory' },
          ]);
        }
      }
      const tree = repositoryPath === '' ? 'FETCH_HEAD^{tree}' : `FETCH_HEAD:${repositoryPath}`;
      const listing = await runGit(['ls-tree', '-z', tree], repository, localEnv);
      if (listing.outputTooLarge) {
        throw badRequest(`directory "/${repositoryPath}" has too many entries to list`, [{ field: '/root_path', message: 'too many entries' }]);
      }
      if (listing.code !== 0) throw new Error(`git ls-tree failed: ${listing.stderr.trim()}`);
      const entries = listing.stdout.split('\0').filter((entry) => entry !== '');
      if (entries.length > maxEntries) {
        throw badRequest(`directory "/${repositoryPath}" has too many entries to list`, [{ field: '/root_path', message: 'too many entries' }]);
      }
      const directories: string[] = [];
      for (const entry of entries) {
        // "<mode> SP <type> SP <object> TAB <name>"; submodules (type commit) are not directories of this repository.
        const tab = entry.indexOf('\t');
        const [, type] = entry.slice(0, tab).split(' ');
        if (tab > 0 && type === 'tree') directories.push(entry.slice(tab + 1));
      }
      return directories.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  async function listCommits(request: CommitListingRequest): Promise<GitCommit[]> {
    const { branch, credentials } = request;
    if (!isBranchShaped(branch)) {
      throw badRequest(`branch ${JSON.stringify(branch)} is not a valid branch name`, [{ field: '/branch', message: 'invalid branch name' }]);
    }
    const target = await targetOf(request.url, options.allowPrivateHosts, options.allowedHosts ?? []);
    const workDir = await mkdtemp(path.join(tmpdir(), 'slipway-git-'));
    try {
      const localEnv = gitEnvironment(workDir, [], false);
      await checkBranch(branch, workDir, localEnv);
      const repository = path.join(workDir, 'repository.git');
      const init = await runGit(['init', '--bare', '--quiet', repository], workDir, localEnv);
      if (init.code !== 0) throw new Error(`git init failed: ${init.stderr.trim()}`);
      // The history without a single file: commits and trees only (blob:none), as deep as the listing needs.
      const fetch = await runGit(
        ['fetch', '--quiet', '--no-tags', `--depth=${request.maxCount}`, '--filter=blob:none', '--', target.url, `refs/heads/${branch}`],
        repository,
        gitEnvironment(workDir, remoteConfigOf(target, credentials), true),
      );
      if (fetch.code !== 0) throw fetchFailure(fetch, target, branch, credentials);
      // One record per commit (-z ends each with NUL), fields separated by the unit separator; the message last, whole.
      const log = await runGit(['log', '-z', `--max-count=${request.maxCount}`, '--format=%H%x1f%an%x1f%aI%x1f%B', 'FETCH_HEAD'], repository, localEnv);
      if (log.outputTooLarge) throw badRequest(`the last ${request.maxCount} commits of ${describeBranch(branch)} are too large to list`);
      if (log.code !== 0) throw new Error(`git log failed: ${log.stderr.trim()}`);
      return log.stdout
        .split('\0')
        .filter((record) => record !== '')
        .map((record) => {
          const [id = '', authorName = '', authoredAt = '', ...message] = record.split('\x1f');
          return { id, authorName, authoredAt, message: message.join('\x1f').replace(/\n+$/, '') };
        });
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  return {
    listDirectories,
    checkout,
    listCommits,
    checkUrl: (url: string) => {
      checkRepositoryUrl(url, { allowPrivateHosts: options.allowPrivateHosts, allowedHosts: options.allowedHosts ?? [] });
    },
  };
}
