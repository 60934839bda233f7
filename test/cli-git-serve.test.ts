import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createBareRepository } from './support/git-server.ts';
import { runSlipway, spawnSlipway, waitForOutput } from './support/slipway-process.ts';

/**
 * `slipway git serve <directory>`: the bare repositories under a directory over git's smart HTTP protocol, as the
 * walkthrough uses to deploy local work — cloned here by the real git, shallowly, as the local driver fetches.
 */
const work: string[] = [];
afterAll(async () => Promise.all(work.map((dir) => rm(dir, { recursive: true, force: true }))));

function git(args: string[], cwd: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' } }, (error, _stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stderr }),
    );
  });
}

it('serves the repositories under a directory to a shallow clone, and answers 404 for others', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'slipway-git-serve-'));
  work.push(root);
  await createBareRepository(root, 'demo', { main: ['package.json', 'server.js'] });
  const server = spawnSlipway(['git', 'serve', root, '--port', '0'], {});
  try {
    const [, address] = await waitForOutput(server, /at (http:\/\/127\.0\.0\.1:\d+)\/<name>\.git/);
    const clone = path.join(root, 'clone');
    expect(await git(['clone', '--quiet', '--depth=1', `${address}/demo.git`, clone], root)).toMatchObject({ code: 0 });
    expect(await readFile(path.join(clone, 'server.js'), 'utf8')).toBe('main:server.js\n');
    const missing = await git(['clone', '--quiet', `${address}/nothing.git`, path.join(root, 'nothing')], root);
    expect(missing.code).not.toBe(0);
    // Read-only: git refuses a push over this transport.
    const pushed = await git(['push', `${address}/demo.git`, 'HEAD:refs/heads/other'], clone);
    expect(pushed.code).not.toBe(0);
  } finally {
    server.kill('SIGTERM');
    await server.result;
  }
});

it('refuses a port that is not one, in one line', async () => {
  const result = await runSlipway(['git', 'serve', '.', '--port', 'http'], {});
  expect(result.code).toBe(1);
  expect(result.stderr).toBe('slipway: --port must be an integer from 0 to 65535, got "http"\n');
});
