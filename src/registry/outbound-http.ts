import type { IncomingHttpHeaders } from 'node:http';
import { nodeHttp } from '../lib/node-http.ts';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress, resolveGitHost } from '../git/git-addresses.ts';

/**
 * Outgoing HTTP to addresses users give (container registries, Helm repositories, webhooks). The same SSRF stance as
 * git access, with the same classifier (git/git-addresses.ts `isPublicAddress`): only public unicast addresses are
 * reached — no loopback, private, link-local or other special-purpose address, nor an IPv6 form that carries one —
 * unless the installation allows private hosts. An IP literal is judged before any connection; a host name inside
 * the connection's own DNS lookup, which checks every address the name resolves to and hands the socket the
 * checked one, so the address connected to is the address that was checked (no second resolution an attacker's
 * DNS could answer differently). Every redirect is judged again.
 */
export interface OutboundPolicy {
  /** Lets requests reach loopback and private addresses, and plain http:// (tests, on-premise registries). */
  allowPrivateHosts: boolean;
}

export type OutboundFailureKind = 'refused' | 'unresolvable' | 'unreachable' | 'timeout' | 'too_large';

/** Why a request did not get an answer; `message` is safe to show (no addresses of the internal network). */
export class OutboundFailure extends Error {
  readonly kind: OutboundFailureKind;
  constructor(
    kind: OutboundFailureKind,
    message: string,
  ) {
    super(message);
    this.kind = kind;
    this.name = 'OutboundFailure';
  }
}

export interface OutboundRequest {
  url: string;
  headers?: Record<string, string>;
  /** Accept any TLS certificate (a repository's skip_tls_verification). */
  insecureTls?: boolean;
  /** Upper bound of the body; more is a `too_large` failure rather than buffered. */
  maxBytes?: number;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
}

export interface OutboundHttp {
  readonly policy: OutboundPolicy;
  get(request: OutboundRequest): Promise<OutboundResponse>;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const NOT_PUBLIC_CODE = 'SLIPWAY_NOT_PUBLIC';

/** The problem with a URL as a target, or undefined when its shape is acceptable (checked before any connection). */
export function urlProblem(url: URL, policy: OutboundPolicy): string | undefined {
  if (url.protocol !== 'https:' && !(policy.allowPrivateHosts && url.protocol === 'http:')) {
    return policy.allowPrivateHosts ? 'must be an http:// or https:// URL' : 'must be an https:// URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry credentials; put them in config';
  const bare = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!policy.allowPrivateHosts) {
    if (isIP(bare) !== 0 && !isPublicAddress(bare)) return 'host is a loopback or private address';
    if (bare === 'localhost' || bare.endsWith('.localhost')) return 'host is a loopback or private address';
  }
  return undefined;
}

/**
 * Write-time check of a host: refused when it resolves to a non-public address (unless allowed). A host that does
 * not resolve now is accepted (DNS may be set up later); every use checks again.
 */
export async function resolvesToNonPublic(hostname: string, policy: OutboundPolicy): Promise<boolean> {
  return !policy.allowPrivateHosts && (await isNonPublicHost(hostname));
}

/** True when the host resolves to a loopback or private address (used to pick plain http for on-premise OCI). */
export async function isNonPublicHost(hostname: string): Promise<boolean> {
  const resolved = await resolveGitHost(hostname, false);
  return !resolved.ok && resolved.reason === 'not_public';
}

/** A DNS lookup for sockets that refuses hosts the policy does not allow, so the address connected to is the one checked. */
export function guardedLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    void resolveGitHost(hostname, policy.allowPrivateHosts).then((resolved) => {
      if (!resolved.ok) {
        const error = Object.assign(new Error(resolved.reason === 'unresolvable' ? `${hostname} could not be resolved` : `${hostname} is not public`), {
          code: resolved.reason === 'unresolvable' ? 'ENOTFOUND' : NOT_PUBLIC_CODE,
        });
        callback(error, '', 4);
        return;
      }
      const family = isIP(resolved.address);
      if (options.all === true) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: resolved.address, family }]);
      else callback(null, resolved.address, family);
    });
  };
}

function failureOf(error: unknown, host: string): OutboundFailure {
  if (error instanceof OutboundFailure) return error;
  const code = (error as { code?: unknown }).code;
  if (code === NOT_PUBLIC_CODE) {
    return new OutboundFailure('refused', `${host} is a loopback or private address; Slipway only reaches public hosts unless SLIPWAY_GIT_ALLOW_PRIVATE_HOSTS=true`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new OutboundFailure('unresolvable', `${host} could not be resolved`);
  if (code === 'ECONNREFUSED') return new OutboundFailure('unreachable', `${host} refused the connection`);
  if (typeof code === 'string' && (code.startsWith('ERR_TLS') || code.includes('CERT') || code === 'EPROTO')) {
    return new OutboundFailure('unreachable', `TLS with ${host} failed (${code})`);
  }
  return new OutboundFailure('unreachable', `${host} could not be reached${typeof code === 'string' ? ` (${code})` : ''}`);
}

function singleGet(url: URL, request: OutboundRequest, policy: OutboundPolicy, timeoutMs: number): Promise<OutboundResponse> {
  const maxBytes = request.maxBytes ?? DEFAULT_MAX_BYTES;
  const send = url.protocol === 'https:' ? httpsRequest : nodeHttp.request;
  return new Promise((resolve, reject) => {
    const outgoing = send(url, {
      method: 'GET',
      headers: { 'user-agent': 'slipway', ...request.headers },
      lookup: guardedLookup(policy),
      ...(url.protocol === 'https:' && request.insecureTls === true ? { rejectUnauthorized: false } : {}),
    });
    const timer = setTimeout(() => outgoing.destroy(new OutboundFailure('timeout', `${url.host} did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
    outgoing.on('error', (error) => {
      clearTimeout(timer);
      reject(failureOf(error, url.host));
    });
    outgoing.on('response', (incoming) => {
      const chunks: Buffer[] = [];
      let size = 0;
      incoming.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          outgoing.destroy(new OutboundFailure('too_large', `${url.host} answered more than ${maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      incoming.on('error', (error) => {
        clearTimeout(timer);
        reject(failureOf(error, url.host));
      });
      incoming.on('end', () => {
        clearTimeout(timer);
        resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks), url: url.href });
      });
    });
    outgoing.end();
  });
}

/** `timeoutMs` bounds one request, from connecting to the last byte (15 s unless given). */
export function createOutboundHttp(policy: OutboundPolicy, limits: { timeoutMs?: number } = {}): OutboundHttp {
  const timeoutMs = limits.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  async function get(request: OutboundRequest): Promise<OutboundResponse> {
    let url = new URL(request.url);
    let headers = request.headers ?? {};
    for (let hop = 0; ; hop += 1) {
      const problem = urlProblem(url, policy);
      if (problem !== undefined) throw new OutboundFailure('refused', `${url.host}: ${problem}`);
      const response = await singleGet(url, { ...request, headers }, policy, timeoutMs);
      const location = response.headers.location;
      if (response.status < 300 || response.status >= 400 || location === undefined || hop >= MAX_REDIRECTS) return response;
      const next = new URL(location, url);
      // Credentials are for the host they were given for, never for wherever it redirects to.
      if (next.host !== url.host) headers = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'));
      url = next;
    }
  }
  return { policy, get };
}
