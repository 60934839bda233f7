import { isIP } from 'node:net';
import type { FieldProblem } from '../../lib/errors.ts';
import type { RouteInput } from './cluster-settings.schemas.ts';

/**
 * The checks of a routing table (docs/cluster-network.md): a destination is a CIDR block whose host bits are zero
 * (as cloud route tables require), a target is a cloud route target id or a next-hop IP address of the destination's
 * family, and no destination appears twice.
 */

/**
 * Targets a VPC route table accepts, by the id prefixes AWS gives them: internet, NAT, virtual private, transit and
 * local gateways, peering connections, network interfaces, VPC endpoints, egress-only internet gateways and carrier
 * gateways; `local` is the VPC's own route.
 */
const TARGET_ID = /^(igw|nat|vgw|tgw|lgw|pcx|eni|vpce|eigw|cagw)-[0-9a-f]{8}([0-9a-f]{9})?$/;

/** The 16 bytes of an IPv6 address (any textual form, including an embedded IPv4 tail). */
function ipv6Bytes(address: string): number[] {
  let text = address;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tail.push(...text.slice(lastColon + 1).split('.').map(Number));
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head = '', rest] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const restGroups = rest === undefined || rest === '' ? [] : rest.split(':');
  const missing = 8 - headGroups.length - restGroups.length;
  const groups = [...headGroups, ...Array<string>(rest === undefined ? 0 : missing).fill('0'), ...restGroups].map((group) => Number.parseInt(group, 16));
  const bytes = groups.flatMap((group) => [group >> 8, group & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

function bytesOf(address: string, family: 4 | 6): number[] {
  return family === 4 ? address.split('.').map(Number) : ipv6Bytes(address);
}

function formatNetwork(bytes: number[], family: 4 | 6): string {
  if (family === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2) groups.push((((bytes[index] ?? 0) << 8) | (bytes[index + 1] ?? 0)).toString(16));
  // The canonical short form (RFC 5952): the longest run of two or more zero groups becomes `::`.
  let best = { start: -1, length: 0 };
  for (let start = 0; start < 8; ) {
    if (groups[start] !== '0') {
      start += 1;
      continue;
    }
    let end = start;
    while (end < 8 && groups[end] === '0') end += 1;
    if (end - start > best.length && end - start > 1) best = { start, length: end - start };
    start = end;
  }
  if (best.start < 0) return groups.join(':');
  return `${groups.slice(0, best.start).join(':')}::${groups.slice(best.start + best.length).join(':')}`;
}

export interface Cidr {
  family: 4 | 6;
  /** The canonical text: network address (IPv6 in its short form) and prefix. */
  text: string;
}

/** A CIDR block, or the reason it is not one. */
export function parseCidr(value: string): Cidr | { problem: string } {
  const slash = value.indexOf('/');
  if (slash < 0) return { problem: 'must be a CIDR block such as 10.0.0.0/16 (address/prefix)' };
  const address = value.slice(0, slash);
  const prefixText = value.slice(slash + 1);
  const family = isIP(address);
  if (family !== 4 && family !== 6) return { problem: `${address} is not an IPv4 or IPv6 address` };
  const maxPrefix = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > maxPrefix) return { problem: `the prefix length must be 0 to ${maxPrefix}` };
  const prefix = Number(prefixText);
  const bytes = bytesOf(address, family);
  const network = bytes.map((byte, index) => {
    const bitsKept = Math.max(0, Math.min(8, prefix - index * 8));
    return byte & ((0xff << (8 - bitsKept)) & 0xff);
  });
  if (network.some((byte, index) => byte !== bytes[index])) {
    return { problem: `host bits are set: the network of this prefix is ${formatNetwork(network, family)}/${prefix}` };
  }
  return { family, text: `${formatNetwork(network, family)}/${prefix}` };
}

/** The problems of a routing table (none when it may be stored) and the table as stored (canonical destinations). */
export function checkRoutes(routes: readonly RouteInput[]): { problems: FieldProblem[]; routes: RouteInput[] } {
  const problems: FieldProblem[] = [];
  const stored: RouteInput[] = [];
  const seen = new Map<string, number>();
  routes.forEach((route, index) => {
    const cidr = parseCidr(route.destination.trim());
    if ('problem' in cidr) {
      problems.push({ field: `/routes/${index}/destination`, message: cidr.problem });
      return;
    }
    const target = route.target.trim();
    const targetFamily = isIP(target);
    if (target !== 'local' && !TARGET_ID.test(target) && targetFamily === 0) {
      problems.push({
        field: `/routes/${index}/target`,
        message: 'must be local, a gateway, peering, interface or endpoint id (igw-, nat-, vgw-, tgw-, lgw-, pcx-, eni-, vpce-, eigw-, cagw- and 8 or 17 hex digits) or a next-hop IP address',
      });
      return;
    }
    if (targetFamily !== 0 && targetFamily !== cidr.family) {
      problems.push({ field: `/routes/${index}/target`, message: `a next hop for an IPv${cidr.family} destination must be an IPv${cidr.family} address` });
      return;
    }
    const earlier = seen.get(cidr.text);
    if (earlier !== undefined) {
      problems.push({ field: `/routes/${index}/destination`, message: `${cidr.text} is already routed by route ${earlier}` });
      return;
    }
    seen.set(cidr.text, index);
    stored.push({ destination: cidr.text, target, description: route.description });
  });
  return { problems, routes: stored };
}
