import type { CallTerm, Expr, Module, Rule, Term, VarTerm, WithFunction, WithModifier, WithTarget } from './rego.ast.ts';
import type { SourceLocation } from './rego.lexer.ts';
import { canonicalKey, RegoObject, RegoSet, type RegoValue } from './rego.value.ts';

/**
 * The compiler: merges modules by package into one rule tree, resolves names (rule names and imports become `data`
 * refs, declared variables get unique names, calls get a target), reorders bodies so every variable is bound before
 * it is needed (OPA's safety reordering), rejects unsafe variables and recursion, and indexes the rules of each
 * name by the constants their bodies compare input, base data or function arguments with (see `buildRuleIndex`).
 */
export class CompileError extends Error {
  readonly code: string;
  readonly location: SourceLocation;
  readonly detail: string;
  constructor(
    code: string,
    location: SourceLocation,
    detail: string,
  ) {
    super(`${location.file}:${location.row}: ${code}: ${detail}`);
    this.code = code;
    this.location = location;
    this.detail = detail;
    this.name = 'CompileError';
  }

  get line(): number {
    return this.location.row;
  }

  get column(): number {
    return this.location.col;
  }
}

export interface CompiledRule {
  rule: Rule;
  /** Head terms after the static (string) prefix: empty for complete rules and partial sets at their node. */
  rest: Term[];
  body: Expr[];
  value: Term | null;
  args: Term[] | null;
  elseRule: CompiledRule | null;
}

export class RuleNode {
  readonly children = new Map<string, RuleNode>();
  readonly rules: CompiledRule[] = [];
  readonly functions: CompiledRule[] = [];
  defaultRule: CompiledRule | null = null;
  /** A package path: defined (an empty object at least) even when it holds no rules. */
  isPackage = false;
  /** Filled by the compiler once the tree is complete: which of `rules` (or `functions`) can match an evaluation. */
  ruleIndex: RuleIndex | null = null;
  functionIndex: RuleIndex | null = null;
  /** The one kind of document `rules` build (the compiler rejects a mix). */
  documentKind: 'complete' | 'set' | 'object' = 'complete';
  readonly path: string[];
  constructor(path: string[]) {
    this.path = path;
  }

  get hasRules(): boolean {
    return this.rules.length > 0 || this.functions.length > 0 || this.defaultRule !== null;
  }

  /** Functions are not documents: they are skipped when a package is read as a value. */
  get isFunction(): boolean {
    return this.functions.length > 0 || this.defaultRule?.rule.kind === 'function';
  }

  child(name: string): RuleNode {
    let node = this.children.get(name);
    if (!node) {
      node = new RuleNode([...this.path, name]);
      this.children.set(name, node);
    }
    return node;
  }
}

export interface BuiltinSignature {
  arity: number;
}

export interface CompileContext {
  builtins: Map<string, BuiltinSignature>;
}

/** Builtins the evaluator implements itself (unification helpers, generators, no-ops). */
export const EVALUATOR_BUILTINS: Record<string, number> = {
  'internal.member_2': 2,
  'internal.member_3': 3,
  walk: 1,
  print: -1,
  trace: 1,
};

const GLOBAL_ROOTS = new Set(['data', 'input']);

interface Scope {
  parent: Scope | null;
  /** Declared names (some, :=, function args, every/some-in vars) → their unique name. */
  declared: Map<string, string>;
}

interface ModuleNames {
  packagePath: string[];
  ruleNames: Set<string>;
  imports: Map<string, Term>;
}

let uniqueCounter = 0;

function scalar(value: string, location: SourceLocation): Term {
  return { type: 'scalar', value, location };
}

function dataRef(path: string[], location: SourceLocation): Term {
  const head: VarTerm = { type: 'var', name: 'data', location };
  if (path.length === 0) return head;
  return { type: 'ref', head, path: path.map((part) => scalar(part, location)), location };
}

/** Static string path of a ref like `data.a.b[x]` → {root: 'data', path: ['a','b'], rest: [x]}. */
export function staticPrefix(term: Term): { root: string; path: string[]; rest: Term[] } | null {
  if (term.type === 'var') return { root: term.name, path: [], rest: [] };
  if (term.type !== 'ref' || term.head.type !== 'var') return null;
  const path: string[] = [];
  let index = 0;
  for (; index < term.path.length; index++) {
    const part = term.path[index] as Term;
    if (part.type !== 'scalar' || typeof part.value !== 'string') break;
    path.push(part.value);
  }
  return { root: term.head.name, path, rest: term.path.slice(index) };
}

class NameResolver {
  private readonly names: ModuleNames;
  private readonly context: CompileContext;
  private readonly functionArity: Map<string, number>;
  constructor(
    names: ModuleNames,
    context: CompileContext,
    functionArity: Map<string, number>,
  ) {
    this.names = names;
    this.context = context;
    this.functionArity = functionArity;
  }

  private lookupDeclared(scope: Scope | null, name: string): string | undefined {
    for (let current = scope; current; current = current.parent) {
      const found = current.declared.get(name);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** Declares the variables of a pattern (`:=` left side, some-in vars) in a scope. */
  private declarePattern(term: Term, scope: Scope, nested: boolean): void {
    if (term.type === 'var') {
      if (term.name === '_') return;
      scope.declared.set(term.name, nested ? `${term.name}$${++uniqueCounter}` : term.name);
    } else if (term.type === 'array') for (const item of term.items) this.declarePattern(item, scope, nested);
    else if (term.type === 'object') for (const [, value] of term.entries) this.declarePattern(value, scope, nested);
  }

  /** Function parameters shadow rule names and imports. */
  declareParameter(term: Term, scope: Scope): void {
    this.declarePattern(term, scope, false);
  }

  resolveBody(body: Expr[], scope: Scope, nested: boolean): Expr[] {
    for (const expr of body) {
      if (expr.kind === 'some') for (const v of expr.vars) this.declarePattern(v, scope, nested);
    }
    return body.map((expr) => this.resolveExpr(expr, scope, nested));
  }

  private resolveExpr(expr: Expr, scope: Scope, nested: boolean): Expr {
    const withs = expr.withs.map((modifier) => this.resolveWith(modifier, scope));
    switch (expr.kind) {
      case 'term': {
        let term = expr.term.type === 'call' ? this.resolveCall(expr.term, scope, true) : this.resolveTerm(expr.term, scope);
        if (term.type === 'call') {
          const arity = this.arityOf(term);
          if (arity !== undefined && arity >= 0 && term.args.length === arity + 1) {
            const output = term.args[term.args.length - 1] as Term;
            term = { ...term, args: term.args.slice(0, -1) };
            return { ...expr, kind: 'unify', left: term, right: output, withs } as Expr;
          }
        }
        return { ...expr, term, withs };
      }
      case 'unify':
        return { ...expr, left: this.resolveTerm(expr.left, scope), right: this.resolveTerm(expr.right, scope), withs };
      case 'assign': {
        const right = this.resolveTerm(expr.right, scope);
        const assigned = new Set<string>();
        allVars(expr.left, assigned);
        for (const name of assigned) {
          if (scope.declared.has(name)) throw new CompileError('rego_compile_error', expr.location, `var ${name} assigned above`);
        }
        this.declarePattern(expr.left, scope, nested);
        return { ...expr, left: this.resolveTerm(expr.left, scope), right, withs };
      }
      case 'some':
        return { ...expr, vars: expr.vars.map((v) => this.resolveTerm(v, scope) as VarTerm), withs };
      case 'somein': {
        const domain = this.resolveTerm(expr.domain, scope);
        if (expr.key) this.declarePattern(expr.key, scope, nested);
        this.declarePattern(expr.value, scope, nested);
        return {
          ...expr,
          key: expr.key ? this.resolveTerm(expr.key, scope) : null,
          value: this.resolveTerm(expr.value, scope),
          domain,
          withs,
        };
      }
      case 'every': {
        const domain = this.resolveTerm(expr.domain, scope);
        const inner: Scope = { parent: scope, declared: new Map() };
        if (expr.key) this.declarePattern(expr.key, inner, true);
        this.declarePattern(expr.value, inner, true);
        return {
          ...expr,
          key: expr.key ? this.resolveTerm(expr.key, inner) : null,
          value: this.resolveTerm(expr.value, inner),
          domain,
          body: this.resolveBody(expr.body, inner, true),
          withs,
        };
      }
    }
  }

  private resolveWith(modifier: WithModifier, scope: Scope): WithModifier {
    const resolvedTarget = this.resolveWithTarget(modifier.target);
    const replacement = this.functionNamed(modifier.value, scope);
    const value = replacement ? modifier.value : this.resolveTerm(modifier.value, scope);
    return { ...modifier, value, resolvedTarget, ...(replacement ? { replacement } : {}) };
  }

  private resolveWithTarget(target: Term): WithTarget {
    const fail = (): never => {
      throw new CompileError('rego_compile_error', target.location, 'with keyword target must reference existing input, data, or a function');
    };
    const prefix = staticPrefix(target);
    if (!prefix || prefix.rest.length > 0) return fail();
    if (prefix.root === 'input') return { kind: 'input', path: prefix.path };
    if (prefix.root === 'data') {
      if (this.functionArity.has(prefix.path.join('.'))) return { kind: 'function', path: prefix.path };
      return { kind: 'data', path: prefix.path };
    }
    const imported = this.names.imports.get(prefix.root);
    if (imported) {
      const base = staticPrefix(imported);
      if (base) return this.resolveWithTarget(extendStatic(imported, prefix.path, target.location));
    }
    if (this.names.ruleNames.has(prefix.root)) {
      const path = [...this.names.packagePath, prefix.root, ...prefix.path];
      if (this.functionArity.has(path.join('.'))) return { kind: 'function', path };
      return { kind: 'data', path };
    }
    const name = [prefix.root, ...prefix.path].join('.');
    if (this.context.builtins.has(name) || name in EVALUATOR_BUILTINS) return { kind: 'builtin', name };
    return fail();
  }

  /** A `with` value naming a function or builtin (replaced as a function, not evaluated as a value). */
  private functionNamed(term: Term, scope: Scope): WithFunction | undefined {
    const prefix = staticPrefix(term);
    if (!prefix || prefix.rest.length > 0) return undefined;
    if (term.type === 'var' && this.lookupDeclared(scope, term.name)) return undefined;
    if (prefix.root === 'data') {
      return this.functionArity.has(prefix.path.join('.')) ? { kind: 'function', path: prefix.path } : undefined;
    }
    if (this.names.ruleNames.has(prefix.root)) {
      const path = [...this.names.packagePath, prefix.root, ...prefix.path];
      return this.functionArity.has(path.join('.')) ? { kind: 'function', path } : undefined;
    }
    if (prefix.root === 'input' || this.names.imports.has(prefix.root)) return undefined;
    const name = [prefix.root, ...prefix.path].join('.');
    if (this.context.builtins.has(name) || name in EVALUATOR_BUILTINS) return { kind: 'builtin', name };
    return undefined;
  }

  private arityOf(call: CallTerm): number | undefined {
    if (call.target.kind === 'builtin') return this.context.builtins.get(call.target.name)?.arity ?? EVALUATOR_BUILTINS[call.target.name];
    if (call.target.kind === 'function') return this.functionArity.get(call.target.path.join('.'));
    return undefined;
  }

  resolveTerm(term: Term, scope: Scope): Term {
    switch (term.type) {
      case 'scalar':
        return term;
      case 'var':
        return this.resolveVar(term, scope);
      case 'ref': {
        const head = this.resolveTerm(term.head, scope);
        const path = term.path.map((part) => this.resolveTerm(part, scope));
        if (head.type === 'ref') return { ...term, head: head.head, path: [...head.path, ...path] };
        return { ...term, head, path };
      }
      case 'array':
        return foldConstant({ ...term, items: term.items.map((item) => this.resolveTerm(item, scope)) });
      case 'set':
        return foldConstant({ ...term, items: term.items.map((item) => this.resolveTerm(item, scope)) });
      case 'object':
        return foldConstant({ ...term, entries: term.entries.map(([k, v]) => [this.resolveTerm(k, scope), this.resolveTerm(v, scope)] as [Term, Term]) });
      case 'call':
        return this.resolveCall(term, scope);
      case 'arraycomp':
      case 'setcomp': {
        const inner: Scope = { parent: scope, declared: new Map() };
        const body = this.resolveBody(term.body, inner, true);
        return { ...term, body, term: this.resolveTerm(term.term, inner) };
      }
      case 'objectcomp': {
        const inner: Scope = { parent: scope, declared: new Map() };
        const body = this.resolveBody(term.body, inner, true);
        return { ...term, body, key: this.resolveTerm(term.key, inner), value: this.resolveTerm(term.value, inner) };
      }
      case 'template':
        return {
          ...term,
          parts: term.parts.map((part) =>
            typeof part === 'string' ? part : { term: this.resolveTerm(part.term, scope), withs: part.withs.map((w) => this.resolveWith(w, scope)) },
          ),
        };
    }
  }

  private resolveVar(term: VarTerm, scope: Scope): Term {
    if (term.name === '_') return { ...term, name: `_$${++uniqueCounter}` };
    const declared = this.lookupDeclared(scope, term.name);
    if (declared !== undefined) return declared === term.name ? term : { ...term, name: declared };
    if (GLOBAL_ROOTS.has(term.name)) return term;
    const imported = this.names.imports.get(term.name);
    if (imported) return { ...imported, location: term.location };
    if (this.names.ruleNames.has(term.name)) return dataRef([...this.names.packagePath, term.name], term.location);
    return term;
  }

  /** `allowOutput`: the call is a whole expression, so one extra argument may receive its result. */
  resolveCall(term: CallTerm, scope: Scope, allowOutput = false): CallTerm {
    const resolved = this.resolveCallTarget(term, scope);
    const arity = this.arityOf(resolved);
    if (arity !== undefined && arity >= 0 && resolved.args.length !== arity && !(allowOutput && resolved.args.length === arity + 1)) {
      throw new CompileError('rego_type_error', term.location, `${term.name.join('.')}: arity mismatch: have ${resolved.args.length} operands, want ${arity}`);
    }
    return resolved;
  }

  private resolveCallTarget(term: CallTerm, scope: Scope): CallTerm {
    const args = term.args.map((arg) => this.resolveTerm(arg, scope));
    const [first, ...rest] = term.name;
    let path: string[] | null = null;
    if (first === 'data') path = rest;
    else if (first !== undefined && this.names.imports.has(first) && !this.lookupDeclared(scope, first)) {
      const prefix = staticPrefix(this.names.imports.get(first) as Term);
      if (prefix && prefix.root === 'data') path = [...prefix.path, ...rest];
    } else if (first !== undefined && this.names.ruleNames.has(first) && !this.lookupDeclared(scope, first)) {
      path = [...this.names.packagePath, ...term.name];
    }
    if (path) {
      if (!this.functionArity.has(path.join('.'))) {
        throw new CompileError('rego_type_error', term.location, `undefined function data.${path.join('.')}`);
      }
      return { ...term, args, target: { kind: 'function', path } };
    }
    const name = term.name.join('.');
    if (this.context.builtins.has(name) || name in EVALUATOR_BUILTINS) return { ...term, args, target: { kind: 'builtin', name } };
    throw new CompileError('rego_type_error', term.location, `undefined function ${name}`);
  }
}

/** A collection literal of constants becomes one constant, built once instead of on every evaluation. */
function foldConstant(term: Term): Term {
  const isConstant = (inner: Term): inner is Extract<Term, { type: 'scalar' }> => inner.type === 'scalar';
  switch (term.type) {
    case 'array':
      return term.items.every(isConstant) ? { type: 'scalar', value: term.items.map((item) => (item as { value: RegoValue }).value), location: term.location } : term;
    case 'set':
      return term.items.every(isConstant)
        ? { type: 'scalar', value: RegoSet.of(term.items.map((item) => (item as { value: RegoValue }).value)), location: term.location }
        : term;
    case 'object':
      return term.entries.every(([key, value]) => isConstant(key) && isConstant(value))
        ? {
            type: 'scalar',
            value: RegoObject.fromEntries(term.entries.map(([key, value]) => [(key as { value: RegoValue }).value, (value as { value: RegoValue }).value])),
            location: term.location,
          }
        : term;
    default:
      return term;
  }
}

function extendStatic(term: Term, path: string[], location: SourceLocation): Term {
  if (path.length === 0) return term;
  const extra = path.map((part) => scalar(part, location));
  if (term.type === 'ref') return { ...term, path: [...term.path, ...extra] };
  return { type: 'ref', head: term, path: extra, location };
}

// ---------------------------------------------------------------------------------------------------------------
// Safety: which variables an expression needs bound, and which it binds.

interface VarUse {
  /** Variables that must be bound before the expression runs. */
  inputs: Set<string>;
  /** Variables the expression binds (pattern positions, ref operands it iterates). */
  outputs: Set<string>;
}

function isGenerated(name: string): boolean {
  return name.startsWith('_$');
}

/** Every variable occurring in a term; `deep` includes the bodies of comprehensions. */
function allVars(term: Term, out: Set<string>, deep = true): void {
  switch (term.type) {
    case 'var':
      if (term.name !== 'data' && term.name !== 'input') out.add(term.name);
      return;
    case 'scalar':
      return;
    case 'ref':
      allVars(term.head, out, deep);
      for (const part of term.path) allVars(part, out, deep);
      return;
    case 'array':
    case 'set':
      for (const item of term.items) allVars(item, out, deep);
      return;
    case 'object':
      for (const [k, v] of term.entries) {
        allVars(k, out, deep);
        allVars(v, out, deep);
      }
      return;
    case 'call':
      for (const arg of term.args) allVars(arg, out, deep);
      return;
    case 'arraycomp':
    case 'setcomp':
      if (!deep) return;
      allVars(term.term, out);
      for (const expr of term.body) exprVars(expr, out);
      return;
    case 'objectcomp':
      if (!deep) return;
      allVars(term.key, out);
      allVars(term.value, out);
      for (const expr of term.body) exprVars(expr, out);
      return;
    case 'template':
      for (const part of term.parts) if (typeof part !== 'string') allVars(part.term, out, deep);
      return;
  }
}

function exprVars(expr: Expr, out: Set<string>, deep = true): void {
  switch (expr.kind) {
    case 'term':
      allVars(expr.term, out, deep);
      break;
    case 'unify':
    case 'assign':
      allVars(expr.left, out, deep);
      allVars(expr.right, out, deep);
      break;
    case 'some':
      break;
    case 'somein':
      if (expr.key) allVars(expr.key, out, deep);
      allVars(expr.value, out, deep);
      allVars(expr.domain, out, deep);
      break;
    case 'every':
      allVars(expr.domain, out, deep);
      if (deep) for (const inner of expr.body) exprVars(inner, out);
      break;
  }
  for (const modifier of expr.withs) if (!modifier.replacement) allVars(modifier.value, out, deep);
}

/**
 * Classifies the variables of a term used as a value: ref operands are generated (iterated), everything else
 * (call arguments, ref heads, comprehension closures, object keys) is an input. `outer` names the variables the
 * enclosing body knows, so a comprehension's own locals do not count as inputs.
 */
function termUse(term: Term, use: VarUse, outer: Set<string>, pattern: boolean): void {
  switch (term.type) {
    case 'var':
      if (term.name === 'data' || term.name === 'input') return;
      if (pattern) use.outputs.add(term.name);
      else use.inputs.add(term.name);
      return;
    case 'scalar':
      return;
    case 'ref':
      termUse(term.head, use, outer, false);
      for (const part of term.path) termUse(part, use, outer, true);
      return;
    case 'array':
      for (const item of term.items) termUse(item, use, outer, pattern);
      return;
    case 'set':
      for (const item of term.items) termUse(item, use, outer, false);
      return;
    case 'object':
      for (const [k, v] of term.entries) {
        termUse(k, use, outer, false);
        termUse(v, use, outer, pattern);
      }
      return;
    case 'call':
      for (const arg of term.args) termUse(arg, use, outer, false);
      return;
    case 'arraycomp':
    case 'setcomp':
    case 'objectcomp': {
      const inner = new Set<string>();
      allVars(term, inner);
      for (const name of inner) if (outer.has(name)) use.inputs.add(name);
      return;
    }
    case 'template':
      for (const part of term.parts) if (typeof part !== 'string') termUse(part.term, use, outer, false);
      return;
  }
}

function exprUse(expr: Expr, outer: Set<string>, others: Set<string> = outer): VarUse {
  const use: VarUse = { inputs: new Set(), outputs: new Set() };
  switch (expr.kind) {
    case 'term':
      termUse(expr.term, use, outer, false);
      break;
    case 'unify':
    case 'assign':
      termUse(expr.left, use, outer, true);
      termUse(expr.right, use, outer, true);
      break;
    case 'some':
      break;
    case 'somein':
      termUse(expr.domain, use, outer, false);
      if (expr.key) termUse(expr.key, use, outer, true);
      termUse(expr.value, use, outer, true);
      break;
    case 'every': {
      termUse(expr.domain, use, outer, false);
      const inner = new Set<string>();
      for (const innerExpr of expr.body) exprVars(innerExpr, inner);
      for (const name of inner) if (outer.has(name)) use.inputs.add(name);
      break;
    }
  }
  for (const modifier of expr.withs) if (!modifier.replacement) termUse(modifier.value, use, outer, false);
  if (expr.negated) {
    for (const name of use.outputs) if (others.has(name)) use.inputs.add(name);
    for (const name of [...use.inputs]) if (!others.has(name)) use.inputs.delete(name);
    use.outputs.clear();
  }
  return use;
}

/** Whether one side of a unification can be computed: its remaining free variables are ref operands it iterates. */
function sideComputable(term: Term, bound: Set<string>, outer: Set<string>): boolean {
  if (term.type === 'var') return bound.has(term.name) || term.name === 'data' || term.name === 'input';
  if (term.type === 'array') return term.items.every((item) => sideComputable(item, bound, outer));
  if (term.type === 'object') return term.entries.every(([, v]) => sideComputable(v, bound, outer));
  const use: VarUse = { inputs: new Set(), outputs: new Set() };
  termUse(term, use, outer, false);
  for (const name of use.inputs) if (!bound.has(name)) return false;
  return true;
}

function unifySafe(left: Term, right: Term, bound: Set<string>, outer: Set<string>): boolean {
  if (left.type === 'array' && right.type === 'array' && left.items.length === right.items.length) {
    return left.items.every((item, index) => unifySafe(item, right.items[index] as Term, bound, outer));
  }
  if (left.type === 'object' && right.type === 'object' && left.entries.length === right.entries.length) {
    const pairs = left.entries.map(([key, value]) => [value, right.entries.find(([other]) => other.type === 'scalar' && key.type === 'scalar' && other.value === key.value)?.[1]] as const);
    if (pairs.every(([, other]) => other !== undefined)) return pairs.every(([value, other]) => unifySafe(value, other as Term, bound, outer));
  }
  return sideComputable(left, bound, outer) || sideComputable(right, bound, outer);
}

function firstUnbound(use: VarUse, bound: Set<string>): string | undefined {
  for (const name of use.inputs) if (!bound.has(name) && !use.outputs.has(name)) return name;
  return undefined;
}

function displayName(name: string): string {
  const marker = name.indexOf('$');
  return marker > 0 ? name.slice(0, marker) : name;
}

/**
 * Reorders a body so each expression's inputs are bound before it runs; fails with `var x is unsafe` otherwise.
 * Nested bodies (comprehensions, every, negation) are reordered with the variables bound at their position.
 */
export function reorderBody(body: Expr[], initiallyBound: Set<string>, outer: Set<string>): Expr[] {
  const bound = new Set(initiallyBound);
  const known = new Set(outer);
  const shallow = body.map((expr) => {
    const vars = new Set<string>();
    exprVars(expr, vars, false);
    return vars;
  });
  for (const vars of shallow) for (const name of vars) known.add(name);
  const othersOf = new Map<Expr, Set<string>>();
  body.forEach((expr, index) => {
    if (!expr.negated) return;
    const others = new Set(outer);
    shallow.forEach((vars, other) => {
      if (other !== index) for (const name of vars) others.add(name);
    });
    othersOf.set(expr, others);
  });
  const useOf = (expr: Expr): VarUse => exprUse(expr, known, othersOf.get(expr) ?? known);
  const pending = [...body];
  const ordered: Expr[] = [];
  while (pending.length > 0) {
    let picked = -1;
    for (let index = 0; index < pending.length; index++) {
      const expr = pending[index] as Expr;
      const use = useOf(expr);
      if (firstUnbound(use, bound) !== undefined) continue;
      if ((expr.kind === 'unify' || expr.kind === 'assign') && !expr.negated && !unifySafe(expr.left, expr.right, bound, known)) continue;
      picked = index;
      break;
    }
    if (picked < 0) {
      const expr = pending[0] as Expr;
      const use = useOf(expr);
      // Name a variable the author wrote (not a wildcard) when there is one.
      const candidates = [...use.inputs, ...use.outputs].filter((name) => !bound.has(name));
      const name = candidates.find((candidate) => !isGenerated(candidate)) ?? candidates[0] ?? '_';
      throw new CompileError('rego_unsafe_var_error', expr.location, `var ${displayName(name)} is unsafe`);
    }
    const [expr] = pending.splice(picked, 1) as [Expr];
    const use = useOf(expr);
    ordered.push(reorderNested(expr, bound, known));
    if (!expr.negated) for (const name of use.outputs) bound.add(name);
  }
  return ordered;
}

function reorderNested(expr: Expr, bound: Set<string>, outer: Set<string>): Expr {
  const withTerms = (term: Term): Term => reorderTerm(term, bound, outer);
  switch (expr.kind) {
    case 'term':
      return { ...expr, term: withTerms(expr.term) };
    case 'unify':
    case 'assign':
      return { ...expr, left: withTerms(expr.left), right: withTerms(expr.right) };
    case 'somein':
      return { ...expr, domain: withTerms(expr.domain) };
    case 'every': {
      const innerBound = new Set(bound);
      if (expr.key) allVars(expr.key, innerBound);
      allVars(expr.value, innerBound);
      return { ...expr, domain: withTerms(expr.domain), body: reorderBody(expr.body, innerBound, outer) };
    }
    default:
      return expr;
  }
}

function reorderTerm(term: Term, bound: Set<string>, outer: Set<string>): Term {
  const recurse = (inner: Term): Term => reorderTerm(inner, bound, outer);
  switch (term.type) {
    case 'ref':
      return { ...term, head: recurse(term.head), path: term.path.map(recurse) };
    case 'array':
    case 'set':
      return { ...term, items: term.items.map(recurse) };
    case 'object':
      return { ...term, entries: term.entries.map(([k, v]) => [recurse(k), recurse(v)] as [Term, Term]) };
    case 'call':
      return { ...term, args: term.args.map(recurse) };
    case 'arraycomp':
    case 'setcomp': {
      const body = reorderBody(term.body, bound, outer);
      return { ...term, body, term: reorderTerm(term.term, bound, outer) };
    }
    case 'objectcomp':
      return { ...term, body: reorderBody(term.body, bound, outer) };
    default:
      return term;
  }
}

// ---------------------------------------------------------------------------------------------------------------

export interface CompileLimits {
  maxRules: number;
}

export interface CompiledModules {
  root: RuleNode;
  /** Parameter count of every function, by dotted path below `data`. */
  functionArity: Map<string, number>;
  packages: string[][];
}

function ruleStaticPath(rule: Rule): { path: string[]; rest: Term[] } {
  const path = [...rule.packagePath];
  let index = 0;
  for (; index < rule.head.length; index++) {
    const part = rule.head[index] as Term;
    if (part.type !== 'scalar' || typeof part.value !== 'string') break;
    path.push(part.value);
  }
  return { path, rest: rule.head.slice(index) };
}

export interface CompileModulesOptions {
  /** Build rule indexes (the default); off, every rule is evaluated, which tests use to check the index changes nothing. */
  indexRules: boolean;
}

export function compileModules(modules: Module[], context: CompileContext, limits: CompileLimits, options: CompileModulesOptions = { indexRules: true }): CompiledModules {
  const root = new RuleNode([]);
  const functionArity = new Map<string, number>();
  let ruleCount = 0;
  const ruleNamesByPackage = new Map<string, Set<string>>();
  for (const module of modules) {
    const key = module.packagePath.join('.');
    const names = ruleNamesByPackage.get(key) ?? new Set<string>();
    ruleNamesByPackage.set(key, names);
    for (const rule of module.rules) {
      const first = rule.head[0] as Term;
      if (first.type === 'scalar' && typeof first.value === 'string') names.add(first.value);
      if (rule.kind === 'function') {
        const { path } = ruleStaticPath(rule);
        functionArity.set(path.join('.'), (rule.args ?? []).length);
      }
      ruleCount++;
      if (ruleCount > limits.maxRules) throw new CompileError('rego_compile_error', rule.location, `policy has more than ${limits.maxRules} rules`);
    }
  }

  for (const module of modules) {
    const imports = new Map<string, Term>();
    for (const entry of module.imports) {
      const prefix = staticPrefix(entry.path);
      if (!prefix) continue;
      if (prefix.root === 'future' || prefix.root === 'rego') continue;
      if (prefix.root !== 'data' && prefix.root !== 'input') {
        throw new CompileError('rego_parse_error', entry.location, 'invalid import, must begin with one of: {data, future, input, rego}');
      }
      const alias = entry.alias ?? (prefix.path.length > 0 ? (prefix.path[prefix.path.length - 1] as string) : prefix.root);
      if (alias === prefix.root && prefix.path.length === 0) continue;
      imports.set(alias, entry.path);
    }
    const names: ModuleNames = {
      packagePath: module.packagePath,
      ruleNames: ruleNamesByPackage.get(module.packagePath.join('.')) ?? new Set(),
      imports,
    };
    const resolver = new NameResolver(names, context, functionArity);
    let packageNode = root;
    for (const part of module.packagePath) packageNode = packageNode.child(part);
    packageNode.isPackage = true;
    for (const rule of module.rules) {
      const { path, rest } = ruleStaticPath(rule);
      const compiled = compileRule(rule, rest, resolver);
      let node = root;
      for (const part of path) node = node.child(part);
      if (rule.isDefault) {
        if (node.defaultRule) throw new CompileError('rego_type_error', rule.location, `multiple default rules data.${path.join('.')} found`);
        node.defaultRule = compiled;
      } else if (rule.kind === 'function') node.functions.push(compiled);
      else node.rules.push(compiled);
    }
  }
  checkRuleKinds(root);
  checkRecursion(root);
  if (options.indexRules) indexRuleTree(root, root);
  else setDocumentKinds(root);
  const packages = [...ruleNamesByPackage.keys()].map((key) => key.split('.'));
  return { root, functionArity, packages };
}

function compileRule(rule: Rule, rest: Term[], resolver: NameResolver): CompiledRule {
  const scope: Scope = { parent: null, declared: new Map() };
  const bound = new Set<string>();
  let args: Term[] | null = null;
  if (rule.args) {
    for (const arg of rule.args) resolver.declareParameter(arg, scope);
    args = rule.args.map((arg) => resolver.resolveTerm(arg, scope));
    for (const arg of args) allVars(arg, bound);
  }
  const resolvedBody = resolver.resolveBody(rule.body, scope, false);
  const resolvedRest = rest.map((term) => resolver.resolveTerm(term, scope));
  const value = rule.value ? resolver.resolveTerm(rule.value, scope) : null;
  const outer = new Set<string>(bound);
  for (const term of [...resolvedRest, ...(value ? [value] : [])]) allVars(term, outer);
  const body = reorderBody(resolvedBody, bound, outer);
  // Head variables must be bound by the body.
  const afterBody = new Set(bound);
  for (const expr of body) if (!expr.negated) for (const name of exprUse(expr, outer).outputs) afterBody.add(name);
  for (const expr of body) if (!expr.negated) exprVars(expr, afterBody);
  for (const term of [...resolvedRest, ...(value ? [value] : [])]) {
    const use: VarUse = { inputs: new Set(), outputs: new Set() };
    termUse(term, use, afterBody, false);
    const unsafe = firstUnbound(use, afterBody);
    if (unsafe !== undefined) throw new CompileError('rego_unsafe_var_error', term.location, `var ${displayName(unsafe)} is unsafe`);
  }
  return {
    rule,
    rest: resolvedRest,
    body,
    value,
    args,
    elseRule: rule.elseRule ? compileRule({ ...rule.elseRule, args: rule.args }, rest, resolver) : null,
  };
}

/** One path holds one kind of document: a complete value, a set, an object built from keys, or a function. */
function checkRuleKinds(node: RuleNode): void {
  const kindOf = (rule: CompiledRule): string => (rule.rule.kind === 'function' ? 'function' : rule.rest.length > 0 ? 'object' : rule.rule.kind);
  const rules = [...node.rules, ...node.functions, ...(node.defaultRule ? [node.defaultRule] : [])];
  const first = rules[0];
  if (first) {
    const kind = kindOf(first);
    for (const rule of rules) {
      const other = kindOf(rule);
      const compatible = other === kind || (rule.rule.isDefault && kind === 'complete' && other === 'complete');
      if (!compatible) throw new CompileError('rego_type_error', rule.rule.location, `conflicting rules data.${node.path.join('.')} found`);
    }
    const arities = new Set([...node.functions, ...(node.defaultRule?.args ? [node.defaultRule] : [])].map((rule) => (rule.args ?? []).length));
    if (arities.size > 1) throw new CompileError('rego_type_error', first.rule.location, `conflicting rules data.${node.path.join('.')} found`);
  }
  for (const child of node.children.values()) checkRuleKinds(child);
}

// ---------------------------------------------------------------------------------------------------------------
// Recursion: a rule may not depend (through data refs or function calls) on itself.

function collectDataRefs(term: Term, out: string[][]): void {
  switch (term.type) {
    case 'ref': {
      const prefix = staticPrefix(term);
      // A dynamic ref (`data[x]...`) has no static target; the evaluator guards it at run time.
      if (prefix && prefix.root === 'data' && (prefix.rest.length === 0 || prefix.path.length > 0)) out.push(prefix.path);
      if (term.head.type !== 'var') collectDataRefs(term.head, out);
      for (const part of term.path) collectDataRefs(part, out);
      return;
    }
    case 'var':
      if (term.name === 'data') out.push([]);
      return;
    case 'call':
      if (term.target.kind === 'function') out.push(term.target.path);
      for (const arg of term.args) collectDataRefs(arg, out);
      return;
    case 'array':
    case 'set':
      for (const item of term.items) collectDataRefs(item, out);
      return;
    case 'object':
      for (const [k, v] of term.entries) {
        collectDataRefs(k, out);
        collectDataRefs(v, out);
      }
      return;
    case 'arraycomp':
    case 'setcomp':
      collectDataRefs(term.term, out);
      for (const expr of term.body) collectExprRefs(expr, out);
      return;
    case 'objectcomp':
      collectDataRefs(term.key, out);
      collectDataRefs(term.value, out);
      for (const expr of term.body) collectExprRefs(expr, out);
      return;
    case 'template':
      for (const part of term.parts) if (typeof part !== 'string') collectDataRefs(part.term, out);
      return;
    default:
      return;
  }
}

function collectExprRefs(expr: Expr, out: string[][]): void {
  switch (expr.kind) {
    case 'term':
      collectDataRefs(expr.term, out);
      break;
    case 'unify':
    case 'assign':
      collectDataRefs(expr.left, out);
      collectDataRefs(expr.right, out);
      break;
    case 'somein':
      collectDataRefs(expr.domain, out);
      break;
    case 'every':
      collectDataRefs(expr.domain, out);
      for (const inner of expr.body) collectExprRefs(inner, out);
      break;
    default:
      break;
  }
  for (const modifier of expr.withs) {
    collectDataRefs(modifier.value, out);
    if (modifier.replacement?.kind === 'function') out.push(modifier.replacement.path);
  }
}

function ruleRefs(rule: CompiledRule, out: string[][]): void {
  for (const expr of rule.body) collectExprRefs(expr, out);
  for (const term of rule.rest) collectDataRefs(term, out);
  if (rule.value) collectDataRefs(rule.value, out);
  if (rule.elseRule) ruleRefs(rule.elseRule, out);
}

function checkRecursion(root: RuleNode): void {
  const ruleNodes: RuleNode[] = [];
  const visit = (node: RuleNode): void => {
    if (node.hasRules) ruleNodes.push(node);
    for (const child of node.children.values()) visit(child);
  };
  visit(root);
  const dependencies = new Map<RuleNode, Set<RuleNode>>();
  const targets = (path: string[]): RuleNode[] => {
    const found: RuleNode[] = [];
    let node: RuleNode | undefined = root;
    for (const part of path) {
      if (node.hasRules) found.push(node);
      node = node.children.get(part);
      if (!node) return found;
    }
    const below = (inner: RuleNode): void => {
      if (inner.hasRules) found.push(inner);
      for (const child of inner.children.values()) below(child);
    };
    below(node);
    return found;
  };
  for (const node of ruleNodes) {
    const refs: string[][] = [];
    for (const rule of [...node.rules, ...node.functions, ...(node.defaultRule ? [node.defaultRule] : [])]) ruleRefs(rule, refs);
    const set = new Set<RuleNode>();
    for (const ref of refs) for (const target of targets(ref)) set.add(target);
    dependencies.set(node, set);
  }
  const state = new Map<RuleNode, 'active' | 'done'>();
  const stack: RuleNode[] = [];
  const dfs = (node: RuleNode): void => {
    state.set(node, 'active');
    stack.push(node);
    for (const next of dependencies.get(node) ?? []) {
      const seen = state.get(next);
      if (seen === 'active') {
        const cycle = [...stack.slice(stack.indexOf(next)), next].map((n) => `data.${n.path.join('.')}`);
        const rule = next.rules[0] ?? next.functions[0] ?? next.defaultRule;
        const location = rule?.rule.location ?? { file: '', row: 0, col: 0 };
        throw new CompileError('rego_recursion_error', location, `rule data.${next.path.join('.')} is recursive: ${cycle.join(' -> ')}`);
      }
      if (seen === undefined) dfs(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of ruleNodes) if (!state.has(node)) dfs(node);
}

/** Compiles a query body in no package: bare names are variables. */
export function compileQuery(body: Expr[], context: CompileContext, functionArity: Map<string, number>): Expr[] {
  const resolver = new NameResolver({ packagePath: [], ruleNames: new Set(), imports: new Map() }, context, functionArity);
  const scope: Scope = { parent: null, declared: new Map() };
  const resolved = resolver.resolveBody(body, scope, false);
  return reorderBody(resolved, new Set(), new Set());
}

// ---------------------------------------------------------------------------------------------------------------
// Rule indexing, after OPA: most rules of one name differ by the constant that one ref must equal
// (`input.operation_id == "x"`, `input.method in {"GET", "HEAD"}`, `f("x") := ...`). The index maps each such
// constant to the rules that can hold for it, so an evaluation reads the ref once and evaluates only those rules,
// plus the rules the ref does not restrict, in their original order. The tests stay in the bodies: the index only
// skips rules whose bodies are certain to fail, so values, else chains, defaults and conflicts are unchanged.

/**
 * What an index test reads. `input` and base `data` refs have constant operands, so they have one value per
 * evaluation context (the evaluator reads them in the context, so `with input as ...` is honoured); `data` refs
 * reach no rule (reading them can neither fail nor recurse). Function arguments are the call's values.
 */
export type IndexedRef = { kind: 'input'; path: RegoValue[] } | { kind: 'data'; term: Term } | { kind: 'argument'; position: number };

/** A set of scalar constants; strings apart, so that a string never collides with another scalar's canonical text. */
export interface ScalarSet {
  strings: Set<string>;
  others: Set<string>;
}

/** The value of `refs[ref]` must be one of `accepted`, or the rule cannot hold. */
export interface IndexTest {
  ref: number;
  accepted: ScalarSet;
}

export interface IndexedRule {
  rule: CompiledRule;
  /** Position in the node's rule list: candidates from two lists are evaluated in this order. */
  position: number;
  /** Tests on refs other than the primary one, checked before the body is entered. */
  residual: IndexTest[];
}

export interface RuleIndex {
  /** `refs[0]` is the primary ref, the one most rules test. */
  refs: IndexedRef[];
  /** Rules that can hold when the primary ref is a string (or another scalar, by canonical text). */
  byString: Map<string, IndexedRule[]>;
  byOther: Map<string, IndexedRule[]>;
  /** Rules the primary ref does not restrict: candidates whatever its value. */
  unrestricted: IndexedRule[];
}

/** The key a scalar has in an index, or undefined for collections (never index constants). */
export function scalarIndexKey(value: RegoValue): string | undefined {
  if (typeof value === 'string') return value;
  if (value === null || typeof value === 'boolean' || typeof value === 'number' || typeof value === 'bigint') return canonicalKey(value);
  return undefined;
}

export function scalarSetHas(set: ScalarSet, value: RegoValue): boolean {
  if (typeof value === 'string') return set.strings.has(value);
  const key = scalarIndexKey(value);
  return key !== undefined && set.others.has(key);
}

function scalarSetOf(values: RegoValue[]): ScalarSet | undefined {
  const set: ScalarSet = { strings: new Set(), others: new Set() };
  for (const value of values) {
    const key = scalarIndexKey(value);
    if (key === undefined) return undefined;
    if (typeof value === 'string') set.strings.add(value);
    else set.others.add(key);
  }
  return set;
}

function intersectScalarSets(a: ScalarSet, b: ScalarSet): ScalarSet {
  return { strings: new Set([...a.strings].filter((key) => b.strings.has(key))), others: new Set([...a.others].filter((key) => b.others.has(key))) };
}

function uniteScalarSets(a: ScalarSet, b: ScalarSet): ScalarSet {
  return { strings: new Set([...a.strings, ...b.strings]), others: new Set([...a.others, ...b.others]) };
}

interface RefCandidate {
  key: string;
  ref: IndexedRef;
}

class IndexTestFinder {
  /** Function parameters that are plain variables: a body test on one is a test on that argument. */
  private readonly parameters = new Map<string, number>();

  private readonly root: RuleNode;
  constructor(
    root: RuleNode,
    parameters: Term[] | null,
  ) {
    this.root = root;
    parameters?.forEach((parameter, position) => {
      if (parameter.type === 'var' && !this.parameters.has(parameter.name)) this.parameters.set(parameter.name, position);
    });
  }

  /** A ref reaching base data only: no rule at or above any prefix of it, and it leaves the rule tree. */
  private isBaseData(path: RegoValue[]): boolean {
    let node: RuleNode | undefined = this.root;
    for (const part of path) {
      if (node.hasRules) return false;
      if (typeof part !== 'string') return false;
      node = node.children.get(part);
      if (!node) return true;
    }
    return false;
  }

  private refOf(term: Term): RefCandidate | undefined {
    if (term.type === 'var') {
      const position = this.parameters.get(term.name);
      if (position !== undefined) return { key: `a${position}`, ref: { kind: 'argument', position } };
      return term.name === 'input' ? { key: 'i', ref: { kind: 'input', path: [] } } : undefined;
    }
    if (term.type !== 'ref' || term.head.type !== 'var') return undefined;
    const path: RegoValue[] = [];
    for (const part of term.path) {
      if (part.type !== 'scalar' || scalarIndexKey(part.value) === undefined) return undefined;
      path.push(part.value);
    }
    const key = path.map((part) => canonicalKey(part)).join('\u0000');
    if (term.head.name === 'input') return { key: `i${key}`, ref: { kind: 'input', path } };
    if (term.head.name === 'data' && this.isBaseData(path)) return { key: `d${key}`, ref: { kind: 'data', term } };
    return undefined;
  }

  /** `ref == c`, `c == ref`, `ref = c`, `ref in {c1, c2}` (constant sets, arrays or object values of scalars). */
  private testOf(expr: Expr): { ref: RefCandidate; accepted: ScalarSet } | undefined {
    if (expr.negated || expr.withs.length > 0) return undefined;
    let left: Term;
    let right: Term;
    if (expr.kind === 'unify') {
      left = expr.left;
      right = expr.right;
    } else if (expr.kind === 'term' && expr.term.type === 'call' && expr.term.target.kind === 'builtin' && expr.term.args.length === 2) {
      const name = expr.term.target.name;
      const [first, second] = expr.term.args as [Term, Term];
      if (name === 'internal.member_2') {
        const ref = this.refOf(first);
        if (!ref || second.type !== 'scalar') return undefined;
        const collection = second.value;
        const members = Array.isArray(collection)
          ? collection
          : collection instanceof RegoSet
            ? [...collection.values()]
            : collection instanceof RegoObject
              ? [...collection.entries()].map(([, member]) => member)
              : undefined;
        const accepted = members && scalarSetOf(members);
        return accepted ? { ref, accepted } : undefined;
      }
      if (name !== 'equal') return undefined;
      left = first;
      right = second;
    } else return undefined;
    const [refTerm, constant] = right.type === 'scalar' ? [left, right] : [right, left];
    if (constant.type !== 'scalar') return undefined;
    const ref = this.refOf(refTerm);
    const accepted = scalarSetOf([constant.value]);
    return ref && accepted ? { ref, accepted } : undefined;
  }

  /** Every test one body (with its head's constant parameters) imposes, one per ref. */
  testsOf(rule: CompiledRule): Map<string, { ref: IndexedRef; accepted: ScalarSet }> {
    const tests = new Map<string, { ref: IndexedRef; accepted: ScalarSet }>();
    const add = (ref: RefCandidate, accepted: ScalarSet): void => {
      const existing = tests.get(ref.key);
      tests.set(ref.key, { ref: ref.ref, accepted: existing ? intersectScalarSets(existing.accepted, accepted) : accepted });
    };
    rule.args?.forEach((parameter, position) => {
      const accepted = parameter.type === 'scalar' ? scalarSetOf([parameter.value]) : undefined;
      if (accepted) add({ key: `a${position}`, ref: { kind: 'argument', position } }, accepted);
    });
    for (const expr of rule.body) {
      const test = this.testOf(expr);
      if (test) add(test.ref, test.accepted);
    }
    return tests;
  }
}

/**
 * The tests a rule with its else chain imposes: the chain yields nothing unless one of its bodies holds, so a ref
 * tested by every body must take a value one of them accepts.
 */
function chainTests(rule: CompiledRule, finder: IndexTestFinder): Map<string, { ref: IndexedRef; accepted: ScalarSet }> {
  let tests = finder.testsOf(rule);
  for (let member = rule.elseRule; member && tests.size > 0; member = member.elseRule) {
    const others = finder.testsOf(member);
    const united = new Map<string, { ref: IndexedRef; accepted: ScalarSet }>();
    for (const [key, test] of tests) {
      const other = others.get(key);
      if (other) united.set(key, { ref: test.ref, accepted: uniteScalarSets(test.accepted, other.accepted) });
    }
    tests = united;
  }
  return tests;
}

/** An index over one list of rules, or null when there is nothing to gain (one rule, or no rule tests a ref). */
export function buildRuleIndex(rules: CompiledRule[], root: RuleNode): RuleIndex | null {
  if (rules.length < 2) return null;
  // A parameter named like a root document would make `input`/`data` mean two things: leave such functions be.
  const shadowsRoot = (parameter: Term): boolean => parameter.type === 'var' && (parameter.name === 'input' || parameter.name === 'data');
  if (rules.some((rule) => rule.args?.some(shadowsRoot))) return null;
  const perRule = rules.map((rule) => chainTests(rule, new IndexTestFinder(root, rule.args)));
  const usage = new Map<string, number>();
  for (const tests of perRule) for (const key of tests.keys()) usage.set(key, (usage.get(key) ?? 0) + 1);
  let primary: string | undefined;
  for (const [key, count] of usage) if (primary === undefined || count > (usage.get(primary) ?? 0)) primary = key;
  if (primary === undefined) return null;
  const refIds = new Map<string, number>();
  const refs: IndexedRef[] = [];
  const idOf = (key: string, ref: IndexedRef): number => {
    let id = refIds.get(key);
    if (id === undefined) {
      id = refs.push(ref) - 1;
      refIds.set(key, id);
    }
    return id;
  };
  const primaryKey = primary;
  const primaryRef = perRule.find((tests) => tests.has(primaryKey))?.get(primaryKey)?.ref as IndexedRef;
  idOf(primaryKey, primaryRef);
  const index: RuleIndex = { refs, byString: new Map(), byOther: new Map(), unrestricted: [] };
  const append = (map: Map<string, IndexedRule[]>, key: string, indexed: IndexedRule): void => {
    const list = map.get(key);
    if (list) list.push(indexed);
    else map.set(key, [indexed]);
  };
  perRule.forEach((tests, position) => {
    const residual: IndexTest[] = [];
    for (const [key, test] of tests) if (key !== primaryKey) residual.push({ ref: idOf(key, test.ref), accepted: test.accepted });
    const indexed: IndexedRule = { rule: rules[position] as CompiledRule, position, residual };
    const primaryTest = tests.get(primaryKey);
    if (!primaryTest) {
      index.unrestricted.push(indexed);
      return;
    }
    for (const key of primaryTest.accepted.strings) append(index.byString, key, indexed);
    for (const key of primaryTest.accepted.others) append(index.byOther, key, indexed);
  });
  return index;
}

function setDocumentKind(node: RuleNode): void {
  const first = node.rules[0];
  if (first) node.documentKind = first.rest.length > 0 ? 'object' : first.rule.kind === 'partialset' ? 'set' : 'complete';
}

function setDocumentKinds(node: RuleNode): void {
  setDocumentKind(node);
  for (const child of node.children.values()) setDocumentKinds(child);
}

function indexRuleTree(node: RuleNode, root: RuleNode): void {
  setDocumentKind(node);
  node.ruleIndex = buildRuleIndex(node.rules, root);
  node.functionIndex = buildRuleIndex(node.functions, root);
  for (const child of node.children.values()) indexRuleTree(child, root);
}
