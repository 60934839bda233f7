import { randomUUID } from 'node:crypto';
import { defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import { RegoObject, regoNumber, type RegoValue } from '../rego.value.ts';
import { stringOperand } from './operands.ts';

/** The 100-ns intervals between 1582-10-15 (the UUID epoch) and 1970-01-01. */
const UUID_EPOCH_OFFSET = 122_192_928_000_000_000n;

/** github.com/google/uuid's Parse: canonical, {braced}, urn:uuid: and bare 32-hex forms. */
function parseUuid(text: string): Uint8Array | undefined {
  let body = text;
  if (body.length === 45 && body.toLowerCase().startsWith('urn:uuid:')) body = body.slice(9);
  else if (body.length === 38 && body.startsWith('{') && body.endsWith('}')) body = body.slice(1, -1);
  let hex: string;
  if (body.length === 36) {
    if (body[8] !== '-' || body[13] !== '-' || body[18] !== '-' || body[23] !== '-') return undefined;
    hex = body.replaceAll('-', '');
  } else if (body.length === 32) {
    hex = body;
  } else {
    return undefined;
  }
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) return undefined;
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

function variantName(byte: number): string {
  if ((byte & 0xc0) === 0x80) return 'RFC4122';
  if ((byte & 0xe0) === 0xc0) return 'Microsoft';
  if ((byte & 0xe0) === 0xe0) return 'Future';
  return 'Reserved';
}

function domainName(domain: number): string {
  return ['Person', 'Group', 'Org'][domain] ?? `Domain${domain}`;
}

function uuidParse(operands: RegoValue[]): RegoValue | undefined {
  const bytes = parseUuid(stringOperand('uuid.parse', operands, 1));
  if (!bytes) return undefined;
  const view = new DataView(bytes.buffer);
  const version = (bytes[6] as number) >> 4;
  const result = new RegoObject();
  result.set('version', version);
  result.set('variant', variantName(bytes[8] as number));
  if (version === 1 || version === 2) {
    const time = BigInt(view.getUint32(0)) | (BigInt(view.getUint16(4)) << 32n) | (BigInt(view.getUint16(6) & 0x0fff) << 48n);
    result.set('time', regoNumber((time - UUID_EPOCH_OFFSET) * 100n));
    result.set('clocksequence', view.getUint16(8) & 0x3fff);
    const node = bytes.subarray(10, 16);
    result.set('nodeid', Array.from(node, (byte) => byte.toString(16).padStart(2, '0')).join('-'));
    const first = node[0] as number;
    result.set('macvariables', `${first & 0x02 ? 'local' : 'global'}:${first & 0x01 ? 'multicast' : 'unicast'}`);
    if (version === 2) {
      result.set('domain', domainName(bytes[9] as number));
      result.set('id', view.getUint32(0));
    }
  }
  return result;
}

export const UUID_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  {
    name: 'uuid.rfc4122',
    arity: 1,
    implementation: (operands, context) => {
      // Stable within one evaluation: the same seed gives the same UUID.
      const key = `uuid.rfc4122:${stringOperand('uuid.rfc4122', operands, 1)}`;
      const cached = context.cache.get(key);
      if (cached !== undefined) return cached;
      const value = randomUUID();
      context.cache.set(key, value);
      return value;
    },
  },
  { name: 'uuid.parse', arity: 1, implementation: uuidParse },
]);
