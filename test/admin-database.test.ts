import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorDatabaseLine } from '../src/cli/admin-database.ts';
import { SLIPWAY_BIN, type CliResult } from './support/slipway-process.ts';

/**
 * Which database the operator's commands act on: without SLIPWAY_DATA_DIR the one `npm start` uses, whichever
 * directory of the project `npx slipway admin …` runs in, named on standard error before the command acts.
 */

/** `slipway <args>` as `npx slipway` runs it: in `cwd`, with npm naming the project's root in npm_config_local_prefix. */
function npxSlipway(args: string[], cwd: string, projectRoot: string): Promise<CliResult> {
  const child = spawn(process.execPath, [SLIPWAY_BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH, npm_config_local_prefix: projectRoot, SLIPWAY_LOG_LEVEL: 'silent' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('slipway admin: the database it acts on', () => {
  let project: string;

  beforeAll(async () => {
    project = await mkdtemp(path.join(tmpdir(), 'slipway-admin-database-'));
    await mkdir(path.join(project, 'examples', 'visits'), { recursive: true });
  });

  afterAll(async () => {
    await rm(project, { recursive: true, force: true });
  });

  it("uses the server's default data directory from any directory of the project, naming the database and saying when it is new", async () => {
    const database = path.join(project, '.slipway', 'slipway.db');
    const subdirectory = path.join(project, 'examples', 'visits');

    const bootstrap = await npxSlipway(['admin', 'bootstrap', '--email', 'ops@example.com', '--organization', 'Acme', '--json'], subdirectory, project);
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    expect(bootstrap.stderr).toBe(`slipway: using the database ${database}, created now: none was there (SLIPWAY_DATA_DIR names the server's data directory)\n`);
    expect(existsSync(path.join(subdirectory, '.slipway'))).toBe(false);
    const organizationId = (JSON.parse(bootstrap.stdout) as { organization_id: string }).organization_id;

    // Another command from the project's root finds the same installation: the bootstrap's organization.
    const listed = await npxSlipway(['admin', 'local-clusters', 'list', '--json'], project, project);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toBe(`slipway: using the database ${database}\n`);
    expect((JSON.parse(listed.stdout) as { allowed: { organization: { id: string } }[] }).allowed.map((grant) => grant.organization.id)).toEqual([organizationId]);
  }, 60_000);

  it('names a PostgreSQL database by its URL, without its password or query', () => {
    const line = operatorDatabaseLine({ databaseUrl: 'postgres://ops:hunter2@db.internal:5432/slipway?sslmode=require&password=x', dataDir: '/unused' }, false);
    expect(line).toBe('slipway: using the database postgres://ops@db.internal:5432/slipway\n');
  });
});
