import { createServer, connect, type Server, type Socket } from 'node:net';
import type { HandedOverListener } from './handed-over-listener.ts';

/**
 * Internal addresses of applications on the local cluster. In a Kubernetes cluster a service reaches another as
 * `<hostname>:<internal port>` through a cluster-internal Service that follows the pods serving now. Here each
 * application has an address of its own in 127.64.0.0/10 (chosen by the control plane; on Linux every 127.x.y.z is
 * the loopback interface), and this table listens on `<address>:<internal port>` for each of its ports, forwarding
 * every connection, whatever the protocol on top of TCP, to the instance that serves now. A redeploy retargets the
 * listeners before the old instance stops: new connections go to the new instance, open ones end with the old one.
 */
export interface InternalEndpoint {
  address: string;
  ports: readonly number[];
}

/** One service's forwarding, as listed and as carried over the apps proxy's control channel. */
export interface KeyedEndpoint {
  key: string;
  address: string;
  ports: number[];
  targetPort: number;
}

/**
 * What the local driver forwards internal addresses through: this table in the agent's process, or the agent's side
 * of the apps proxy process, which holds the listeners so they outlive a restart of the agent (apps-proxy.client.ts).
 */
export interface InternalForwarding {
  expose(serviceKey: string, endpoint: InternalEndpoint, targetPort: number): Promise<string[]>;
  remove(serviceKey: string): Promise<void>;
  /** Ends the listeners this process holds (the agent stops); those of the apps proxy process stay. */
  closeAll(): Promise<void>;
}

interface Exposed {
  endpoint: InternalEndpoint;
  servers: Server[];
  /** The instance's port on 127.0.0.1. */
  targetPort: number;
  sockets: Set<Socket>;
}

function sameEndpoint(a: InternalEndpoint, b: InternalEndpoint): boolean {
  return a.address === b.address && a.ports.length === b.ports.length && a.ports.every((port, index) => port === b.ports[index]);
}

export interface InternalAddressesOptions {
  onError?: (message: string) => void;
  /**
   * Listening sockets handed over by a predecessor apps proxy process, by `<address>:<port>`: taken instead of
   * listening anew, so no connection is refused or reset in between (apps-proxy.process.ts).
   */
  inherited?: Map<string, HandedOverListener>;
}

export class InternalAddresses implements InternalForwarding {
  private readonly byService = new Map<string, Exposed>();

  private readonly options: InternalAddressesOptions;
  constructor(options: InternalAddressesOptions = {}) {
    this.options = options;
  }

  /** What is forwarded now, service by service. */
  entries(): KeyedEndpoint[] {
    return [...this.byService].map(([key, exposed]) => ({ key, address: exposed.endpoint.address, ports: [...exposed.endpoint.ports], targetPort: exposed.targetPort }));
  }

  get size(): number {
    return this.byService.size;
  }

  /**
   * Sends the service's internal address to `targetPort`, listening first when it is new or its ports changed.
   * Answers what could not be listened on, a sentence each: the address missing on this host (macOS has only
   * 127.0.0.1 unless aliased), or a port another program holds on every address of the host. Those are notes for the
   * deployment's log, not failures: the service runs and is routed, only not reachable there.
   */
  async expose(serviceKey: string, endpoint: InternalEndpoint, targetPort: number): Promise<string[]> {
    const current = this.byService.get(serviceKey);
    if (current !== undefined && sameEndpoint(current.endpoint, endpoint)) {
      current.targetPort = targetPort;
      return [];
    }
    // Other ports (a redeploy changed them): the old listeners go first, since the new ones may take the same ports.
    if (current !== undefined) await this.remove(serviceKey);
    const exposed: Exposed = { endpoint: { address: endpoint.address, ports: [...endpoint.ports] }, servers: [], targetPort, sockets: new Set() };
    const notes: string[] = [];
    for (const port of endpoint.ports) {
      try {
        exposed.servers.push(await this.listen(exposed, port));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EADDRNOTAVAIL') {
          notes.push(`${endpoint.address} is not an address of this host, so the service is not reachable at its internal address`);
          break;
        }
        if (code !== 'EADDRINUSE') {
          await closeServers(exposed);
          throw error;
        }
        notes.push(`${endpoint.address}:${port} is taken (another program listens on port ${port} of every address of this host), so the service is not reachable there on that port`);
      }
    }
    this.byService.set(serviceKey, exposed);
    return notes;
  }

  /** Stops listening on the service's address and ends the connections it forwarded. */
  async remove(serviceKey: string): Promise<void> {
    const exposed = this.byService.get(serviceKey);
    this.byService.delete(serviceKey);
    if (exposed !== undefined) await closeServers(exposed);
  }

  /**
   * Stops listening everywhere and resolves once the connections open have ended by themselves, or after `timeoutMs`,
   * when what is left is cut: the end of an apps proxy process, whose successor may hold the same listening sockets.
   */
  async retire(timeoutMs: number): Promise<void> {
    const all = [...this.byService.values()];
    this.byService.clear();
    const sockets = all.flatMap((exposed) => [...exposed.sockets]);
    const closed = Promise.all([
      ...all.flatMap((exposed) => exposed.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))),
      ...sockets.map((socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())))),
    ]);
    const timer = setTimeout(() => {
      for (const socket of sockets) socket.destroy();
    }, timeoutMs);
    await closed;
    clearTimeout(timer);
  }

  async closeAll(): Promise<void> {
    const all = [...this.byService.values()];
    this.byService.clear();
    await Promise.all(all.map((exposed) => closeServers(exposed)));
  }

  /** Every listener, by `<address>:<port>`: what a successor apps proxy process is handed. */
  listeners(): Map<string, Server> {
    const all = new Map<string, Server>();
    for (const exposed of this.byService.values()) {
      for (const server of exposed.servers) {
        const address = server.address();
        if (address !== null && typeof address === 'object') all.set(listenerKey(address.address, address.port), server);
      }
    }
    return all;
  }

  private listen(exposed: Exposed, port: number): Promise<Server> {
    const key = listenerKey(exposed.endpoint.address, port);
    const inherited = this.options.inherited?.get(key);
    if (inherited !== undefined) {
      this.options.inherited?.delete(key);
      inherited.server.on('error', (error) => this.options.onError?.(`internal address ${key}: ${error.message}`));
      inherited.take((client) => this.forward(exposed, client));
      return Promise.resolve(inherited.server);
    }
    const server = createServer((client) => this.forward(exposed, client));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, exposed.endpoint.address, () => {
        server.off('error', reject);
        server.on('error', (error) => this.options.onError?.(`internal address ${exposed.endpoint.address}:${port}: ${error.message}`));
        resolve(server);
      });
    });
  }

  private forward(exposed: Exposed, client: Socket): void {
    const upstream = connect(exposed.targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      exposed.sockets.add(socket);
      socket.once('close', () => exposed.sockets.delete(socket));
    }
    // Either side failing or closing closes the other: a refused instance, or one stopped after a redeploy, closes
    // the caller's connection at once rather than leaving it half open for a keep-alive pool to reuse.
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

export function listenerKey(address: string, port: number): string {
  return `${address}:${port}`;
}

function closeServers(exposed: Exposed): Promise<void> {
  for (const socket of exposed.sockets) socket.destroy();
  return Promise.all(exposed.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))).then(() => undefined);
}
