import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateKeyFile } from '../src/lib/secret-box.ts';
import { UnsafePermissionsError } from '../src/lib/private-files.ts';
import { TEST_DIALECTS } from './support/databases.ts';
import { freePort } from './support/identity-app.ts';
import { SLIPWAY_BIN, startSlipwayServer } from './support/slipway-process.ts';

/**
 * The control plane's files are its own account's alone (issue 17, part 2): the real `slipway` process creates its
 * data directory 0700 and the database, its WAL and shared memory and the key file 0600 whatever the umask, narrows
 * a data directory and database an older version left open to others, and refuses to start — exit status 2, one
 * line, no port — with a key file other accounts could read or write, which it never narrows itself.
 */
const uid = process.getuid?.();

function modeOf(file: string): number {
  return statSync(file).mode & 0o7777;
}

/** Every path under `dir` (itself included) with its permission bits. */
function modesUnder(dir: string): Map<string, number> {
  const modes = new Map<string, number>([[dir, modeOf(dir)]]);
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    modes.set(file, modeOf(file));
  }
  return modes;
}

interface Running {
  child: ChildProcess;
  baseUrl: string;
  exited: Promise<number | null>;
}

/**
 * `slipway <args>` under `umask` (through sh, as an init script or a shell would start it), with only PATH and the
 * given variables: the developer's own SLIPWAY_* settings cannot leak in.
 */
function spawnSlipway(args: string[], env: Record<string, string>, umask = '022'): { child: ChildProcess; output(): string; exited: Promise<number | null> } {
  const child = spawn('/bin/sh', ['-c', `umask ${umask} && exec "$0" "$@"`, process.execPath, SLIPWAY_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', SLIPWAY_LOG_LEVEL: 'info', SLIPWAY_LOCAL_AGENT: 'false', SLIPWAY_APPS_PORT: '0', ...env },
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** `slipway server` on a free port; resolves once it serves (the local agent, which starts after the API listens, included). */
async function startServer(env: Record<string, string>, umask?: string): Promise<Running> {
  const started = spawnSlipway(['server'], { SLIPWAY_PORT: '0', ...env }, umask);
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(started.output());
      if (match?.[1] !== undefined && started.output().includes('slipway is serving')) resolve(match[1]);
    };
    started.child.stdout?.on('data', look);
    void started.exited.then((code) => reject(new Error(`slipway server exited (${code}) before listening:\n${started.output()}`)));
  });
  return { child: started.child, baseUrl, exited: started.exited };
}

async function stop(server: Running): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

describe('the data directory of the real server', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'slipway-data-files-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('creates the data directory 0700 and the database, WAL, shared memory and key file 0600, even under umask 000', { timeout: 60_000 }, async () => {
    const dataDir = path.join(root, 'fresh', 'data');
    // Node's compile cache would otherwise be written, world-writable under this umask, into the shared temp directory.
    const env = { SLIPWAY_DATA_DIR: dataDir, HOME: root, NODE_COMPILE_CACHE: path.join(root, 'compile-cache') };

    // The first process to touch the data directory may be `slipway admin bootstrap`.
    const bootstrap = spawnSlipway(['admin', 'bootstrap', '--email', 'ops@example.com', '--organization', 'Acme', '--json'], { ...env, SLIPWAY_LOG_LEVEL: 'silent' }, '000');
    expect(await bootstrap.exited, bootstrap.output()).toBe(0);
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(path.join(root, 'fresh'))).toBe(0o700);
    expect(modeOf(path.join(dataDir, 'slipway.db'))).toBe(0o600);

    const server = await startServer(env, '000');
    try {
      expect((await fetch(`${server.baseUrl}/ips`)).status).toBe(200);
      expect(modeOf(dataDir)).toBe(0o700);
      for (const file of ['slipway.db', 'slipway.db-wal', 'slipway.db-shm', 'secret.key']) expect(modeOf(path.join(dataDir, file)), file).toBe(0o600);
      // And nothing else in there lets another account in.
      for (const [file, mode] of modesUnder(dataDir)) expect(mode & 0o077, `${file} ${mode.toString(8)}`).toBe(0);
    } finally {
      await stop(server);
    }
  });

  it('narrows a data directory and a database an older version left open to other accounts', { timeout: 60_000 }, async () => {
    const dataDir = path.join(root, 'older');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const env = { SLIPWAY_DATA_DIR: dataDir, HOME: root };

    const first = await startServer(env);
    try {
      expect((await fetch(`${first.baseUrl}/ips`)).status).toBe(200);
      expect(modeOf(dataDir)).toBe(0o700);
    } finally {
      // Killed, so that the WAL and the shared memory stay behind as well.
      first.child.kill('SIGKILL');
      await first.exited;
    }

    // As an older version left them: everything readable by every account of the host.
    chmodSync(dataDir, 0o755);
    for (const file of ['slipway.db', 'slipway.db-wal', 'slipway.db-shm']) chmodSync(path.join(dataDir, file), 0o644);
    const second = await startServer(env);
    try {
      expect((await fetch(`${second.baseUrl}/ips`)).status).toBe(200);
      expect(modeOf(dataDir)).toBe(0o700);
      for (const file of ['slipway.db', 'slipway.db-wal', 'slipway.db-shm', 'secret.key']) expect(modeOf(path.join(dataDir, file)), file).toBe(0o600);
    } finally {
      await stop(second);
    }
  });

  for (const [exposure, mode] of [
    ['readable', 0o644],
    ['writable', 0o620],
  ] as const) {
    it(`refuses to start with a key file ${exposure} by other accounts: exit 2, one line naming it, its mode and chmod 600; no port, nothing fixed`, { timeout: 60_000 }, async () => {
      const dataDir = path.join(root, `exposed-${exposure}`);
      mkdirSync(dataDir, { mode: 0o700 });
      const keyFile = path.join(dataDir, 'secret.key');
      const key = `${randomBytes(32).toString('base64')}\n`;
      writeFileSync(keyFile, key);
      chmodSync(keyFile, mode);
      const port = await freePort();

      const refused = spawnSlipway(['server'], { SLIPWAY_DATA_DIR: dataDir, HOME: root, SLIPWAY_PORT: String(port) });
      expect(await refused.exited).toBe(2);
      const lines = refused.output().split('\n').filter((line) => line !== '');
      expect(lines).toEqual([
        `slipway: refusing to start: ${keyFile} is ${exposure} by other accounts (mode 0${mode.toString(8)}), so the key in it may ${exposure === 'readable' ? 'already have been copied' : 'have been replaced'}; run chmod 600 ${keyFile} and start again`,
      ]);
      await expect(fetch(`http://127.0.0.1:${port}/ips`)).rejects.toThrow();
      // The exposure already happened: the file stays as it was for the operator to judge, and nothing was opened.
      expect(modeOf(keyFile)).toBe(mode);
      expect(readFileSync(keyFile, 'utf8')).toBe(key);
      expect(existsSync(path.join(dataDir, 'slipway.db'))).toBe(false);
    });
  }

  it('refuses a shared directory such as /tmp as the data directory instead of narrowing it', { timeout: 60_000 }, async () => {
    const shared = path.join(root, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const refused = spawnSlipway(['server'], { SLIPWAY_DATA_DIR: shared, HOME: root });
    expect(await refused.exited).toBe(2);
    expect(refused.output()).toBe(`slipway: refusing to start: the data directory ${shared} is shared by every account of this host (mode 1777): set SLIPWAY_DATA_DIR to a directory of Slipway's own\n`);
    expect(modeOf(shared)).toBe(0o1777);
    expect(readdirSync(shared)).toEqual([]);
  });

  it("lets the local agent's database accounts pass through, as root, and no further: the search bit, never read", { timeout: 60_000 }, async () => {
    const dataDir = path.join(root, 'with-agent');
    const server = await startServer({ SLIPWAY_DATA_DIR: dataDir, HOME: root, SLIPWAY_LOCAL_AGENT: 'true', SLIPWAY_APPS_PORT: '0' });
    try {
      expect((await fetch(`${server.baseUrl}/ips`)).status).toBe(200);
      const passable = uid === 0 ? 0o711 : 0o700;
      expect(modeOf(dataDir)).toBe(passable);
      expect(modeOf(path.join(dataDir, 'agent'))).toBe(passable);
      for (const [file, mode] of modesUnder(dataDir)) {
        if (statSync(file).isFile()) expect(mode & 0o077, `${file} ${mode.toString(8)}`).toBe(0);
        else expect(mode & 0o022, `${file} ${mode.toString(8)}`).toBe(0);
      }
    } finally {
      await stop(server);
    }
  });
});

describe('the key file', () => {
  it('is refused, not read, when other accounts may read or write it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'slipway-key-'));
    try {
      const file = path.join(dir, 'secret.key');
      loadOrCreateKeyFile(file);
      for (const mode of [0o640, 0o604, 0o660, 0o602]) {
        chmodSync(file, mode);
        expect(() => loadOrCreateKeyFile(file)).toThrow(UnsafePermissionsError);
      }
      chmodSync(file, 0o400);
      expect(loadOrCreateKeyFile(file)).toHaveLength(32);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

for (const dialect of TEST_DIALECTS.filter((candidate) => candidate === 'postgres')) {
  describe(`the data directory on ${dialect}`, () => {
    it('holds only the key file there, 0600, in a 0700 directory', { timeout: 60_000 }, async () => {
      const root = mkdtempSync(path.join(tmpdir(), 'slipway-data-files-pg-'));
      const dataDir = path.join(root, 'data');
      const server = await startSlipwayServer(dialect, { SLIPWAY_DATA_DIR: dataDir });
      try {
        expect((await fetch(`${server.baseUrl}/ips`)).status).toBe(200);
        expect(modeOf(dataDir)).toBe(0o700);
        expect(modesUnder(dataDir)).toEqual(new Map([[dataDir, 0o700], [path.join(dataDir, 'secret.key'), 0o600]]));
      } finally {
        await server.close();
        rmSync(root, { recursive: true, force: true });
      }
    });
  });
}
