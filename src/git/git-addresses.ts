import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Address checks for outgoing git connections: a user-given repository URL must not make the control plane reach
 * its own loopback, the private network it runs in, or cloud metadata endpoints (SSRF). The host name is resolved
 * here and every resolved address is checked; git is then pinned to the checked address (http.curloptResolve), so
 * a DNS answer that changes between the check and the connection cannot redirect it.
 */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 address carries (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted !== null) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex === null) return undefined;
  const high = parseInt(hex[1] as string, 16);
  const low = parseInt(hex[2] as string, 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NON_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return false;
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined) return isPublicAddress(v4);
  return !NON_PUBLIC.check(address, 'ipv6');
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
