import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gitServerEnvironment, serveWithHttpBackend } from '../../src/git/git-http-server.ts';

/**
 * A real git server for tests: bare repositories served over smart HTTP by `git http-backend` (src/git/
 * git-http-server.ts, what `slipway git serve` runs) behind a check of HTTP basic authentication on private
 * repositories. Repositories are
 * made with real git commands (argv arrays only).
 */

/** Git with no user or system configuration, so the machine's settings never change a fixture. */
function gitEnvironment(home: string): NodeJS.ProcessEnv {
  return {
    ...gitServerEnvironment(home),
    GIT_AUTHOR_NAME: 'Fixture',
    GIT_AUTHOR_EMAIL: 'fixture@example.com',
    GIT_COMMITTER_NAME: 'Fixture',
    GIT_COMMITTER_EMAIL: 'fixture@example.com',
  };
}

function git(args: string[], cwd: string, home: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: gitEnvironment(home) }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`git ${args.join(' ')} failed: ${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Branch name → the files (paths relative to the repository root) of that branch's single commit. */
export type BranchFiles = Record<string, string[]>;

/**
 * Creates `<root>/<name>.git`, a bare repository whose branches hold exactly the given files; the first branch is
 * the default one (HEAD).
 */
export async function createBareRepository(root: string, name: string, branches: BranchFiles): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-fixture-'));
  try {
    const names = Object.keys(branches);
    const first = names[0];
    if (first === undefined) throw new Error('a repository needs a branch');
    await git(['init', '--quiet', `--initial-branch=${first}`, work], work, work);
    for (const [index, branch] of names.entries()) {
      if (index > 0) await git(['checkout', '--quiet', '--orphan', branch], work, work);
      await git(['rm', '-r', '-q', '--cached', '--ignore-unmatch', '.'], work, work);
      for (const file of branches[branch] ?? []) {
        await mkdir(path.join(work, path.dirname(file)), { recursive: true });
        await writeFile(path.join(work, file), `${branch}:${file}\n`);
      }
      for (const file of branches[branch] ?? []) await git(['add', '--', file], work, work);
      await git(['commit', '--quiet', '-m', `${branch} fixture`], work, work);
    }
    await git(['clone', '--quiet', '--bare', work, path.join(root, `${name}.git`)], root, work);
    await git(['symbolic-ref', 'HEAD', `refs/heads/${first}`], path.join(root, `${name}.git`), work);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export interface SeenRequest {
  url: string;
  /** The user name of the basic credentials sent, if any. */
  userName: string | undefined;
  /** Whether credentials were sent and matched the repository's token. */
  accepted: boolean;
}

export interface TestGitServer {
  /** `http://127.0.0.1:<port>`. */
  baseUrl: string;
  /** The clone URL of a repository by name. */
  urlOf(name: string): string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

export interface GitServerOptions {
  /** Directory of the bare repositories (`<name>.git`). */
  root: string;
  /** Repository name → the only token (basic-auth password) it accepts; repositories not named here are public. */
  privateRepositories: Record<string, string>;
}

function credentialsOf(request: IncomingMessage): { user: string; password: string } | undefined {
  const header = request.headers.authorization;
  if (header === undefined || !header.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export async function startGitServer(options: GitServerOptions): Promise<TestGitServer> {
  const seen: SeenRequest[] = [];
  const server = createServer((request, response) => {
    const url = request.url ?? '/';
    const repository = /^\/([^/]+)\.git\//.exec(url)?.[1];
    const credentials = credentialsOf(request);
    const expected = repository === undefined ? undefined : options.privateRepositories[repository];
    const accepted = credentials !== undefined && expected !== undefined && credentials.password === expected;
    seen.push({ url, userName: credentials?.user, accepted });
    if (expected !== undefined && !accepted) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="test git"' }).end('authentication required\n');
      return;
    }
    serveWithHttpBackend(options.root, request, response, accepted ? credentials?.user : undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    urlOf: (name) => `${baseUrl}/${name}.git`,
    seen,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}
