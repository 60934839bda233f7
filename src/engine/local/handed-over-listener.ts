import type { Server, Socket } from 'node:net';

/**
 * A listening socket an apps proxy process received from its predecessor (apps-proxy.process.ts): the predecessor
 * keeps accepting on it until it retires, and so does this process from the moment it arrives — before the proxy or
 * the forwarder that will own it exists. Connections accepted meanwhile wait here, in order, for that owner (`take`),
 * so none is left unanswered.
 */
export class HandedOverListener {
  readonly server: Server;
  private readonly waiting: Socket[] = [];
  private owner: ((socket: Socket) => void) | undefined;

  constructor(server: Server) {
    this.server = server;
    server.on('connection', (socket: Socket) => {
      if (this.owner === undefined) this.waiting.push(socket);
      else this.owner(socket);
    });
  }

  take(owner: (socket: Socket) => void): void {
    this.owner = owner;
    for (const socket of this.waiting.splice(0)) owner(socket);
  }
}
