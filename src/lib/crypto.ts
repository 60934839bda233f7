import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * A key of its own for one purpose (`label`), derived from the installation's secret key, so no two uses share a key
 * and none of them exposes the key that seals secrets at rest.
 */
export function deriveKey(secretKey: Buffer, label: string): Buffer {
  return createHmac('sha256', secretKey).update(label, 'utf8').digest();
}

/** A keyed digest: unlike a plain hash, it cannot be reversed by trying the few values a short secret can take. */
export function hmacSha256Hex(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value, 'utf8').digest('hex');
}

/** Compares two strings without leaking, through timing, where they first differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

/** Encodes bytes as base62 (big-endian), padded to `length` characters. */
export function base62Encode(bytes: Uint8Array, length: number): string {
  let n = 0n;
  for (const byte of bytes) n = (n << 8n) | BigInt(byte);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(length, '0');
}

export function randomBase62(byteCount: number, length: number): string {
  return base62Encode(randomBytes(byteCount), length);
}

const CRC32_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
})();

export function crc32(value: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(value, 'utf8')) {
    crc = (CRC32_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

export function base62Crc32(value: string): string {
  const n = crc32(value);
  const bytes = new Uint8Array([(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
  return base62Encode(bytes, 6);
}
