import { nodeHttp } from '../../lib/node-http.ts';
import { request as httpsRequest } from 'node:https';
import { guardedLookup, urlProblem, type OutboundPolicy } from '../../registry/outbound-http.ts';

/**
 * POSTs one webhook delivery. The address policy is the outbound one (registry/outbound-http.ts): https only, and
 * only public unicast addresses (IPv6 forms that carry an IPv4 address judged by it) unless
 * SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS allows private ones — an IP literal judged before connecting, a name in the
 * connection's own DNS lookup so the address connected to is the one checked. It is judged again at every delivery,
 * not only when the webhook is saved. Redirects are not followed (a 3xx is a failed delivery), and the whole
 * exchange is bounded by the timeout.
 */
export interface WebhookSendResult {
  /** The receiver's status, or null when no answer came. */
  status: number | null;
  /** Why the attempt failed without an answer; safe to show (no internal addresses). */
  error: string | null;
}

export interface WebhookSender {
  send(url: string, headers: Record<string, string>, body: string): Promise<WebhookSendResult>;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

function failureMessage(error: unknown, host: string, timeoutMs: number): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'SLIPWAY_TIMEOUT') return `${host} did not answer within ${timeoutMs / 1000} s`;
  if (code === 'SLIPWAY_NOT_PUBLIC') return `${host} is a loopback or private address; Slipway only reaches public hosts unless SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `${host} could not be resolved`;
  if (code === 'ECONNREFUSED') return `${host} refused the connection`;
  if (code === 'ECONNRESET') return `${host} closed the connection`;
  return `${host} could not be reached${typeof code === 'string' ? ` (${code})` : ''}`;
}

export function createWebhookSender(policy: OutboundPolicy, timeoutMs = 10_000): WebhookSender {
  return {
    send(target, headers, body) {
      const url = new URL(target);
      const problem = urlProblem(url, policy);
      if (problem !== undefined) return Promise.resolve({ status: null, error: `target_url ${problem}` });
      const send = url.protocol === 'https:' ? httpsRequest : nodeHttp.request;
      return new Promise((resolve) => {
        const outgoing = send(url, {
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          lookup: guardedLookup(policy),
        });
        const timer = setTimeout(() => outgoing.destroy(Object.assign(new Error('timeout'), { code: 'SLIPWAY_TIMEOUT' })), timeoutMs);
        outgoing.on('error', (error) => {
          clearTimeout(timer);
          resolve({ status: null, error: failureMessage(error, url.host, timeoutMs) });
        });
        outgoing.on('response', (incoming) => {
          let size = 0;
          // The answer is read (so the connection ends cleanly) and discarded; only its status matters.
          incoming.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) incoming.destroy();
          });
          const done = () => {
            clearTimeout(timer);
            resolve({ status: incoming.statusCode ?? null, error: null });
          };
          incoming.on('end', done);
          incoming.on('close', done);
        });
        outgoing.end(body);
      });
    },
  };
}
