import type { SourceLocation } from './rego.lexer.ts';
import type { RegoValue } from './rego.value.ts';

/**
 * Rego syntax tree. The parser produces it; the compiler rewrites names in place (rule names and imports become
 * `data` refs, declared variables get unique names, calls get their target) before the evaluator walks it.
 */
export type Term =
  | ScalarTerm
  | VarTerm
  | RefTerm
  | ArrayTerm
  | ObjectTerm
  | SetTerm
  | CallTerm
  | ArrayComprehension
  | SetComprehension
  | ObjectComprehension
  | TemplateTerm;

export interface ScalarTerm {
  type: 'scalar';
  value: RegoValue;
  location: SourceLocation;
}

export interface VarTerm {
  type: 'var';
  name: string;
  location: SourceLocation;
}

/** `head[path0][path1]...`: head is a var (`data`, `input`, a local) or any other term (e.g. a call or literal). */
export interface RefTerm {
  type: 'ref';
  head: Term;
  path: Term[];
  location: SourceLocation;
}

export interface ArrayTerm {
  type: 'array';
  items: Term[];
  location: SourceLocation;
}

export interface ObjectTerm {
  type: 'object';
  entries: [Term, Term][];
  location: SourceLocation;
}

export interface SetTerm {
  type: 'set';
  items: Term[];
  location: SourceLocation;
}

export type CallTarget =
  | { kind: 'unresolved' }
  | { kind: 'builtin'; name: string }
  | { kind: 'function'; path: string[] }
  | { kind: 'local'; name: string };

export interface CallTerm {
  type: 'call';
  /** Dotted name as written (`count`, `data.pkg.f`, `strings.replace_n`, or an operator's builtin name). */
  name: string[];
  args: Term[];
  target: CallTarget;
  location: SourceLocation;
}

export interface ArrayComprehension {
  type: 'arraycomp';
  term: Term;
  body: Expr[];
  location: SourceLocation;
}

export interface SetComprehension {
  type: 'setcomp';
  term: Term;
  body: Expr[];
  location: SourceLocation;
}

export interface ObjectComprehension {
  type: 'objectcomp';
  key: Term;
  value: Term;
  body: Expr[];
  location: SourceLocation;
}

export interface TemplatePiece {
  term: Term;
  withs: WithModifier[];
}

export interface TemplateTerm {
  type: 'template';
  parts: (string | TemplatePiece)[];
  location: SourceLocation;
}

/** What a `with` replaces: part of input or data, or a builtin/function (by builtin name or function path). */
export type WithTarget = { kind: 'input'; path: string[] } | { kind: 'data'; path: string[] } | { kind: 'builtin'; name: string } | { kind: 'function'; path: string[] };

/** A replacement function named by a `with` value: a builtin name or a function path. */
export type WithFunction = { kind: 'builtin'; name: string } | { kind: 'function'; path: string[] };

export interface WithModifier {
  target: Term;
  value: Term;
  location: SourceLocation;
  resolvedTarget?: WithTarget;
  /** Set when the value names a function or builtin rather than a value. */
  replacement?: WithFunction;
}

export type ExprBody =
  | { kind: 'term'; term: Term }
  | { kind: 'unify'; left: Term; right: Term }
  | { kind: 'assign'; left: Term; right: Term }
  | { kind: 'some'; vars: VarTerm[] }
  | { kind: 'somein'; key: Term | null; value: Term; domain: Term }
  | { kind: 'every'; key: Term | null; value: Term; domain: Term; body: Expr[] };

export type Expr = ExprBody & {
  negated: boolean;
  withs: WithModifier[];
  location: SourceLocation;
};

export type RuleKind = 'complete' | 'partialset' | 'function';

export interface Rule {
  /** Head reference relative to the package: first element is the rule name (string); then key terms. */
  head: Term[];
  kind: RuleKind;
  /** Value term (complete rules, functions, partial object leaf) or the member term (partial sets). */
  value: Term | null;
  /** Function parameters (null for rules that are not functions). */
  args: Term[] | null;
  body: Expr[];
  isDefault: boolean;
  elseRule: Rule | null;
  location: SourceLocation;
  file: string;
  /** Filled by the compiler: package path of the module the rule comes from. */
  packagePath: string[];
}

export interface Import {
  path: Term;
  alias: string | null;
  location: SourceLocation;
}

export interface Module {
  file: string;
  packagePath: string[];
  packageLocation: SourceLocation;
  imports: Import[];
  rules: Rule[];
}
