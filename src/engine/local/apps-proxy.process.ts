import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { Server as NetServer, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { SLIPWAY_VERSION } from '../../lib/version.ts';
import {
  APPS_PROXY_PROTOCOL,
  appsProxyPidPath,
  appsProxySocketPath,
  readJsonLines,
  writeJsonLine,
  type AppsProxyAnswer,
  type AppsProxyHello,
  type AppsProxyStart,
  type AppsProxyStarted,
  type AppsProxyTls,
} from './apps-proxy.protocol.ts';
import { InternalAddresses, type KeyedEndpoint } from './internal-addresses.ts';
import { spawnAppsProxy } from './apps-proxy.spawn.ts';
import { HandedOverListener } from './handed-over-listener.ts';
import { LocalReverseProxy, type ServedCertificate } from './reverse-proxy.ts';
import type { KeyedRoute, ProxyTarget } from './route-table.ts';

/**
 * The apps proxy process (`slipway apps-proxy`, hidden; docs/local-engine.md, "The apps proxy process"): the local
 * agent's reverse proxy on the apps port (and on the HTTPS port, docs/https.md) and the services' internal addresses
 * (internal-addresses.ts), in a process of its own so that they keep serving while the server (and the agent in it)
 * restarts, as the workloads they reach keep running. The agent spawns it detached — its own session and process group, so a Ctrl-C or a SIGTERM of the
 * server does not reach it — and drives it over the control channel of apps-proxy.protocol.ts; the next agent finds
 * it again by the socket in the state directory.
 *
 * Its life:
 *   spawned → start message (IPC) → listening on the apps port → control socket renamed into place → serving
 *   serving → retiring, on an `exit` request, SIGTERM or SIGINT, its socket file gone or taken by a successor
 *             (checked every 2 s), or no agent connected and neither a route nor an internal address left
 *   retiring: the listeners close, the connections open finish (30 s at most), the process exits.
 * A handover (another version after an upgrade): this process spawns its successor with the new installation's
 * program and hands it, on the IPC channel of the spawn, its table and its listening sockets themselves — the apps
 * port's and the internal addresses' — so both accept on the same sockets until this one stops accepting: no
 * connection is refused or reset, as none waits in a queue that closes (SO_REUSEPORT, two sockets with a queue each,
 * was tried first and reset about one run in four of the handover test: Linux drops the queue of a listener that
 * closes). The successor detaches as any proxy process does.
 *
 * It loads the proxy and nothing of the control plane: no Fastify, no database. What it serves where comes in its
 * start message rather than on its command line, so it is not taken for a workload of the state directory.
 */
/** The key of the apps port's listening socket among those handed over. */
const APPS_LISTENER = 'apps';
/** The key of the HTTPS port's listening socket among those handed over. */
const HTTPS_LISTENER = 'https';
const WATCH_MS = 2_000;
/** A proxy spawned whose agent never connects (it died meanwhile) and has nothing to serve ends after this. */
const UNCLAIMED_MS = 30_000;
const RETIRE_TIMEOUT_MS = 30_000;

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString()} apps-proxy[${process.pid}] ${line}\n`);
}

function isTarget(value: unknown): value is ProxyTarget {
  const target = value as Partial<ProxyTarget> | null;
  return typeof target === 'object' && target !== null && typeof target.host === 'string' && typeof target.port === 'number';
}

function isRoute(value: unknown): value is KeyedRoute {
  const route = value as Partial<KeyedRoute> | null;
  return (
    typeof route === 'object' &&
    route !== null &&
    typeof route.key === 'string' &&
    Array.isArray(route.hostnames) &&
    route.hostnames.every((hostname) => typeof hostname === 'string') &&
    isTarget(route.target)
  );
}

function routesOf(value: unknown): KeyedRoute[] {
  if (!Array.isArray(value) || !value.every(isRoute)) throw new Error('routes must be a list of { key, hostnames, target }');
  return value;
}

function isEndpoint(value: unknown): value is KeyedEndpoint {
  const endpoint = value as Partial<KeyedEndpoint> | null;
  return (
    typeof endpoint === 'object' &&
    endpoint !== null &&
    typeof endpoint.key === 'string' &&
    typeof endpoint.address === 'string' &&
    Array.isArray(endpoint.ports) &&
    endpoint.ports.every((port) => Number.isInteger(port)) &&
    typeof endpoint.targetPort === 'number'
  );
}

function endpointsOf(value: unknown): KeyedEndpoint[] {
  if (!Array.isArray(value) || !value.every(isEndpoint)) throw new Error('endpoints must be a list of { key, address, ports, targetPort }');
  return value;
}

function certificatesOf(value: unknown): ServedCertificate[] {
  const valid =
    Array.isArray(value) &&
    value.every((item) => {
      const certificate = item as Partial<ServedCertificate> | null;
      return (
        typeof certificate === 'object' &&
        certificate !== null &&
        Array.isArray(certificate.hostnames) &&
        certificate.hostnames.every((hostname) => typeof hostname === 'string') &&
        typeof certificate.chain === 'string' &&
        typeof certificate.key === 'string'
      );
    });
  if (!valid) throw new Error('certificates must be a list of { hostnames, chain, key }');
  return value as ServedCertificate[];
}

function tlsOf(value: unknown): AppsProxyTls | undefined {
  if (value === undefined || value === null) return undefined;
  const tls = value as Partial<AppsProxyTls>;
  if (typeof tls.host !== 'string' || typeof tls.port !== 'number') throw new Error('tls needs host and port');
  const challenges = Array.isArray(tls.challenges)
    ? tls.challenges.filter((challenge) => typeof challenge.token === 'string' && typeof challenge.keyAuthorization === 'string')
    : [];
  return { host: tls.host, port: tls.port, ...(typeof tls.hsts === 'string' ? { hsts: tls.hsts } : {}), certificates: certificatesOf(tls.certificates ?? []), challenges };
}

/** What to serve where, from the agent (or the predecessor) that spawned this process, with the sockets it hands over. */
function startMessage(): Promise<{ start: AppsProxyStart; listeners: Map<string, HandedOverListener> }> {
  if (process.send === undefined) return Promise.reject(new Error('the apps proxy is started by the local agent (slipway server), not by hand'));
  return new Promise((resolve, reject) => {
    let start: AppsProxyStart | undefined;
    const listeners = new Map<string, HandedOverListener>();
    const gone = (): void => reject(new Error('the process that started the apps proxy went away before handing it its routes'));
    const received = (message: Partial<AppsProxyStart> & { type?: string; key?: unknown }, handle: unknown): void => {
      try {
        if (start === undefined) {
          const { stateDir, host, port, inherited } = message;
          if (typeof stateDir !== 'string' || typeof host !== 'string' || typeof port !== 'number') throw new Error('the start message needs stateDir, host and port');
          const keys = Array.isArray(inherited) ? inherited.filter((key): key is string => typeof key === 'string') : [];
          const tls = tlsOf(message.tls);
          start = { stateDir, host, port, inherited: keys, routes: routesOf(message.routes), endpoints: endpointsOf(message.endpoints ?? []), ...(tls === undefined ? {} : { tls }) };
        } else if (message.type === 'listener' && typeof message.key === 'string' && handle instanceof NetServer) {
          listeners.set(message.key, new HandedOverListener(handle));
        }
        if (start.inherited.every((key) => listeners.has(key))) {
          process.off('message', received);
          process.off('disconnect', gone);
          resolve({ start, listeners });
        }
      } catch (error) {
        process.off('message', received);
        reject(error as Error);
      }
    };
    process.once('disconnect', gone);
    process.on('message', received);
    process.send?.({ type: 'waiting' });
  });
}

function reportStart(message: AppsProxyStarted): Promise<void> {
  const send = process.send?.bind(process);
  if (send === undefined || !process.connected) return Promise.resolve();
  return new Promise((resolve) => {
    send(message, undefined, {}, () => {
      if (process.connected) process.disconnect();
      resolve();
    });
  });
}

function listenOn(server: Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export async function runAppsProxyProcess(): Promise<void> {
  let options: AppsProxyStart;
  let inherited: Map<string, HandedOverListener>;
  try {
    ({ start: options, listeners: inherited } = await startMessage());
  } catch (error) {
    log((error as Error).message);
    await reportStart({ type: 'failed', message: (error as Error).message });
    process.exit(1);
  }
  const socketPath = appsProxySocketPath(options.stateDir);
  const agents = new Set<Socket>();
  const trouble = (message: string): void => {
    if (agents.size === 0) log(message);
    for (const agent of agents) writeJsonLine(agent, { type: 'trouble', message });
  };
  const proxy = new LocalReverseProxy({ onError: trouble });
  const inheritedApps = inherited.get(APPS_LISTENER);
  inherited.delete(APPS_LISTENER);
  const inheritedHttps = inherited.get(HTTPS_LISTENER);
  inherited.delete(HTTPS_LISTENER);
  const internal = new InternalAddresses({ onError: trouble, inherited });

  /** The service internal addresses of `wanted`, and no other: a note of each that cannot be listened on is trouble. */
  async function forward(wanted: readonly KeyedEndpoint[]): Promise<void> {
    const keys = new Set(wanted.map((endpoint) => endpoint.key));
    for (const { key } of internal.entries()) if (!keys.has(key)) await internal.remove(key);
    for (const { key, address, ports, targetPort } of wanted) {
      for (const note of await internal.expose(key, { address, ports }, targetPort)) trouble(`service ${key}: ${note}`);
    }
  }

  let address: AddressInfo;
  try {
    proxy.table.replaceAll(options.routes);
    address = inheritedApps === undefined ? await proxy.listen(options.port, options.host) : proxy.serveHandedOver(inheritedApps);
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    log(`cannot listen on ${options.host}:${options.port}: ${failure.message}`);
    await reportStart({ type: 'failed', ...(failure.code === undefined ? {} : { code: failure.code }), message: failure.message });
    process.exit(1);
  }

  // A predecessor's HTTPS goes on here: its certificates, the challenges under way, its socket (or its port again).
  if (options.tls !== undefined) {
    const tls = options.tls;
    try {
      proxy.setCertificates(tls.certificates);
      proxy.setHsts(tls.hsts);
      for (const { token, keyAuthorization } of tls.challenges) proxy.setChallenge(token, keyAuthorization);
      if (inheritedHttps === undefined) await proxy.listenHttps(tls.port, tls.host);
      else proxy.serveHandedOverHttps(inheritedHttps, tls.host);
    } catch (error) {
      log(`HTTPS on ${tls.host}:${tls.port} does not go on: ${(error as Error).message}`);
    }
  }

  await forward(options.endpoints).catch((error: unknown) => trouble(`internal addresses: ${(error as Error).message}`));
  // A socket handed over for an address no longer forwarded.
  for (const leftover of inherited.values()) leftover.server.close();

  /** What HTTPS was asked for (to hand over); the start message's for a successor. */
  let httpsSettings: { host: string; port: number; hsts?: string } | undefined =
    options.tls === undefined ? undefined : { host: options.tls.host, port: options.tls.port, ...(options.tls.hsts === undefined ? {} : { hsts: options.tls.hsts }) };
  let stopping = false;
  /** Set once serving: the inode of its control socket (a successor's has another) and its timers. */
  const serving: { inode?: number; watch?: NodeJS.Timeout; unclaimed?: NodeJS.Timeout } = {};
  const control = createServer((socket) => serveAgent(socket));

  async function ownsSocketPath(): Promise<boolean> {
    const current = await stat(socketPath).catch(() => undefined);
    return current !== undefined && current.ino === serving.inode;
  }

  async function shutdown(reason: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    log(`stopping: ${reason}`);
    clearInterval(serving.watch);
    clearTimeout(serving.unclaimed);
    // The ports are free from here on (a new proxy may take them at once); what is open finishes meanwhile.
    const retired = Promise.all([proxy.retire(RETIRE_TIMEOUT_MS), internal.retire(RETIRE_TIMEOUT_MS)]);
    control.close();
    // A successor's socket and pid file are its own.
    if (await ownsSocketPath()) {
      await rm(socketPath, { force: true });
      await rm(appsProxyPidPath(options.stateDir), { force: true });
    }
    await retired;
    for (const agent of agents) agent.destroy();
    process.exit(0);
  }

  function idleCheck(): void {
    if (agents.size === 0 && proxy.table.size === 0 && internal.size === 0) void shutdown('no agent is connected and no application is routed');
  }

  function answer(socket: Socket, message: AppsProxyAnswer): void {
    writeJsonLine(socket, message);
  }

  /** Requests are carried out one after the other, in the order they came (a drain only starts waiting in turn). */
  let queue: Promise<void> = Promise.resolve();
  function handle(socket: Socket, message: Record<string, unknown>): void {
    queue = queue.then(() => carryOut(socket, message));
  }

  async function carryOut(socket: Socket, message: Record<string, unknown>): Promise<void> {
    const id = typeof message.id === 'number' ? message.id : -1;
    try {
      switch (message.type) {
        case 'set':
          if (typeof message.key !== 'string' || !isTarget(message.target) || !Array.isArray(message.hostnames)) throw new Error('set needs key, hostnames and target');
          proxy.table.set(message.key, { hostnames: message.hostnames as string[], target: message.target, ...(message.httpsRedirect === false ? { httpsRedirect: false } : {}) }, { evict: true });
          answer(socket, { id, type: 'done' });
          return;
        case 'remove':
          if (typeof message.key !== 'string') throw new Error('remove needs a key');
          proxy.table.remove(message.key);
          answer(socket, { id, type: 'done' });
          return;
        case 'expose': {
          if (!isEndpoint(message)) throw new Error('expose needs key, address, ports and targetPort');
          const notes = await internal.expose(message.key, { address: message.address, ports: message.ports }, message.targetPort);
          answer(socket, { id, type: 'done', notes });
          return;
        }
        case 'unexpose':
          if (typeof message.key !== 'string') throw new Error('unexpose needs a key');
          await internal.remove(message.key);
          answer(socket, { id, type: 'done' });
          return;
        case 'sync':
          proxy.table.replaceAll(routesOf(message.routes));
          await forward(endpointsOf(message.endpoints ?? []));
          answer(socket, { id, type: 'done' });
          return;
        case 'table':
          answer(socket, { id, type: 'done', routes: proxy.table.entries(), endpoints: internal.entries() });
          return;
        case 'drain': {
          if (!isTarget(message.target)) throw new Error('drain needs a target');
          const timeoutMs = typeof message.timeoutMs === 'number' ? message.timeoutMs : undefined;
          void proxy.drain(message.target, timeoutMs).then((drained) => answer(socket, { id, type: 'done', drained }));
          return;
        }
        case 'handover': {
          if (typeof message.execPath !== 'string' || typeof message.command !== 'string') throw new Error('handover needs execPath and command');
          const listeners = new Map<string, Server>([[APPS_LISTENER, proxy.listener], ...internal.listeners()]);
          const httpsListener = proxy.httpsListener;
          if (httpsListener !== undefined) listeners.set(HTTPS_LISTENER, httpsListener);
          const tls: AppsProxyTls | undefined =
            httpsSettings === undefined
              ? undefined
              : { ...httpsSettings, certificates: proxy.servedCertificates(), challenges: proxy.challengeEntries() };
          const successor = await spawnAppsProxy({
            execPath: message.execPath,
            command: message.command,
            start: {
              stateDir: options.stateDir,
              host: options.host,
              port: options.port,
              inherited: [...listeners.keys()],
              routes: proxy.table.entries(),
              endpoints: internal.entries(),
              ...(tls === undefined ? {} : { tls }),
            },
            listeners,
          });
          if (successor.type === 'failed') throw new Error(`its successor cannot start: ${successor.message}`);
          answer(socket, { id, type: 'done' });
          void shutdown(`handed over to process ${successor.pid}`);
          return;
        }
        case 'exit':
          answer(socket, { id, type: 'done' });
          void shutdown('asked to by its agent');
          return;
        case 'https': {
          if (typeof message.host !== 'string' || typeof message.port !== 'number') throw new Error('https needs host and port');
          const address = await proxy.listenHttps(message.port, message.host);
          const hsts = typeof message.hsts === 'string' ? message.hsts : undefined;
          proxy.setHsts(hsts);
          // Handed to a successor as asked (port 0 stays where it is: the successor takes the socket over).
          httpsSettings = { host: message.host, port: message.port === 0 ? address.port : message.port, ...(hsts === undefined ? {} : { hsts }) };
          answer(socket, { id, type: 'done', address });
          return;
        }
        case 'certificates':
          proxy.setCertificates(certificatesOf(message.certificates));
          answer(socket, { id, type: 'done' });
          return;
        case 'challenge':
          if (typeof message.token !== 'string') throw new Error('challenge needs a token');
          proxy.setChallenge(message.token, typeof message.keyAuthorization === 'string' ? message.keyAuthorization : undefined);
          answer(socket, { id, type: 'done' });
          return;
        default:
          throw new Error(`unknown request type ${String(message.type)}`);
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      answer(socket, { id, type: 'done', error: (error as Error).message, ...(typeof code === 'string' ? { code } : {}) });
    }
  }

  function serveAgent(socket: Socket): void {
    agents.add(socket);
    clearTimeout(serving.unclaimed);
    socket.on('error', () => socket.destroy());
    socket.once('close', () => {
      agents.delete(socket);
      idleCheck();
    });
    const hello: AppsProxyHello = {
      type: 'hello',
      protocol: APPS_PROXY_PROTOCOL,
      version: SLIPWAY_VERSION,
      pid: process.pid,
      host: options.host,
      port: options.port,
      address,
      routes: proxy.table.size,
      endpoints: internal.size,
      ...(proxy.httpsAddressInfo === undefined ? {} : { https: proxy.httpsAddressInfo }),
    };
    writeJsonLine(socket, hello);
    readJsonLines(socket, (message) => handle(socket, message));
  }

  // Listening on a name of its own, then renamed over the known one: a stale file of a dead proxy, or the socket of
  // the proxy this one succeeds, is replaced in one step.
  const temporary = `${socketPath}.${process.pid}`;
  await rm(temporary, { force: true });
  await listenOn(control, temporary);
  await rename(temporary, socketPath);
  serving.inode = (await stat(socketPath)).ino;
  await writeFile(appsProxyPidPath(options.stateDir), `${process.pid}\n`, { mode: 0o600 });

  serving.watch = setInterval(() => {
    void ownsSocketPath().then((owned) => {
      if (!owned) void shutdown('its control socket was removed or taken over by a successor');
    });
  }, WATCH_MS);
  if (agents.size === 0) serving.unclaimed = setTimeout(idleCheck, UNCLAIMED_MS);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void shutdown(signal));
  process.on('SIGHUP', () => undefined);

  log(`serving apps on ${address.address}:${address.port} (${proxy.table.size} routes, ${internal.size} internal addresses)`);
  await reportStart({ type: 'listening', address });
}
