import type { CallTerm, Expr, ExprBody, Import, Module, Rule, TemplatePiece, Term, VarTerm, WithModifier } from './rego.ast.ts';
import { RegoSyntaxError, tokenize, type SourceLocation, type Token } from './rego.lexer.ts';
import { regoNumber } from './rego.value.ts';

/** Limits enforced while parsing, so a hostile source cannot exhaust the stack. */
export interface ParseLimits {
  maxNestingDepth: number;
}

const DEFAULT_PARSE_LIMITS: ParseLimits = { maxNestingDepth: 64 };

const RELATION_OPERATORS: Record<string, string> = { '==': 'equal', '!=': 'neq', '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' };
const ARITH_OPERATORS: Record<string, string> = { '+': 'plus', '-': 'minus' };
const FACTOR_OPERATORS: Record<string, string> = { '*': 'mul', '/': 'div', '%': 'rem' };

/** A number literal's value: integers (also `1e30`, `2.5e3`) exactly, as bigint beyond the safe range. */
export function numberFromText(text: string): number | bigint {
  if (/^-?[0-9]+$/.test(text)) return regoNumber(BigInt(text));
  const match = /^(-?)([0-9]*)(?:\.([0-9]+))?[eE]([+-]?[0-9]+)$/.exec(text);
  if (match) {
    const [, sign, whole = '', fraction = '', exponentText = '0'] = match;
    const exponent = Number(exponentText) - fraction.length;
    const digits = `${whole}${fraction}`.replace(/^0+(?=.)/, '');
    if (exponent >= 0 && exponent <= 400) return regoNumber(BigInt(`${sign}${digits}`) * 10n ** BigInt(exponent));
  }
  return regoNumber(Number(text));
}

class Parser {
  private position = 0;
  /** Inside (), [] or a collection literal newlines do not end an expression. */
  private bracketDepth = 0;
  private nesting = 0;
  /** The first element of a collection literal: `|` there starts a comprehension body, not a set union. */
  private noUnion = false;

  private readonly tokens: Token[];
  private readonly file: string;
  private readonly limits: ParseLimits;
  constructor(
    tokens: Token[],
    file: string,
    limits: ParseLimits,
  ) {
    this.tokens = tokens;
    this.file = file;
    this.limits = limits;
  }

  private get token(): Token {
    return this.tokens[this.position] as Token;
  }

  private peek(offset = 1): Token {
    return this.tokens[Math.min(this.position + offset, this.tokens.length - 1)] as Token;
  }

  private next(): Token {
    const token = this.token;
    if (token.kind !== 'eof') this.position++;
    return token;
  }

  private fail(detail: string, location: SourceLocation = this.token.location): never {
    throw new RegoSyntaxError(location, detail);
  }

  private isPunct(text: string, token: Token = this.token): boolean {
    return token.kind === 'punct' && token.text === text;
  }

  private isIdent(text: string, token: Token = this.token): boolean {
    return token.kind === 'ident' && token.text === text;
  }

  private expectPunct(text: string): Token {
    if (!this.isPunct(text)) this.fail(`unexpected ${this.describe(this.token)}, expected '${text}'`);
    return this.next();
  }

  private describe(token: Token): string {
    if (token.kind === 'eof') return 'eof token';
    if (token.kind === 'string' || token.kind === 'template') return 'string token';
    if (token.kind === 'number') return 'number token';
    if (token.kind === 'ident') return `ident token '${token.text}'`;
    return `'${token.text}' token`;
  }

  private enter(location: SourceLocation): void {
    this.nesting++;
    if (this.nesting > this.limits.maxNestingDepth) this.fail(`nesting depth exceeds the limit of ${this.limits.maxNestingDepth}`, location);
  }

  private leave(): void {
    this.nesting--;
  }

  /** A keyword used as a ref head (`default.foo`, `import.x`): a glued `.` or `[` follows it. */
  private gluedRefFollows(): boolean {
    const next = this.peek();
    return (this.isPunct('.', next) || this.isPunct('[', next)) && !next.spaceBefore;
  }

  /** True when the current token starts a new statement (a line break separates it from the previous one). */
  private atLineBreak(): boolean {
    return this.bracketDepth === 0 && this.token.newlineBefore;
  }

  parseModule(): Module {
    if (!this.isIdent('package')) this.fail(`unexpected ${this.describe(this.token)}, expected package`);
    const packageLocation = this.next().location;
    const packagePath = this.parseStaticPath();
    const module: Module = { file: this.file, packagePath, packageLocation, imports: [], rules: [] };
    while (this.token.kind !== 'eof') {
      if (this.isIdent('import') && !this.gluedRefFollows()) {
        module.imports.push(this.parseImport());
        continue;
      }
      if (this.isIdent('package') && !this.gluedRefFollows()) this.fail('unexpected package keyword');
      module.rules.push(...this.parseRule(packagePath));
    }
    return module;
  }

  /** A package or import path: `a.b["c"]` → strings. */
  private parseStaticPath(): string[] {
    const first = this.next();
    if (first.kind !== 'ident') this.fail(`unexpected ${this.describe(first)}, expected ident`, first.location);
    const path = [first.text];
    for (;;) {
      if (this.isPunct('.') && !this.token.spaceBefore) {
        this.next();
        const part = this.next();
        if (part.kind !== 'ident') this.fail(`unexpected ${this.describe(part)}, expected ident`, part.location);
        path.push(part.text);
      } else if (this.isPunct('[') && !this.token.spaceBefore) {
        this.next();
        const part = this.next();
        if (part.kind !== 'string') this.fail('package and import paths must be strings', part.location);
        path.push(part.text);
        this.expectPunct(']');
      } else return path;
    }
  }

  private parseImport(): Import {
    const location = this.next().location;
    const pathLocation = this.token.location;
    const path = this.parseStaticPath();
    let alias: string | null = null;
    if (this.isIdent('as') && !this.token.newlineBefore) {
      this.next();
      const name = this.next();
      if (name.kind !== 'ident') this.fail(`unexpected ${this.describe(name)}, expected ident`, name.location);
      alias = name.text;
    }
    const head: VarTerm = { type: 'var', name: path[0] as string, location: pathLocation };
    const term: Term =
      path.length === 1
        ? head
        : { type: 'ref', head, path: path.slice(1).map((value) => ({ type: 'scalar', value, location: pathLocation })), location: pathLocation };
    return { path: term, alias, location };
  }

  private parseRule(packagePath: string[]): Rule[] {
    const location = this.token.location;
    let isDefault = false;
    if (this.isIdent('default') && !this.gluedRefFollows()) {
      this.next();
      isDefault = true;
    }
    const nameToken = this.next();
    if (nameToken.kind !== 'ident') this.fail(`unexpected ${this.describe(nameToken)}, expected rule name`, nameToken.location);
    const head: Term[] = [{ type: 'scalar', value: nameToken.text, location: nameToken.location }];
    for (;;) {
      if (this.isPunct('.') && !this.token.spaceBefore) {
        this.next();
        const part = this.next();
        if (part.kind !== 'ident') this.fail(`unexpected ${this.describe(part)}, expected ident`, part.location);
        head.push({ type: 'scalar', value: part.text, location: part.location });
      } else if (this.isPunct('[') && !this.token.spaceBefore) {
        this.next();
        this.bracketDepth++;
        head.push(this.parseTermIn());
        this.bracketDepth--;
        this.expectPunct(']');
      } else break;
    }
    let args: Term[] | null = null;
    if (this.isPunct('(') && !this.token.spaceBefore) {
      this.next();
      this.bracketDepth++;
      args = [];
      while (!this.isPunct(')')) {
        args.push(this.parseTermIn());
        if (!this.isPunct(')')) this.expectPunct(',');
      }
      this.bracketDepth--;
      this.next();
    }
    let value: Term | null = null;
    let kind: Rule['kind'] = args ? 'function' : 'complete';
    if (this.isIdent('contains') && !this.atLineBreak()) {
      if (args) this.fail('function rules cannot use contains');
      this.next();
      value = this.parseTermIn();
      kind = 'partialset';
    } else if ((this.isPunct(':=') || this.isPunct('=')) && !this.atLineBreak()) {
      this.next();
      value = this.parseTermIn();
    }
    if (isDefault && (value === null || kind === 'partialset')) this.fail('default rules must have a value assigned', location);
    const rule: Rule = {
      head,
      kind,
      value,
      args,
      body: [],
      isDefault,
      elseRule: null,
      location,
      file: this.file,
      packagePath,
    };
    if (isDefault) return [rule];
    const hasBody = (this.isIdent('if') || this.isPunct('{')) && !this.atLineBreak();
    if (!hasBody && value === null && args === null && head.length === 1) {
      this.fail(`rule ${nameToken.text} must have a value, a body or contains`, location);
    }
    rule.body = this.parseRuleBody(location);
    let current = rule;
    while (this.isIdent('else') && !this.gluedRefFollows()) {
      if (kind === 'partialset') this.fail('else keyword cannot be used on multi-value rules');
      const elseLocation = this.next().location;
      let elseValue: Term | null = null;
      if ((this.isPunct(':=') || this.isPunct('=')) && !this.atLineBreak()) {
        this.next();
        elseValue = this.parseTermIn();
      }
      const elseRule: Rule = { ...rule, value: elseValue, body: [], elseRule: null, location: elseLocation };
      elseRule.body = this.parseRuleBody(elseLocation);
      current.elseRule = elseRule;
      current = elseRule;
    }
    return [rule];
  }

  /** `if { ... }`, `if <literal>`, or nothing (a body of `true`). */
  private parseRuleBody(location: SourceLocation): Expr[] {
    if (this.isIdent('if') && !this.atLineBreak()) {
      this.next();
      if (this.isPunct('{')) {
        // `if {x: 1 | ...}` is a literal (a comprehension or object), not a body: try the body first.
        const start = this.position;
        try {
          return this.parseBraceBody();
        } catch (error) {
          if (!(error instanceof RegoSyntaxError)) throw error;
          this.position = start;
          this.nesting = 0;
          try {
            const saved = this.bracketDepth;
            this.bracketDepth = 0;
            const literal = this.parseLiteral();
            this.bracketDepth = saved;
            return [literal];
          } catch {
            throw error;
          }
        }
      }
      const saved = this.bracketDepth;
      this.bracketDepth = 0;
      const literal = this.parseLiteral();
      this.bracketDepth = saved;
      return [literal];
    }
    // Rego v1: a body needs `if` (`p { ... }` is v0 syntax, refused as OPA 1.x refuses it).
    if (this.isPunct('{') && !this.atLineBreak()) this.fail('`if` keyword is required before rule body');
    return [{ kind: 'term', term: { type: 'scalar', value: true, location }, negated: false, withs: [], location }];
  }

  private parseBraceBody(): Expr[] {
    const open = this.expectPunct('{');
    this.enter(open.location);
    const saved = this.bracketDepth;
    this.bracketDepth = 0;
    const body = this.parseLiterals('}');
    this.bracketDepth = saved;
    this.expectPunct('}');
    this.leave();
    if (body.length === 0) this.fail('found empty body', open.location);
    return body;
  }

  /** Literals separated by `;` or line breaks, up to (not including) the closing punctuation. */
  private parseLiterals(close: string): Expr[] {
    const body: Expr[] = [];
    const atClose = (): boolean => (close === '<eof>' ? this.token.kind === 'eof' : this.isPunct(close));
    while (!atClose()) {
      if (this.token.kind === 'eof') this.fail(`unexpected eof token, expected '${close}'`);
      body.push(this.parseLiteral());
      if (this.isPunct(';')) {
        this.next();
        continue;
      }
      if (atClose()) break;
      if (!this.token.newlineBefore) this.fail(`unexpected ${this.describe(this.token)}`);
    }
    return body;
  }

  parseLiteral(): Expr {
    const location = this.token.location;
    let negated = false;
    let body: ExprBody;
    if (this.isIdent('not') && !this.gluedRefFollows()) {
      this.next();
      negated = true;
    }
    if (!negated && this.isIdent('some') && !this.gluedRefFollows() && !this.peek().newlineBefore && this.peek().kind !== 'eof' && !this.isPunct('(', this.peek())) {
      this.next();
      body = this.parseSome();
    } else if (!negated && this.isIdent('every') && !this.gluedRefFollows() && !this.peek().newlineBefore && this.peek().kind === 'ident') {
      this.next();
      body = this.parseEvery();
    } else {
      const first = this.parseTermRelation();
      if (this.isPunct(',') && this.bracketDepth === 0) {
        this.next();
        const second = this.parseTermRelation();
        if (!this.isIdent('in')) this.fail(`unexpected ${this.describe(this.token)}, expected in`);
        this.next();
        const domain = this.parseTermRelation();
        const member: Term = this.call(['internal', 'member_3'], [first, second, domain], first.location);
        body = { kind: 'term', term: this.continueIn(member) };
      } else {
        const left = this.continueIn(first);
        if ((this.isPunct('=') || this.isPunct(':=')) && !this.atLineBreak()) {
          const operator = this.next().text;
          const right = this.parseTermIn();
          body = operator === '=' ? { kind: 'unify', left, right } : { kind: 'assign', left, right };
        } else body = { kind: 'term', term: left };
      }
    }
    const withs = this.parseWiths();
    return { ...body, negated, withs, location } as Expr;
  }

  private parseWiths(): WithModifier[] {
    const withs: WithModifier[] = [];
    while (this.isIdent('with') && !this.gluedRefFollows()) {
      const location = this.next().location;
      const target = this.parseTermRelation();
      if (!this.isIdent('as')) this.fail(`unexpected ${this.describe(this.token)}, expected as`);
      this.next();
      const value = this.parseTermIn();
      withs.push({ target, value, location });
    }
    return withs;
  }

  private parseSome(): ExprBody {
    const first = this.parseTermRelation();
    if (this.isIdent('in')) {
      this.next();
      return { kind: 'somein', key: null, value: first, domain: this.parseTermRelation() };
    }
    const terms = [first];
    while (this.isPunct(',')) {
      this.next();
      terms.push(this.parseTermRelation());
      if (this.isIdent('in')) {
        if (terms.length !== 2) this.fail('unexpected in keyword');
        this.next();
        return { kind: 'somein', key: terms[0] as Term, value: terms[1] as Term, domain: this.parseTermRelation() };
      }
    }
    for (const term of terms) if (term.type !== 'var') this.fail('expected var in some declaration', term.location);
    return { kind: 'some', vars: terms as VarTerm[] };
  }

  private parseEvery(): ExprBody {
    const first = this.parseTermRelation();
    let key: Term | null = null;
    let value = first;
    if (this.isPunct(',')) {
      this.next();
      key = first;
      value = this.parseTermRelation();
    }
    if (!this.isIdent('in')) this.fail(`unexpected ${this.describe(this.token)}, expected in`);
    this.next();
    const domain = this.parseTermRelation();
    const body = this.parseBraceBody();
    return { kind: 'every', key, value, domain, body };
  }

  private call(name: string[], args: Term[], location: SourceLocation): CallTerm {
    return { type: 'call', name, args, target: { kind: 'unresolved' }, location };
  }

  /** Infix operators continue an expression unless a line break (outside brackets) ends it. */
  private infix(table: Record<string, string>): string | undefined {
    if (this.token.kind !== 'punct' || this.atLineBreak()) return undefined;
    return table[this.token.text];
  }

  parseTermIn(): Term {
    return this.continueIn(this.parseTermRelation());
  }

  private continueIn(left: Term): Term {
    let term = left;
    while (this.isIdent('in') && !this.atLineBreak()) {
      this.next();
      const right = this.parseTermRelation();
      term = this.call(['internal', 'member_2'], [term, right], term.location);
    }
    return term;
  }

  private parseTermRelation(): Term {
    let left = this.parseTermOr();
    for (let name = this.infix(RELATION_OPERATORS); name; name = this.infix(RELATION_OPERATORS)) {
      this.next();
      left = this.call([name], [left, this.parseTermOr()], left.location);
    }
    return left;
  }

  private parseTermOr(): Term {
    let left = this.parseTermAnd();
    while (!this.noUnion && this.infix({ '|': 'or' })) {
      this.next();
      left = this.call(['or'], [left, this.parseTermAnd()], left.location);
    }
    return left;
  }

  private parseTermAnd(): Term {
    let left = this.parseTermArith();
    while (this.infix({ '&': 'and' })) {
      this.next();
      left = this.call(['and'], [left, this.parseTermArith()], left.location);
    }
    return left;
  }

  private parseTermArith(): Term {
    let left = this.parseTermFactor();
    for (let name = this.infix(ARITH_OPERATORS); name; name = this.infix(ARITH_OPERATORS)) {
      this.next();
      left = this.call([name], [left, this.parseTermFactor()], left.location);
    }
    return left;
  }

  private parseTermFactor(): Term {
    let left = this.parseTerm();
    for (let name = this.infix(FACTOR_OPERATORS); name; name = this.infix(FACTOR_OPERATORS)) {
      this.next();
      left = this.call([name], [left, this.parseTerm()], left.location);
    }
    return left;
  }

  private parseTerm(): Term {
    const token = this.token;
    this.enter(token.location);
    // Only a collection's own head is ambiguous; inside a nested term `|` is set union again.
    const outerNoUnion = this.noUnion;
    this.noUnion = false;
    try {
      return this.parseTermPostfix();
    } finally {
      this.noUnion = outerNoUnion;
      this.leave();
    }
  }

  private parseTermPostfix(): Term {
    let term = this.parsePrimary();
    // Postfix: refs and calls, glued to the previous token.
    for (;;) {
      if (this.isPunct('.') && !this.token.spaceBefore) {
        this.next();
        const part = this.next();
        if (part.kind !== 'ident') this.fail(`unexpected ${this.describe(part)}, expected ident`, part.location);
        term = this.extendRef(term, { type: 'scalar', value: part.text, location: part.location });
      } else if (this.isPunct('[') && !this.token.spaceBefore) {
        this.next();
        this.bracketDepth++;
        const key = this.parseTermIn();
        this.bracketDepth--;
        this.expectPunct(']');
        term = this.extendRef(term, key);
      } else if (this.isPunct('(') && !this.token.spaceBefore && (term.type === 'var' || term.type === 'ref')) {
        const name = this.callName(term);
        this.next();
        this.bracketDepth++;
        const args: Term[] = [];
        while (!this.isPunct(')')) {
          args.push(this.parseTermIn());
          if (!this.isPunct(')')) this.expectPunct(',');
        }
        this.bracketDepth--;
        this.next();
        term = name.length === 1 && name[0] === 'set' && args.length === 0 ? { type: 'set', items: [], location: term.location } : this.call(name, args, term.location);
      } else break;
    }
    return term;
  }

  private callName(term: Term): string[] {
    if (term.type === 'var') return [term.name];
    if (term.type === 'ref' && term.head.type === 'var') {
      const name = [term.head.name];
      for (const part of term.path) {
        if (part.type !== 'scalar' || typeof part.value !== 'string') this.fail('illegal call: function name must be a static reference', term.location);
        name.push(part.value);
      }
      return name;
    }
    return this.fail('illegal call', term.location);
  }

  private extendRef(term: Term, key: Term): Term {
    if (term.type === 'ref') return { ...term, path: [...term.path, key] };
    return { type: 'ref', head: term, path: [key], location: term.location };
  }

  private parsePrimary(): Term {
    const token = this.token;
    const location = token.location;
    switch (token.kind) {
      case 'number':
        this.next();
        return { type: 'scalar', value: numberFromText(token.text), location };
      case 'string':
        this.next();
        return { type: 'scalar', value: token.text, location };
      case 'template':
        this.next();
        return this.parseTemplate(token);
      case 'ident':
        if (this.gluedRefFollows()) {
          this.next();
          return { type: 'var', name: token.text, location };
        }
        this.next();
        if (token.text === 'true' || token.text === 'false') return { type: 'scalar', value: token.text === 'true', location };
        if (token.text === 'null') return { type: 'scalar', value: null, location };
        return { type: 'var', name: token.text, location };
      case 'punct':
        break;
      default:
        this.fail(`unexpected ${this.describe(token)}`);
    }
    if (token.text === '-' && this.peek().kind === 'number' && !this.peek().spaceBefore) {
      this.next();
      const number = this.next();
      return { type: 'scalar', value: numberFromText(`-${number.text}`), location };
    }
    if (token.text === '(') {
      this.next();
      this.bracketDepth++;
      let inner = this.parseTermRelation();
      if (this.isPunct(',')) {
        this.next();
        const value = this.parseTermRelation();
        if (!this.isIdent('in')) this.fail(`unexpected ${this.describe(this.token)}, expected in`);
        this.next();
        inner = this.call(['internal', 'member_3'], [inner, value, this.parseTermRelation()], inner.location);
      }
      inner = this.continueIn(inner);
      this.bracketDepth--;
      this.expectPunct(')');
      return inner;
    }
    if (token.text === '[') return this.parseArray();
    if (token.text === '{') return this.parseBrace();
    return this.fail(`unexpected ${this.describe(token)}`);
  }

  private parseCollectionHead(): Term {
    const saved = this.noUnion;
    this.noUnion = true;
    try {
      return this.parseTermIn();
    } finally {
      this.noUnion = saved;
    }
  }

  private parseComprehensionBody(close: string): Expr[] {
    const saved = this.bracketDepth;
    this.bracketDepth = 0;
    const body = this.parseLiterals(close);
    this.bracketDepth = saved;
    if (body.length === 0) this.fail('found empty body');
    return body;
  }

  private parseArray(): Term {
    const location = this.next().location;
    this.bracketDepth++;
    const items: Term[] = [];
    if (this.isPunct(']')) {
      this.bracketDepth--;
      this.next();
      return { type: 'array', items, location };
    }
    const first = this.parseCollectionHead();
    if (this.isPunct('|')) {
      this.next();
      const body = this.parseComprehensionBody(']');
      this.bracketDepth--;
      this.expectPunct(']');
      return { type: 'arraycomp', term: first, body, location };
    }
    items.push(first);
    while (this.isPunct(',')) {
      this.next();
      if (this.isPunct(']')) break;
      items.push(this.parseTermIn());
    }
    this.bracketDepth--;
    this.expectPunct(']');
    return { type: 'array', items, location };
  }

  private parseBrace(): Term {
    const location = this.next().location;
    this.bracketDepth++;
    if (this.isPunct('}')) {
      this.bracketDepth--;
      this.next();
      return { type: 'object', entries: [], location };
    }
    const first = this.parseCollectionHead();
    if (this.isPunct(':')) {
      this.next();
      const firstValue = this.parseCollectionHead();
      if (this.isPunct('|')) {
        this.next();
        const body = this.parseComprehensionBody('}');
        this.bracketDepth--;
        this.expectPunct('}');
        return { type: 'objectcomp', key: first, value: firstValue, body, location };
      }
      const entries: [Term, Term][] = [[first, firstValue]];
      while (this.isPunct(',')) {
        this.next();
        if (this.isPunct('}')) break;
        const key = this.parseTermIn();
        this.expectPunct(':');
        entries.push([key, this.parseTermIn()]);
      }
      this.bracketDepth--;
      this.expectPunct('}');
      return { type: 'object', entries, location };
    }
    if (this.isPunct('|')) {
      this.next();
      const body = this.parseComprehensionBody('}');
      this.bracketDepth--;
      this.expectPunct('}');
      return { type: 'setcomp', term: first, body, location };
    }
    const items = [first];
    while (this.isPunct(',')) {
      this.next();
      if (this.isPunct('}')) break;
      items.push(this.parseTermIn());
    }
    this.bracketDepth--;
    this.expectPunct('}');
    return { type: 'set', items, location };
  }

  private parseTemplate(token: Token): Term {
    const parts: (string | TemplatePiece)[] = [];
    for (const part of token.parts ?? []) {
      if ('text' in part) {
        parts.push(part.text);
        continue;
      }
      const tokens = tokenize(part.source, this.file, part.location);
      const inner = new Parser(tokens, this.file, this.limits);
      inner.nesting = this.nesting;
      inner.bracketDepth = 1;
      if (inner.token.kind === 'eof') inner.fail('empty template expression', part.location);
      const term = inner.parseTermIn();
      const withs = inner.parseWiths();
      if (inner.token.kind !== 'eof') inner.fail(`unexpected ${inner.describe(inner.token)} in template expression`);
      parts.push({ term, withs });
    }
    return { type: 'template', parts, location: token.location };
  }

  parseQuery(): Expr[] {
    const body = this.parseLiterals('<eof>');
    if (this.token.kind !== 'eof') this.fail(`unexpected ${this.describe(this.token)}`);
    return body;
  }

  parseStandaloneTerm(): Term {
    this.bracketDepth = 1;
    const term = this.parseTermIn();
    if (this.token.kind !== 'eof') this.fail(`unexpected ${this.describe(this.token)}`);
    return term;
  }

  atEnd(): boolean {
    return this.token.kind === 'eof';
  }
}

export function parseModule(source: string, file: string, limits: ParseLimits = DEFAULT_PARSE_LIMITS): Module {
  return new Parser(tokenize(source, file), file, limits).parseModule();
}

export function parseQuery(source: string, file = 'query', limits: ParseLimits = DEFAULT_PARSE_LIMITS): Expr[] {
  const parser = new Parser(tokenize(source, file), file, limits);
  if (parser.atEnd()) throw new RegoSyntaxError({ file, row: 1, col: 1 }, 'empty query');
  return parser.parseQuery();
}

/** A Rego term holding no variables other than `set()`-style constructs, e.g. an `input_term`. */
export function parseTerm(source: string, file = 'term', limits: ParseLimits = DEFAULT_PARSE_LIMITS): Term {
  return new Parser(tokenize(source, file), file, limits).parseStandaloneTerm();
}
