import { spawn } from 'node:child_process';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { nodeHttp } from '../lib/node-http.ts';
import type { AddressInfo } from 'node:net';

/**
 * Git's smart HTTP protocol for the repositories under a directory, by git's own `git http-backend` run as a CGI
 * program for each request: what `slipway git serve` offers for deploying local work to a local Slipway (the
 * repository URL is then `http://127.0.0.1:<port>/<name>.git`, which needs SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true), and
 * what the test suites' git server is built on. No user or system git configuration takes part.
 */
export function gitServerEnvironment(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
}

/** Runs git http-backend for one request and relays its CGI answer (Status header, other headers, body). */
export function serveWithHttpBackend(root: string, request: IncomingMessage, response: ServerResponse, remoteUser: string | undefined): void {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const env: NodeJS.ProcessEnv = {
    ...gitServerEnvironment(root),
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.replace(/^\?/, ''),
    REQUEST_METHOD: request.method ?? 'GET',
    CONTENT_TYPE: request.headers['content-type'] ?? '',
    REMOTE_ADDR: request.socket.remoteAddress ?? '127.0.0.1',
    // Partial clones need the server to honour --filter.
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'uploadpack.allowFilter',
    GIT_CONFIG_VALUE_0: 'true',
  };
  if (remoteUser !== undefined) env.REMOTE_USER = remoteUser;
  const encoding = request.headers['content-encoding'];
  if (typeof encoding === 'string') env.HTTP_CONTENT_ENCODING = encoding;
  const protocol = request.headers['git-protocol'];
  if (typeof protocol === 'string') env.GIT_PROTOCOL = protocol;

  const backend = spawn('git', ['http-backend'], { env });
  const chunks: Buffer[] = [];
  backend.on('error', () => response.writeHead(500).end('git http-backend could not be started\n'));
  backend.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  backend.on('close', () => {
    if (response.headersSent) return;
    const output = Buffer.concat(chunks);
    const separator = output.indexOf('\r\n\r\n') >= 0 ? '\r\n\r\n' : '\n\n';
    const headerEnd = output.indexOf(separator);
    if (headerEnd < 0) {
      response.writeHead(500).end();
      return;
    }
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of output.subarray(0, headerEnd).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
      else headers[name] = value;
    }
    response.writeHead(status, headers).end(output.subarray(headerEnd + separator.length));
  });
  request.pipe(backend.stdin);
}

/** Serves every repository under `root` (bare `<name>.git` directories), read-only: pushes are refused by git. */
export async function startGitHttpServer(root: string, port: number, host = '127.0.0.1'): Promise<{ server: Server; address: AddressInfo }> {
  const server = nodeHttp.createServer((request, response) => serveWithHttpBackend(root, request, response, undefined));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { server, address: server.address() as AddressInfo };
}
