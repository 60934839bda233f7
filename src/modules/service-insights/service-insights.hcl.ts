/**
 * The subset of HCL (HashiCorp Configuration Language, native syntax) Slipway reads from a Terraform module: a body of
 * attributes (`name = expression`) and blocks (`type "label" { body }`), with `#`, `//` and `/* *\/` comments,
 * quoted strings with escapes, heredocs (`<<EOF` / `<<-EOF`) and expressions spanning lines inside brackets. An
 * attribute's expression is kept as its source text; a quoted string or heredoc alone is also given as its value.
 * Nothing is evaluated: `var.x`, function calls and templates stay text. That is what a form needs of `variable`
 * blocks and `.tfvars` files (docs/service-insights.md), and it never runs anything from the repository.
 */

export interface HclAttribute {
  name: string;
  /** The expression's source text, trimmed. */
  expression: string;
  /** The string a quoted literal or heredoc denotes; undefined for any other expression. */
  text: string | undefined;
  line: number;
}

export interface HclBlock {
  type: string;
  labels: string[];
  body: HclBody;
  line: number;
}

export interface HclBody {
  attributes: HclAttribute[];
  blocks: HclBlock[];
}

export class HclSyntaxError extends Error {
  readonly line: number;
  constructor(message: string, line: number) {
    super(`line ${line}: ${message}`);
    this.line = line;
  }
}

const IDENTIFIER_START = /[A-Za-z_]/;
const IDENTIFIER_PART = /[A-Za-z0-9_-]/;
const CLOSING: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

class Scanner {
  private readonly source: string;
  private position = 0;
  /** Where each line starts, for line numbers in O(log n). */
  private readonly lineStarts: number[] = [0];
  constructor(source: string) {
    this.source = source;
    for (let index = source.indexOf('\n'); index >= 0; index = source.indexOf('\n', index + 1)) this.lineStarts.push(index + 1);
  }

  get atEnd(): boolean {
    return this.position >= this.source.length;
  }

  get line(): number {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.lineStarts[middle] ?? 0) <= this.position) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }

  peek(offset = 0): string {
    return this.source[this.position + offset] ?? '';
  }

  /** Skips spaces, and newlines too when `newlines`; comments always (a line comment up to, not past, its newline). */
  skipSpace(newlines: boolean): void {
    for (;;) {
      const char = this.peek();
      if (char === ' ' || char === '\t' || char === '\r' || (newlines && char === '\n')) this.position += 1;
      else if (char === '#' || (char === '/' && this.peek(1) === '/')) {
        while (!this.atEnd && this.peek() !== '\n') this.position += 1;
      } else if (char === '/' && this.peek(1) === '*') {
        const end = this.source.indexOf('*/', this.position + 2);
        if (end < 0) throw new HclSyntaxError('unterminated comment', this.line);
        this.position = end + 2;
      } else return;
    }
  }

  identifier(): string | undefined {
    if (!IDENTIFIER_START.test(this.peek())) return undefined;
    const start = this.position;
    while (IDENTIFIER_PART.test(this.peek())) this.position += 1;
    return this.source.slice(start, this.position);
  }

  /** A quoted string at the position: its value (escapes resolved; `${…}` kept as written). */
  quoted(): string {
    const line = this.line;
    this.position += 1;
    let value = '';
    for (;;) {
      if (this.atEnd || this.peek() === '\n') throw new HclSyntaxError('unterminated string', line);
      const char = this.peek();
      this.position += 1;
      if (char === '"') return value;
      // `$${` and `%%{` are a literal `${` and `%{` (HCL's escape of template sequences).
      if ((char === '$' || char === '%') && this.peek() === char && this.peek(1) === '{') {
        value += char;
        this.position += 1;
        continue;
      }
      if (char === '\\') {
        const escaped = this.peek();
        this.position += 1;
        if (escaped === 'n') value += '\n';
        else if (escaped === 't') value += '\t';
        else if (escaped === 'r') value += '\r';
        else if (escaped === 'u' || escaped === 'U') {
          const length = escaped === 'u' ? 4 : 8;
          const hex = this.source.slice(this.position, this.position + length);
          if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== length) throw new HclSyntaxError('invalid unicode escape', line);
          value += String.fromCodePoint(parseInt(hex, 16));
          this.position += length;
        } else value += escaped;
      } else value += char;
    }
  }

  /** A heredoc at the position (`<<EOF` or `<<-EOF`): its text, indentation removed for the `-` form. */
  heredoc(): string {
    const line = this.line;
    this.position += 2;
    const indented = this.peek() === '-';
    if (indented) this.position += 1;
    const marker = this.identifier();
    if (marker === undefined) throw new HclSyntaxError('a heredoc needs a marker', line);
    const newline = this.source.indexOf('\n', this.position);
    if (newline < 0) throw new HclSyntaxError('unterminated heredoc', line);
    const lines: string[] = [];
    let cursor = newline + 1;
    for (;;) {
      if (cursor > this.source.length) throw new HclSyntaxError(`heredoc ${marker} is not closed`, line);
      const end = this.source.indexOf('\n', cursor);
      const text = this.source.slice(cursor, end < 0 ? this.source.length : end);
      if (text.trim() === marker) {
        this.position = end < 0 ? this.source.length : end;
        break;
      }
      lines.push(text.replace(/\r$/, ''));
      if (end < 0) throw new HclSyntaxError(`heredoc ${marker} is not closed`, line);
      cursor = end + 1;
    }
    if (!indented) return lines.map((text) => `${text}\n`).join('');
    const indent = Math.min(...lines.filter((text) => text.trim() !== '').map((text) => /^[ \t]*/.exec(text)?.[0].length ?? 0));
    return lines.map((text) => `${text.slice(Number.isFinite(indent) ? indent : 0)}\n`).join('');
  }

  /** An expression up to the end of its line outside brackets: its source text, and its string when it is one literal. */
  expression(): { expression: string; text: string | undefined } {
    const start = this.position;
    const line = this.line;
    const open: string[] = [];
    let literal: string | undefined;
    let parts = 0;
    // Where the last part ended: a comment after the expression is not part of it.
    let end = start;
    for (;;) {
      if (open.length === 0) this.skipSpace(false);
      else this.skipSpace(true);
      const char = this.peek();
      if (this.atEnd || (open.length === 0 && (char === '\n' || char === '}' || char === ','))) break;
      parts += 1;
      if (char === '"') {
        literal = this.quoted();
      } else if (char === '<' && this.peek(1) === '<' && /[-A-Za-z_]/.test(this.peek(2))) {
        literal = this.heredoc();
      } else if (char in CLOSING) {
        open.push(CLOSING[char] as string);
        this.position += 1;
      } else if (char === ')' || char === ']' || char === '}') {
        if (open.pop() !== char) throw new HclSyntaxError(`unexpected ${char}`, this.line);
        this.position += 1;
      } else this.position += 1;
      end = this.position;
    }
    if (open.length > 0) throw new HclSyntaxError(`expected ${open[open.length - 1]} to close the expression`, line);
    const expression = this.source.slice(start, end).trim();
    if (expression === '') throw new HclSyntaxError('an attribute needs a value', line);
    return { expression, text: parts === 1 ? literal : undefined };
  }

  expect(char: string): void {
    if (this.peek() !== char) throw new HclSyntaxError(`expected ${char}${this.atEnd ? ' before the end of the file' : `, found ${JSON.stringify(this.peek())}`}`, this.line);
    this.position += 1;
  }

  /** A body up to the end of the file, or (`openedAt`, the line of its block) up to its closing brace. */
  body(openedAt: number | undefined): HclBody {
    const body: HclBody = { attributes: [], blocks: [] };
    for (;;) {
      this.skipSpace(true);
      if (this.atEnd) {
        if (openedAt !== undefined) throw new HclSyntaxError('the block opened here is not closed (missing })', openedAt);
        return body;
      }
      if (openedAt !== undefined && this.peek() === '}') {
        this.position += 1;
        return body;
      }
      const line = this.line;
      const name = this.identifier();
      if (name === undefined) throw new HclSyntaxError(`expected an attribute or a block, found ${JSON.stringify(this.peek())}`, line);
      this.skipSpace(false);
      if (this.peek() === '=' && this.peek(1) !== '=') {
        this.position += 1;
        this.skipSpace(false);
        body.attributes.push({ name, line, ...this.expression() });
        continue;
      }
      const labels: string[] = [];
      for (;;) {
        this.skipSpace(false);
        if (this.peek() === '"') labels.push(this.quoted());
        else {
          const label = this.identifier();
          if (label === undefined) break;
          labels.push(label);
        }
      }
      this.expect('{');
      body.blocks.push({ type: name, labels, line, body: this.body(line) });
    }
  }
}

/** Parses a file's top-level body; throws HclSyntaxError (with its line) on what the subset does not read. */
export function parseHcl(source: string): HclBody {
  return new Scanner(source.replace(/^\uFEFF/, '')).body(undefined);
}
