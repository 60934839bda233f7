import net from 'node:net';

/**
 * Proof that a refused outbound address was never connected to. Most of the addresses in question cannot be bound
 * on a test machine (nothing listens on `::7f00:1` to notice a connection), so instead every TCP connection this
 * process starts — plain or TLS, node:http, node:https or a raw socket all go through `net.Socket#connect` — is
 * recorded while the work runs, at the moment it is asked for, before any packet leaves. Connections to the test
 * PostgreSQL server are the suite's own and are not counted.
 */

/** IPv6 URL hosts that carry a loopback, private or link-local (metadata) IPv4 address, with what they carry. */
export const EMBEDDED_IPV4_HOSTS: readonly { host: string; form: string }[] = [
  { host: '[::ffff:127.0.0.1]', form: 'IPv4-mapped 127.0.0.1' },
  { host: '[::127.0.0.1]', form: 'IPv4-compatible 127.0.0.1' },
  { host: '[::ffff:0:10.0.0.1]', form: 'IPv4-translated 10.0.0.1' },
  { host: '[2002:7f00:1::]', form: '6to4 127.0.0.1' },
  { host: '[2001:0:4136:e378:8000:63bf:80ff:fffe]', form: 'Teredo client 127.0.0.1' },
  { host: '[64:ff9b::a9fe:a9fe]', form: 'NAT64 169.254.169.254' },
];

const TEST_DATABASE = (() => {
  const url = process.env.SLIPWAY_TEST_DATABASE_URL;
  if (url === undefined || url === '') return undefined;
  const parsed = new URL(url);
  return { host: parsed.hostname, port: parsed.port === '' ? 5432 : Number(parsed.port) };
})();

interface ConnectTarget {
  host?: string;
  port?: number | string;
  path?: string;
}

/** `host:port` (or the socket path) of a `Socket#connect` call, in any of its argument forms. */
function targetOf(args: unknown[]): ConnectTarget {
  // net.connect() hands its normalized arguments over as one array; callers of socket.connect() pass them as given.
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (typeof first === 'object' && first !== null) return first as ConnectTarget;
  if (typeof first === 'string' && Number.isNaN(Number(first))) return { path: first };
  return { port: first as number | string, host: typeof args[1] === 'string' ? args[1] : 'localhost' };
}

function isTestDatabase(target: ConnectTarget): boolean {
  return TEST_DATABASE !== undefined && target.host === TEST_DATABASE.host && Number(target.port) === TEST_DATABASE.port;
}

/** Runs `work` and answers what it returned with every connection it started meanwhile, as `host:port`. */
export async function connectionsDuring<T>(work: () => Promise<T>): Promise<{ result: T; connections: string[] }> {
  const connections: string[] = [];
  const original = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function recordingConnect(this: net.Socket, ...args: unknown[]) {
    const target = targetOf(args);
    if (!isTestDatabase(target)) connections.push(target.path ?? `${target.host ?? 'localhost'}:${String(target.port)}`);
    return (original as (...given: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
  try {
    return { result: await work(), connections };
  } finally {
    net.Socket.prototype.connect = original;
  }
}
