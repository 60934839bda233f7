/**
 * Bytes and text the way Go handles them: base64 with Go's exact `illegal base64 data at input byte N` errors, and
 * byte strings decoded to text the way Go ranges over a string (each invalid UTF-8 byte becomes one U+FFFD), so
 * rune counts agree with OPA's.
 */
export class Base64Error extends Error {}

const STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function decodeMap(alphabet: string): Int16Array {
  const map = new Int16Array(256).fill(-1);
  for (let i = 0; i < alphabet.length; i++) map[alphabet.charCodeAt(i)] = i;
  return map;
}

const STANDARD_MAP = decodeMap(STANDARD);
const URL_SAFE_MAP = decodeMap(URL_SAFE);

function corrupt(offset: number): Base64Error {
  return new Base64Error(`illegal base64 data at input byte ${offset}`);
}

/** A port of Go's base64 Encoding.DecodeString (padded when `padded`), including its error offsets. */
export function decodeBase64(text: string, urlSafe: boolean, padded: boolean): Uint8Array {
  const map = urlSafe ? URL_SAFE_MAP : STANDARD_MAP;
  const src = Buffer.from(text, 'utf8');
  const out: number[] = [];
  let si = 0;
  for (;;) {
    const quantum = [0, 0, 0, 0];
    let length = 4;
    let trailing: Base64Error | undefined;
    let finished = false;
    for (let j = 0; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return Uint8Array.from(out);
        if (j === 1 || padded) throw corrupt(si - j);
        length = j;
        finished = true;
        break;
      }
      const byte = src[si] as number;
      si++;
      const value = map[byte] as number;
      if (value >= 0) {
        quantum[j] = value;
        continue;
      }
      if (byte === 0x0a || byte === 0x0d) {
        j--;
        continue;
      }
      if (!padded || byte !== 0x3d) throw corrupt(si - 1);
      if (j === 0 || j === 1) throw corrupt(si - 1);
      if (j === 2) {
        while (si < src.length && (src[si] === 0x0a || src[si] === 0x0d)) si++;
        if (si === src.length) throw corrupt(src.length);
        if (src[si] !== 0x3d) throw corrupt(si - 1);
        si++;
      }
      while (si < src.length && (src[si] === 0x0a || src[si] === 0x0d)) si++;
      if (si < src.length) trailing = corrupt(si);
      length = j;
      finished = true;
      break;
    }
    const value = ((quantum[0] as number) << 18) | ((quantum[1] as number) << 12) | ((quantum[2] as number) << 6) | (quantum[3] as number);
    const bytes = [(value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff];
    out.push(...bytes.slice(0, length - 1));
    if (trailing) throw trailing;
    if (finished) return Uint8Array.from(out);
  }
}

export function encodeBase64(bytes: Uint8Array, urlSafe: boolean, padded: boolean): string {
  let encoded = Buffer.from(bytes).toString('base64');
  if (urlSafe) encoded = encoded.replaceAll('+', '-').replaceAll('/', '_');
  return padded ? encoded : encoded.replace(/=+$/, '');
}

/** OPA's base64url.decode: pads unpadded input (RFC 7515 appendix C) before a strict URL-safe decode. */
export function decodeBase64Url(text: string): Uint8Array {
  let padded = text;
  if (!text.endsWith('=')) {
    switch (text.length % 4) {
      case 2:
        padded += '==';
        break;
      case 3:
        padded += '=';
        break;
      case 1:
        throw new Base64Error(`illegal base64url string: ${text}`);
      default:
        break;
    }
  }
  return decodeBase64(padded, true, true);
}

export function utf8Bytes(text: string): Uint8Array {
  return Buffer.from(text, 'utf8');
}

/** Bytes as Go text: valid UTF-8 sequences decode, each byte of an invalid one becomes U+FFFD. */
export function bytesToText(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const first = bytes[i] as number;
    if (first < 0x80) {
      out += String.fromCharCode(first);
      i++;
      continue;
    }
    let need = 0;
    let code = 0;
    let min = 0;
    if (first >= 0xc2 && first <= 0xdf) {
      need = 1;
      code = first & 0x1f;
      min = 0x80;
    } else if (first >= 0xe0 && first <= 0xef) {
      need = 2;
      code = first & 0x0f;
      min = 0x800;
    } else if (first >= 0xf0 && first <= 0xf4) {
      need = 3;
      code = first & 0x07;
      min = 0x10000;
    }
    let valid = need > 0;
    for (let k = 1; valid && k <= need; k++) {
      const next = bytes[i + k];
      if (next === undefined || (next & 0xc0) !== 0x80) valid = false;
      else code = (code << 6) | (next & 0x3f);
    }
    if (valid && (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))) valid = false;
    if (!valid) {
      out += '\ufffd';
      i++;
      continue;
    }
    out += String.fromCodePoint(code);
    i += need + 1;
  }
  return out;
}
