import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recogniseToken } from '../src/auth/tokens.ts';

/**
 * The real process, as a user runs it: `slipway admin bootstrap` prints the first organization and token once,
 * `slipway server` serves them, and SIGTERM lets an in-flight request finish before the process exits.
 */
const SLIPWAY = path.resolve('bin/slipway.js');

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: Record<string, string>, script = SLIPWAY): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `slipway server` on a free port and resolves with its base URL once it listens. */
function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; baseUrl: string; exited: Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SLIPWAY, 'server'], {
      env: { ...process.env, ...env, SLIPWAY_PORT: '0', SLIPWAY_LOG_LEVEL: 'info' },
    });
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1] !== undefined) resolve({ child, baseUrl: match[1], exited });
    });
    child.on('error', reject);
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${output}`)));
  });
}

describe('slipway process', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'slipway-process-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('bootstraps, serves the token it printed, and drains an in-flight request on SIGTERM', { timeout: 90_000 }, async () => {
    const env = { SLIPWAY_DATA_DIR: dataDir };
    const boot = await runCli(['admin', 'bootstrap', '--email', 'first@example.com', '--organization', 'Acme', '--json'], env);
    expect(boot.code).toBe(0);
    const printed = JSON.parse(boot.stdout) as { user_id: string; organization_id: string; api_token: string };
    expect(Object.keys(printed).sort()).toEqual(['api_token', 'organization_id', 'user_id']);
    expect(recogniseToken(printed.api_token)).toBe('api');

    const again = await runCli(['admin', 'bootstrap', '--email', 'first@example.com', '--organization', 'acme', '--json'], env);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('already exists');

    const server = await startServer(env);
    try {
      const list = await fetch(`${server.baseUrl}/organization`, { headers: { authorization: `Token ${printed.api_token}` } });
      expect(list.status).toBe(200);
      const body = (await list.json()) as { results: { id: string; name: string; owner: string }[] };
      expect(body.results).toEqual([expect.objectContaining({ id: printed.organization_id, name: 'Acme', owner: printed.user_id })]);

      // Start a createProject whose body is only half sent, stop the server, then finish the body: the request
      // that was in flight when SIGTERM arrived still completes, and the process then exits cleanly.
      const payload = JSON.stringify({ name: 'in-flight', description: 'sent across a SIGTERM' });
      const url = new URL(`${server.baseUrl}/organization/${printed.organization_id}/project`);
      const answered = new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
        const req = request(
          url,
          {
            method: 'POST',
            headers: {
              authorization: `Token ${printed.api_token}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(payload),
            },
          },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => resolve({ status: res.statusCode, body: text }));
          },
        );
        req.on('error', reject);
        req.write(payload.slice(0, 10));
        setTimeout(() => {
          server.child.kill('SIGTERM');
          setTimeout(() => req.end(payload.slice(10)), 300);
        }, 300);
      });
      const result = await answered;
      expect(result.status).toBe(200);
      expect(JSON.parse(result.body)).toMatchObject({ name: 'in-flight' });
      expect(await server.exited).toBe(0);
    } finally {
      server.child.kill('SIGKILL');
    }

    // The project written by the drained request is there after a restart (and migrations run again cleanly).
    const restarted = await startServer(env);
    try {
      const projects = await fetch(`${restarted.baseUrl}/organization/${printed.organization_id}/project`, {
        headers: { authorization: `Bearer ${printed.api_token}` },
      });
      expect(((await projects.json()) as { results: { name: string }[] }).results.map((p) => p.name)).toEqual(['in-flight']);
    } finally {
      restarted.child.kill('SIGTERM');
      await restarted.exited;
    }
  });

  it('starts as npm start does without a warning on either stream, and loads the built-in sign-in at its first request', async () => {
    const fresh = mkdtempSync(path.join(tmpdir(), 'slipway-process-start-'));
    const child = spawn(process.execPath, [SLIPWAY, 'server'], {
      env: { ...process.env, SLIPWAY_DATA_DIR: fresh, SLIPWAY_PORT: '0', SLIPWAY_APPS_PORT: '0', SLIPWAY_LOG_LEVEL: 'info' },
    });
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const baseUrl = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
          if (match?.[1] !== undefined) resolve(match[1]);
        });
        void exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${stdout}${stderr}`)));
      });
      expect((await fetch(`${baseUrl}/ips`)).status).toBe(200);
      const discovery = await fetch(`${baseUrl}/oidc/.well-known/openid-configuration`);
      expect(discovery.status).toBe(200);
      expect(((await discovery.json()) as { issuer: string }).issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/oidc$/);
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(fresh, { recursive: true, force: true });
    }
    // Node's own warnings (an unsupported runtime, an experimental feature) and anything logged at warn or above.
    expect(stderr).toBe('');
    const levels = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => (JSON.parse(line) as { level: number; msg: string }));
    expect(levels.filter((line) => line.level >= 40)).toEqual([]);
  });

  it('prints its version, the one package.json carries', async () => {
    const { version } = JSON.parse(readFileSync(path.resolve('package.json'), 'utf8')) as { version: string };
    expect(await runCli(['--version'], {})).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  describe('bin/slipway.js', () => {
    let root: string;
    beforeAll(() => {
      // A checkout in miniature: the launcher, a "build" and "sources" that each say which one ran.
      root = mkdtempSync(path.join(tmpdir(), 'slipway-launcher-'));
      mkdirSync(path.join(root, 'bin'));
      cpSync(SLIPWAY, path.join(root, 'bin', 'slipway.js'));
      mkdirSync(path.join(root, 'dist'));
      writeFileSync(path.join(root, 'dist', 'slipway.js'), "process.stdout.write('build ' + process.argv.slice(2).join(' '));\n");
      mkdirSync(path.join(root, 'src', 'cli'), { recursive: true });
      writeFileSync(path.join(root, 'src', 'cli', 'slipway.ts'), "const ran: string = 'sources'; process.stdout.write(ran + ' ' + process.argv.slice(2).join(' '));\n");
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    const launch = (): Promise<Finished> => runCli(['server', '--x'], {}, path.join(root, 'bin', 'slipway.js'));
    const age = (file: string, secondsAgo: number): void => {
      const when = new Date(Date.now() - secondsAgo * 1000);
      utimesSync(path.join(root, file), when, when);
    };

    it('runs the compiled build when it is newer than every source', async () => {
      age('src/cli/slipway.ts', 60);
      age('dist/slipway.js', 10);
      expect(await launch()).toMatchObject({ code: 0, stdout: 'build server --x' });
    });

    it('runs the TypeScript sources when one changed after the build, or when there is no build', async () => {
      age('dist/slipway.js', 60);
      age('src/cli/slipway.ts', 10);
      expect(await launch()).toMatchObject({ code: 0, stdout: 'sources server --x' });
      rmSync(path.join(root, 'dist'), { recursive: true });
      expect(await launch()).toMatchObject({ code: 0, stdout: 'sources server --x' });
    });
  });
});
