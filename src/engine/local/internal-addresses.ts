import { createServer, connect, type Server, type Socket } from 'node:net';

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

export class InternalAddresses {
  private readonly byService = new Map<string, Exposed>();

  private readonly options: { onError?: (message: string) => void };
  constructor(options: { onError?: (message: string) => void } = {}) {
    this.options = options;
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

  async closeAll(): Promise<void> {
    const all = [...this.byService.values()];
    this.byService.clear();
    await Promise.all(all.map((exposed) => closeServers(exposed)));
  }

  private listen(exposed: Exposed, port: number): Promise<Server> {
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

function closeServers(exposed: Exposed): Promise<void> {
  for (const socket of exposed.sockets) socket.destroy();
  return Promise.all(exposed.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))).then(() => undefined);
}
