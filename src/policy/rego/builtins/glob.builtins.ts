import { RE2JS } from 're2js';
import { builtinFailure, defineBuiltins, operandTypeError, type BuiltinDefinition } from '../rego.builtins.ts';
import { RegoSet, typeName, type RegoValue } from '../rego.value.ts';
import { operand, stringOperand } from './operands.ts';

/**
 * glob.match with the semantics of github.com/gobwas/glob, which OPA uses: `*` is any run of non-delimiter
 * characters, `**` any run at all, `?` one non-delimiter character, `[abc]`/`[!a-c]` one character of (not of) a
 * class, `{a,b}` alternatives, `\` escapes. The glob is translated to an anchored RE2 pattern (linear-time).
 */
const GLOB_SPECIALS = new Set(['*', '?', '\\', '[', ']', '{', '}']);

function quoteRegex(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/g, (char) => `\\${char}`);
}

function classEscape(char: string): string {
  return /[\\\]^-]/.test(char) ? `\\${char}` : char;
}

class GlobTranslator {
  private position = 0;
  private readonly chars: string[];

  private readonly pattern: string;
  private readonly singleChar: string;
  private readonly anyRun: string;
  constructor(
    pattern: string,
    singleChar: string,
    anyRun: string,
  ) {
    this.pattern = pattern;
    this.singleChar = singleChar;
    this.anyRun = anyRun;
    this.chars = Array.from(pattern);
  }

  translate(): string {
    const body = this.sequence(false);
    if (this.position < this.chars.length) throw this.error('unexpected end of alternatives');
    return `^(?s:${body})$`;
  }

  private error(message: string): Error {
    return builtinFailure('glob.match', `${message} in ${JSON.stringify(this.pattern)}`);
  }

  /** A run of glob items; inside `{...}` it stops at `,` and `}`. */
  private sequence(inAlternatives: boolean): string {
    let out = '';
    while (this.position < this.chars.length) {
      const char = this.chars[this.position] as string;
      if (inAlternatives && (char === ',' || char === '}')) break;
      this.position++;
      switch (char) {
        case '*':
          if (this.chars[this.position] === '*') {
            while (this.chars[this.position] === '*') this.position++;
            out += '.*';
          } else {
            out += this.anyRun;
          }
          break;
        case '?':
          out += this.singleChar;
          break;
        case '[':
          out += this.charClass();
          break;
        case '{':
          out += this.alternatives();
          break;
        case '\\': {
          const escaped = this.chars[this.position];
          if (escaped === undefined) throw this.error('unexpected end of input after escape');
          this.position++;
          out += quoteRegex(escaped);
          break;
        }
        default:
          out += quoteRegex(char);
      }
    }
    return out;
  }

  private charClass(): string {
    let negated = false;
    if (this.chars[this.position] === '!') {
      negated = true;
      this.position++;
    }
    let body = '';
    while (this.position < this.chars.length && this.chars[this.position] !== ']') {
      const low = this.chars[this.position] as string;
      if (this.chars[this.position + 1] === '-' && this.position + 2 < this.chars.length && this.chars[this.position + 2] !== ']') {
        const high = this.chars[this.position + 2] as string;
        if (high < low) throw this.error('invalid character range');
        body += `${classEscape(low)}-${classEscape(high)}`;
        this.position += 3;
      } else {
        body += classEscape(low);
        this.position++;
      }
    }
    if (this.position >= this.chars.length) throw this.error('unexpected end of character class');
    this.position++;
    if (body === '') throw this.error('empty character class');
    return `[${negated ? '^' : ''}${body}]`;
  }

  private alternatives(): string {
    const options: string[] = [];
    for (;;) {
      options.push(this.sequence(true));
      const char = this.chars[this.position];
      if (char === undefined) throw this.error('unexpected end of alternatives');
      this.position++;
      if (char === '}') break;
    }
    return `(?:${options.join('|')})`;
  }
}

const compiled = new Map<string, RE2JS>();
const MAX_CACHED_GLOBS = 1000;

function globMatcher(pattern: string, delimiters: string[]): RE2JS {
  const key = `${delimiters.join('\u0000')}\u0001${pattern}`;
  const cached = compiled.get(key);
  if (cached) return cached;
  const excluded = delimiters.flatMap((delimiter) => Array.from(delimiter)).map(classEscape).join('');
  const single = excluded === '' ? '.' : `[^${excluded}]`;
  const regex = new GlobTranslator(pattern, single, `${single}*`).translate();
  const matcher = RE2JS.compile(regex);
  if (compiled.size >= MAX_CACHED_GLOBS) compiled.clear();
  compiled.set(key, matcher);
  return matcher;
}

function delimitersOperand(operands: RegoValue[]): string[] {
  const value = operand(operands, 1);
  // null: no delimiters at all; an empty array: OPA's default, ".".
  if (value === null) return [];
  const members = Array.isArray(value) ? value : value instanceof RegoSet ? [...value.values()] : undefined;
  if (members === undefined) throw operandTypeError('glob.match', 2, 'array', typeName(value));
  if (members.length === 0) return ['.'];
  return members.map((member) => {
    if (typeof member !== 'string') throw operandTypeError('glob.match', 2, 'array of strings', `array containing ${typeName(member)}`);
    return member;
  });
}

export const GLOB_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  {
    name: 'glob.match',
    arity: 3,
    implementation: (operands) => {
      const pattern = stringOperand('glob.match', operands, 1);
      const delimiters = delimitersOperand(operands);
      const text = stringOperand('glob.match', operands, 3);
      return globMatcher(pattern, delimiters).testExact(text);
    },
  },
  {
    name: 'glob.quote_meta',
    arity: 1,
    implementation: (operands) =>
      Array.from(stringOperand('glob.quote_meta', operands, 1))
        .map((char) => (GLOB_SPECIALS.has(char) ? `\\${char}` : char))
        .join(''),
  },
]);
