import { createSocket, type RemoteInfo } from 'node:dgram';
import { isIP } from 'node:net';

/**
 * A small authoritative DNS server over UDP for tests (RFC 1035 wire format): it answers A, AAAA, CNAME and TXT
 * questions from a zone the test edits while it runs, NXDOMAIN for names it does not know, and SERVFAIL for names
 * marked failing. Slipway's resolver is pointed at it through SLIPWAY_DNS_SERVERS, so checks go through node:dns
 * exactly as in production.
 */

export interface ZoneRecords {
  cname?: string;
  a?: string[];
  aaaa?: string[];
  txt?: string[];
  /** Answer SERVFAIL for this name. */
  fail?: boolean;
}

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for Resolver.setServers. */
  address: string;
  zone: Map<string, ZoneRecords>;
  close(): Promise<void>;
}

const TYPE = { A: 1, CNAME: 5, TXT: 16, AAAA: 28 } as const;

function encodeName(name: string): Buffer {
  const parts = name.replace(/\.$/, '').split('.').filter((label) => label !== '');
  return Buffer.concat([...parts.map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'ascii')])), Buffer.from([0])]);
}

function readQuestion(message: Buffer): { name: string; type: number; end: number } {
  let offset = 12;
  const labels: string[] = [];
  while (offset < message.length) {
    const length = message[offset] as number;
    offset += 1;
    if (length === 0) break;
    labels.push(message.toString('ascii', offset, offset + length));
    offset += length;
  }
  return { name: labels.join('.').toLowerCase(), type: message.readUInt16BE(offset), end: offset + 4 };
}

function record(name: string, type: number, data: Buffer): Buffer {
  const header = Buffer.alloc(10);
  header.writeUInt16BE(type, 0);
  header.writeUInt16BE(1, 2);
  header.writeUInt32BE(60, 4);
  header.writeUInt16BE(data.length, 8);
  return Buffer.concat([encodeName(name), header, data]);
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::');
  const headParts = head === '' ? [] : head.split(':');
  const tailParts = tail === '' ? [] : tail.split(':');
  const parts = address.includes('::') ? [...headParts, ...Array(8 - headParts.length - tailParts.length).fill('0'), ...tailParts] : headParts;
  const bytes = Buffer.alloc(16);
  parts.forEach((part, index) => bytes.writeUInt16BE(parseInt(part, 16), index * 2));
  return bytes;
}

function answersFor(zone: Map<string, ZoneRecords>, name: string, type: number, depth = 0): Buffer[] | undefined {
  const records = zone.get(name);
  if (records === undefined || depth > 8) return undefined;
  if (records.cname !== undefined) {
    const alias = record(name, TYPE.CNAME, encodeName(records.cname));
    if (type === TYPE.CNAME) return [alias];
    return [alias, ...(answersFor(zone, records.cname.toLowerCase(), type, depth + 1) ?? [])];
  }
  if (type === TYPE.A) return (records.a ?? []).filter((ip) => isIP(ip) === 4).map((ip) => record(name, TYPE.A, Buffer.from(ip.split('.').map(Number))));
  if (type === TYPE.AAAA) return (records.aaaa ?? []).map((ip) => record(name, TYPE.AAAA, ipv6Bytes(ip)));
  if (type === TYPE.TXT) {
    return (records.txt ?? []).map((text) => {
      const bytes = Buffer.from(text, 'utf8');
      return record(name, TYPE.TXT, Buffer.concat([Buffer.from([bytes.length]), bytes]));
    });
  }
  return [];
}

export async function startTestDnsServer(): Promise<TestDnsServer> {
  const zone = new Map<string, ZoneRecords>();
  const socket = createSocket('udp4');
  socket.on('message', (message: Buffer, remote: RemoteInfo) => {
    if (message.length < 12) return;
    const question = readQuestion(message);
    const failing = zone.get(question.name)?.fail === true;
    const answers = failing ? [] : answersFor(zone, question.name, question.type);
    const rcode = failing ? 2 : answers === undefined ? 3 : 0;
    const header = Buffer.alloc(12);
    header.writeUInt16BE(message.readUInt16BE(0), 0);
    header.writeUInt16BE(0x8400 | 0x0100 | 0x0080 | rcode, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers?.length ?? 0, 6);
    socket.send(Buffer.concat([header, message.subarray(12, question.end), ...(answers ?? [])]), remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    zone,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
