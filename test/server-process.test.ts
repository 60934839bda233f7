import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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

function runCli(args: string[], env: Record<string, string>): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SLIPWAY, ...args], { env: { ...process.env, ...env } });
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
});
