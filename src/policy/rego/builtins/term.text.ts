import { BuiltinError } from '../rego.builtins.ts';
import { compareValues, RegoObject, RegoSet, type RegoValue } from '../rego.value.ts';

/**
 * Texts of Rego values as OPA prints them: `termText` is a term's Rego source form (what sprintf's %v and string
 * interpolation print for non-strings), `numberText` a number's literal form.
 */
export function numberText(value: number | bigint): string {
  if (typeof value === 'bigint') return value.toString();
  if (Number.isSafeInteger(value)) return String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return BigInt(value).toString();
  return String(value);
}

/** A string quoted as Go's strconv.Quote does it (printable Unicode kept, control characters escaped). */
export function quoteString(text: string): string {
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
      case '\t':
        out += '\\t';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\u0007':
        out += '\\a';
        break;
      case '\b':
        out += '\\b';
        break;
      case '\f':
        out += '\\f';
        break;
      case '\v':
        out += '\\v';
        break;
      default:
        if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
        else if (code >= 0xd800 && code <= 0xdfff) out += '\\ufffd';
        else if ((code >= 0x80 && code < 0xa0) || code === 0xad) out += `\\u${code.toString(16).padStart(4, '0')}`;
        else out += char;
    }
  }
  return `${out}"`;
}

/** Nesting beyond this is refused rather than overflowing the stack. */
const MAX_DEPTH = 1000;

export function termText(value: RegoValue): string {
  return termTextAt(value, 0);
}

function termTextAt(value: RegoValue, depth: number): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
    case 'bigint':
      return numberText(value);
    case 'string':
      return quoteString(value);
    default:
      break;
  }
  if (depth >= MAX_DEPTH) throw new BuiltinError('eval_builtin_error', 'value nested too deeply to print');
  const inner = (member: RegoValue): string => termTextAt(member, depth + 1);
  if (Array.isArray(value)) return `[${value.map(inner).join(', ')}]`;
  if (value instanceof RegoObject) {
    const entries = [...value.entries()].sort(([a], [b]) => compareValues(a, b));
    return `{${entries.map(([key, member]) => `${inner(key)}: ${inner(member)}`).join(', ')}}`;
  }
  const members = [...(value as RegoSet).values()].sort(compareValues);
  return members.length === 0 ? 'set()' : `{${members.map(inner).join(', ')}}`;
}
