import { BuiltinError, builtinFailure, defineBuiltins, operandTypeError, type BuiltinDefinition } from '../rego.builtins.ts';
import { compareStrings, RegoObject, RegoSet, typeName, type RegoValue } from '../rego.value.ts';
import { Base64Error, bytesToText, decodeBase64, decodeBase64Url, encodeBase64, utf8Bytes } from './binary.text.ts';
import { JsonSyntaxError, parseJson, serializeJson } from './json.text.ts';
import { objectOperand, operand, sortedMembers, stringOperand } from './operands.ts';
import { termText } from './term.text.ts';

/** Encodings: base64, base64url, hex, urlquery and JSON, with Go's (OPA's) exact behaviour and error texts. */
function base64Decoder(name: string, decode: (text: string) => Uint8Array): BuiltinDefinition {
  return {
    name,
    arity: 1,
    implementation: (operands) => {
      const text = stringOperand(name, operands, 1);
      try {
        return bytesToText(decode(text));
      } catch (error) {
        if (error instanceof Base64Error) throw builtinFailure(name, error.message);
        throw error;
      }
    },
  };
}

function base64Encoder(name: string, urlSafe: boolean, padded: boolean): BuiltinDefinition {
  return { name, arity: 1, implementation: (operands) => encodeBase64(utf8Bytes(stringOperand(name, operands, 1)), urlSafe, padded) };
}

function hexDecode(operands: RegoValue[]): RegoValue {
  const text = stringOperand('hex.decode', operands, 1);
  const chars = Array.from(text);
  for (const char of chars) {
    if (!/^[0-9a-fA-F]$/.test(char)) {
      const code = (char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
      throw builtinFailure('hex.decode', `encoding/hex: invalid byte: U+${code} '${char}'`);
    }
  }
  if (text.length % 2 !== 0) throw builtinFailure('hex.decode', 'encoding/hex: odd length hex string');
  return bytesToText(Buffer.from(text, 'hex'));
}

/** Go's url.QueryEscape. */
function queryEscape(text: string): string {
  let out = '';
  for (const byte of utf8Bytes(text)) {
    const char = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(char)) out += char;
    else if (char === ' ') out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

class UrlEscapeError extends Error {}

/** Go's url.QueryUnescape. */
function queryUnescape(text: string): string {
  const bytes: number[] = [];
  const source = utf8Bytes(text);
  for (let i = 0; i < source.length; i++) {
    const byte = source[i] as number;
    if (byte === 0x25) {
      const hex = Buffer.from(source.subarray(i + 1, i + 3)).toString('latin1');
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) {
        const bad = Buffer.from(source.subarray(i, i + 3)).toString('utf8');
        throw new UrlEscapeError(`invalid URL escape ${JSON.stringify(bad)}`);
      }
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (byte === 0x2b) {
      bytes.push(0x20);
    } else {
      bytes.push(byte);
    }
  }
  return bytesToText(Uint8Array.from(bytes));
}

function urlqueryDecode(operands: RegoValue[]): RegoValue {
  const text = stringOperand('urlquery.decode', operands, 1);
  try {
    return queryUnescape(text);
  } catch (error) {
    if (error instanceof UrlEscapeError) throw builtinFailure('urlquery.decode', error.message);
    throw error;
  }
}

function urlqueryDecodeObject(operands: RegoValue[]): RegoValue {
  const text = stringOperand('urlquery.decode_object', operands, 1);
  const values = new Map<string, string[]>();
  for (const part of text.split('&')) {
    if (part === '') continue;
    if (part.includes(';')) throw builtinFailure('urlquery.decode_object', 'invalid semicolon separator in query');
    const equals = part.indexOf('=');
    const rawKey = equals === -1 ? part : part.slice(0, equals);
    const rawValue = equals === -1 ? '' : part.slice(equals + 1);
    let key: string;
    let value: string;
    try {
      key = queryUnescape(rawKey);
      value = queryUnescape(rawValue);
    } catch (error) {
      if (error instanceof UrlEscapeError) throw builtinFailure('urlquery.decode_object', error.message);
      throw error;
    }
    const list = values.get(key) ?? [];
    list.push(value);
    values.set(key, list);
  }
  return RegoObject.fromEntries([...values.entries()].map(([key, list]) => [key, list]));
}

function urlqueryEncodeObject(operands: RegoValue[]): RegoValue {
  const name = 'urlquery.encode_object';
  const object = objectOperand(name, operands, 1);
  const entries = [...object.entries()].map(([key, value]) => {
    if (typeof key !== 'string') throw operandTypeError(name, 1, 'object with string keys', `key of type ${typeName(key)}`);
    let list: RegoValue[];
    if (typeof value === 'string') list = [value];
    else if (Array.isArray(value)) list = value;
    else if (value instanceof RegoSet) list = sortedMembers(value);
    else throw operandTypeError(name, 1, 'object with string, array or set values', `value of type ${typeName(value)}`);
    for (const member of list) {
      if (typeof member !== 'string') throw operandTypeError(name, 1, 'object with string values', `value containing ${typeName(member)}`);
    }
    return [key, list as string[]] as const;
  });
  entries.sort(([a], [b]) => compareStrings(a, b));
  return entries.flatMap(([key, list]) => list.map((value) => `${queryEscape(key)}=${queryEscape(value)}`)).join('&');
}

function jsonUnmarshal(operands: RegoValue[]): RegoValue {
  const text = stringOperand('json.unmarshal', operands, 1);
  try {
    return parseJson(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw builtinFailure('json.unmarshal', error.message);
    throw error;
  }
}

function marshalWithOptions(operands: RegoValue[]): RegoValue {
  const name = 'json.marshal_with_options';
  const value = operand(operands, 0);
  const options = objectOperand(name, operands, 2);
  let pretty: boolean | undefined;
  let prefix: string | undefined;
  let indent: string | undefined;
  for (const [key, option] of options.entries()) {
    switch (key) {
      case 'pretty':
        if (typeof option !== 'boolean') throw operandTypeError(name, 2, 'boolean for key "pretty"', typeName(option));
        pretty = option;
        break;
      case 'prefix':
        if (typeof option !== 'string') throw operandTypeError(name, 2, 'string for key "prefix"', typeName(option));
        prefix = option;
        break;
      case 'indent':
        if (typeof option !== 'string') throw operandTypeError(name, 2, 'string for key "indent"', typeName(option));
        indent = option;
        break;
      default:
        throw new BuiltinError('eval_type_error', `${name}: operand 2 object contained unknown key ${termText(key)}`);
    }
  }
  // Pretty output when asked for, or when an indent or prefix is given and pretty was not turned off.
  const wantPretty = pretty ?? (prefix !== undefined || indent !== undefined);
  if (!wantPretty) return serializeJson(value, undefined);
  return serializeJson(value, { prefix: prefix ?? '', indent: indent ?? '\t' });
}

export const ENCODING_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  base64Encoder('base64.encode', false, true),
  base64Decoder('base64.decode', (text) => decodeBase64(text, false, true)),
  {
    name: 'base64.is_valid',
    arity: 1,
    implementation: (operands) => {
      const text = stringOperand('base64.is_valid', operands, 1);
      try {
        decodeBase64(text, false, true);
        return true;
      } catch {
        return false;
      }
    },
  },
  base64Encoder('base64url.encode', true, true),
  base64Encoder('base64url.encode_no_pad', true, false),
  base64Decoder('base64url.decode', decodeBase64Url),
  {
    name: 'hex.encode',
    arity: 1,
    implementation: (operands) => Buffer.from(utf8Bytes(stringOperand('hex.encode', operands, 1))).toString('hex'),
  },
  { name: 'hex.decode', arity: 1, implementation: hexDecode },
  { name: 'urlquery.encode', arity: 1, implementation: (operands) => queryEscape(stringOperand('urlquery.encode', operands, 1)) },
  { name: 'urlquery.decode', arity: 1, implementation: urlqueryDecode },
  { name: 'urlquery.encode_object', arity: 1, implementation: urlqueryEncodeObject },
  { name: 'urlquery.decode_object', arity: 1, implementation: urlqueryDecodeObject },
  { name: 'json.marshal', arity: 1, implementation: (operands) => serializeJson(operand(operands, 0), undefined) },
  { name: 'json.marshal_with_options', arity: 2, implementation: marshalWithOptions },
  { name: 'json.unmarshal', arity: 1, implementation: jsonUnmarshal },
  {
    name: 'json.is_valid',
    arity: 1,
    implementation: (operands) => {
      const text = operand(operands, 0);
      if (typeof text !== 'string') return false;
      try {
        parseJson(text);
        return true;
      } catch (error) {
        if (error instanceof JsonSyntaxError) return false;
        throw error;
      }
    },
  },
]);
