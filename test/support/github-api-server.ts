import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A GitHub REST API for tests, as far as repository webhooks go (docs.github.com "Repository webhooks"): list, create
 * and update a repository's hooks, behind `Authorization: Bearer <token>` (or `token <token>`). It keeps the hooks as
 * GitHub does, secret included, so a test can sign deliveries the way GitHub would with the secret Slipway gave it.
 */

export interface StoredHook {
  id: number;
  name: string;
  active: boolean;
  events: string[];
  config: { url: string; content_type: string; secret?: string; insecure_ssl?: string };
}

export interface TestGitHubApi {
  /** The API root, what a git token's git_api_url names. */
  baseUrl: string;
  /** `owner/name` → its hooks. */
  hooks: Map<string, StoredHook[]>;
  /** Every request's method and path, in order. */
  seen: string[];
  close(): Promise<void>;
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

async function jsonBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

/** A hook as GitHub answers it: the secret is never shown (GitHub answers "********"). */
function shown(hook: StoredHook): Record<string, unknown> {
  return { type: 'Repository', id: hook.id, name: hook.name, active: hook.active, events: hook.events, config: { ...hook.config, ...(hook.config.secret === undefined ? {} : { secret: '********' }) } };
}

/** `tokens`: `owner/name` → the token that may manage that repository's hooks. */
export async function startGitHubApi(tokens: Record<string, string>): Promise<TestGitHubApi> {
  const hooks = new Map<string, StoredHook[]>();
  const seen: string[] = [];
  let nextId = 1000;
  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      seen.push(`${request.method ?? 'GET'} ${url.pathname}`);
      const match = /^\/repos\/([^/]+)\/([^/]+)\/hooks(?:\/(\d+))?$/.exec(url.pathname);
      if (match === null) return send(response, 404, { message: 'Not Found' });
      const repository = `${decodeURIComponent(match[1] ?? '')}/${decodeURIComponent(match[2] ?? '')}`;
      const given = (request.headers.authorization ?? '').replace(/^(Bearer|token) /, '');
      const expected = tokens[repository];
      if (expected === undefined) return send(response, 404, { message: 'Not Found' });
      if (given !== expected) return send(response, 401, { message: 'Bad credentials' });
      const list = hooks.get(repository) ?? [];
      hooks.set(repository, list);
      const hookId = match[3] === undefined ? undefined : Number(match[3]);
      if (request.method === 'GET' && hookId === undefined) return send(response, 200, list.map(shown));
      if (request.method === 'POST' && hookId === undefined) {
        const body = await jsonBody(request);
        const config = body.config as StoredHook['config'] | undefined;
        if (config?.url === undefined) return send(response, 422, { message: 'Validation Failed' });
        if (list.some((hook) => hook.config.url === config.url)) return send(response, 422, { message: 'Hook already exists on this repository' });
        nextId += 1;
        const hook: StoredHook = { id: nextId, name: 'web', active: body.active !== false, events: (body.events as string[] | undefined) ?? ['push'], config };
        list.push(hook);
        return send(response, 201, shown(hook));
      }
      const hook = list.find((candidate) => candidate.id === hookId);
      if (hook === undefined) return send(response, 404, { message: 'Not Found' });
      if (request.method === 'PATCH') {
        const body = await jsonBody(request);
        if (body.events !== undefined) hook.events = body.events as string[];
        if (body.active !== undefined) hook.active = body.active === true;
        if (body.config !== undefined) hook.config = { ...hook.config, ...(body.config as StoredHook['config']) };
        return send(response, 200, shown(hook));
      }
      return send(response, 405, { message: 'Method Not Allowed' });
    })().catch(() => send(response, 400, { message: 'Problems parsing JSON' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    hooks,
    seen,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}
