import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recogniseToken } from '../src/auth/tokens.ts';
import { killProcessesUnder } from './support/sample-apps.ts';

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
function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; baseUrl: string; exited: Promise<number | null>; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SLIPWAY, 'server'], {
      // Any free apps port: the default one may be another program's (another suite's server, on a busy machine).
      env: { ...process.env, ...env, SLIPWAY_PORT: '0', SLIPWAY_APPS_PORT: '0', SLIPWAY_LOG_LEVEL: 'info' },
    });
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    let output = '';
    let errors = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1] !== undefined) resolve({ child, baseUrl: match[1], exited, output: () => output });
    });
    child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    child.on('error', reject);
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${output}${errors}`)));
  });
}

/** A port held by a listener of the test's own, as another program would hold it. */
function occupyPort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

/**
 * Runs `slipway server` expecting it to give up while starting. Only PATH reaches it besides `env`, and a server that
 * starts after all is killed (so the assertions fail instead of the test hanging, and no process is left behind).
 */
function runFailingServer(env: Record<string, string>): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SLIPWAY, 'server'], {
      env: { PATH: process.env.PATH, SLIPWAY_HOST: '127.0.0.1', SLIPWAY_PORT: '0', SLIPWAY_APPS_PORT: '0', SLIPWAY_LOG_LEVEL: 'info', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const deadline = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(deadline);
      resolve({ code, stdout, stderr });
    });
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
        // SIGTERM only once the server has taken the request in (its log says so): on a loaded machine a fixed
        // delay could let the signal arrive first, and a request that arrives after it is rightly answered 503.
        const takenIn = () => server.output().split('\n').some((line) => line.includes('incoming request') && line.includes(url.pathname));
        const signalWhenTakenIn = (waited: number) => {
          if (!takenIn() && waited < 20_000) {
            setTimeout(() => signalWhenTakenIn(waited + 20), 20);
            return;
          }
          server.child.kill('SIGTERM');
          setTimeout(() => req.end(payload.slice(10)), 300);
        };
        signalWhenTakenIn(0);
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

  describe('start-up failures: one line on stderr naming what failed and the variable to change, as an invalid configuration', () => {
    let scratch: string;
    let invalidConfiguration: Finished;
    beforeAll(async () => {
      scratch = mkdtempSync(path.join(tmpdir(), 'slipway-start-failure-'));
      // The reference: an invalid value ends the process with one line and exit status 2.
      invalidConfiguration = await runFailingServer({ SLIPWAY_DATA_DIR: scratch, SLIPWAY_PORT: 'eighty' });
    });
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    const expectOneLine = (result: Finished, line: string): void => {
      expect(result.stderr).toBe(`${line}\n`);
      expect(result.stderr).not.toMatch(/^\s*at /m);
      expect(result.code).toBe(invalidConfiguration.code);
    };

    it('the reference: an invalid value', () => {
      expectOneLine(invalidConfiguration, 'slipway: invalid configuration: SLIPWAY_PORT: must be an integer from 0 to 65535, got "eighty"');
      expect(invalidConfiguration.code).toBe(2);
    });

    it('the API port in use', { timeout: 60_000 }, async () => {
      const blocker = await occupyPort();
      try {
        const result = await runFailingServer({ SLIPWAY_DATA_DIR: path.join(scratch, 'api-port'), SLIPWAY_PORT: String(blocker.port) });
        expectOneLine(result, `slipway: cannot start: the API port 127.0.0.1:${blocker.port} is in use: choose another with SLIPWAY_PORT`);
      } finally {
        await new Promise((done) => blocker.server.close(done));
      }
    });

    it('the apps port of the local agent in use', { timeout: 60_000 }, async () => {
      const blocker = await occupyPort();
      try {
        const result = await runFailingServer({
          SLIPWAY_DATA_DIR: path.join(scratch, 'apps-port'),
          SLIPWAY_LOCAL_AGENT: 'true',
          SLIPWAY_APPS_PORT: String(blocker.port),
        });
        expectOneLine(result, `slipway: cannot start: the apps port 127.0.0.1:${blocker.port} is in use: choose another with SLIPWAY_APPS_PORT`);
      } finally {
        await new Promise((done) => blocker.server.close(done));
      }
    });

    it('the HTTPS apps port in use', { timeout: 60_000 }, async () => {
      const blocker = await occupyPort();
      const dataDir = path.join(scratch, 'https-port');
      try {
        const result = await runFailingServer({ SLIPWAY_DATA_DIR: dataDir, SLIPWAY_LOCAL_AGENT: 'true', SLIPWAY_APPS_PORT: '0', SLIPWAY_APPS_HTTPS_PORT: String(blocker.port) });
        expectOneLine(result, `slipway: cannot start: the HTTPS apps port 127.0.0.1:${blocker.port} is in use: choose another with SLIPWAY_APPS_HTTPS_PORT`);
      } finally {
        // The apps proxy process had started (on the plain apps port) and outlives its server by design.
        await killProcessesUnder(dataDir);
        await new Promise((done) => blocker.server.close(done));
      }
    });

    it('a data directory that cannot be made (a file stands in its way)', { timeout: 60_000 }, async () => {
      const file = path.join(scratch, 'not-a-directory');
      writeFileSync(file, '');
      const dataDir = path.join(file, 'data');
      const result = await runFailingServer({ SLIPWAY_DATA_DIR: dataDir });
      expectOneLine(
        result,
        `slipway: cannot start: the data directory ${dataDir} cannot be used (ENOTDIR: not a directory, stat '${dataDir}'): make it readable and writable by this account, or choose another with SLIPWAY_DATA_DIR`,
      );
    });

    it('a database that cannot be reached, without its password', { timeout: 60_000 }, async () => {
      // A port nothing listens on: taken, then let go.
      const { server, port } = await occupyPort();
      await new Promise((done) => server.close(done));
      const result = await runFailingServer({
        SLIPWAY_DATA_DIR: path.join(scratch, 'database'),
        SLIPWAY_DATABASE_URL: `postgres://slipway:hunter2-secret@127.0.0.1:${port}/slipway?application_name=x`,
      });
      expectOneLine(
        result,
        `slipway: cannot start: the database postgres://slipway@127.0.0.1:${port}/slipway cannot be reached (connect ECONNREFUSED 127.0.0.1:${port}): check it, or set another with SLIPWAY_DATABASE_URL`,
      );
      expect(result.stdout + result.stderr).not.toContain('hunter2');
    });
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
