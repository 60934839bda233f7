import { BuiltinError, builtinFailure, defineBuiltins, operandTypeError, type BuiltinDefinition } from '../rego.builtins.ts';
import { RegoObject, RegoSet, typeName, type RegoValue } from '../rego.value.ts';
import { goIntArgument, goSprintf, type GoArgument } from './go.format.ts';
import {
  arrayOperand,
  collectionOperand,
  elementError,
  numberOperand,
  operand,
  smallIntegerOperand,
  stringOperand,
} from './operands.ts';
import { termText } from './term.text.ts';

/**
 * String builtins with Go's semantics: positions and lengths count Unicode code points (Go runes), not UTF-16
 * units.
 */
function runes(text: string): string[] {
  return Array.from(text);
}

/** Go's strings.Split: an empty separator splits into runes; an empty string with a separator gives [""]. */
function goSplit(text: string, separator: string): string[] {
  if (separator === '') return runes(text);
  return text.split(separator);
}

const GO_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;

function trimRunes(text: string, cut: (char: string) => boolean, left: boolean, right: boolean): string {
  const chars = runes(text);
  let start = 0;
  let end = chars.length;
  if (left) while (start < end && cut(chars[start] as string)) start++;
  if (right) while (end > start && cut(chars[end - 1] as string)) end--;
  return chars.slice(start, end).join('');
}

function cutsetTrim(name: string, left: boolean, right: boolean): BuiltinDefinition {
  return {
    name,
    arity: 2,
    implementation: (operands) => {
      const text = stringOperand(name, operands, 1);
      const cutset = new Set(runes(stringOperand(name, operands, 2)));
      return trimRunes(text, (char) => cutset.has(char), left, right);
    },
  };
}

/**
 * Go's strings.ToLower/ToUpper map each rune on its own (Unicode simple case mapping). JavaScript's full mapping can
 * turn one character into several ("ß" → "SS") or depend on context (final sigma), so non-ASCII text is mapped
 * rune by rune, keeping a rune whose full mapping is not a single rune (U+0130 lower-cases to "i" in Go).
 */
function goCaseMap(text: string, upper: boolean): string {
  if (!/[\u0080-\uffff]/.test(text)) return upper ? text.toUpperCase() : text.toLowerCase();
  let out = '';
  for (const char of text) {
    if (!upper && char === '\u0130') {
      out += 'i';
      continue;
    }
    const mapped = upper ? char.toUpperCase() : char.toLowerCase();
    out += [...mapped].length === 1 ? mapped : char;
  }
  return out;
}

function stringsOf(name: string, operands: RegoValue[], position: number): string[] {
  const value = operand(operands, position - 1);
  if (typeof value === 'string') return [value];
  const members = collectionOperand(name, operands, position, ['string', 'set', 'array']);
  for (const member of members) if (typeof member !== 'string') throw elementError(name, position, value, member, 'string');
  return members as string[];
}

function anyMatch(name: string, test: (text: string, affix: string) => boolean): BuiltinDefinition {
  return {
    name,
    arity: 2,
    implementation: (operands) => {
      const texts = stringsOf(name, operands, 1);
      const affixes = stringsOf(name, operands, 2);
      return texts.some((text) => affixes.some((affix) => test(text, affix)));
    },
  };
}

function stringPredicate(name: string, test: (text: string, other: string) => boolean): BuiltinDefinition {
  return { name, arity: 2, implementation: (operands) => test(stringOperand(name, operands, 1), stringOperand(name, operands, 2)) };
}

function concat(operands: RegoValue[]): RegoValue {
  const delimiter = stringOperand('concat', operands, 1);
  const members = collectionOperand('concat', operands, 2);
  for (const member of members) if (typeof member !== 'string') throw elementError('concat', 2, operand(operands, 1), member, 'string');
  return members.join(delimiter);
}

function runeIndexOf(haystack: string[], needle: string[], from: number): number {
  outer: for (let i = from; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function indexOf(operands: RegoValue[]): RegoValue {
  const base = runes(stringOperand('indexof', operands, 1));
  const search = runes(stringOperand('indexof', operands, 2));
  if (search.length === 0) throw builtinFailure('indexof', 'empty search character');
  return runeIndexOf(base, search, 0);
}

function indexOfN(operands: RegoValue[]): RegoValue {
  const base = runes(stringOperand('indexof_n', operands, 1));
  const search = runes(stringOperand('indexof_n', operands, 2));
  if (search.length === 0) throw builtinFailure('indexof_n', 'empty search character');
  const positions: RegoValue[] = [];
  for (let at = runeIndexOf(base, search, 0); at !== -1; at = runeIndexOf(base, search, at + 1)) positions.push(at);
  return positions;
}

function substring(operands: RegoValue[]): RegoValue {
  const chars = runes(stringOperand('substring', operands, 1));
  const start = smallIntegerOperand('substring', operands, 2);
  const length = smallIntegerOperand('substring', operands, 3);
  if (start < 0) throw builtinFailure('substring', 'negative offset');
  if (start >= chars.length) return '';
  const end = length < 0 ? chars.length : Math.min(chars.length, start + length);
  return chars.slice(start, end).join('');
}

function goReplaceAll(text: string, old: string, replacement: string): string {
  if (old === '') {
    const chars = runes(text);
    return replacement + chars.map((char) => char + replacement).join('');
  }
  return text.split(old).join(replacement);
}

/** strings.replace_n: Go's strings.NewReplacer over the pattern keys in sorted order (earlier keys win a tie). */
function replaceN(operands: RegoValue[]): RegoValue {
  const patterns = operand(operands, 0);
  if (!(patterns instanceof RegoObject)) throw operandTypeError('strings.replace_n', 1, 'object', typeName(patterns));
  const pairs: [string, string][] = [];
  for (const [key, value] of patterns.entries()) {
    if (typeof key !== 'string') throw new BuiltinError('eval_type_error', 'strings.replace_n: operand 1 non-string key found in pattern object');
    if (typeof value !== 'string') throw new BuiltinError('eval_type_error', 'strings.replace_n: operand 1 non-string value found in pattern object');
    pairs.push([key, value]);
  }
  const text = stringOperand('strings.replace_n', operands, 2);
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // Go's genericReplacer: at each position the first matching key wins; after an empty-key match the same position
  // is tried again without the empty key.
  let out = '';
  let last = 0;
  let i = 0;
  let previousEmpty = false;
  while (i <= text.length) {
    const match = pairs.find(([key]) => !(previousEmpty && key === '') && text.startsWith(key, i));
    previousEmpty = match !== undefined && match[0] === '';
    if (match) {
      out += text.slice(last, i) + match[1];
      i += match[0].length;
      last = i;
      continue;
    }
    if (i === text.length) break;
    i += String.fromCodePoint(text.codePointAt(i) as number).length;
  }
  return out + text.slice(last);
}

function splitN(operands: RegoValue[]): RegoValue {
  const text = stringOperand('strings.split_n', operands, 1);
  const separator = stringOperand('strings.split_n', operands, 2);
  const count = smallIntegerOperand('strings.split_n', operands, 3);
  const parts = goSplit(text, separator);
  // A positive count keeps the first parts, a negative one the last parts.
  if (count >= 0) return parts.slice(0, count);
  return parts.slice(Math.max(0, parts.length + count));
}

function formatInt(operands: RegoValue[]): RegoValue {
  const value = numberOperand('format_int', operands, 1);
  const base = numberOperand('format_int', operands, 2);
  if (base !== 2 && base !== 8 && base !== 10 && base !== 16) {
    throw new BuiltinError('eval_type_error', 'format_int: operand 2 must be one of {2, 8, 10, 16}');
  }
  const integer = typeof value === 'bigint' ? value : Number.isFinite(value) ? BigInt(Math.trunc(value)) : 0n;
  return integer.toString(base);
}

/** OPA's sprintf arguments: integers as Go ints (big.Int past int64), floats as float64, other values as text. */
function goArgument(value: RegoValue): GoArgument {
  if (typeof value === 'bigint') return goIntArgument(value);
  if (typeof value === 'number') {
    // Exact integers beyond the safe range are bigints in the value model, so a large integral JS number is the
    // result of float arithmetic and prints as a float, as in OPA.
    if (Number.isSafeInteger(value)) return goIntArgument(BigInt(value));
    return { kind: 'float', value };
  }
  if (typeof value === 'string') return { kind: 'string', value };
  return { kind: 'string', value: termText(value) };
}

function sprintf(operands: RegoValue[]): RegoValue {
  const format = stringOperand('sprintf', operands, 1);
  const args = arrayOperand('sprintf', operands, 2);
  return goSprintf(format, args.map(goArgument));
}

/** String interpolation: literal parts are strings, expression parts the set of the expression's values. */
function templateString(operands: RegoValue[]): RegoValue {
  const parts = arrayOperand('internal.template_string', operands, 1);
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    if (!(part instanceof RegoSet)) throw operandTypeError('internal.template_string', 1, 'array of strings and sets', typeName(part));
    if (part.size === 0) out += '<undefined>';
    else if (part.size > 1) throw builtinFailure('internal.template_string', 'template-strings must not produce multiple outputs');
    else {
      const [value] = part.values() as IterableIterator<RegoValue>;
      out += typeof value === 'string' ? value : termText(value as RegoValue);
    }
  }
  return out;
}

function goCount(text: string, search: string): number {
  if (search === '') return runes(text).length + 1;
  return text.split(search).length - 1;
}

export const STRING_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  { name: 'concat', arity: 2, implementation: concat },
  stringPredicate('contains', (text, search) => text.includes(search)),
  stringPredicate('startswith', (text, prefix) => text.startsWith(prefix)),
  stringPredicate('endswith', (text, suffix) => text.endsWith(suffix)),
  { name: 'format_int', arity: 2, implementation: formatInt },
  { name: 'indexof', arity: 2, implementation: indexOf },
  { name: 'indexof_n', arity: 2, implementation: indexOfN },
  { name: 'lower', arity: 1, implementation: (operands) => goCaseMap(stringOperand('lower', operands, 1), false) },
  { name: 'upper', arity: 1, implementation: (operands) => goCaseMap(stringOperand('upper', operands, 1), true) },
  {
    name: 'replace',
    arity: 3,
    implementation: (operands) =>
      goReplaceAll(stringOperand('replace', operands, 1), stringOperand('replace', operands, 2), stringOperand('replace', operands, 3)),
  },
  { name: 'strings.replace_n', arity: 2, implementation: replaceN },
  { name: 'split', arity: 2, implementation: (operands) => goSplit(stringOperand('split', operands, 1), stringOperand('split', operands, 2)) },
  { name: 'strings.split_n', arity: 3, implementation: splitN },
  { name: 'sprintf', arity: 2, implementation: sprintf },
  { name: 'substring', arity: 3, implementation: substring },
  cutsetTrim('trim', true, true),
  cutsetTrim('trim_left', true, false),
  cutsetTrim('trim_right', false, true),
  {
    name: 'trim_prefix',
    arity: 2,
    implementation: (operands) => {
      const text = stringOperand('trim_prefix', operands, 1);
      const prefix = stringOperand('trim_prefix', operands, 2);
      return text.startsWith(prefix) ? text.slice(prefix.length) : text;
    },
  },
  {
    name: 'trim_suffix',
    arity: 2,
    implementation: (operands) => {
      const text = stringOperand('trim_suffix', operands, 1);
      const suffix = stringOperand('trim_suffix', operands, 2);
      return suffix !== '' && text.endsWith(suffix) ? text.slice(0, text.length - suffix.length) : text;
    },
  },
  {
    name: 'trim_space',
    arity: 1,
    implementation: (operands) => trimRunes(stringOperand('trim_space', operands, 1), (char) => GO_SPACE.test(char), true, true),
  },
  anyMatch('strings.any_prefix_match', (text, prefix) => text.startsWith(prefix)),
  anyMatch('strings.any_suffix_match', (text, suffix) => text.endsWith(suffix)),
  { name: 'strings.reverse', arity: 1, implementation: (operands) => runes(stringOperand('strings.reverse', operands, 1)).reverse().join('') },
  {
    name: 'strings.count',
    arity: 2,
    implementation: (operands) => goCount(stringOperand('strings.count', operands, 1), stringOperand('strings.count', operands, 2)),
  },
  { name: 'internal.template_string', arity: 1, implementation: templateString },
]);

