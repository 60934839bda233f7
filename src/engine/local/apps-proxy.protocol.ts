import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { KeyedEndpoint } from './internal-addresses.ts';
import type { ServedCertificate } from './reverse-proxy.ts';
import type { KeyedRoute, ProxyTarget } from './route-table.ts';

/**
 * The apps proxy's control channel (docs/local-engine.md, "The apps proxy process"): a Unix socket in the agent's
 * state directory (0700, so only this account reaches it), one JSON object per line each way.
 *
 * On connecting, the proxy says who it is: {"type":"hello","protocol":1,"version":"0.9.0","pid":4242,"host":"127.0.0.1",
 * "port":8000,"address":{"address":"127.0.0.1","family":"IPv4","port":8000},"routes":3,"endpoints":1}. Then the agent
 * sends requests, each with an id the proxy answers with {"id":n,"type":"done"} (plus what was asked for, or "error"),
 * one after the other in the order they came; a drain's answer comes when the target is drained:
 *
 *   {"id":1,"type":"set","key":"<service>","hostnames":["web-prod-1a2b3c4d.localhost"],"target":{"host":"127.0.0.1","port":41234}}
 *   {"id":2,"type":"remove","key":"<service>"}
 *   {"id":3,"type":"expose","key":"<service>","address":"127.64.0.12","ports":[8080],"targetPort":41234}
 *        → {"id":3,"type":"done","notes":["127.64.0.12:8080 is taken …"]}   the service's internal address (internal-addresses.ts)
 *   {"id":4,"type":"unexpose","key":"<service>"}
 *   {"id":5,"type":"sync","routes":[{"key":…,"hostnames":[…],"target":{…}}, …],"endpoints":[{"key":…,"address":…,
 *        "ports":[…],"targetPort":…}, …]}   the whole table, replacing the proxy's
 *   {"id":6,"type":"drain","target":{"host":"127.0.0.1","port":41234},"timeoutMs":30000}
 *        → {"id":6,"type":"done","drained":true} once nothing is in flight to the target (false: the timeout passed)
 *   {"id":7,"type":"table"}  → {"id":7,"type":"done","routes":[…],"endpoints":[…]}
 *   {"id":8,"type":"handover","execPath":"/usr/bin/node","command":"/opt/slipway/bin/slipway.js"}
 *        → the proxy starts its successor with that program (an upgrade), hands it its table and its listening
 *          sockets, answers once the successor serves, then retires as on exit
 *   {"id":9,"type":"exit"}   → answered, then the proxy stops accepting, lets requests in flight finish, and exits
 *   {"id":10,"type":"https","host":"0.0.0.0","port":8443}  → {"id":10,"type":"done","address":{…}}   opens the HTTPS
 *        port (docs/https.md); a proxy already serving HTTPS answers where it does
 *   {"id":11,"type":"certificates","certificates":[{"hostnames":["shop.example.com"],"chain":"-----BEGIN…","key":"…"}]}
 *        the whole set HTTPS serves, replacing the previous one (hot: open connections keep theirs)
 *   {"id":12,"type":"challenge","token":"…","keyAuthorization":"…"}   answers the ACME HTTP-01 challenge on the HTTP
 *        port; without keyAuthorization, stops answering it
 *
 * The certificates and challenges come from the server's certificates module (src/modules/certificates), which holds
 * a connection of its own to the proxy; a hello says where HTTPS is served (`https`, absent when it is off).
 *
 * The proxy also sends {"type":"trouble","message":"forwarding GET … failed: …"} for its agent's log. Requests are
 * applied in the order they arrive, so an answer means every request sent before it is served, and a drain sent
 * after a set counts the requests of the target the set replaced.
 *
 * The spawner (the agent, or the proxy handing over) gives a new proxy process its table on the IPC channel of the
 * spawn (apps-proxy.spawn.ts), so it serves the right routes from its first connection: the process says
 * {"type":"waiting"}, the spawner sends {"stateDir":…,"host":…,"port":8000,"inherited":[],"routes":[…],"endpoints":[…]}
 * (a predecessor then its listening sockets), the process answers {"type":"listening","address":…} or
 * {"type":"failed","code":"EADDRINUSE","message":…} and closes the channel.
 */
export const APPS_PROXY_PROTOCOL = 1;

/** Where the serving proxy listens for its agent: how the next agent finds it. */
export function appsProxySocketPath(stateDir: string): string {
  return path.join(stateDir, 'apps-proxy.sock');
}

/** The pid of the serving proxy process, for an operator who wants it stopped (SIGTERM). */
export function appsProxyPidPath(stateDir: string): string {
  return path.join(stateDir, 'apps-proxy.pid');
}

/** Where the process writes what it has no agent to tell (its start, its trouble while no agent is connected). */
export function appsProxyLogPath(stateDir: string): string {
  return path.join(stateDir, 'apps-proxy.log');
}

export interface AppsProxyHello {
  type: 'hello';
  protocol: number;
  version: string;
  pid: number;
  /** What it was started with (`--host`, `--port`), which the agent compares with its own settings. */
  host: string;
  port: number;
  /** Where it listens. */
  address: AddressInfo;
  routes: number;
  endpoints: number;
  /** Where HTTPS is served; absent while it is off. */
  https?: AddressInfo;
}

/** What a proxy's HTTPS serves: its address, certificates and the ACME challenges it answers (handed to a successor). */
export interface AppsProxyTls {
  host: string;
  port: number;
  /** The Strict-Transport-Security value HTTPS answers carry (SLIPWAY_APPS_HSTS); absent: none. */
  hsts?: string;
  certificates: ServedCertificate[];
  challenges: Array<{ token: string; keyAuthorization: string }>;
}

export type AppsProxyRequest =
  | { id: number; type: 'set'; key: string; hostnames: string[]; target: ProxyTarget; httpsRedirect?: false }
  | { id: number; type: 'remove'; key: string }
  | ({ id: number; type: 'expose' } & KeyedEndpoint)
  | { id: number; type: 'unexpose'; key: string }
  | { id: number; type: 'sync'; routes: KeyedRoute[]; endpoints: KeyedEndpoint[] }
  | { id: number; type: 'drain'; target: ProxyTarget; timeoutMs: number }
  | { id: number; type: 'table' }
  | { id: number; type: 'handover'; execPath: string; command: string }
  | { id: number; type: 'exit' }
  | { id: number; type: 'https'; host: string; port: number; hsts?: string }
  | { id: number; type: 'certificates'; certificates: ServedCertificate[] }
  | { id: number; type: 'challenge'; token: string; keyAuthorization?: string };

type WithoutId<Request> = Request extends unknown ? Omit<Request, 'id'> : never;
/** A request without its id, as the agent's side composes it. */
export type AppsProxyCommand = WithoutId<AppsProxyRequest>;

export interface AppsProxyAnswer {
  id: number;
  type: 'done';
  drained?: boolean;
  routes?: KeyedRoute[];
  endpoints?: KeyedEndpoint[];
  notes?: string[];
  /** Where HTTPS is served, answering `https`. */
  address?: AddressInfo;
  error?: string;
  /** The system's code of a failed request's error, when it has one (`EADDRINUSE` for an HTTPS port taken). */
  code?: string;
}

export type AppsProxyEvent = AppsProxyHello | AppsProxyAnswer | { type: 'trouble'; message: string };

/** The first message of a spawned proxy's IPC channel, and its answer. */
export interface AppsProxyStart {
  stateDir: string;
  host: string;
  /** 0: any free port. */
  port: number;
  /**
   * The listening sockets its predecessor hands over after this message, each as {"type":"listener","key":…} with
   * the socket: "apps" for the apps port, `<address>:<port>` for an internal address. Empty for a fresh start.
   */
  inherited: string[];
  routes: KeyedRoute[];
  endpoints: KeyedEndpoint[];
  /** A predecessor's HTTPS (its socket handed over as "https"); absent for a fresh start. */
  tls?: AppsProxyTls;
}
export type AppsProxyStarted = { type: 'waiting' } | { type: 'listening'; address: AddressInfo } | { type: 'failed'; code?: string; message: string };

/** The longest path a Unix socket can have (108 bytes with its terminating zero on Linux), the temporary suffix included. */
const MAX_SOCKET_PATH_BYTES = 107;

/** Whether the control socket fits under this state directory; a longer path keeps the proxy in the agent's process. */
export function appsProxySocketFits(stateDir: string): boolean {
  return Buffer.byteLength(`${appsProxySocketPath(stateDir)}.4194304`) <= MAX_SOCKET_PATH_BYTES;
}

/**
 * Calls `onMessage` with each JSON object that arrives on the socket; a line that is not one closes the channel.
 * Lines have no length limit: a `sync` carries the whole table.
 */
export function readJsonLines(socket: Socket, onMessage: (message: Record<string, unknown>) => void): void {
  const lines = createInterface({ input: socket, crlfDelay: Infinity });
  // The socket's own errors are its owner's (they close it); the interface only repeats them.
  lines.on('error', () => undefined);
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      socket.destroy();
      return;
    }
    if (typeof message === 'object' && message !== null && !Array.isArray(message)) onMessage(message as Record<string, unknown>);
    else socket.destroy();
  });
}

export function writeJsonLine(socket: Socket, message: object): void {
  if (!socket.destroyed && socket.writable) socket.write(`${JSON.stringify(message)}\n`);
}
