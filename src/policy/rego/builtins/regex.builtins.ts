import { RE2JS } from 're2js';
import { builtinFailure, defineBuiltins, type BuiltinDefinition } from '../rego.builtins.ts';
import type { RegoValue } from '../rego.value.ts';
import { globsMatch } from './regex.intersection.ts';
import { operand, smallIntegerOperand, stringOperand } from './operands.ts';

/**
 * Regex builtins on RE2 (re2js): Go's regexp syntax and linear-time matching, never JavaScript's backtracking
 * RegExp. Indices from re2js are UTF-16 offsets, so slicing JS strings with them is exact.
 */
type GoRegexp = ReturnType<RE2JS['re2']>;

/** Compiled patterns shared across evaluations; bounded so hostile policies cannot grow it without limit. */
const compiled = new Map<string, GoRegexp>();
const MAX_CACHED_PATTERNS = 1000;

function regexpFor(name: string, pattern: string): GoRegexp {
  const cached = compiled.get(pattern);
  if (cached) return cached;
  let regexp: GoRegexp;
  try {
    regexp = RE2JS.compile(pattern).re2();
  } catch (error) {
    throw builtinFailure(name, error instanceof Error ? error.message : String(error));
  }
  if (compiled.size >= MAX_CACHED_PATTERNS) compiled.clear();
  compiled.set(pattern, regexp);
  return regexp;
}

/** Go's re.FindAllStringSubmatchIndex: per match, start/end pairs of the match and each group (-1 when unset). */
function submatchIndexes(regexp: GoRegexp, text: string, limit: number): number[][] {
  return (regexp.findAllSubmatchIndex(text, limit) as number[][] | null) ?? [];
}

function matchIndexes(regexp: GoRegexp, text: string, limit: number): number[][] {
  return (regexp.findAllIndex(text, limit) as number[][] | null) ?? [];
}

/** Go's Regexp.Expand: `$1`, `${1}`, `$name`, `${name}`, `$$`; an unknown group expands to nothing. */
function expandTemplate(regexp: GoRegexp, template: string, text: string, match: number[]): string {
  const names = regexp.namedGroups;
  const group = (reference: string): string => {
    let index: number | undefined;
    if (/^[0-9]+$/.test(reference)) index = Number(reference);
    else index = names[reference];
    if (index === undefined || 2 * index + 1 >= match.length) return '';
    const start = match[2 * index] as number;
    const end = match[2 * index + 1] as number;
    return start < 0 ? '' : text.slice(start, end);
  };
  let out = '';
  let i = 0;
  while (i < template.length) {
    const char = template[i] as string;
    if (char !== '$') {
      out += char;
      i++;
      continue;
    }
    if (template[i + 1] === '$') {
      out += '$';
      i += 2;
      continue;
    }
    const braced = /^\{([A-Za-z0-9_]+)\}/.exec(template.slice(i + 1));
    if (braced) {
      out += group(braced[1] as string);
      i += 1 + braced[0].length;
      continue;
    }
    const bare = /^[A-Za-z0-9_]+/.exec(template.slice(i + 1));
    if (bare) {
      out += group(bare[0]);
      i += 1 + bare[0].length;
      continue;
    }
    out += '$';
    i++;
  }
  return out;
}

function replaceAll(regexp: GoRegexp, text: string, template: string): string {
  let out = '';
  let last = 0;
  for (const match of submatchIndexes(regexp, text, -1)) {
    out += text.slice(last, match[0]) + expandTemplate(regexp, template, text, match);
    last = match[1] as number;
  }
  return out + text.slice(last);
}

/** Go's Regexp.Split(s, -1). */
function split(regexp: GoRegexp, pattern: string, text: string): string[] {
  if (pattern !== '' && text === '') return [''];
  const parts: string[] = [];
  let beginning = 0;
  let end = 0;
  for (const match of matchIndexes(regexp, text, -1)) {
    const [start, stop] = match as [number, number];
    end = start;
    // An empty match at the very start does not split (Go skips it).
    if (stop !== 0) parts.push(text.slice(beginning, end));
    beginning = stop;
  }
  if (end !== text.length) parts.push(text.slice(beginning));
  return parts;
}

/** OPA's regex.template_match: literal text between `{pattern}` parts, the whole anchored. */
function templateRegexp(template: string, open: string, close: string): string {
  let pattern = '^';
  let level = 0;
  let start = 0;
  let literalStart = 0;
  for (let i = 0; i < template.length; i++) {
    const char = template[i];
    if (char === open) {
      level++;
      if (level === 1) {
        pattern += RE2JS.quote(template.slice(literalStart, i));
        start = i + 1;
      }
    } else if (char === close) {
      level--;
      if (level === 0) {
        pattern += `(${template.slice(start, i)})`;
        literalStart = i + 1;
      } else if (level < 0) {
        throw builtinFailure('regex.template_match', `unbalanced braces in ${JSON.stringify(template)}`);
      }
    }
  }
  if (level !== 0) throw builtinFailure('regex.template_match', `unbalanced braces in ${JSON.stringify(template)}`);
  return `${pattern}${RE2JS.quote(template.slice(literalStart))}$`;
}

function delimiter(name: string, operands: RegoValue[], position: number, which: string): string {
  const value = stringOperand(name, operands, position);
  const length = [...value].length;
  if (length !== 1) throw builtinFailure(name, `${which} delimiter has to be exactly one character long but is ${length} long`);
  return value;
}

export const REGEX_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  {
    name: 'regex.match',
    arity: 2,
    implementation: (operands) => {
      const pattern = stringOperand('regex.match', operands, 1);
      const text = stringOperand('regex.match', operands, 2);
      return regexpFor('regex.match', pattern).match(text);
    },
  },
  {
    name: 'regex.is_valid',
    arity: 1,
    implementation: (operands) => {
      const pattern = operand(operands, 0);
      if (typeof pattern !== 'string') return false;
      try {
        regexpFor('regex.is_valid', pattern);
        return true;
      } catch {
        return false;
      }
    },
  },
  {
    name: 'regex.split',
    arity: 2,
    implementation: (operands) => {
      const pattern = stringOperand('regex.split', operands, 1);
      const text = stringOperand('regex.split', operands, 2);
      return split(regexpFor('regex.split', pattern), pattern, text);
    },
  },
  {
    name: 'regex.find_n',
    arity: 3,
    implementation: (operands) => {
      const pattern = stringOperand('regex.find_n', operands, 1);
      const text = stringOperand('regex.find_n', operands, 2);
      const limit = smallIntegerOperand('regex.find_n', operands, 3);
      return matchIndexes(regexpFor('regex.find_n', pattern), text, limit).map(([start, end]) => text.slice(start, end));
    },
  },
  {
    name: 'regex.find_all_string_submatch_n',
    arity: 3,
    implementation: (operands) => {
      const name = 'regex.find_all_string_submatch_n';
      const pattern = stringOperand(name, operands, 1);
      const text = stringOperand(name, operands, 2);
      const limit = smallIntegerOperand(name, operands, 3);
      return submatchIndexes(regexpFor(name, pattern), text, limit).map((match) => {
        const groups: RegoValue[] = [];
        for (let i = 0; i < match.length; i += 2) {
          const start = match[i] as number;
          groups.push(start < 0 ? '' : text.slice(start, match[i + 1]));
        }
        return groups;
      });
    },
  },
  {
    name: 'regex.replace',
    arity: 3,
    implementation: (operands) => {
      const text = stringOperand('regex.replace', operands, 1);
      const pattern = stringOperand('regex.replace', operands, 2);
      const template = stringOperand('regex.replace', operands, 3);
      return replaceAll(regexpFor('regex.replace', pattern), text, template);
    },
  },
  {
    name: 'regex.template_match',
    arity: 4,
    implementation: (operands) => {
      const name = 'regex.template_match';
      const template = stringOperand(name, operands, 1);
      const text = stringOperand(name, operands, 2);
      const open = delimiter(name, operands, 3, 'start');
      const close = delimiter(name, operands, 4, 'end');
      return regexpFor(name, templateRegexp(template, open, close)).match(text);
    },
  },
  {
    name: 'regex.globs_match',
    arity: 2,
    implementation: (operands) => globsMatch(stringOperand('regex.globs_match', operands, 1), stringOperand('regex.globs_match', operands, 2)),
  },
]);
