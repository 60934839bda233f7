import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { nodeHttp } from '../../lib/node-http.ts';
import type { AddressInfo, Socket } from 'node:net';
import { createProxyServer, type ProxyServer } from 'http-proxy-3';

/**
 * The built-in reverse proxy of the local engine: routes requests by their Host header to the current instance of a
 * service (the hostnames its task's spec names: its own, which the control plane chose, plus verified custom domains),
 * forwarding with http-proxy-3 (HTTP and WebSocket upgrades, X-Forwarded-* headers).
 *
 * Routes are keyed by the caller's route key (a service id). `setRoute` replaces a service's hostnames and target in
 * one step: requests that arrive after it go to the new target; requests already forwarded finish where they are.
 * The zero-downtime replacement on redeploy is therefore: start the new instance → readiness passes → `replaceTarget`
 * (switch, then wait until the old target has no request in flight) → stop the old instance. Nothing is retried or
 * buffered: a request is forwarded once, to the target current when it arrived.
 */
export interface ProxyTarget {
  host: string;
  port: number;
}

export interface ProxyRoute {
  hostnames: readonly string[];
  target: ProxyTarget;
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

function targetKey(target: ProxyTarget): string {
  return `${target.host}:${target.port}`;
}

export interface ReverseProxyOptions {
  /** Called for each forwarding failure (the target refused or broke the connection): an operator's log line. */
  onError?: (message: string) => void;
  /** The longest a drain waits for in-flight requests (long polls, downloads) before the old instance stops anyway. */
  drainTimeoutMs?: number;
}

export class LocalReverseProxy {
  private readonly routesByKey = new Map<string, ProxyRoute>();
  private readonly keyByHostname = new Map<string, string>();
  private readonly inFlightByTarget = new Map<string, number>();
  private readonly drainWaiters = new Map<string, Set<() => void>>();
  private readonly proxy: ProxyServer;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  private readonly options: ReverseProxyOptions;
  constructor(options: ReverseProxyOptions = {}) {
    this.options = options;
    // No keep-alive towards instances: reusing an idle connection the instance is closing at that moment (its own
    // keep-alive timeout, or its shutdown after a swap) fails the request with a reset; a loopback connect per
    // request costs a fraction of a millisecond.
    this.proxy = createProxyServer({ xfwd: true, ws: true, proxyTimeout: 120_000, agent: new nodeHttp.Agent({ keepAlive: false }) });
    this.server = nodeHttp.createServer((req, res) => this.handle(req, res));
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.upgrade(req, socket, head));
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  listen(port: number, host = '127.0.0.1'): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
      this.proxy.close();
    });
  }

  /** Routes `hostnames` to `target` for the service `key`, replacing its previous route in one step. */
  setRoute(key: string, route: ProxyRoute): void {
    const hostnames = route.hostnames.map((hostname) => requestHostname(hostname));
    for (const [index, hostname] of hostnames.entries()) {
      if (hostname === undefined) throw new Error(`"${route.hostnames[index] ?? ''}" is not a hostname`);
      const owner = this.keyByHostname.get(hostname);
      if (owner !== undefined && owner !== key) throw new RouteConflictError(hostname, owner);
    }
    const previous = this.routesByKey.get(key);
    for (const hostname of previous?.hostnames ?? []) this.keyByHostname.delete(hostname);
    const normalised = hostnames as string[];
    for (const hostname of normalised) this.keyByHostname.set(hostname, key);
    this.routesByKey.set(key, { hostnames: normalised, target: { ...route.target } });
  }

  /** Stops routing the service; requests in flight finish. */
  removeRoute(key: string): ProxyRoute | undefined {
    const route = this.routesByKey.get(key);
    if (route === undefined) return undefined;
    for (const hostname of route.hostnames) this.keyByHostname.delete(hostname);
    this.routesByKey.delete(key);
    return route;
  }

  route(key: string): ProxyRoute | undefined {
    return this.routesByKey.get(key);
  }

  /** Where a request for `hostname` goes now. */
  resolve(hostname: string): ProxyTarget | undefined {
    const name = requestHostname(hostname);
    const key = name === undefined ? undefined : this.keyByHostname.get(name);
    return key === undefined ? undefined : this.routesByKey.get(key)?.target;
  }

  inFlight(target: ProxyTarget): number {
    return this.inFlightByTarget.get(targetKey(target)) ?? 0;
  }

  /** Resolves true once no request is in flight to `target`, false when `timeoutMs` passed first. */
  drain(target: ProxyTarget, timeoutMs = this.options.drainTimeoutMs ?? 30_000): Promise<boolean> {
    const key = targetKey(target);
    if (this.inFlight(target) === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiters = this.drainWaiters.get(key) ?? new Set<() => void>();
      this.drainWaiters.set(key, waiters);
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve(true);
      };
      const timer = setTimeout(() => {
        waiters.delete(done);
        resolve(false);
      }, timeoutMs);
      waiters.add(done);
    });
  }

  /**
   * The zero-downtime switch: routes the service to `target` and resolves, with the previous target, once that
   * previous target has no request in flight (or the drain timeout passed). The caller then stops the old instance.
   */
  async replaceTarget(key: string, target: ProxyTarget): Promise<ProxyTarget | undefined> {
    const route = this.routesByKey.get(key);
    if (route === undefined) throw new Error(`${key} has no route to replace the target of`);
    const previous = route.target;
    this.routesByKey.set(key, { hostnames: route.hostnames, target: { ...target } });
    if (targetKey(previous) !== targetKey(target)) await this.drain(previous);
    return previous;
  }

  private begin(target: ProxyTarget): () => void {
    const key = targetKey(target);
    this.inFlightByTarget.set(key, (this.inFlightByTarget.get(key) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const remaining = (this.inFlightByTarget.get(key) ?? 1) - 1;
      if (remaining > 0) {
        this.inFlightByTarget.set(key, remaining);
        return;
      }
      this.inFlightByTarget.delete(key);
      for (const waiter of [...(this.drainWaiters.get(key) ?? [])]) waiter();
      this.drainWaiters.delete(key);
    };
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const target = this.resolve(req.headers.host ?? '');
    if (target === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`No service answers on ${requestHostname(req.headers.host) ?? 'this host'}.\n`);
      return;
    }
    const end = this.begin(target);
    res.once('close', end);
    this.proxy.web(req, res, { target: { host: target.host, port: target.port } }, (error) => {
      end();
      // The path without its query: a tenant's users send their own tokens there, which the agent's log must not keep.
      this.options.onError?.(`forwarding ${req.method ?? 'GET'} ${req.headers.host ?? ''}${(req.url ?? '').split('?', 1)[0] ?? ''} to ${targetKey(target)} failed: ${error.message}`);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('The service did not answer.\n');
    });
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const target = this.resolve(req.headers.host ?? '');
    if (target === undefined) {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    // An open WebSocket counts as in flight: a drain waits for it up to the drain timeout.
    const end = this.begin(target);
    socket.once('close', end);
    this.proxy.ws(req, socket, head, { target: { host: target.host, port: target.port } }, (error) => {
      end();
      this.options.onError?.(`forwarding a WebSocket upgrade on ${req.headers.host ?? ''} to ${targetKey(target)} failed: ${error.message}`);
      socket.destroy();
    });
  }
}
