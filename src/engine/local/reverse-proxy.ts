import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { nodeHttp } from '../../lib/node-http.ts';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import { createServer as createTlsServer, createSecureContext, TLSSocket, type SecureContext, type Server as TlsServer } from 'node:tls';
import { createProxyServer, type ProxyServer } from 'http-proxy-3';
import type { HandedOverListener } from './handed-over-listener.ts';
import { RouteTable, requestHostname, targetKey, type AppsRouting, type ProxyRoute, type ProxyTarget } from './route-table.ts';

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
 *
 * It serves in the apps proxy process (apps-proxy.process.ts), which outlives the agent, and in the agent's own
 * process only where that cannot run; the tests drive it directly.
 *
 * HTTPS (docs/https.md): once `listenHttps` opened the HTTPS port, a TLS connection gets the certificate of the name
 * it asks for (SNI) from the set `setCertificates` gave, and its requests are routed exactly as plain ones (they
 * reach the same HTTP server, so X-Forwarded-Proto says https). A new set takes effect for the next handshakes;
 * connections open keep the certificate they were given (nothing is dropped). On the HTTP port, the ACME HTTP-01
 * answers (`setChallenge`) come first for every host name, then a host name with a certificate is redirected to
 * HTTPS (301 for GET and HEAD, 308 otherwise, same path and query). With `setHsts`, answers over HTTPS carry that
 * Strict-Transport-Security header unless the service sends its own (RFC 6797: never on plain HTTP).
 */
export { RouteConflictError, requestHostname, type ProxyRoute, type ProxyTarget } from './route-table.ts';

/** A certificate the HTTPS port serves for `hostnames` (a `*.example.com` covers one label under example.com). */
export interface ServedCertificate {
  hostnames: string[];
  /** The leaf first, then its intermediates (PEM). */
  chain: string;
  /** The leaf's private key (PEM). */
  key: string;
}

/** Where HTTP-01 challenge answers are asked for (RFC 8555 §8.3). */
export const ACME_CHALLENGE_PATH = '/.well-known/acme-challenge/';

export interface ReverseProxyOptions {
  /** Called for each forwarding failure (the target refused or broke the connection): an operator's log line. */
  onError?: (message: string) => void;
  /** The longest a drain waits for in-flight requests (long polls, downloads) before the old instance stops anyway. */
  drainTimeoutMs?: number;
}

export class LocalReverseProxy implements AppsRouting {
  /** The routes it serves; the apps proxy process replaces them whole when its agent sends its table. */
  readonly table = new RouteTable();
  private readonly inFlightByTarget = new Map<string, number>();
  private readonly drainWaiters = new Map<string, Set<() => void>>();
  private readonly proxy: ProxyServer;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  /** The listening socket of a predecessor process, when this proxy serves on one (serveHandedOver). */
  private handedOver: NetServer | undefined;
  /** The HTTPS port's TLS server, once listening, and its handed-over socket when it serves on one. */
  private httpsServer: TlsServer | undefined;
  private httpsHandedOver: NetServer | undefined;
  private httpsAddress: AddressInfo | undefined;
  /** The host HTTPS was asked to listen on (the address may read differently: `::` for an IPv4 wildcard). */
  private httpsHost: string | undefined;
  private hsts: string | undefined;
  /** The TLS contexts by host name (exact names and `*.base` wildcards), replaced whole by setCertificates. */
  private contexts = new Map<string, SecureContext>();
  private certificates: ServedCertificate[] = [];
  /** HTTP-01 key authorizations by token. */
  private readonly challenges = new Map<string, string>();

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

  /**
   * Serves the connections of a listening socket a predecessor apps proxy process handed over (apps-proxy.process.ts):
   * the same socket and its queue of connections, so none is refused or reset in the handover.
   */
  serveHandedOver(listener: HandedOverListener): AddressInfo {
    this.handedOver = listener.server;
    listener.take((socket) => this.server.emit('connection', socket));
    return listener.server.address() as AddressInfo;
  }

  /** The listening socket, to hand over to a successor. */
  get listener(): NetServer {
    return this.handedOver ?? this.server;
  }

  /** The HTTPS port's listening socket, to hand over to a successor; undefined when HTTPS is off. */
  get httpsListener(): NetServer | undefined {
    return this.httpsHandedOver ?? this.httpsServer;
  }

  /** Where HTTPS is served; undefined when it is off. */
  get httpsAddressInfo(): AddressInfo | undefined {
    return this.httpsAddress;
  }

  private createHttpsServer(): TlsServer {
    const server = createTlsServer({
      // The certificate of the name the client asks for; none (the handshake fails) for a name without one.
      SNICallback: (servername, callback) => callback(null, this.contextFor(servername)),
      ALPNProtocols: ['http/1.1'],
    });
    // A decrypted connection is served by the same HTTP server as plain ones: same routes, same in-flight counts.
    server.on('secureConnection', (socket: TLSSocket) => this.server.emit('connection', socket));
    // A failed handshake (an unknown name, a scanner) concerns that connection alone.
    server.on('tlsClientError', (_error, socket) => socket.destroy());
    return server;
  }

  /**
   * Opens the HTTPS port; a second call answers where it listens, unless it names another address (the settings
   * changed): then the old port stops accepting (its connections finish) and the new one opens.
   */
  async listenHttps(port: number, host = '127.0.0.1'): Promise<AddressInfo> {
    const current = this.httpsAddress;
    if (current !== undefined && (port === 0 || port === current.port) && this.httpsHost === host) return current;
    if (current !== undefined) {
      this.httpsListener?.close();
      this.httpsServer = undefined;
      this.httpsHandedOver = undefined;
      this.httpsAddress = undefined;
    }
    const server = this.createHttpsServer();
    const address = await new Promise<AddressInfo>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve(server.address() as AddressInfo);
      });
    });
    this.httpsServer = server;
    this.httpsAddress = address;
    this.httpsHost = host;
    return address;
  }

  /** Serves HTTPS on the listening socket a predecessor handed over (as serveHandedOver for HTTP). */
  serveHandedOverHttps(listener: HandedOverListener, host: string): AddressInfo {
    const server = this.createHttpsServer();
    this.httpsServer = server;
    this.httpsHandedOver = listener.server;
    // The raw TCP connection is the TLS server's to wrap: its 'connection' handler starts the handshake.
    listener.take((socket) => server.emit('connection', socket));
    this.httpsAddress = listener.server.address() as AddressInfo;
    this.httpsHost = host;
    return this.httpsAddress;
  }

  /** Replaces the served certificates: the next handshakes use the new set, open connections keep theirs. */
  setCertificates(certificates: readonly ServedCertificate[]): void {
    const contexts = new Map<string, SecureContext>();
    for (const certificate of certificates) {
      // A bad pair throws here, before anything is replaced.
      const context = createSecureContext({ cert: certificate.chain, key: certificate.key });
      for (const hostname of certificate.hostnames) contexts.set(hostname.toLowerCase(), context);
    }
    this.contexts = contexts;
    this.certificates = certificates.map((certificate) => ({ ...certificate, hostnames: [...certificate.hostnames] }));
  }

  /** The certificates served, as given (what a successor starts with). */
  servedCertificates(): ServedCertificate[] {
    return this.certificates.map((certificate) => ({ ...certificate, hostnames: [...certificate.hostnames] }));
  }

  /** Answers (or, with undefined, stops answering) the HTTP-01 challenge `token`. */
  setChallenge(token: string, keyAuthorization: string | undefined): void {
    if (keyAuthorization === undefined) this.challenges.delete(token);
    else this.challenges.set(token, keyAuthorization);
  }

  challengeEntries(): Array<{ token: string; keyAuthorization: string }> {
    return [...this.challenges].map(([token, keyAuthorization]) => ({ token, keyAuthorization }));
  }

  private contextFor(servername: string): SecureContext | undefined {
    const name = servername.toLowerCase().replace(/\.$/, '');
    const exact = this.contexts.get(name);
    if (exact !== undefined) return exact;
    const dot = name.indexOf('.');
    return dot === -1 ? undefined : this.contexts.get(`*${name.slice(dot)}`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.httpsListener?.close();
      for (const socket of this.sockets) socket.destroy();
      this.proxy.close();
    });
  }

  /**
   * Stops accepting connections and resolves once those open have ended (their requests answered, WebSockets
   * closed), or after `timeoutMs`, when what is left is cut: the end of an apps proxy process that stops serving.
   */
  async retire(timeoutMs: number): Promise<void> {
    // The listener's close resolves once every connection it accepted has ended; idle keep-alive ones are closed
    // as they become idle, requests under way finish.
    const https = this.httpsListener;
    const closed = Promise.all([
      new Promise<void>((resolve) => this.listener.close(() => resolve())),
      https === undefined ? undefined : new Promise<void>((resolve) => https.close(() => resolve())),
    ]);
    const idle = setInterval(() => this.server.closeIdleConnections(), 100);
    this.server.closeIdleConnections();
    const timer = setTimeout(() => {
      for (const socket of this.sockets) socket.destroy();
    }, timeoutMs);
    await closed;
    clearInterval(idle);
    clearTimeout(timer);
    this.proxy.close();
  }

  /** Routes `hostnames` to `target` for the service `key`, replacing its previous route in one step. */
  setRoute(key: string, route: ProxyRoute): void {
    this.table.set(key, route);
  }

  /** Stops routing the service; requests in flight finish. */
  removeRoute(key: string): ProxyRoute | undefined {
    return this.table.remove(key);
  }

  route(key: string): ProxyRoute | undefined {
    return this.table.get(key);
  }

  /** Routes change here at once. */
  applied(): Promise<void> {
    return Promise.resolve();
  }

  /** Where a request for `hostname` goes now. */
  resolve(hostname: string): ProxyTarget | undefined {
    return this.table.resolve(hostname);
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
    const route = this.table.get(key);
    if (route === undefined) throw new Error(`${key} has no route to replace the target of`);
    const previous = route.target;
    this.table.set(key, { hostnames: route.hostnames, target });
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

  /** An HTTP-01 challenge answer, or the redirect of a plain request to HTTPS: whether it answered the request. */
  private answeredBeforeRouting(req: IncomingMessage, res: ServerResponse): boolean {
    const encrypted = req.socket instanceof TLSSocket && req.socket.encrypted;
    if (encrypted) return false;
    const url = req.url ?? '/';
    if (url.startsWith(ACME_CHALLENGE_PATH)) {
      const keyAuthorization = this.challenges.get(url.slice(ACME_CHALLENGE_PATH.length).split('?', 1)[0] ?? '');
      if (keyAuthorization === undefined) return false;
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(keyAuthorization);
      return true;
    }
    const hostname = requestHostname(req.headers.host);
    if (this.httpsAddress === undefined || hostname === undefined || this.contextFor(hostname) === undefined || !this.table.redirectsToHttps(hostname)) return false;
    const port = this.httpsAddress.port === 443 ? '' : `:${this.httpsAddress.port}`;
    const method = req.method ?? 'GET';
    // 301 lets browsers cache it; a method with a body must keep it across the redirect: 308.
    res.writeHead(method === 'GET' || method === 'HEAD' ? 301 : 308, { location: `https://${hostname}${port}${url}`, 'content-length': '0' });
    res.end();
    return true;
  }

  /** The Strict-Transport-Security value of answers over HTTPS (SLIPWAY_APPS_HSTS); undefined: none. */
  setHsts(value: string | undefined): void {
    this.hsts = value;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (this.answeredBeforeRouting(req, res)) return;
    // Set before forwarding: a header of the service's own replaces it (http-proxy-3 copies the answer's headers).
    if (this.hsts !== undefined && req.socket instanceof TLSSocket && req.socket.encrypted) res.setHeader('strict-transport-security', this.hsts);
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
