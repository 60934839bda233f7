import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeSampleApp } from './sample-apps.ts';

/**
 * The application of the README's walkthrough as test/readme-walkthrough.test.ts deploys it: the `visits` sample of
 * sample-apps.ts (its build step, and the real `pg` committed in node_modules, so the deployment never needs the npm
 * registry) with another server.js, that does what the walkthrough says of the application:
 *
 * - it reaches PostgreSQL at DATABASE_URL and Redis at REDIS_URL — variables the walkthrough sets as aliases of the
 *   databases' built-ins, `$PLATFORM_DATABASE_<NAME>_CONNECTION_URI` — and checks both before it listens;
 * - every request but `GET /health` records a visit in PostgreSQL, counts it in Redis (INCR, through a minimal RESP
 *   client: no Redis package is in this repository's node_modules) and answers
 *   `{"greeting","visits","cached_visits","build"}` (GREETING, default "hello");
 * - it prints `visits: GET <path> (visit <n>, greeting <greeting>)` for each of those requests: runtime output a
 *   deployment's log shows after the deployment settled, which `slipway logs --follow` must print.
 *
 * It listens on 127.0.0.1:$PORT and closes its server on SIGTERM, as the samples do.
 */

/** What `GET /` of the walkthrough application answers. */
export interface WalkthroughAnswer {
  greeting: string;
  visits: number;
  cached_visits: number;
  build: string;
}

/** The line the application prints for a request of `pathname` (the visit number and greeting vary). */
export function walkthroughRequestLine(pathname: string): RegExp {
  return new RegExp(`visits: GET ${pathname.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(visit \\d+, greeting [^)]*\\)`);
}

const SERVER = `'use strict';
const http = require('node:http');
const net = require('node:net');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { Pool } = require('pg');

const port = Number(process.env.PORT);
const build = JSON.parse(readFileSync(path.join(__dirname, 'build-info.json'), 'utf8')).id;
const greeting = process.env.GREETING === undefined ? 'hello' : process.env.GREETING;
for (const name of ['DATABASE_URL', 'REDIS_URL']) {
  if (process.env[name] === undefined) {
    console.error(name + ' is not set: alias it to the database\\'s built-in, e.g. $PLATFORM_DATABASE_<NAME>_CONNECTION_URI');
    process.exit(1);
  }
}

/** Sends one Redis command (after AUTH with the URL's credentials) on a connection of its own; resolves its reply. */
function redis(words) {
  const url = new URL(process.env.REDIS_URL);
  const encode = (parts) => '*' + parts.length + '\\r\\n' + parts.map((part) => '$' + Buffer.byteLength(part) + '\\r\\n' + part + '\\r\\n').join('');
  const commands = [];
  if (url.password !== '') commands.push(['AUTH', decodeURIComponent(url.username || 'default'), decodeURIComponent(url.password)]);
  commands.push(words);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port || 6379) });
    socket.setTimeout(5000, () => socket.destroy(new Error('Redis did not answer within 5 s')));
    let received = '';
    socket.on('connect', () => socket.write(commands.map(encode).join('')));
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
      const replies = received.split('\\r\\n').slice(0, -1);
      if (replies.length < commands.length) return;
      socket.end();
      const failed = replies.find((reply) => reply.startsWith('-'));
      if (failed !== undefined) return reject(new Error('Redis: ' + failed.slice(1)));
      const last = replies[commands.length - 1];
      resolve(last.startsWith(':') ? Number(last.slice(1)) : last.slice(1));
    });
    socket.on('error', reject);
  });
}

async function main() {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
  await pool.query('CREATE TABLE IF NOT EXISTS visits (id serial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');
  await redis(['PING']);
  const server = http.createServer((request, response) => {
    if (request.url === '/health') return response.writeHead(200).end('ok\\n');
    (async () => {
      await pool.query('INSERT INTO visits DEFAULT VALUES');
      const { rows } = await pool.query('SELECT count(*)::int AS visits FROM visits');
      const cached = await redis(['INCR', 'visits']);
      console.log('visits: ' + request.method + ' ' + request.url + ' (visit ' + rows[0].visits + ', greeting ' + greeting + ')');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ greeting, visits: rows[0].visits, cached_visits: cached, build }) + '\\n');
    })().catch((error) => {
      console.error('visits: ' + error.message);
      response.writeHead(500).end(error.message + '\\n');
    });
  });
  server.listen(port, '127.0.0.1', () => console.log('visits listens on ' + port + ', PostgreSQL and Redis reached'));
  process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
}

main().catch((error) => {
  console.error('visits could not start: ' + error.message);
  process.exit(1);
});
`;

/** Git with no user or system configuration, so the machine's settings never change the repository. */
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
 * Creates `<root>/<name>.git`, a bare repository whose branch `main` holds the walkthrough application in one commit
 * (what startGitServer serves as `<baseUrl>/<name>.git`).
 */
export async function createWalkthroughRepository(root: string, name: string): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'slipway-walkthrough-app-'));
  try {
    await git(['init', '--quiet', '--initial-branch=main', work], work);
    await writeSampleApp(work, 'visits');
    await writeFile(path.join(work, 'server.js'), SERVER);
    await git(['add', '--all'], work);
    await git(['commit', '--quiet', '-m', 'walkthrough application'], work);
    await git(['clone', '--quiet', '--bare', work, path.join(root, `${name}.git`)], work);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
