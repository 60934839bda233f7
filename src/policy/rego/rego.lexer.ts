/**
 * Rego tokenizer. Newlines are not tokens: each token records whether a line break precedes it (expression
 * separator in bodies) and whether it is glued to the previous token (`a[b]` is a ref, `a [b]` is not).
 */
export interface SourceLocation {
  file: string;
  row: number;
  col: number;
}

export type TokenKind = 'ident' | 'number' | 'string' | 'template' | 'punct' | 'eof';

/** A template string part: literal text, or the source of an embedded expression with its location. */
export type TemplatePart = { text: string } | { source: string; location: SourceLocation };

export interface Token {
  kind: TokenKind;
  /** Identifier name, punctuation text, number text, or the decoded string value. */
  text: string;
  location: SourceLocation;
  newlineBefore: boolean;
  spaceBefore: boolean;
  parts?: TemplatePart[];
  raw?: boolean;
}

export class RegoSyntaxError extends Error {
  readonly location: SourceLocation;
  readonly detail: string;
  constructor(
    location: SourceLocation,
    detail: string,
  ) {
    super(`${location.file}:${location.row}: rego_parse_error: ${detail}`);
    this.location = location;
    this.detail = detail;
    this.name = 'RegoSyntaxError';
  }
}

const PUNCTUATION = [':=', '==', '!=', '<=', '>=', '{', '}', '[', ']', '(', ')', '.', ',', ';', ':', '=', '<', '>', '+', '-', '*', '/', '%', '&', '|'];

function isIdentStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

export function tokenize(source: string, file: string, start: SourceLocation = { file, row: 1, col: 1 }): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let row = start.row;
  let col = start.col;
  let newlineBefore = false;
  let spaceBefore = false;

  const here = (): SourceLocation => ({ file, row, col });
  const advance = (count: number): void => {
    for (let n = 0; n < count; n++) {
      if (source[i] === '\n') {
        row++;
        col = 1;
      } else col++;
      i++;
    }
  };
  const fail = (detail: string, location: SourceLocation = here()): never => {
    throw new RegoSyntaxError(location, detail);
  };

  /** Reads a double-quoted string body starting after the quote; answers the decoded value. */
  const readEscape = (): string => {
    const c = source[i + 1];
    switch (c) {
      case '"':
      case '\\':
      case '/':
        advance(2);
        return c;
      case 'b':
        advance(2);
        return '\b';
      case 'f':
        advance(2);
        return '\f';
      case 'n':
        advance(2);
        return '\n';
      case 'r':
        advance(2);
        return '\r';
      case 't':
        advance(2);
        return '\t';
      case 'u': {
        const hex = source.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('illegal unicode escape in string');
        advance(6);
        let code = parseInt(hex, 16);
        if (code >= 0xd800 && code < 0xdc00 && source[i] === '\\' && source[i + 1] === 'u') {
          const low = source.slice(i + 2, i + 6);
          if (/^[0-9a-fA-F]{4}$/.test(low)) {
            const lowCode = parseInt(low, 16);
            if (lowCode >= 0xdc00 && lowCode < 0xe000) {
              advance(6);
              code = 0x10000 + ((code - 0xd800) << 10) + (lowCode - 0xdc00);
            }
          }
        }
        return String.fromCodePoint(code);
      }
      default:
        return fail('illegal escape sequence in string');
    }
  };

  const readString = (): string => {
    let out = '';
    advance(1);
    for (;;) {
      const c = source[i];
      if (c === undefined || c === '\n') fail('non-terminated string');
      if (c === '"') {
        advance(1);
        return out;
      }
      if (c === '\\') out += readEscape();
      else {
        out += c;
        advance(1);
      }
    }
  };

  /** Skips a nested expression inside a template up to its closing brace, answering its source. */
  const readTemplateExpression = (): string => {
    const begin = i;
    let depth = 0;
    for (;;) {
      const c = source[i];
      if (c === undefined) fail('non-terminated template string');
      if (c === '"') {
        readString();
        continue;
      }
      if (c === '`') {
        advance(1);
        while (source[i] !== undefined && source[i] !== '`') advance(1);
        if (source[i] === undefined) fail('non-terminated raw string');
        advance(1);
        continue;
      }
      if (c === '$' && (source[i + 1] === '"' || source[i + 1] === '`')) {
        advance(1);
        readTemplate();
        continue;
      }
      if (c === '{') depth++;
      if (c === '}') {
        if (depth === 0) {
          const text = source.slice(begin, i);
          advance(1);
          return text;
        }
        depth--;
      }
      advance(1);
    }
  };

  const readTemplate = (): { parts: TemplatePart[]; raw: boolean } => {
    const quote = source[i] as string;
    const raw = quote === '`';
    advance(1);
    const parts: TemplatePart[] = [];
    let text = '';
    for (;;) {
      const c = source[i];
      if (c === undefined || (!raw && c === '\n')) fail('non-terminated template string');
      if (c === quote) {
        advance(1);
        break;
      }
      if (c === '\\' && source[i + 1] === '{') {
        text += '{';
        advance(2);
        continue;
      }
      if (!raw && c === '\\') {
        text += readEscape();
        continue;
      }
      if (c === '{') {
        if (text) parts.push({ text });
        text = '';
        advance(1);
        const location = here();
        parts.push({ source: readTemplateExpression(), location });
        continue;
      }
      text += c;
      advance(1);
    }
    if (text) parts.push({ text });
    return { parts, raw };
  };

  while (i < source.length) {
    const c = source[i] as string;
    if (c === '\n') {
      newlineBefore = true;
      spaceBefore = true;
      advance(1);
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      spaceBefore = true;
      advance(1);
      continue;
    }
    if (c === '#') {
      while (i < source.length && source[i] !== '\n') advance(1);
      continue;
    }
    const location = here();
    const push = (kind: TokenKind, text: string, extra: Partial<Token> = {}): void => {
      tokens.push({ kind, text, location, newlineBefore, spaceBefore, ...extra });
      newlineBefore = false;
      spaceBefore = false;
    };
    if (isIdentStart(c)) {
      let j = i;
      while (j < source.length && (isIdentStart(source[j] as string) || isDigit(source[j] as string))) j++;
      const text = source.slice(i, j);
      advance(j - i);
      push('ident', text);
      continue;
    }
    if (isDigit(c) || (c === '.' && isDigit(source[i + 1] ?? ''))) {
      const match = /^(?:0|[1-9][0-9]*)?(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(source.slice(i));
      const text = match?.[0] ?? '';
      if (!text || isIdentStart(source[i + text.length] ?? '')) fail('illegal number format');
      advance(text.length);
      push('number', text);
      continue;
    }
    if (c === '"') {
      const value = readString();
      push('string', value);
      continue;
    }
    if (c === '`') {
      advance(1);
      let value = '';
      while (source[i] !== undefined && source[i] !== '`') {
        value += source[i];
        advance(1);
      }
      if (source[i] === undefined) fail('non-terminated raw string', location);
      advance(1);
      push('string', value, { raw: true });
      continue;
    }
    if (c === '$' && (source[i + 1] === '"' || source[i + 1] === '`')) {
      advance(1);
      const { parts, raw } = readTemplate();
      push('template', '', { parts, raw });
      continue;
    }
    const punct = PUNCTUATION.find((p) => source.startsWith(p, i));
    if (!punct) fail(`illegal token '${c}'`);
    advance((punct as string).length);
    push('punct', punct as string);
  }
  tokens.push({ kind: 'eof', text: '', location: here(), newlineBefore: true, spaceBefore: true });
  return tokens;
}
