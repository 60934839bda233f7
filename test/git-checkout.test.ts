import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/lib/errors.ts';
import type { GitAccess } from '../src/git/git-access.ts';
import { createSystemGitAccess } from '../src/git/system-git.ts';
import { startGitServer, type TestGitServer } from './support/git-server.ts';

/**
 * checkout() of the git access port against a real git server over smart HTTP: the head of a branch, an older
 * commit by id, an unknown branch or commit, a private repository with and without its token, and the address check
 * that keeps loopback hosts out unless allowed.
 */

let root: string;
let server: TestGitServer;
let git: GitAccess;
/** Each repository's commits: their ids differ between repositories made in different seconds. */
const commits: Record<'public' | 'private', { first: string; second: string }> = { public: { first: '', second: '' }, private: { first: '', second: '' } };
const TOKEN = 'checkout-token-1';

function runGit(args: string[], cwd: string): Promise<string> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.com' };
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env }, (error, stdout, stderr) => (error === null ? resolve(stdout.trim()) : reject(new Error(`git ${args.join(' ')}: ${stderr}`))));
  });
}

/** A bare repository `<name>.git` with two commits on main (version.txt "one" then "two") and a branch "next". */
async function repositoryWithHistory(name: 'public' | 'private'): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-checkout-work-'));
  try {
    await runGit(['init', '--quiet', '--initial-branch=main', work], work);
    await writeFile(path.join(work, 'version.txt'), 'one\n');
    await runGit(['add', 'version.txt'], work);
    await runGit(['commit', '--quiet', '-m', 'one'], work);
    commits[name].first = await runGit(['rev-parse', 'HEAD'], work);
    await writeFile(path.join(work, 'version.txt'), 'two\n');
    await runGit(['commit', '--quiet', '-am', 'two'], work);
    commits[name].second = await runGit(['rev-parse', 'HEAD'], work);
    await runGit(['checkout', '--quiet', '-b', 'next'], work);
    await writeFile(path.join(work, 'next.txt'), 'next\n');
    await runGit(['add', 'next.txt'], work);
    await runGit(['commit', '--quiet', '-m', 'next'], work);
    await runGit(['clone', '--quiet', '--bare', work, path.join(root, `${name}.git`)], root);
    await runGit(['symbolic-ref', 'HEAD', 'refs/heads/main'], path.join(root, `${name}.git`));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function destination(): Promise<string> {
  return path.join(await mkdtemp(path.join(root, 'dest-')), 'tree');
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'slipway-checkout-'));
  await repositoryWithHistory('public');
  await repositoryWithHistory('private');
  server = await startGitServer({ root, privateRepositories: { private: TOKEN } });
  git = createSystemGitAccess({ allowPrivateHosts: true });
});

afterAll(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

describe('git checkout', () => {
  it('checks out the head of the default branch and of a named branch, answering the commit id', async () => {
    const main = await destination();
    expect(await git.checkout({ url: server.urlOf('public'), destination: main })).toBe(commits.public.second);
    expect(await readFile(path.join(main, 'version.txt'), 'utf8')).toBe('two\n');

    const next = await destination();
    const nextCommit = await git.checkout({ url: server.urlOf('public'), branch: 'next', destination: next });
    expect(nextCommit).toMatch(/^[0-9a-f]{40}$/);
    expect(nextCommit).not.toBe(commits.public.second);
    expect((await readdir(next)).sort()).toEqual(['.git', 'next.txt', 'version.txt']);
  });

  it('checks out an older commit by its id', async () => {
    const dir = await destination();
    expect(await git.checkout({ url: server.urlOf('public'), branch: 'main', commitId: commits.public.first, destination: dir })).toBe(commits.public.first);
    expect(await readFile(path.join(dir, 'version.txt'), 'utf8')).toBe('one\n');
  });

  it('says which branch or commit does not exist', async () => {
    const unknownBranch = await failure(git.checkout({ url: server.urlOf('public'), branch: 'nope', destination: await destination() }));
    expect(unknownBranch.message).toBe(`branch "nope" does not exist in ${server.urlOf('public')}`);
    const unknownCommit = await failure(git.checkout({ url: server.urlOf('public'), commitId: 'a'.repeat(40), destination: await destination() }));
    expect(unknownCommit.message).toBe(`commit ${'a'.repeat(40)} does not exist in ${server.urlOf('public')}`);
    const malformed = await failure(git.checkout({ url: server.urlOf('public'), commitId: 'main', destination: await destination() }));
    expect(malformed.message).toContain('is not a full commit id');
  });

  it('sends the token of a private repository, and says so when it is missing or refused', async () => {
    const dir = await destination();
    expect(await git.checkout({ url: server.urlOf('private'), credentials: { provider: 'GITHUB', token: TOKEN }, destination: dir })).toBe(commits.private.second);
    expect(server.seen.some((request) => request.url.startsWith('/private.git/') && request.accepted && request.userName === 'x-access-token')).toBe(true);
    // The token was given in the environment: nothing of it is written into the checked-out repository.
    expect(await readFile(path.join(dir, '.git', 'config'), 'utf8')).not.toContain('Authorization');

    const missing = await failure(git.checkout({ url: server.urlOf('private'), destination: await destination() }));
    expect(missing.message).toBe(`${server.urlOf('private')} requires authentication: give a git_token_id`);
    const refused = await failure(git.checkout({ url: server.urlOf('private'), credentials: { provider: 'GITHUB', token: 'wrong-token' }, destination: await destination() }));
    expect(refused.message).toContain('refused the git token');
  });

  it('refuses a loopback host unless private hosts are allowed', async () => {
    const strict = createSystemGitAccess({ allowPrivateHosts: false });
    const refused = await failure(strict.checkout({ url: server.urlOf('public').replace('http://', 'https://'), destination: await destination() }));
    expect(refused.message).toContain('is a loopback or private address');
    const plainHttp = await failure(strict.checkout({ url: server.urlOf('public'), destination: await destination() }));
    expect(plainHttp.message).toBe('url must use https:// (got "http://"); plain http:// is allowed only when the installation sets SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true');
  });

  it('stops at once when aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await git.checkout({ url: server.urlOf('public'), destination: await destination(), signal: controller.signal }).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(`the checkout of ${server.urlOf('public')} was canceled`);
  });
});
