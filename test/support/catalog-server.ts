import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A real HTTP server standing in for a remote platform template catalog source. What it answers is switched by the
 * test: the catalog document, an HTTP status (503, 404, …), a body that is not a catalog, a connection closed
 * without any answer, or no answer at all. It counts the requests it received, so caching can be observed.
 */
export type CatalogServerBehaviour =
  | { kind: 'serve'; document: unknown }
  | { kind: 'status'; status: number }
  | { kind: 'body'; body: string }
  | { kind: 'close' }
  /** Accepts the request and never answers (until the server closes). */
  | { kind: 'hang' };

export interface CatalogServer {
  url: string;
  requests: number;
  behave(behaviour: CatalogServerBehaviour): void;
  close(): Promise<void>;
}

export async function startCatalogServer(initial: CatalogServerBehaviour): Promise<CatalogServer> {
  let behaviour = initial;
  const sockets = new Set<Socket>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    state.requests += 1;
    request.resume();
    switch (behaviour.kind) {
      case 'serve':
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(behaviour.document));
        return;
      case 'status':
        response.writeHead(behaviour.status, { 'content-type': 'text/plain' }).end('catalog source says no');
        return;
      case 'body':
        response.writeHead(200, { 'content-type': 'application/json' }).end(behaviour.body);
        return;
      case 'close':
        request.socket.destroy();
        return;
      case 'hang':
        return;
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const state: CatalogServer = {
    url: `http://127.0.0.1:${port}/catalog.json`,
    requests: 0,
    behave(next) {
      behaviour = next;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error === undefined ? resolve() : reject(error))));
    },
  };
  return state;
}
