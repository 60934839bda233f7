import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A registry speaking the OCI distribution API over real HTTP on loopback, for tests: `GET /v2/`, the catalog
 * (`GET /v2/_catalog`, paginated with `Link: <…>; rel="next"`) and tag lists (`GET /v2/<name>/tags/list`), behind
 * one of the two authentication schemes registries use:
 *   basic  `WWW-Authenticate: Basic realm=…`; every request carries the credentials.
 *   token  `WWW-Authenticate: Bearer realm="<base>/token",service=…,scope=…` (Docker Hub, GHCR, GitLab, ECR): a token
 *          is fetched from the realm with the credentials as Basic, for the challenged scope, then sent as Bearer;
 *          a token only opens what its scope names.
 * With `anonymous: true`, requests without credentials are served too (basic), or get a token (token mode).
 * Wrong credentials answer 401.
 */
export interface OciRegistryOptions {
  mode: 'basic' | 'token';
  username: string;
  password: string;
  /** Repository name → its tags. */
  repositories: Record<string, string[]>;
  anonymous?: boolean;
  /** The most catalog entries per page, whatever `n` the client asks for. */
  catalogPageSize?: number;
}

export interface RecordedRequest {
  method: string;
  url: string;
  authorization: string | undefined;
}

export interface TestOciRegistry {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `127.0.0.1:<port>` */
  host: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const SERVICE = 'slipway-test-registry';

export async function startOciRegistry(options: OciRegistryOptions): Promise<TestOciRegistry> {
  const requests: RecordedRequest[] = [];
  /** Issued token → the scopes it grants. */
  const tokens = new Map<string, Set<string>>();
  let base = '';

  function basicMatches(header: string | undefined): boolean {
    if (header === undefined || !header.startsWith('Basic ')) return false;
    return Buffer.from(header.slice(6), 'base64').toString('utf8') === `${options.username}:${options.password}`;
  }

  function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    response.writeHead(status, { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0', ...headers });
    response.end(JSON.stringify(body));
  }

  function unauthorized(response: ServerResponse, scope: string | undefined): void {
    const challenge =
      options.mode === 'basic'
        ? 'Basic realm="slipway-test"'
        : `Bearer realm="${base}/token",service="${SERVICE}"${scope === undefined ? '' : `,scope="${scope}"`}`;
    send(response, 401, { errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }, { 'www-authenticate': challenge });
  }

  /** Whether the request may do what `scope` names (undefined: the base endpoint, any valid access). */
  function allowed(request: IncomingMessage, scope: string | undefined): boolean {
    const header = request.headers.authorization;
    if (options.mode === 'basic') return basicMatches(header) || (header === undefined && options.anonymous === true);
    if (header === undefined || !header.startsWith('Bearer ')) return false;
    const granted = tokens.get(header.slice(7));
    return granted !== undefined && (scope === undefined || granted.has(scope));
  }

  function issueToken(request: IncomingMessage, response: ServerResponse, url: URL): void {
    const header = request.headers.authorization;
    const anonymousAllowed = header === undefined && options.anonymous === true;
    if (!basicMatches(header) && !anonymousAllowed) {
      send(response, 401, { errors: [{ code: 'UNAUTHORIZED', message: 'bad credentials' }] });
      return;
    }
    if (url.searchParams.get('service') !== SERVICE) {
      send(response, 400, { errors: [{ code: 'UNSUPPORTED', message: 'unknown service' }] });
      return;
    }
    const token = randomBytes(16).toString('hex');
    tokens.set(token, new Set(url.searchParams.getAll('scope')));
    send(response, 200, { token, expires_in: 300 });
  }

  function catalog(response: ServerResponse, url: URL): void {
    const names = Object.keys(options.repositories).sort();
    const last = url.searchParams.get('last');
    const asked = Number(url.searchParams.get('n') ?? names.length);
    const pageSize = Math.min(asked, options.catalogPageSize ?? names.length);
    const start = last === null ? 0 : names.findIndex((name) => name > last);
    const page = start < 0 ? [] : names.slice(start, start + pageSize);
    const lastOfPage = page[page.length - 1];
    const more = start >= 0 && start + pageSize < names.length && lastOfPage !== undefined;
    send(response, 200, { repositories: page }, more ? { link: `</v2/_catalog?last=${encodeURIComponent(lastOfPage)}&n=${pageSize}>; rel="next"` } : {});
  }

  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', url: request.url ?? '', authorization: request.headers.authorization });
    const url = new URL(request.url ?? '/', base);
    if (request.method !== 'GET') return send(response, 405, { errors: [{ code: 'UNSUPPORTED' }] });
    if (url.pathname === '/token' && options.mode === 'token') return issueToken(request, response, url);
    if (url.pathname === '/v2/' || url.pathname === '/v2') {
      return allowed(request, undefined) ? send(response, 200, {}) : unauthorized(response, undefined);
    }
    if (url.pathname === '/v2/_catalog') {
      const scope = 'registry:catalog:*';
      return allowed(request, scope) ? catalog(response, url) : unauthorized(response, scope);
    }
    const tagsList = /^\/v2\/(.+)\/tags\/list$/.exec(url.pathname);
    if (tagsList !== null) {
      const name = tagsList[1] ?? '';
      const scope = `repository:${name}:pull`;
      if (!allowed(request, scope)) return unauthorized(response, scope);
      const tags = options.repositories[name];
      if (tags === undefined) return send(response, 404, { errors: [{ code: 'NAME_UNKNOWN', message: 'repository name not known to registry' }] });
      return send(response, 200, { name, tags });
    }
    return send(response, 404, { errors: [{ code: 'NOT_FOUND' }] });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  return {
    url: base,
    host: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}
