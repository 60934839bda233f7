import { connect, type AddressInfo, type Socket } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SLIPWAY_VERSION } from '../../lib/version.ts';
import {
  APPS_PROXY_PROTOCOL,
  appsProxyLogPath,
  appsProxySocketFits,
  appsProxySocketPath,
  readJsonLines,
  writeJsonLine,
  type AppsProxyAnswer,
  type AppsProxyCommand,
  type AppsProxyHello,
} from './apps-proxy.protocol.ts';
import { slipwayCommandPath, spawnAppsProxy } from './apps-proxy.spawn.ts';
import type { InternalEndpoint, InternalForwarding, KeyedEndpoint } from './internal-addresses.ts';
import type { ServedCertificate } from './reverse-proxy.ts';
import { RouteTable, type AppsRouting, type KeyedRoute, type ProxyRoute, type ProxyTarget } from './route-table.ts';

/**
 * The agent's side of the apps proxy process (apps-proxy.process.ts, docs/local-engine.md "The apps proxy process"):
 * finds the proxy serving this state directory, or starts one, and keeps its tables in step with the agent's.
 *
 * The agent's own tables are the authority: a route is checked and changed there at once (a hostname of another
 * service is refused as by the in-process proxy), then sent; the services' internal addresses (internal-addresses.ts)
 * are listened on by the proxy process too, so they also outlive the agent. At start the proxy still serves what the
 * previous agent routed while this agent takes its workloads over and sets their routes again one by one; only then
 * (`resync`) does it send its whole tables, which drops what no longer runs. A proxy of another version hands over to
 * this version's (its sockets and tables), one on another address ends and a new one starts with its tables, and a
 * proxy that went away is started again with the agent's.
 */
export interface AppsProxyOptions {
  stateDir: string;
  host: string;
  /** 0: any free port (tests); the address is answered. */
  port: number;
  onTrouble(message: string): void;
  /** The longest a drain waits for in-flight requests before the old instance stops anyway (default 30 s). */
  drainTimeoutMs?: number;
}

export interface AppsProxy extends AppsRouting {
  readonly address: AddressInfo;
  /** The services' internal addresses, listened on by the proxy process too (undefined: by the driver itself). */
  readonly internal?: InternalForwarding;
  /** After the agent re-routed what it took over: the proxy's table becomes the agent's. */
  resync(): Promise<void>;
  /** The agent stops; the proxy keeps serving (and ends by itself when nothing is routed). */
  detach(): Promise<void>;
  /** The proxy stops too: it finishes the requests in flight and exits. */
  shutdown(): Promise<void>;
}

/** The apps port is taken: its message is the one line `slipway server` ends with (main.ts). */
export class AppsPortInUseError extends Error {
  constructor(host: string, port: number, cause: Error) {
    super(`the apps port ${host.includes(':') ? `[${host}]` : host}:${port} is in use: choose another with SLIPWAY_APPS_PORT`, { cause });
    this.name = 'AppsPortInUseError';
  }
}

/**
 * The HTTPS port cannot be listened on (taken, or below 1024 without the capability): what the operator must fix,
 * said in one line that names the setting, as for the apps port.
 */
export class HttpsPortUnusableError extends Error {
  constructor(host: string, port: number, code: string, cause: Error) {
    const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    super(
      code === 'EADDRINUSE'
        ? `the HTTPS apps port ${address} is in use: choose another with SLIPWAY_APPS_HTTPS_PORT`
        : `the HTTPS apps port ${address} may not be listened on by this account: choose another with SLIPWAY_APPS_HTTPS_PORT`,
      { cause },
    );
    this.name = 'HttpsPortUnusableError';
  }
}

const HELLO_TIMEOUT_MS = 5_000;
const EXIT_TIMEOUT_MS = 35_000;
const START_ATTEMPTS = 4;

/** One connection to a proxy process: its hello, requests matched to their answers by id. */
class ControlChannel {
  readonly closed: Promise<void>;
  private nextId = 1;
  private readonly pending = new Map<number, (answer: AppsProxyAnswer | undefined) => void>();
  private readonly socket: Socket;
  readonly hello: AppsProxyHello;

  private constructor(socket: Socket, hello: AppsProxyHello, closed: Promise<void>) {
    this.socket = socket;
    this.hello = hello;
    this.closed = closed;
    void closed.then(() => {
      for (const settle of this.pending.values()) settle(undefined);
      this.pending.clear();
    });
  }

  /** Connects and reads the hello; rejects when nothing listens (ENOENT, ECONNREFUSED) or no hello comes. */
  static open(socketPath: string, onTrouble: (message: string) => void): Promise<ControlChannel> {
    return new Promise((resolve, reject) => {
      const socket = connect(socketPath);
      let channel: ControlChannel | undefined;
      const closed = new Promise<void>((settle) => socket.once('close', () => settle()));
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`the apps proxy at ${socketPath} did not say hello within ${HELLO_TIMEOUT_MS / 1000} s`));
      }, HELLO_TIMEOUT_MS);
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      void closed.then(() => {
        clearTimeout(timer);
        if (channel === undefined) reject(new Error(`the apps proxy at ${socketPath} closed the connection`));
      });
      socket.on('error', () => undefined);
      readJsonLines(socket, (message) => {
        if (channel === undefined) {
          if (message.type !== 'hello') {
            socket.destroy();
            return;
          }
          clearTimeout(timer);
          channel = new ControlChannel(socket, message as unknown as AppsProxyHello, closed);
          resolve(channel);
          return;
        }
        if (message.type === 'trouble' && typeof message.message === 'string') onTrouble(message.message);
        if (message.type === 'done' && typeof message.id === 'number') channel.settle(message as unknown as AppsProxyAnswer);
      });
    });
  }

  /** The proxy's answer; undefined when the connection ended first. */
  request(command: AppsProxyCommand): Promise<AppsProxyAnswer | undefined> {
    if (this.socket.destroyed) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      writeJsonLine(this.socket, { ...command, id });
    });
  }

  close(): Promise<void> {
    this.socket.end();
    return this.closed;
  }

  private settle(answer: AppsProxyAnswer): void {
    const settle = this.pending.get(answer.id);
    this.pending.delete(answer.id);
    settle?.(answer);
  }
}

/** A proxy's tables: what a new proxy starts with. */
interface Tables {
  routes: KeyedRoute[];
  endpoints: KeyedEndpoint[];
}

class AppsProxyClient implements AppsProxy {
  private readonly table = new RouteTable();
  private readonly endpoints = new Map<string, KeyedEndpoint>();
  readonly internal: InternalForwarding = {
    expose: (serviceKey, endpoint, targetPort) => this.expose(serviceKey, endpoint, targetPort),
    remove: (serviceKey) => this.unexpose(serviceKey),
    // The listeners are the proxy process's, which keeps them when the agent stops.
    closeAll: () => Promise.resolve(),
  };
  private channel: ControlChannel | undefined;
  private reconnecting: Promise<void> | undefined;
  private lastRequest: Promise<unknown> = Promise.resolve();
  /** The agent re-routed what it took over: from now on a new proxy gets the whole table. */
  private resynced = false;
  private closing = false;
  private listening: AddressInfo | undefined;

  private readonly options: AppsProxyOptions;
  constructor(options: AppsProxyOptions) {
    this.options = options;
  }

  get address(): AddressInfo {
    if (this.listening === undefined) throw new Error('the apps proxy has not started');
    return this.listening;
  }

  setRoute(key: string, route: ProxyRoute): void {
    this.table.set(key, route);
    const routed = this.table.get(key);
    if (routed !== undefined) void this.send({ type: 'set', key, hostnames: [...routed.hostnames], target: { ...routed.target }, ...(routed.httpsRedirect === false ? { httpsRedirect: false } : {}) });
  }

  removeRoute(key: string): ProxyRoute | undefined {
    const removed = this.table.remove(key);
    if (removed !== undefined) void this.send({ type: 'remove', key });
    return removed;
  }

  route(key: string): ProxyRoute | undefined {
    return this.table.get(key);
  }

  async drain(target: ProxyTarget, timeoutMs = this.options.drainTimeoutMs ?? 30_000): Promise<boolean> {
    const answer = await this.send({ type: 'drain', target: { host: target.host, port: target.port }, timeoutMs });
    return answer?.drained ?? false;
  }

  async applied(): Promise<void> {
    await this.lastRequest;
  }

  async resync(): Promise<void> {
    this.resynced = true;
    await this.send({ type: 'sync', ...this.tables() });
  }

  private tables(): Tables {
    return { routes: this.table.entries(), endpoints: [...this.endpoints.values()].map((endpoint) => ({ ...endpoint, ports: [...endpoint.ports] })) };
  }

  private async expose(key: string, endpoint: InternalEndpoint, targetPort: number): Promise<string[]> {
    const exposed: KeyedEndpoint = { key, address: endpoint.address, ports: [...endpoint.ports], targetPort };
    this.endpoints.set(key, exposed);
    const answer = await this.send({ type: 'expose', ...exposed });
    if (answer?.error !== undefined) {
      this.endpoints.delete(key);
      throw new Error(answer.error);
    }
    return answer?.notes ?? [];
  }

  private async unexpose(key: string): Promise<void> {
    if (!this.endpoints.delete(key)) return;
    await this.send({ type: 'unexpose', key });
  }

  async detach(): Promise<void> {
    this.closing = true;
    await this.channel?.close();
  }

  async shutdown(): Promise<void> {
    this.closing = true;
    const channel = this.channel;
    if (channel === undefined) return;
    await channel.request({ type: 'exit' });
    await Promise.race([channel.closed, sleep(EXIT_TIMEOUT_MS, undefined, { ref: false })]);
  }

  /** Connects to the proxy serving the state directory, or starts one; a proxy this agent cannot use hands over. */
  async connect(): Promise<void> {
    const socketPath = appsProxySocketPath(this.options.stateDir);
    for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
      const channel = await ControlChannel.open(socketPath, this.options.onTrouble).catch(() => undefined);
      if (channel === undefined) {
        // A proxy started again stays where the lost one was (with SLIPWAY_APPS_PORT=0 too).
        await this.spawn(this.listening?.port ?? this.options.port, this.tables());
        continue;
      }
      const { hello } = channel;
      const sameAddress = hello.host === this.options.host && (this.options.port === 0 || hello.address.port === this.options.port);
      if (hello.protocol === APPS_PROXY_PROTOCOL && hello.version === SLIPWAY_VERSION && sameAddress) {
        this.adopt(channel);
        return;
      }
      if (sameAddress) {
        // Another version (an upgrade): it starts this version's proxy itself, handing over its table and sockets.
        this.options.onTrouble(`the apps proxy of version ${hello.version} hands over to one of version ${SLIPWAY_VERSION}`);
        const answer = await channel.request({ type: 'handover', execPath: process.execPath, command: slipwayCommandPath() });
        if (answer?.error === undefined) {
          await channel.close();
          continue;
        }
        this.options.onTrouble(`the handover failed (${answer.error}): the apps proxy starts again instead`);
      } else {
        this.options.onTrouble(`the apps proxy moves from ${hello.host}:${hello.address.port} to ${this.options.host}:${this.options.port}`);
      }
      // Another address (the settings changed), or a handover that failed: the old proxy ends, a new one starts with its table.
      const previous = this.resynced ? undefined : await channel.request({ type: 'table' });
      const tables = previous === undefined ? this.tables() : { routes: previous.routes ?? [], endpoints: previous.endpoints ?? [] };
      await channel.request({ type: 'exit' });
      await Promise.race([channel.closed, sleep(EXIT_TIMEOUT_MS, undefined, { ref: false })]);
      await this.spawn(this.options.port, tables);
    }
    throw new Error(`the apps proxy did not start after ${START_ATTEMPTS} attempts (see ${appsProxyLogPath(this.options.stateDir)})`);
  }

  private adopt(channel: ControlChannel): void {
    this.channel = channel;
    this.listening = channel.hello.address;
    void channel.closed.then(() => this.lost(channel));
  }

  /** The connection ended while the agent runs: the proxy died or was stopped by hand; it starts again. */
  private lost(channel: ControlChannel): void {
    if (this.channel !== channel) return;
    this.channel = undefined;
    if (this.closing) return;
    this.options.onTrouble('the connection to the apps proxy ended: starting it again');
    this.reconnecting = (async () => {
      for (let delay = 500; !this.closing; delay = Math.min(delay * 2, 10_000)) {
        try {
          await this.connect();
          if (this.resynced) await this.send({ type: 'sync', ...this.tables() });
          return;
        } catch (error) {
          this.options.onTrouble(`the apps proxy cannot start: ${(error as Error).message}; trying again`);
          await sleep(delay);
        }
      }
    })().finally(() => {
      this.reconnecting = undefined;
    });
  }

  /** Sends a request in order with the others; while a lost proxy is started again, after that (it got the table). */
  private send(command: AppsProxyCommand): Promise<AppsProxyAnswer | undefined> {
    const channel = this.channel;
    const sent =
      channel !== undefined
        ? channel.request(command)
        : (command.type === 'drain' || command.type === 'expose') && this.reconnecting !== undefined
          ? this.reconnecting.then(() => this.channel?.request(command))
          : Promise.resolve(undefined);
    this.lastRequest = sent;
    return sent;
  }

  /** Starts a proxy process and waits until it listens on the apps port (or says why it cannot). */
  private async spawn(port: number, tables: Tables): Promise<void> {
    const { stateDir, host } = this.options;
    // Absolute: the process works from /.
    const start = { stateDir: path.resolve(stateDir), host, port, inherited: [], ...tables };
    const started = await spawnAppsProxy({ execPath: process.execPath, command: slipwayCommandPath(), start });
    if (started.type !== 'failed') return;
    const cause = Object.assign(new Error(started.message), { code: started.code });
    if (started.code === 'EADDRINUSE') throw new AppsPortInUseError(host, port, cause);
    throw cause;
  }
}

/** The apps proxy of this state directory, found or started, driven by the caller's routes from now on. */
export async function startAppsProxy(options: AppsProxyOptions): Promise<AppsProxy> {
  const client = new AppsProxyClient(options);
  await client.connect();
  return client;
}

export interface AppsProxyTlsOptions {
  stateDir: string;
  /** Where HTTPS is served: SLIPWAY_HOST and SLIPWAY_APPS_HTTPS_PORT (0: any free port). */
  host: string;
  port: number;
  /** SLIPWAY_APPS_HSTS: the Strict-Transport-Security value of HTTPS answers; none when unset. */
  hsts?: string | undefined;
  onTrouble(message: string): void;
}

/**
 * The certificates module's side of the apps proxy (docs/https.md): a control connection of its own to the proxy
 * serving the state directory — the agent's stays the routes' — over which it opens the HTTPS port, sends the
 * certificates to serve and the ACME challenges to answer. It keeps what it sent: a proxy that went away and was
 * started again by its agent (a crash, a handover to another version) gets all of it again on the next connection,
 * tried every 0.5 to 10 s. It never starts a proxy: that is the agent's.
 */
export class AppsProxyTlsLink {
  private channel: ControlChannel | undefined;
  /** The set last sent; undefined until one is: a new server's link leaves the proxy's set alone until it has its own. */
  private certificates: ServedCertificate[] | undefined;
  private readonly challenges = new Map<string, string>();
  private closing = false;
  private connecting: Promise<void> | undefined;
  private served: AddressInfo | undefined;
  private readonly options: AppsProxyTlsOptions;

  constructor(options: AppsProxyTlsOptions) {
    this.options = options;
  }

  /** Where HTTPS is served, once a proxy opened it. */
  get httpsAddress(): AddressInfo | undefined {
    return this.served;
  }

  /** Connects (resolves once HTTPS is open, or rejects with why not); later losses reconnect by themselves. */
  async start(): Promise<void> {
    await this.connectOnce();
  }

  /** Whether the proxy holds what was sent (a connection is up). */
  get connected(): boolean {
    return this.channel !== undefined;
  }

  async setCertificates(certificates: readonly ServedCertificate[]): Promise<void> {
    this.certificates = certificates.map((certificate) => ({ ...certificate, hostnames: [...certificate.hostnames] }));
    await this.request({ type: 'certificates', certificates: this.certificates });
  }

  /** Answers the challenge on the HTTP port; throws when no proxy is connected (the CA would find nothing). */
  async setChallenge(token: string, keyAuthorization: string | undefined): Promise<void> {
    if (keyAuthorization === undefined) this.challenges.delete(token);
    else this.challenges.set(token, keyAuthorization);
    const sent = await this.request({ type: 'challenge', token, ...(keyAuthorization === undefined ? {} : { keyAuthorization }) });
    if (!sent && keyAuthorization !== undefined) throw new Error('the apps proxy is not reachable: it cannot answer the ACME challenge');
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.channel?.close();
  }

  /** Sends a request when connected: false when no proxy is (it gets the state on the next connection). */
  private async request(command: AppsProxyCommand): Promise<boolean> {
    const answer = await this.channel?.request(command);
    if (answer?.error !== undefined) throw new Error(`the apps proxy refused ${command.type}: ${answer.error}`);
    return answer !== undefined;
  }

  private async connectOnce(): Promise<void> {
    const channel = await ControlChannel.open(appsProxySocketPath(this.options.stateDir), this.options.onTrouble);
    try {
      const opened = await channel.request({ type: 'https', host: this.options.host, port: this.options.port, ...(this.options.hsts === undefined ? {} : { hsts: this.options.hsts }) });
      if (opened?.code === 'EADDRINUSE' || opened?.code === 'EACCES') {
        throw new HttpsPortUnusableError(this.options.host, this.options.port, opened.code, new Error(opened.error ?? opened.code));
      }
      if (opened?.error !== undefined || opened?.address === undefined) throw new Error(`HTTPS cannot be served on port ${this.options.port}: ${opened?.error ?? 'the proxy went away'}`);
      this.served = opened.address;
      // Not an empty set in the meantime: a proxy that outlived the server goes on serving what it has.
      if (this.certificates !== undefined) await channel.request({ type: 'certificates', certificates: this.certificates });
      for (const [token, keyAuthorization] of this.challenges) await channel.request({ type: 'challenge', token, keyAuthorization });
    } catch (error) {
      await channel.close();
      throw error;
    }
    this.channel = channel;
    void channel.closed.then(() => this.lost(channel));
  }

  private lost(channel: ControlChannel): void {
    if (this.channel !== channel) return;
    this.channel = undefined;
    if (this.closing || this.connecting !== undefined) return;
    this.connecting = (async () => {
      for (let delay = 500; !this.closing; delay = Math.min(delay * 2, 10_000)) {
        await sleep(delay, undefined, { ref: false });
        if (this.closing) return;
        try {
          await this.connectOnce();
          return;
        } catch (error) {
          this.options.onTrouble(`HTTPS: the apps proxy cannot be reached yet: ${(error as Error).message}`);
        }
      }
    })().finally(() => {
      this.connecting = undefined;
    });
  }
}

/**
 * The HTTPS of the apps proxy serving `stateDir`, opened: the link, or undefined (said through onTrouble) where the
 * proxy runs inside the agent's process (a state directory too long a path for its control socket).
 */
export async function openAppsProxyTls(options: AppsProxyTlsOptions): Promise<AppsProxyTlsLink | undefined> {
  if (!appsProxySocketFits(options.stateDir)) {
    options.onTrouble('HTTPS is not served: the apps proxy runs inside the agent here (its state directory is too long a path for a control socket)');
    return undefined;
  }
  const link = new AppsProxyTlsLink(options);
  await link.start();
  return link;
}
