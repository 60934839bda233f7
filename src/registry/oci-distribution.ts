import { OutboundFailure, type OutboundHttp, type OutboundResponse } from './outbound-http.ts';

/**
 * A client of the OCI distribution API (the Docker Registry HTTP API V2) for what Slipway needs of a registry: is
 * it there and do the credentials work (GET /v2/), which repositories it holds (GET /v2/_catalog) and which tags a
 * repository has (GET /v2/<name>/tags/list). Authentication follows the registry's challenge: Basic with the
 * credentials, or the token flow (`WWW-Authenticate: Bearer realm=…,service=…,scope=…`: a token fetched from the
 * realm with the credentials as Basic, then sent as a Bearer token), which Docker Hub, GHCR, GitLab and ECR use.
 */
export interface RegistryCredentials {
  username: string;
  password: string;
}

export interface RegistryEndpoint {
  /** Scheme, host and port of the registry API, e.g. `https://ghcr.io`; no path. */
  baseUrl: string;
  credentials?: RegistryCredentials | undefined;
  insecureTls?: boolean | undefined;
}

export interface RegistryCheck {
  /** The registry answered over HTTP. */
  reachable: boolean;
  /** The registry granted access: with the configured credentials, or anonymously when none are configured. */
  authenticated: boolean;
  message: string;
}

export type RegistryAccessErrorKind = 'unauthorized' | 'not_found' | 'unsupported' | 'protocol';

/** A registry answered, but not with what was asked; the message says what it answered. */
export class RegistryAccessError extends Error {
  readonly kind: RegistryAccessErrorKind;
  constructor(
    kind: RegistryAccessErrorKind,
    message: string,
  ) {
    super(message);
    this.kind = kind;
    this.name = 'RegistryAccessError';
  }
}

/** The OCI distribution grammar of a repository name (path components of lower-case alphanumerics and separators). */
export const REPOSITORY_NAME_PATTERN = '^[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*)*$';
const REPOSITORY_NAME = new RegExp(REPOSITORY_NAME_PATTERN);

const PAGE_SIZE = 1000;
const MAX_PAGES = 20;
const ACCEPT_JSON = { accept: 'application/json' };

interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** `Bearer realm="…",service="…",scope="…"` → its scheme (lower case) and parameters. */
export function parseChallenge(header: string | undefined): Challenge | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*([A-Za-z]+)\s*(.*)$/.exec(header);
  if (match === null) return undefined;
  const params: Record<string, string> = {};
  for (const param of (match[2] ?? '').matchAll(/([A-Za-z_]+)\s*=\s*(?:"([^"]*)"|([^,\s]*))/g)) {
    params[(param[1] ?? '').toLowerCase()] = param[2] ?? param[3] ?? '';
  }
  return { scheme: (match[1] ?? '').toLowerCase(), params };
}

function basic(credentials: RegistryCredentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64')}`;
}

function jsonOf(response: OutboundResponse, what: string): unknown {
  try {
    return JSON.parse(response.body.toString('utf8'));
  } catch {
    throw new RegistryAccessError('protocol', `${what} answered ${response.status} with a body that is not JSON`);
  }
}

/** The `rel="next"` target of a Link header, resolved against the registry and kept on it. */
function nextPage(response: OutboundResponse, baseUrl: string): string | undefined {
  const link = response.headers.link;
  const match = typeof link === 'string' ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link) : null;
  if (match === null || match[1] === undefined) return undefined;
  const next = new URL(match[1], baseUrl);
  return next.origin === new URL(baseUrl).origin ? `${next.pathname}${next.search}` : undefined;
}

export function createOciDistributionClient(http: OutboundHttp) {
  async function fetchToken(endpoint: RegistryEndpoint, params: Record<string, string>, scope: string | undefined): Promise<string> {
    const realm = params.realm;
    if (realm === undefined || realm === '') throw new RegistryAccessError('protocol', 'the registry asked for a bearer token without naming a realm');
    const tokenUrl = new URL(realm);
    if (params.service !== undefined) tokenUrl.searchParams.set('service', params.service);
    const wanted = params.scope ?? scope;
    if (wanted !== undefined) tokenUrl.searchParams.set('scope', wanted);
    const response = await http.get({
      url: tokenUrl.href,
      headers: { ...ACCEPT_JSON, ...(endpoint.credentials === undefined ? {} : { authorization: basic(endpoint.credentials) }) },
      insecureTls: endpoint.insecureTls === true,
    });
    if (response.status === 401 || response.status === 403) {
      throw new RegistryAccessError('unauthorized', `the registry's token service (${tokenUrl.host}) refused the credentials (${response.status})`);
    }
    if (response.status !== 200) throw new RegistryAccessError('protocol', `the registry's token service (${tokenUrl.host}) answered ${response.status}`);
    const body = jsonOf(response, 'the token service') as { token?: unknown; access_token?: unknown };
    const token = typeof body.token === 'string' ? body.token : body.access_token;
    if (typeof token !== 'string' || token === '') throw new RegistryAccessError('protocol', 'the token service answered without a token');
    return token;
  }

  /** GET on the registry, answering its challenge once (Basic or the bearer-token flow). */
  async function authorizedGet(endpoint: RegistryEndpoint, path: string, scope: string | undefined): Promise<OutboundResponse> {
    const url = `${endpoint.baseUrl}${path}`;
    const insecureTls = endpoint.insecureTls === true;
    const first = await http.get({ url, headers: ACCEPT_JSON, insecureTls });
    if (first.status !== 401) return first;
    const header = first.headers['www-authenticate'];
    const challenge = parseChallenge(Array.isArray(header) ? header[0] : header);
    if (challenge?.scheme === 'basic') {
      if (endpoint.credentials === undefined) return first;
      return http.get({ url, headers: { ...ACCEPT_JSON, authorization: basic(endpoint.credentials) }, insecureTls });
    }
    if (challenge?.scheme === 'bearer') {
      const token = await fetchToken(endpoint, challenge.params, scope);
      return http.get({ url, headers: { ...ACCEPT_JSON, authorization: `Bearer ${token}` }, insecureTls });
    }
    return first;
  }

  async function check(endpoint: RegistryEndpoint): Promise<RegistryCheck> {
    const withCredentials = endpoint.credentials !== undefined;
    let response: OutboundResponse;
    try {
      response = await authorizedGet(endpoint, '/v2/', undefined);
    } catch (error) {
      if (error instanceof OutboundFailure && error.kind !== 'refused') return { reachable: false, authenticated: false, message: error.message };
      if (error instanceof RegistryAccessError) {
        return { reachable: true, authenticated: false, message: error.message };
      }
      throw error;
    }
    if (response.status === 200) {
      return {
        reachable: true,
        authenticated: true,
        message: withCredentials ? `the registry accepted the credentials of "${endpoint.credentials?.username}"` : 'the registry allows anonymous access',
      };
    }
    if (response.status === 401 || response.status === 403) {
      return {
        reachable: true,
        authenticated: false,
        message: withCredentials ? `the registry refused the credentials (${response.status})` : `the registry requires credentials and none are configured (${response.status})`,
      };
    }
    return { reachable: true, authenticated: false, message: `GET /v2/ answered ${response.status}: not an OCI distribution API endpoint` };
  }

  function refusal(response: OutboundResponse, what: string): RegistryAccessError {
    if (response.status === 401 || response.status === 403) return new RegistryAccessError('unauthorized', `the registry refused access to ${what} (${response.status})`);
    if (response.status === 404) return new RegistryAccessError('not_found', `${what} not found on the registry (404)`);
    return new RegistryAccessError('protocol', `the registry answered ${response.status} for ${what}`);
  }

  /** Follows `Link: <…>; rel="next"` pages, collecting the named array of each page. */
  async function collectPages(endpoint: RegistryEndpoint, firstPath: string, scope: string, key: 'repositories' | 'tags', what: string): Promise<string[]> {
    const out: string[] = [];
    let path: string | undefined = firstPath;
    for (let page = 0; path !== undefined && page < MAX_PAGES; page += 1) {
      const response = await authorizedGet(endpoint, path, scope);
      if (response.status !== 200) {
        if (key === 'repositories' && response.status === 404) {
          throw new RegistryAccessError('unsupported', 'the registry does not offer a catalog (GET /v2/_catalog answered 404); name the image instead');
        }
        throw refusal(response, what);
      }
      const body = jsonOf(response, what) as Record<string, unknown>;
      const items = body[key];
      if (items !== null && items !== undefined && !Array.isArray(items)) throw new RegistryAccessError('protocol', `${what}: "${key}" is not a list`);
      for (const item of items ?? []) if (typeof item === 'string') out.push(item);
      path = nextPage(response, endpoint.baseUrl);
    }
    return out;
  }

  async function listRepositories(endpoint: RegistryEndpoint): Promise<string[]> {
    const names = await collectPages(endpoint, `/v2/_catalog?n=${PAGE_SIZE}`, 'registry:catalog:*', 'repositories', 'the catalog');
    return [...new Set(names)].sort();
  }

  async function listTags(endpoint: RegistryEndpoint, repository: string): Promise<string[]> {
    if (!REPOSITORY_NAME.test(repository)) throw new RegistryAccessError('not_found', `"${repository}" is not a repository name`);
    const tags = await collectPages(endpoint, `/v2/${repository}/tags/list?n=${PAGE_SIZE}`, `repository:${repository}:pull`, 'tags', `repository "${repository}"`);
    return [...new Set(tags)];
  }

  return { check, listRepositories, listTags };
}

export type OciDistributionClient = ReturnType<typeof createOciDistributionClient>;
