import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, vi } from 'vitest';

/** One request a receiver got: its headers and the exact body bytes (as text). */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface TestWebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Waits until `count` requests arrived (or fails after `timeoutMs`). */
  waitForCount(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/**
 * A real HTTP server on loopback that records what it is sent and answers with the status `respond` chooses for
 * the n-th request (0-based), so tests can make a receiver fail first and recover, or fail for good.
 */
export async function startWebhookReceiver(respond: (index: number) => number = () => 200): Promise<TestWebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const index = received.length;
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(respond(index), { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    waitForCount(count, timeoutMs = 10_000) {
      return vi.waitFor(
        () => {
          expect(received.length, `receiver got ${received.length} requests, expected ${count}`).toBeGreaterThanOrEqual(count);
          return received;
        },
        { timeout: timeoutMs, interval: 20 },
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
