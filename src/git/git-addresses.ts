import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Address checks for every outgoing connection the control plane makes to an address a user gave (git
 * repositories here, container registries, Helm repositories and webhooks through registry/outbound-http.ts): it
 * must not reach its own loopback, the private network it runs in, or cloud metadata endpoints (SSRF). The host
 * name is resolved here and every resolved address is checked; the connection is then pinned to the checked
 * address (http.curloptResolve for git, the socket's own lookup for HTTP), so a DNS answer that changes between
 * the check and the connection cannot redirect it.
 *
 * The classification is ipaddr.js's, a maintained table of the special-purpose ranges (IANA registries): only an
 * address whose range is `unicast` is public, so a range added to the table is refused without a change here. An
 * IPv6 address that carries an IPv4 address is judged by the IPv4 address, because that is what a packet to it
 * reaches — through the host's own IPv4 stack, a NAT64 translator, a 6to4 or a Teredo relay:
 *
 *   ::ffff:a.b.c.d       IPv4-mapped               ipaddr.js range ipv4Mapped
 *   ::ffff:0:a.b.c.d     IPv4-translated           rfc6145
 *   ::a.b.c.d            IPv4-compatible           unicast to ipaddr.js (deprecated, RFC 4291 §2.5.5.1), hence ::/96 here
 *   64:ff9b::a.b.c.d     NAT64 well-known prefix   rfc6052 (64:ff9b:1::/48, for local use, stays refused)
 *   2002:AABB:CCDD::/48  6to4                      6to4
 *   2001:0:S:S:f:p:C:C   Teredo                    teredo; the client is the bitwise NOT of the last 32 bits, the
 *                                                  server the 32 bits after the prefix — both must be public
 */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The IPv4 addresses an IPv6 address carries, or undefined when it carries none. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const [, second = 0, third = 0, fourth = 0, , , seventh = 0, eighth = 0] = address.parts;
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [ipv4Of(seventh, eighth)];
    case 'rfc6052':
      return address.match(NAT64_WELL_KNOWN) ? [ipv4Of(seventh, eighth)] : undefined;
    case '6to4':
      return [ipv4Of(second, third)];
    case 'teredo':
      return [ipv4Of(third, fourth), ipv4Of(~seventh & 0xffff, ~eighth & 0xffff)];
    case 'unicast':
      return address.match(IPV4_COMPATIBLE) ? [ipv4Of(seventh, eighth)] : undefined;
    default:
      return undefined;
  }
}

/** Whether an IP address (IPv4 or IPv6 text, no brackets) may be reached on a user's behalf; anything else is not. */
export function isPublicAddress(address: string): boolean {
  // node:net's grammar, not ipaddr.js's looser one (which also reads `127.1` or `0x7f000001` as IPv4 addresses).
  if (isIP(address) === 0) return false;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return false;
  }
  if (parsed instanceof ipaddr.IPv4) return parsed.range() === 'unicast';
  const carried = embeddedIpv4(parsed);
  if (carried !== undefined) return carried.every((ipv4) => ipv4.range() === 'unicast');
  return parsed.range() === 'unicast';
}

export type ResolvedHost =
  | { ok: true; address: string }
  | { ok: false; reason: 'unresolvable' }
  | { ok: false; reason: 'not_public'; address: string };

/** Resolves a host name (or takes an IP literal) and answers the first address, or why it may not be used. */
export async function resolveGitHost(hostname: string, allowPrivate: boolean): Promise<ResolvedHost> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  let addresses: string[];
  if (isIP(bare) !== 0) addresses = [bare];
  else {
    try {
      addresses = (await lookup(bare, { all: true, verbatim: true })).map((entry) => entry.address);
    } catch {
      return { ok: false, reason: 'unresolvable' };
    }
  }
  const first = addresses[0];
  if (first === undefined) return { ok: false, reason: 'unresolvable' };
  if (!allowPrivate) {
    const refused = addresses.find((address) => !isPublicAddress(address));
    if (refused !== undefined) return { ok: false, reason: 'not_public', address: refused };
  }
  return { ok: true, address: first };
}
