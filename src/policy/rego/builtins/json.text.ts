import { BuiltinError } from '../rego.builtins.ts';
import { compareStrings, RegoObject, regoNumber, RegoSet, compareValues, type RegoValue } from '../rego.value.ts';
import { numberText } from './term.text.ts';

/**
 * JSON text to and from Rego values. Parsing keeps integers beyond 2^53 exact (bigint); serialising follows Go's
 * encoding/json as OPA uses it: object keys sorted, sets as sorted arrays, `<`, `>`, `&` escaped as \u003c etc.
 */
export class JsonSyntaxError extends Error {}

const MAX_DEPTH = 1000;

class JsonParser {
  private position = 0;

  private readonly text: string;
  constructor(text: string) {
    this.text = text;
  }

  parseDocument(): RegoValue {
    this.skipSpace();
    const value = this.value(0);
    this.skipSpace();
    if (this.position < this.text.length) throw this.unexpected('after top-level value');
    return value;
  }

  private unexpected(context: string): JsonSyntaxError {
    if (this.position >= this.text.length) return new JsonSyntaxError('unexpected end of JSON input');
    const char = String.fromCodePoint(this.text.codePointAt(this.position) as number);
    return new JsonSyntaxError(`invalid character ${quoteChar(char)} ${context}`);
  }

  private skipSpace(): void {
    while (this.position < this.text.length) {
      const char = this.text[this.position];
      if (char !== ' ' && char !== '\t' && char !== '\n' && char !== '\r') break;
      this.position++;
    }
  }

  private value(depth: number): RegoValue {
    if (depth > MAX_DEPTH) throw new JsonSyntaxError('exceeded max depth');
    const char = this.text[this.position];
    switch (char) {
      case '{':
        return this.object(depth);
      case '[':
        return this.array(depth);
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) return this.number();
        throw this.unexpected('looking for beginning of value');
    }
  }

  private literal(word: string, value: RegoValue): RegoValue {
    if (!this.text.startsWith(word, this.position)) {
      let i = 0;
      while (this.text[this.position + i] === word[i]) i++;
      this.position += i;
      throw this.unexpected(`in literal ${word} (expecting ${quoteChar(word[i] as string)})`);
    }
    this.position += word.length;
    return value;
  }

  private number(): RegoValue {
    const match = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(this.text.slice(this.position));
    if (!match) {
      this.position++;
      throw this.unexpected('in numeric literal');
    }
    this.position += match[0].length;
    return parseNumberText(match[0]);
  }

  private string(): string {
    this.position++;
    let out = '';
    for (;;) {
      const char = this.text[this.position];
      if (char === undefined) throw new JsonSyntaxError('unexpected end of JSON input');
      if (char === '"') {
        this.position++;
        return out;
      }
      if (char === '\\') {
        const escape = this.text[this.position + 1];
        this.position += 2;
        switch (escape) {
          case '"':
          case '\\':
          case '/':
            out += escape;
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'n':
            out += '\n';
            break;
          case 'r':
            out += '\r';
            break;
          case 't':
            out += '\t';
            break;
          case 'u': {
            const hex = this.text.slice(this.position, this.position + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntaxError('invalid character in \\u hexadecimal character escape');
            out += String.fromCharCode(parseInt(hex, 16));
            this.position += 4;
            break;
          }
          default:
            this.position--;
            throw this.unexpected('in string escape code');
        }
        continue;
      }
      if (char < ' ') throw this.unexpected('in string literal');
      out += char;
      this.position++;
    }
  }

  private array(depth: number): RegoValue[] {
    this.position++;
    const values: RegoValue[] = [];
    this.skipSpace();
    if (this.text[this.position] === ']') {
      this.position++;
      return values;
    }
    for (;;) {
      this.skipSpace();
      values.push(this.value(depth + 1));
      this.skipSpace();
      const char = this.text[this.position];
      if (char === ']') {
        this.position++;
        return values;
      }
      if (char !== ',') throw this.unexpected('after array element');
      this.position++;
    }
  }

  private object(depth: number): RegoObject {
    this.position++;
    const object = new RegoObject();
    this.skipSpace();
    if (this.text[this.position] === '}') {
      this.position++;
      return object;
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.position] !== '"') throw this.unexpected('looking for beginning of object key string');
      const key = this.string();
      this.skipSpace();
      if (this.text[this.position] !== ':') throw this.unexpected('after object key');
      this.position++;
      this.skipSpace();
      object.set(key, this.value(depth + 1));
      this.skipSpace();
      const char = this.text[this.position];
      if (char === '}') {
        this.position++;
        return object;
      }
      if (char !== ',') throw this.unexpected('after object key:value pair');
      this.position++;
    }
  }
}

function quoteChar(char: string): string {
  return char === "'" ? `'\\''` : `'${char}'`;
}

/** Largest power of ten an exponent-form integer literal may carry (1e4096 has 4097 digits). */
const MAX_EXPONENT = 4096;

/**
 * A JSON number literal as a Rego number: integers exact at any size, everything else a float64. An integral
 * literal in exponent form (1e30) stays exact, as OPA's json.Number does; a float literal beyond float64's range is
 * rejected rather than becoming Infinity.
 */
export function parseNumberText(text: string): number | bigint {
  if (/^-?[0-9]+$/.test(text)) return regoNumber(BigInt(text));
  const float = Number(text);
  if (Number.isSafeInteger(float) || (Number.isFinite(float) && !Number.isInteger(float))) return regoNumber(float);
  const exponentMatch = /^(-?)([0-9]+)(?:\.([0-9]+))?[eE]([+-]?[0-9]+)$/.exec(text);
  if (exponentMatch) {
    const [, sign, whole, fraction = '', exponent] = exponentMatch as unknown as [string, string, string, string | undefined, string];
    const digits = fraction.replace(/0+$/, '');
    const shift = Number(exponent) - digits.length;
    if (shift >= 0 && shift <= MAX_EXPONENT) return regoNumber(BigInt(`${sign}${whole}${digits}`) * 10n ** BigInt(shift));
  }
  if (!Number.isFinite(float)) throw new JsonSyntaxError(`number ${text} is out of range`);
  return regoNumber(float);
}

export function parseJson(text: string): RegoValue {
  return new JsonParser(text).parseDocument();
}

function escapeJsonString(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    switch (char) {
      case '"':
        out += '\\"';
        break;
      case '\\':
        out += '\\\\';
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      case '<':
      case '>':
      case '&':
      case '\u2028':
      case '\u2029':
        out += `\\u${code.toString(16).padStart(4, '0')}`;
        break;
      default:
        if (code < 0x20) out += `\\u${code.toString(16).padStart(4, '0')}`;
        else if (code >= 0xd800 && code <= 0xdfff) out += '\ufffd';
        else out += char;
    }
  }
  return `${out}"`;
}

/** Object keys as JSON keys: strings as they are, other values as their JSON text. */
function keyText(key: RegoValue): string {
  return typeof key === 'string' ? key : serializeJson(key, undefined);
}

interface Indentation {
  prefix: string;
  indent: string;
}

/** Go's json.Marshal, or json.MarshalIndent when `indentation` is given (OPA also prefixes the first line). */
export function serializeJson(value: RegoValue, indentation: Indentation | undefined): string {
  const body = serialize(value, indentation, 0);
  return indentation ? indentation.prefix + body : body;
}

function serialize(value: RegoValue, indentation: Indentation | undefined, level: number): string {
  if (level > MAX_DEPTH) throw new BuiltinError('eval_builtin_error', 'json: value nested too deeply');
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
    case 'bigint':
      return numberText(value);
    case 'string':
      return escapeJsonString(value);
    default:
      break;
  }
  let items: string[];
  let open: string;
  let close: string;
  if (Array.isArray(value) || value instanceof RegoSet) {
    const members = Array.isArray(value) ? value : [...value.values()].sort(compareValues);
    items = members.map((member) => serialize(member, indentation, level + 1));
    open = '[';
    close = ']';
  } else {
    const entries = [...value.entries()].map(([key, member]) => [keyText(key), member] as const);
    entries.sort(([a], [b]) => compareStrings(a, b));
    const separator = indentation ? ': ' : ':';
    items = entries.map(([key, member]) => `${escapeJsonString(key)}${separator}${serialize(member, indentation, level + 1)}`);
    open = '{';
    close = '}';
  }
  if (items.length === 0) return open + close;
  if (!indentation) return open + items.join(',') + close;
  const newline = `\n${indentation.prefix}`;
  const inner = newline + indentation.indent.repeat(level + 1);
  return `${open}${inner}${items.join(`,${inner}`)}${newline}${indentation.indent.repeat(level)}${close}`;
}
