import { createServer } from 'node:net';

/**
 * A TCP port nobody listens on at the time of the call, chosen by the kernel. Another process may take it before the
 * caller binds it; callers that start servers on it report that as a failed start rather than assume it cannot happen.
 */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('the kernel gave no port'))));
    });
  });
}
