import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The sample applications the local deployment tests and the deploy benchmark deploy through Slipway, committed into
 * bare git repositories that test/support/git-server.ts serves over HTTP, and the means to look at them once they
 * run: a request through the reverse proxy by host name, the processes living under a data directory, whether a port
 * still accepts connections.
 *
 * - `hello`: a dependency-free Node HTTP server (package.json with a build and a start script, no dependencies), so
 *   its build is `npm run build` alone. Every request answers its GREETING variable and its build's id, except
 *   `GET /upstream`, which answers what another service of its environment answers: the one UPSTREAM_SERVICE names,
 *   reached as `http://$PLATFORM_APPLICATION_<UPSTREAM_SERVICE>_HOSTNAME:$UPSTREAM_PORT/`.
 * - `visits`: the same, plus PostgreSQL. At start it finds the one PostgreSQL database beside it through Slipway's
 *   built-in `PLATFORM_DATABASE_<NAME>_CONNECTION_URI` (the database whose `PLATFORM_DATABASE_<NAME>_TYPE` is
 *   POSTGRESQL), creates a `visits` table if missing and records a row naming its build; every request answers the
 *   rows read back from that database. It only listens once that row is written, so a deployed instance has reached
 *   its database.
 *
 * How `visits` gets a PostgreSQL client: it uses the real `pg`, copied with its dependency closure from this
 * repository's own node_modules (the version package-lock.json pins) into the sample's node_modules and committed
 * with it, while its package.json declares no dependencies. Chosen over a lockfile and `npm ci` against the
 * registry: the deployment then never needs the network (CI runners and laptops without registry access deploy it
 * the same way) and takes no npm install time that has nothing to do with Slipway. Chosen over a hand-written
 * protocol client: the app connects the way real applications do, so the built-in URI is checked by the parser real
 * applications use (percent-encoded credentials, the port, the database name). The npm install path itself is
 * tested by test/local-engine-apps.test.ts.
 *
 * Both samples' build step (`node build.js`) stamps a fresh build id into build-info.json and prints it: the id is
 * the deploy marker that tells one deployment's instance from the next, and the printed line is the build output a
 * deployment's log must show. Both listen on 127.0.0.1:$PORT (the port the platform gives them), answer
 * `GET /health` for readiness probes, and close their server on SIGTERM.
 */

export type SampleApp = 'hello' | 'visits';

/** What `GET /` of the hello sample answers. */
export interface HelloAnswer {
  app: 'hello';
  greeting: string | null;
  build: string;
  pid: number;
  port: number;
}

/** What `GET /` of the visits sample answers: its own identity and every row of its `visits` table, oldest first. */
export interface VisitsAnswer {
  app: 'visits';
  greeting: string | null;
  build: string;
  pid: number;
  port: number;
  visits: Array<{ id: number; build: string; greeting: string | null }>;
}

const BUILD_SCRIPT = `'use strict';
// The build step: stamps the build with a fresh id, the marker telling one deployment's instance from the next.
const { randomUUID } = require('node:crypto');
const { writeFileSync } = require('node:fs');
const path = require('node:path');

const id = randomUUID();
writeFileSync(path.join(__dirname, 'build-info.json'), JSON.stringify({ id, built_at: new Date().toISOString() }));
console.log('sample build: stamped build ' + id);
`;

/** The start of both servers: the port the platform gives, the build stamped by build.js. */
const SERVER_PRELUDE = `'use strict';
const http = require('node:http');
const { readFileSync } = require('node:fs');
const path = require('node:path');

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error('PORT is not set to a port number: the platform gives the port to listen on');
  process.exit(1);
}
const build = JSON.parse(readFileSync(path.join(__dirname, 'build-info.json'), 'utf8')).id;
const greeting = process.env.GREETING === undefined ? null : process.env.GREETING;

function answer(response, status, body) {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
`;

const HELLO_SERVER = `${SERVER_PRELUDE}
const server = http.createServer((request, response) => {
  if (request.url === '/health') return answer(response, 200, { ok: true });
  if (request.url === '/upstream') {
    const host = process.env['PLATFORM_APPLICATION_' + process.env.UPSTREAM_SERVICE + '_HOSTNAME'];
    fetch('http://' + host + ':' + process.env.UPSTREAM_PORT + '/', { signal: AbortSignal.timeout(5000) })
      .then((reply) => reply.json())
      .then((body) => answer(response, 200, { app: 'hello', build, upstream: body }), (error) => answer(response, 502, { error: String(error), host }));
    return;
  }
  answer(response, 200, { app: 'hello', greeting, build, pid: process.pid, port });
});
server.listen(port, '127.0.0.1', () => console.log('hello sample: build ' + build + ' listening on ' + port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

const VISITS_SERVER = `${SERVER_PRELUDE}
const { Pool } = require('pg');

/** The built-in connection URI of the one PostgreSQL database of the environment. */
function databaseUri() {
  const names = Object.keys(process.env).filter(
    (name) => /^PLATFORM_DATABASE_.+_CONNECTION_URI$/.test(name) && process.env[name.replace(/_CONNECTION_URI$/, '_TYPE')] === 'POSTGRESQL',
  );
  if (names.length !== 1) throw new Error('expected one PostgreSQL database beside the app, found ' + names.length + ': ' + names.join(', '));
  return process.env[names[0]];
}

async function main() {
  const pool = new Pool({ connectionString: databaseUri(), max: 4 });
  await pool.query('CREATE TABLE IF NOT EXISTS visits (id serial PRIMARY KEY, build text NOT NULL, greeting text, recorded_at timestamptz NOT NULL DEFAULT now())');
  await pool.query('INSERT INTO visits (build, greeting) VALUES ($1, $2)', [build, greeting]);
  console.log('visits sample: recorded build ' + build + ' in the database');
  const server = http.createServer((request, response) => {
    if (request.url === '/health') return answer(response, 200, { ok: true });
    pool.query('SELECT id, build, greeting FROM visits ORDER BY id').then(
      (result) => answer(response, 200, { app: 'visits', greeting, build, pid: process.pid, port, visits: result.rows }),
      (error) => answer(response, 500, { error: error.message }),
    );
  });
  server.listen(port, '127.0.0.1', () => console.log('visits sample: build ' + build + ' listening on ' + port));
  process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
}

main().catch((error) => {
  console.error('visits sample could not start: ' + error.message);
  process.exit(1);
});
`;

function packageJson(name: string): string {
  return `${JSON.stringify({ name, version: '1.0.0', private: true, scripts: { build: 'node build.js', start: 'node server.js' } }, null, 2)}\n`;
}

const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The directories of `pg` and of every package it needs (optional and peer dependencies aside), as Node resolves them. */
async function pgDependencyClosure(): Promise<string[]> {
  const found = new Set<string>();
  const visit = async (directory: string): Promise<void> => {
    if (found.has(directory)) return;
    found.add(directory);
    const manifest = JSON.parse(await readFile(path.join(directory, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const dependency of Object.keys(manifest.dependencies ?? {})) {
      const nested = path.join(directory, 'node_modules', dependency);
      const hoisted = path.join(REPOSITORY_ROOT, 'node_modules', dependency);
      const exists = await readFile(path.join(nested, 'package.json')).then(
        () => true,
        () => false,
      );
      await visit(exists ? nested : hoisted);
    }
  };
  await visit(path.join(REPOSITORY_ROOT, 'node_modules', 'pg'));
  return [...found];
}

/** Writes the sample's sources into `directory`. */
export async function writeSampleApp(directory: string, app: SampleApp): Promise<void> {
  await mkdir(directory, { recursive: true });
  await writeFile(path.join(directory, 'package.json'), packageJson(`sample-${app}`));
  await writeFile(path.join(directory, 'build.js'), BUILD_SCRIPT);
  await writeFile(path.join(directory, 'server.js'), app === 'hello' ? HELLO_SERVER : VISITS_SERVER);
  if (app === 'visits') {
    const modules = path.join(REPOSITORY_ROOT, 'node_modules');
    for (const source of await pgDependencyClosure()) {
      await cp(source, path.join(directory, 'node_modules', path.relative(modules, source)), { recursive: true, dereference: true });
    }
  }
}

/** Git with no user or system configuration, so the machine's settings never change a sample repository. */
function git(args: string[], cwd: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: cwd,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Sample',
    GIT_AUTHOR_EMAIL: 'sample@example.com',
    GIT_COMMITTER_NAME: 'Sample',
    GIT_COMMITTER_EMAIL: 'sample@example.com',
  };
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`git ${args.join(' ')} failed: ${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * Creates `<root>/<name>.git`, a bare repository whose branch `main` holds the sample in one commit (what
 * startGitServer serves as `<baseUrl>/<name>.git`); resolves with that commit's id.
 */
export async function createSampleRepository(root: string, name: string, app: SampleApp): Promise<string> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-sample-'));
  try {
    await git(['init', '--quiet', '--initial-branch=main', work], work);
    await writeSampleApp(work, app);
    await git(['add', '--all'], work);
    await git(['commit', '--quiet', '-m', `${app} sample`], work);
    const commit = (await git(['rev-parse', 'HEAD'], work)).trim();
    await git(['clone', '--quiet', '--bare', work, path.join(root, `${name}.git`)], work);
    return commit;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Looking at a deployed sample

export interface ProxyAnswer {
  status: number;
  body: string;
}

/**
 * `GET <path>` through the reverse proxy on 127.0.0.1:`appsPort` with `Host: <hostname>`. node:http sets the Host
 * header as given (fetch would put the address there), and no connection is reused between calls.
 */
export function requestThroughProxy(appsPort: number, hostname: string, pathname = '/', timeoutMs = 10_000): Promise<ProxyAnswer> {
  return new Promise((resolve, reject) => {
    const sent = request(
      { host: '127.0.0.1', port: appsPort, path: pathname, method: 'GET', headers: { host: hostname }, agent: false, timeout: timeoutMs },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        response.on('error', reject);
      },
    );
    sent.on('timeout', () => sent.destroy(new Error(`no answer from ${hostname} through 127.0.0.1:${appsPort} within ${timeoutMs} ms`)));
    sent.on('error', reject);
    sent.end();
  });
}

/** Whether something accepts TCP connections on `host`:`port` (127.0.0.1 by default) right now. */
export function portAccepts(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(2_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface HostProcess {
  pid: number;
  /** The resolved executable (e.g. /usr/lib/postgresql/15/bin/postgres), '' when it cannot be read. */
  executable: string;
  cwd: string;
  commandLine: string;
}

/**
 * Every process of this host whose working directory or command line lies under `directory` (read from /proc):
 * what a deployment started there — build steps, app instances, database servers — and has not ended.
 */
export async function processesUnder(directory: string): Promise<HostProcess[]> {
  const found: HostProcess[] = [];
  const prefix = directory.endsWith('/') ? directory : `${directory}/`;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const cwd = await readlink(`/proc/${entry}/cwd`);
      const commandLine = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').join(' ').trim();
      if (!(cwd === directory || cwd.startsWith(prefix) || commandLine.includes(prefix))) continue;
      const executable = await readlink(`/proc/${entry}/exe`).catch(() => '');
      found.push({ pid, executable, cwd, commandLine });
    } catch {
      // The process ended while it was being read, or is a kernel thread.
    }
  }
  return found;
}

/** Whether a process with this pid exists (a zombie counts as ended). */
export async function processAlive(pid: number): Promise<boolean> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return !/^State:\s+Z/m.test(status);
  } catch {
    return false;
  }
}

/**
 * SIGKILL to whatever still runs under `directory` (process by process, by pid): the last resort of a test or a
 * benchmark that failed before the platform tore its workloads down, so no run leaves processes behind.
 */
export async function killProcessesUnder(directory: string): Promise<HostProcess[]> {
  const left = await processesUnder(directory);
  for (const leftover of left) {
    try {
      process.kill(leftover.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  return left;
}
