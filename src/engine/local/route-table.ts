/**
 * The apps proxy's routing table: which service (route key) answers on which hostnames, and where its current
 * instance listens. One table per proxy; the agent keeps its own copy (the authority) and the apps proxy process a
 * replica it serves from (apps-proxy.client.ts). A hostname belongs to one service at a time.
 */
export interface ProxyTarget {
  host: string;
  port: number;
}

export interface ProxyRoute {
  hostnames: readonly string[];
  target: ProxyTarget;
  /**
   * Whether plain HTTP for a name with a certificate is redirected to HTTPS (the service's advanced setting
   * `network.ingress.force_ssl_redirect`); absent: it is.
   */
  httpsRedirect?: boolean;
}

/** One row of a table, as listed and as carried over the apps proxy's control channel. */
export interface KeyedRoute extends ProxyRoute {
  key: string;
}

/**
 * What the local driver routes through (docs/local-engine.md, "Reverse proxy"): the in-process proxy of the tests
 * (reverse-proxy.ts) or the agent's side of the apps proxy process (apps-proxy.client.ts). Route changes are checked
 * and take effect in the caller's table at once; `applied` resolves once the proxy that serves requests has them too.
 */
export interface AppsRouting {
  /** Routes `hostnames` to `target` for the service `key`, replacing its previous route in one step. */
  setRoute(key: string, route: ProxyRoute): void;
  /** Stops routing the service; requests in flight finish. */
  removeRoute(key: string): ProxyRoute | undefined;
  route(key: string): ProxyRoute | undefined;
  /** Resolves true once no request is in flight to `target`, false when the timeout passed first. */
  drain(target: ProxyTarget, timeoutMs?: number): Promise<boolean>;
  /** Resolves once every route change made so far is served. */
  applied(): Promise<void>;
}

/**
 * A hostname is already routed to another service: a routing table never lets two services share one. The message
 * goes into the refused service's log, so it does not name the other service, which may be another organization's.
 */
export class RouteConflictError extends Error {
  readonly hostname: string;
  readonly routeKey: string;
  constructor(hostname: string, routeKey: string) {
    super(`${hostname} is already routed to another service`);
    this.hostname = hostname;
    this.routeKey = routeKey;
    this.name = 'RouteConflictError';
  }
}

const HOSTNAME_PATTERN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** The hostname a request names, without port and trailing dot; undefined when absent or malformed. */
export function requestHostname(hostHeader: string | undefined): string | undefined {
  if (hostHeader === undefined) return undefined;
  let host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) return undefined;
  const colon = host.indexOf(':');
  if (colon !== -1) host = host.slice(0, colon);
  if (host.endsWith('.')) host = host.slice(0, -1);
  return HOSTNAME_PATTERN.test(host) ? host : undefined;
}

export function targetKey(target: ProxyTarget): string {
  return `${target.host}:${target.port}`;
}

export class RouteTable {
  private readonly routesByKey = new Map<string, ProxyRoute>();
  private readonly keyByHostname = new Map<string, string>();

  /**
   * Routes `hostnames` to `target` for the service `key`, replacing its previous route in one step. A hostname of
   * another service is a RouteConflictError and changes nothing — unless `evict`: the replica of the apps proxy
   * process takes its agent's word and drops the other service's route (a stale one, which the agent's next full
   * table sets again if it still exists).
   */
  set(key: string, route: ProxyRoute, options: { evict?: boolean } = {}): void {
    const hostnames = route.hostnames.map((hostname) => requestHostname(hostname));
    for (const [index, hostname] of hostnames.entries()) {
      if (hostname === undefined) throw new Error(`"${route.hostnames[index] ?? ''}" is not a hostname`);
      const owner = this.keyByHostname.get(hostname);
      if (owner === undefined || owner === key) continue;
      if (options.evict !== true) throw new RouteConflictError(hostname, owner);
      this.remove(owner);
    }
    const previous = this.routesByKey.get(key);
    for (const hostname of previous?.hostnames ?? []) this.keyByHostname.delete(hostname);
    const normalised = hostnames as string[];
    for (const hostname of normalised) this.keyByHostname.set(hostname, key);
    this.routesByKey.set(key, { hostnames: normalised, target: { host: route.target.host, port: route.target.port }, ...(route.httpsRedirect === false ? { httpsRedirect: false } : {}) });
  }

  remove(key: string): ProxyRoute | undefined {
    const route = this.routesByKey.get(key);
    if (route === undefined) return undefined;
    for (const hostname of route.hostnames) this.keyByHostname.delete(hostname);
    this.routesByKey.delete(key);
    return route;
  }

  get(key: string): ProxyRoute | undefined {
    return this.routesByKey.get(key);
  }

  /** Whether plain HTTP for `hostname` may be redirected to HTTPS (its service did not turn that off). */
  redirectsToHttps(hostname: string): boolean {
    const key = this.keyByHostname.get(hostname);
    return key === undefined || this.routesByKey.get(key)?.httpsRedirect !== false;
  }

  /** Where a request for `hostname` goes now. */
  resolve(hostname: string): ProxyTarget | undefined {
    const name = requestHostname(hostname);
    const key = name === undefined ? undefined : this.keyByHostname.get(name);
    return key === undefined ? undefined : this.routesByKey.get(key)?.target;
  }

  entries(): KeyedRoute[] {
    return [...this.routesByKey].map(([key, route]) => ({ key, ...route, hostnames: [...route.hostnames], target: { ...route.target } }));
  }

  /** The whole table at once: what `routes` lists, nothing else. */
  replaceAll(routes: readonly KeyedRoute[]): void {
    this.routesByKey.clear();
    this.keyByHostname.clear();
    for (const { key, ...route } of routes) this.set(key, route, { evict: true });
  }

  get size(): number {
    return this.routesByKey.size;
  }
}
