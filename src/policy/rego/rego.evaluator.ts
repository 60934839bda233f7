import type { Expr, Term, WithFunction, WithModifier } from './rego.ast.ts';
import { BuiltinError, type BuiltinContext, type BuiltinDefinition } from './rego.builtins.ts';
import { scalarIndexKey, scalarSetHas, type CompiledRule, type IndexedRef, type IndexedRule, type IndexTest, type RuleIndex, type RuleNode } from './rego.compiler.ts';
import type { SourceLocation } from './rego.lexer.ts';
import { canonicalKey, compareValues, RegoObject, RegoSet, valuesEqual, type RegoValue } from './rego.value.ts';
import { termText } from './builtins/term.text.ts';

/**
 * Top-down evaluation with backtracking, in continuation-passing style: every evaluation step calls its continuation
 * once per solution, with the variables of that solution bound in the environment, and undoes its bindings when the
 * continuation returns. A continuation answers `true` to stop the search (negation, `every`, and the first-solution
 * checks need only one solution).
 */
export class EvalError extends Error {
  readonly code: string;
  readonly location: SourceLocation | null;
  readonly detail: string;
  constructor(
    code: string,
    location: SourceLocation | null,
    detail: string,
  ) {
    super(location ? `${location.file}:${location.row}: ${code}: ${detail}` : `${code}: ${detail}`);
    this.code = code;
    this.location = location;
    this.detail = detail;
    this.name = 'EvalError';
  }
}

export interface EvalBudget {
  /** Maximum evaluation steps (expressions evaluated plus collection elements visited). */
  maxSteps: number;
  /**
   * Limit of the process's CPU time spent meanwhile, in milliseconds. CPU time, not wall time: what the budget
   * prevents is one evaluation holding the event loop, and a process that waits for a core on a busy host is not
   * evaluating (a 50 ms wall-clock budget denied a one-line policy on a loaded CI runner).
   */
  maxMilliseconds: number;
}

/** The CPU time this process has used, in microseconds (user and system). */
function cpuMicroseconds(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/**
 * Whether the evaluation used up its CPU time. CPU time cannot run ahead of the wall clock on the evaluating thread,
 * so it is read only once the wall clock says the budget could be spent; when it is not (the process waited for a
 * core), the next look is put off by what is left.
 */
function overTimeBudget(shared: { cpuDeadline: number; nextCpuLook: number }): boolean {
  if (Date.now() < shared.nextCpuLook) return false;
  const left = shared.cpuDeadline - cpuMicroseconds();
  if (left <= 0) return true;
  shared.nextCpuLook = Date.now() + Math.max(1, Math.floor(left / 1000));
  return false;
}

export const DEFAULT_EVAL_BUDGET: EvalBudget = { maxSteps: 1_000_000, maxMilliseconds: 1_000 };

type Continuation = () => boolean;
type ValueContinuation = (value: RegoValue) => boolean;

type Mock = { kind: 'value'; value: RegoValue } | WithFunction;

const UNDEFINED = Symbol('undefined');
type Cached = RegoValue | typeof UNDEFINED;
/** A ref an index test reads that has not been read yet in this evaluation of the rules. */
const UNREAD = Symbol('unread');

interface SharedState {
  steps: number;
  maxSteps: number;
  /** The process CPU time (cpuMicroseconds) past which the evaluation is cancelled. */
  cpuDeadline: number;
  /** When to look at the CPU time next (Date.now()): reading the clock is cheap, reading CPU time is a system call. */
  nextCpuLook: number;
  strict: boolean;
  builtinContext: BuiltinContext;
  builtins: Map<string, BuiltinDefinition>;
  root: RuleNode;
}

interface Context {
  input: RegoValue | undefined;
  baseData: RegoValue;
  /** Data paths replaced by `with`: rules at or below them are hidden behind the replacement. */
  shadowed: string[][];
  mocks: Map<string, Mock>;
  cache: Map<RuleNode, Cached>;
  functionCache: Map<string, Cached>;
  inProgress: Set<RuleNode>;
  shared: SharedState;
}

type Env = Map<string, RegoValue>;

export interface EvaluationOptions {
  input?: RegoValue;
  data: RegoValue;
  strictBuiltinErrors: boolean;
  budget: EvalBudget;
  builtins: Map<string, BuiltinDefinition>;
  root: RuleNode;
  nowNs?: bigint | undefined;
}

function bindVar(env: Env, name: string, value: RegoValue, k: Continuation): boolean {
  env.set(name, value);
  try {
    return k();
  } finally {
    env.delete(name);
  }
}

function isGlobalName(name: string): boolean {
  return name === 'data' || name === 'input';
}

function isUnboundVar(term: Term, env: Env): term is Extract<Term, { type: 'var' }> {
  return term.type === 'var' && !isGlobalName(term.name) && !env.has(term.name);
}

/** A pattern with free variables in unifiable positions (vars, array items, object values). */
function hasUnbound(term: Term, env: Env): boolean {
  switch (term.type) {
    case 'var':
      return isUnboundVar(term, env);
    case 'array':
      return term.items.some((item) => hasUnbound(item, env));
    case 'object':
      return term.entries.some(([, value]) => hasUnbound(value, env));
    default:
      return false;
  }
}

/** A term with every variable bound: it has at most one value and binds nothing. */
function isGround(term: Term, env: Env): boolean {
  switch (term.type) {
    case 'scalar':
      return true;
    case 'var':
      return isGlobalName(term.name) || env.has(term.name);
    case 'ref':
      return isGround(term.head, env) && term.path.every((part) => isGround(part, env));
    case 'array':
    case 'set':
      return term.items.every((item) => isGround(item, env));
    case 'object':
      return term.entries.every(([key, value]) => isGround(key, env) && isGround(value, env));
    case 'call':
      return !(term.target.kind === 'builtin' && term.target.name === 'walk') && term.args.every((arg) => isGround(arg, env));
    case 'template':
      return term.parts.every((part) => typeof part === 'string' || isGround(part.term, env));
    default:
      // Comprehensions have exactly one value; their closure variables are bound (the compiler ordered them so).
      return true;
  }
}

function lookup(value: RegoValue, key: RegoValue): RegoValue | undefined {
  if (Array.isArray(value)) {
    if (typeof key === 'number' && Number.isInteger(key) && key >= 0 && key < value.length) return value[key] as RegoValue;
    return undefined;
  }
  if (value instanceof RegoObject) return value.get(key);
  if (value instanceof RegoSet) return value.has(key) ? key : undefined;
  return undefined;
}

const sortedEntriesCache = new WeakMap<RegoObject, [RegoValue, RegoValue][]>();
const sortedMembersCache = new WeakMap<RegoSet, RegoValue[]>();

/** Object entries in key order: OPA iterates objects and sets sorted, so results do not depend on build order. */
function sortedEntries(object: RegoObject): [RegoValue, RegoValue][] {
  let entries = sortedEntriesCache.get(object);
  if (!entries) {
    entries = [...object.entries()].sort(([a], [b]) => compareValues(a, b));
    sortedEntriesCache.set(object, entries);
  }
  return entries;
}

function sortedMembers(set: RegoSet): RegoValue[] {
  let members = sortedMembersCache.get(set);
  if (!members) {
    members = [...set.values()].sort(compareValues);
    sortedMembersCache.set(set, members);
  }
  return members;
}

/** Calls `visit(key, value)` for each element in OPA's order; stops when it answers true. */
function iterate(collection: RegoValue, visit: (key: RegoValue, value: RegoValue) => boolean): boolean {
  if (Array.isArray(collection)) {
    for (let index = 0; index < collection.length; index++) if (visit(index, collection[index] as RegoValue)) return true;
  } else if (collection instanceof RegoObject) {
    for (const [key, value] of sortedEntries(collection)) if (visit(key, value)) return true;
  } else if (collection instanceof RegoSet) {
    for (const member of sortedMembers(collection)) if (visit(member, member)) return true;
  }
  return false;
}

function valueAt(root: RegoValue | undefined, path: string[]): RegoValue | undefined {
  let current = root;
  for (const part of path) {
    if (!(current instanceof RegoObject)) return undefined;
    current = current.get(part);
  }
  return current;
}

function withValueAt(root: RegoValue | undefined, path: RegoValue[], value: RegoValue): RegoValue {
  if (path.length === 0) return value;
  const object = new RegoObject();
  if (root instanceof RegoObject) for (const [key, member] of root.entries()) object.set(key, member);
  const [first, ...rest] = path as [RegoValue, ...RegoValue[]];
  object.set(first, withValueAt(object.get(first), rest, value));
  return object;
}

/** A context for an expression under `with`: its own caches, since rule values may differ under the modifiers. */
function deriveContext(ctx: Context): Context {
  return { ...ctx, mocks: new Map(ctx.mocks), cache: new Map(), functionCache: new Map(), inProgress: new Set() };
}

function isPrefix(prefix: string[], path: string[]): boolean {
  if (prefix.length > path.length) return false;
  for (let index = 0; index < prefix.length; index++) if (prefix[index] !== path[index]) return false;
  return true;
}

export class Evaluator {
  private readonly root: Context;
  /** Objects that are a rule's value (a leaf), not a path built from rule heads: merging into them is a conflict. */
  private readonly leafValues = new WeakSet<RegoObject>();
  private readonly producers = new Map<RuleNode, CompiledRule>();

  constructor(options: EvaluationOptions) {
    const shared: SharedState = {
      steps: 0,
      maxSteps: options.budget.maxSteps,
      cpuDeadline: cpuMicroseconds() + options.budget.maxMilliseconds * 1000,
      nextCpuLook: Date.now() + options.budget.maxMilliseconds,
      strict: options.strictBuiltinErrors,
      builtinContext: { nowNs: options.nowNs ?? BigInt(Date.now()) * 1_000_000n, cache: new Map() },
      builtins: options.builtins,
      root: options.root,
    };
    this.root = {
      input: options.input,
      baseData: options.data,
      shadowed: [],
      mocks: new Map(),
      cache: new Map(),
      functionCache: new Map(),
      inProgress: new Set(),
      shared,
    };
  }

  /** Runs a compiled query body; `onSolution` sees each solution's bindings. */
  run(body: Expr[], onSolution: (env: Env) => boolean): void {
    const env: Env = new Map();
    try {
      this.evalBody(body, 0, env, this.root, () => onSolution(env));
    } catch (error) {
      if (error instanceof RangeError) throw new EvalError('eval_cancel_error', null, 'evaluation exceeded the maximum depth');
      throw error;
    }
  }

  private step(location: SourceLocation | null): void {
    const shared = this.root.shared;
    shared.steps++;
    if (shared.steps > shared.maxSteps) throw new EvalError('eval_cancel_error', location, 'evaluation step budget exceeded');
    if ((shared.steps & 1023) === 0 && overTimeBudget(shared)) throw new EvalError('eval_cancel_error', location, 'evaluation time budget exceeded');
  }

  /**
   * Deterministic expressions (ground tests, negations, assignments of a ground value) run in a loop, with their
   * bindings undone on the way out; only generators recurse. This keeps the stack depth proportional to the number
   * of generators, not to the length of the body.
   */
  private evalBody(body: Expr[], index: number, env: Env, ctx: Context, k: Continuation): boolean {
    const trail: string[] = [];
    try {
      for (let position = index; position < body.length; position++) {
        const expr = body[position] as Expr;
        const outcome = this.evalDeterministic(expr, env, ctx, trail);
        if (outcome === 'fail') return false;
        if (outcome === 'generic') {
          const next = position + 1;
          return this.evalExpr(expr, env, ctx, () => this.evalBody(body, next, env, ctx, k));
        }
      }
      return k();
    } finally {
      for (const name of trail) env.delete(name);
    }
  }

  private firstValue(term: Term, env: Env, ctx: Context): RegoValue | undefined {
    if (this.isDirect(term, env, ctx)) return this.directValue(term, env, ctx);
    let value: RegoValue | undefined;
    this.evalTerm(term, env, ctx, (found) => {
      value = found;
      return true;
    });
    return value;
  }

  private evalDeterministic(expr: Expr, env: Env, ctx: Context, trail: string[]): 'pass' | 'fail' | 'generic' {
    if (expr.withs.length > 0) return 'generic';
    if (expr.negated) {
      this.step(expr.location);
      return this.evalExprPositive(expr, env, ctx, () => true) ? 'fail' : 'pass';
    }
    switch (expr.kind) {
      case 'some':
        return 'pass';
      case 'term': {
        if (!isGround(expr.term, env)) return 'generic';
        this.step(expr.location);
        const value = this.firstValue(expr.term, env, ctx);
        return value === undefined || value === false ? 'fail' : 'pass';
      }
      case 'unify':
      case 'assign': {
        const leftFree = isUnboundVar(expr.left, env);
        const rightFree = isUnboundVar(expr.right, env);
        if (leftFree === rightFree && !(isGround(expr.left, env) && isGround(expr.right, env))) return 'generic';
        if (leftFree && !isGround(expr.right, env)) return 'generic';
        if (rightFree && !isGround(expr.left, env)) return 'generic';
        this.step(expr.location);
        if (leftFree || rightFree) {
          const target = (leftFree ? expr.left : expr.right) as Extract<Term, { type: 'var' }>;
          const value = this.firstValue(leftFree ? expr.right : expr.left, env, ctx);
          if (value === undefined) return 'fail';
          env.set(target.name, value);
          trail.push(target.name);
          return 'pass';
        }
        const left = this.firstValue(expr.left, env, ctx);
        if (left === undefined) return 'fail';
        const right = this.firstValue(expr.right, env, ctx);
        return right !== undefined && valuesEqual(left, right) ? 'pass' : 'fail';
      }
      default:
        return 'generic';
    }
  }

  private evalExpr(expr: Expr, env: Env, ctx: Context, k: Continuation): boolean {
    this.step(expr.location);
    if (expr.withs.length > 0) {
      return this.applyWiths(expr.withs, 0, env, ctx, ctx, (inner) => this.evalExprNegation(expr, env, inner, k));
    }
    return this.evalExprNegation(expr, env, ctx, k);
  }

  private evalExprNegation(expr: Expr, env: Env, ctx: Context, k: Continuation): boolean {
    if (expr.negated) {
      const found = this.evalExprPositive(expr, env, ctx, () => true);
      return found ? false : k();
    }
    return this.evalExprPositive(expr, env, ctx, k);
  }

  private evalExprPositive(expr: Expr, env: Env, ctx: Context, k: Continuation): boolean {
    switch (expr.kind) {
      case 'term':
        return this.evalTerm(expr.term, env, ctx, (value) => (value === false ? false : k()));
      case 'unify':
      case 'assign':
        return this.unify(expr.left, expr.right, env, ctx, k);
      case 'some':
        return k();
      case 'somein':
        return this.evalTerm(expr.domain, env, ctx, (domain) =>
          iterate(domain, (key, value) => {
            this.step(expr.location);
            if (expr.key) return this.unifyValue(expr.key, key, env, ctx, () => this.unifyValue(expr.value, value, env, ctx, k));
            return this.unifyValue(expr.value, value, env, ctx, k);
          }),
        );
      case 'every':
        return this.evalTerm(expr.domain, env, ctx, (domain) => {
          if (!Array.isArray(domain) && !(domain instanceof RegoObject) && !(domain instanceof RegoSet)) return false;
          const failed = iterate(domain, (key, value) => {
            this.step(expr.location);
            const holds = expr.key
              ? this.unifyValue(expr.key, key, env, ctx, () =>
                  this.unifyValue(expr.value, value, env, ctx, () => this.evalBody(expr.body, 0, env, ctx, () => true)),
                )
              : this.unifyValue(expr.value, value, env, ctx, () => this.evalBody(expr.body, 0, env, ctx, () => true));
            return !holds;
          });
          return failed ? false : k();
        });
    }
  }

  // ------------------------------------------------------------------------------------------------------------
  // with

  private applyWiths(withs: WithModifier[], index: number, env: Env, outer: Context, ctx: Context, k: (ctx: Context) => boolean): boolean {
    if (index === withs.length) return k(ctx);
    const modifier = withs[index] as WithModifier;
    const target = modifier.resolvedTarget;
    if (!target) throw new EvalError('eval_internal_error', modifier.location, 'unresolved with target');
    if (modifier.replacement) {
      const next = deriveContext(ctx);
      const key = target.kind === 'builtin' ? `b:${target.name}` : `f:${target.kind === 'function' ? target.path.join('.') : ''}`;
      next.mocks.set(key, modifier.replacement);
      return this.applyWiths(withs, index + 1, env, outer, next, k);
    }
    // The value is evaluated in the enclosing context, not under earlier modifiers of the same expression.
    return this.evalTerm(modifier.value, env, outer, (value) => {
      const next = deriveContext(ctx);
      switch (target.kind) {
        case 'input':
          next.input = withValueAt(ctx.input, target.path, value);
          break;
        case 'data':
          next.baseData = withValueAt(ctx.baseData, target.path, value);
          next.shadowed = [...ctx.shadowed, target.path];
          break;
        case 'builtin':
          next.mocks.set(`b:${target.name}`, { kind: 'value', value });
          break;
        case 'function':
          next.mocks.set(`f:${target.path.join('.')}`, { kind: 'value', value });
          break;
      }
      return this.applyWiths(withs, index + 1, env, outer, next, k);
    });
  }

  // ------------------------------------------------------------------------------------------------------------
  // unification

  private unify(left: Term, right: Term, env: Env, ctx: Context, k: Continuation): boolean {
    if (isUnboundVar(left, env)) {
      if (isUnboundVar(right, env)) throw new EvalError('rego_unsafe_var_error', left.location, `var ${left.name} is unsafe`);
      return this.evalTerm(right, env, ctx, (value) => this.unifyValue(left, value, env, ctx, k));
    }
    if (!hasUnbound(left, env)) return this.evalTerm(left, env, ctx, (value) => this.unifyValue(right, value, env, ctx, k));
    if (!hasUnbound(right, env)) return this.evalTerm(right, env, ctx, (value) => this.unifyValue(left, value, env, ctx, k));
    if (left.type === 'array' && right.type === 'array') {
      if (left.items.length !== right.items.length) return false;
      return this.unifyItems(left.items, right.items, 0, env, ctx, k);
    }
    if (left.type === 'object' && right.type === 'object') {
      if (left.entries.length !== right.entries.length) return false;
      return this.unifyEntries(left.entries, right.entries, 0, env, ctx, k);
    }
    throw new EvalError('rego_unsafe_var_error', left.location, 'unification of two unbound patterns');
  }

  /** Two array patterns of one length, item by item from `index`. */
  private unifyItems(left: Term[], right: Term[], index: number, env: Env, ctx: Context, k: Continuation): boolean {
    if (index === left.length) return k();
    return this.unify(left[index] as Term, right[index] as Term, env, ctx, () => this.unifyItems(left, right, index + 1, env, ctx, k));
  }

  /** Two object patterns of one size: each entry of `left` from `index` with the entry of `right` of an equal key. */
  private unifyEntries(left: [Term, Term][], right: [Term, Term][], index: number, env: Env, ctx: Context, k: Continuation): boolean {
    if (index === left.length) return k();
    const [keyTerm, valueTerm] = left[index] as [Term, Term];
    return this.evalTerm(keyTerm, env, ctx, (key) => {
      for (const [otherKey, otherValue] of right) {
        if (otherKey.type === 'scalar' && !valuesEqual(otherKey.value, key)) continue;
        return this.evalTerm(otherKey, env, ctx, (candidate) =>
          valuesEqual(candidate, key) ? this.unify(valueTerm, otherValue, env, ctx, () => this.unifyEntries(left, right, index + 1, env, ctx, k)) : false,
        );
      }
      return false;
    });
  }

  private unifyValue(term: Term, value: RegoValue, env: Env, ctx: Context, k: Continuation): boolean {
    switch (term.type) {
      case 'var': {
        if (isGlobalName(term.name)) break;
        const bound = env.get(term.name);
        if (bound === undefined) return bindVar(env, term.name, value, k);
        return valuesEqual(bound, value) ? k() : false;
      }
      case 'array': {
        if (!hasUnbound(term, env)) break;
        if (!Array.isArray(value) || value.length !== term.items.length) return false;
        return this.unifyItemValues(term.items, value, 0, env, ctx, k);
      }
      case 'object': {
        if (!hasUnbound(term, env)) break;
        if (!(value instanceof RegoObject) || value.size !== term.entries.length) return false;
        return this.unifyEntryValues(term.entries, value, 0, env, ctx, k);
      }
      default:
        break;
    }
    return this.evalTerm(term, env, ctx, (actual) => (valuesEqual(actual, value) ? k() : false));
  }

  /** An array pattern with an array value of its length, item by item from `index`. */
  private unifyItemValues(items: Term[], value: RegoValue[], index: number, env: Env, ctx: Context, k: Continuation): boolean {
    if (index === items.length) return k();
    return this.unifyValue(items[index] as Term, value[index] as RegoValue, env, ctx, () => this.unifyItemValues(items, value, index + 1, env, ctx, k));
  }

  /** An object pattern with an object value of its size, entry by entry from `index`. */
  private unifyEntryValues(entries: [Term, Term][], value: RegoObject, index: number, env: Env, ctx: Context, k: Continuation): boolean {
    if (index === entries.length) return k();
    const [keyTerm, valueTerm] = entries[index] as [Term, Term];
    return this.evalTerm(keyTerm, env, ctx, (key) => {
      const member = value.get(key);
      return member === undefined ? false : this.unifyValue(valueTerm, member, env, ctx, () => this.unifyEntryValues(entries, value, index + 1, env, ctx, k));
    });
  }

  // ------------------------------------------------------------------------------------------------------------
  // terms

  private evalTerms(terms: Term[], index: number, values: RegoValue[], env: Env, ctx: Context, k: (values: RegoValue[]) => boolean): boolean {
    if (index === terms.length) return k(values.slice());
    return this.evalTerm(terms[index] as Term, env, ctx, (value) => {
      values[index] = value;
      return this.evalTerms(terms, index + 1, values, env, ctx, k);
    });
  }

  /** Arguments with a free variable wait until another argument (a ref iterating it) has bound it. */
  private evalArgsDeferred(terms: Term[], values: RegoValue[], done: Set<number>, env: Env, ctx: Context, k: (values: RegoValue[]) => boolean): boolean {
    if (done.size === terms.length) return k(values.slice());
    let index = terms.findIndex((term, i) => !done.has(i) && !isUnboundVar(term, env));
    if (index < 0) index = terms.findIndex((_term, i) => !done.has(i));
    return this.evalTerm(terms[index] as Term, env, ctx, (value) => {
      values[index] = value;
      done.add(index);
      try {
        return this.evalArgsDeferred(terms, values, done, env, ctx, k);
      } finally {
        done.delete(index);
      }
    });
  }

  private evalTerm(term: Term, env: Env, ctx: Context, k: ValueContinuation): boolean {
    switch (term.type) {
      case 'scalar':
        return k(term.value);
      case 'var': {
        if (term.name === 'input') return ctx.input === undefined ? false : k(ctx.input);
        if (term.name === 'data') {
          const value = this.materialize(ctx.shared.root, ctx);
          return value === undefined ? false : k(value);
        }
        const value = env.get(term.name);
        if (value === undefined) throw new EvalError('rego_unsafe_var_error', term.location, `var ${term.name} is unsafe`);
        return k(value);
      }
      case 'ref': {
        if (!this.isDirect(term, env, ctx)) return this.evalRef(term, env, ctx, k);
        const value = this.directValue(term, env, ctx);
        return value === undefined ? false : k(value);
      }
      case 'array':
        return this.evalTerms(term.items, 0, [], env, ctx, (items) => k(items));
      case 'set':
        return this.evalTerms(term.items, 0, [], env, ctx, (items) => k(RegoSet.of(items)));
      case 'object': {
        const keys = term.entries.map(([key]) => key);
        const values = term.entries.map(([, value]) => value);
        return this.evalTerms(keys, 0, [], env, ctx, (keyValues) =>
          this.evalTerms(values, 0, [], env, ctx, (memberValues) => {
            const object = new RegoObject();
            keyValues.forEach((key, index) => object.set(key, memberValues[index] as RegoValue));
            return k(object);
          }),
        );
      }
      case 'call': {
        if (term.target.kind === 'builtin' && term.target.name === 'print' && !ctx.mocks.has('b:print')) {
          // print never fails: undefined operands print as <undefined>; the output itself is discarded.
          for (const arg of term.args) this.evalTerm(arg, env, ctx, () => true);
          return k(true);
        }
        if (this.isDirect(term, env, ctx)) {
          const value = this.directValue(term, env, ctx);
          return value === undefined ? false : k(value);
        }
        if (term.args.some((arg) => isUnboundVar(arg, env))) {
          return this.evalArgsDeferred(term.args, new Array<RegoValue>(term.args.length), new Set(), env, ctx, (args) =>
            this.call(term.target, term.name, args, term.location, ctx, k),
          );
        }
        return this.evalTerms(term.args, 0, [], env, ctx, (args) => this.call(term.target, term.name, args, term.location, ctx, k));
      }
      case 'arraycomp':
      case 'setcomp':
      case 'objectcomp':
        return k(this.comprehensionValue(term, env, ctx));
      case 'template': {
        let text = '';
        for (const part of term.parts) {
          if (typeof part === 'string') {
            text += part;
            continue;
          }
          let rendered: RegoValue | undefined;
          if (part.withs.length > 0) {
            this.applyWiths(part.withs, 0, env, ctx, ctx, (inner) => {
              rendered = this.firstValue(part.term, env, inner);
              return true;
            });
          } else rendered = this.firstValue(part.term, env, ctx);
          text += rendered === undefined ? '<undefined>' : typeof rendered === 'string' ? rendered : termText(rendered);
        }
        return k(text);
      }
    }
  }

  /** A comprehension has exactly one value: the collection of its body's solutions (possibly empty). */
  private comprehensionValue(
    term: Extract<Term, { type: 'arraycomp' | 'setcomp' | 'objectcomp' }>,
    env: Env,
    ctx: Context,
  ): RegoValue[] | RegoSet | RegoObject {
    switch (term.type) {
      case 'arraycomp': {
        const items: RegoValue[] = [];
        this.evalBody(term.body, 0, env, ctx, () =>
          this.evalTerm(term.term, env, ctx, (value) => {
            items.push(value);
            return false;
          }),
        );
        return items;
      }
      case 'setcomp': {
        const set = new RegoSet();
        this.evalBody(term.body, 0, env, ctx, () =>
          this.evalTerm(term.term, env, ctx, (value) => {
            set.add(value);
            return false;
          }),
        );
        return set;
      }
      case 'objectcomp': {
        const object = new RegoObject();
        this.evalBody(term.body, 0, env, ctx, () =>
          this.evalTerm(term.key, env, ctx, (key) =>
            this.evalTerm(term.value, env, ctx, (value) => {
              const existing = object.get(key);
              if (existing !== undefined && !valuesEqual(existing, value)) {
                throw new EvalError('eval_conflict_error', term.location, 'object keys must be unique');
              }
              object.set(key, value);
              return false;
            }),
          ),
        );
        return object;
      }
    }
  }

  /**
   * Whether `directValue` can compute a term: one that has at most one value and needs no search (constants, bound
   * variables, refs into input or a local with constant or bound operands, comprehensions, calls without
   * replacements whose arguments are such terms). Data refs, iteration and unbound variables need `evalTerm`.
   */
  private isDirect(term: Term, env: Env, ctx: Context): boolean {
    switch (term.type) {
      case 'scalar':
      case 'arraycomp':
      case 'setcomp':
      case 'objectcomp':
        return true;
      case 'var':
        return term.name === 'input' || env.has(term.name);
      case 'ref': {
        const head = term.head;
        if (head.type !== 'var' || !(head.name === 'input' || env.has(head.name))) return false;
        for (const operand of term.path) {
          if (operand.type !== 'scalar' && !(operand.type === 'var' && env.has(operand.name))) return false;
        }
        return true;
      }
      case 'call': {
        const target = term.target;
        if (ctx.mocks.size > 0) return false;
        if (target.kind === 'builtin' ? target.name === 'walk' || target.name === 'print' : target.kind !== 'function') return false;
        for (const arg of term.args) if (!this.isDirect(arg, env, ctx)) return false;
        return true;
      }
      default:
        return false;
    }
  }

  /** The value of a term `isDirect` accepts, computed without continuations; undefined when it has none. */
  private directValue(term: Term, env: Env, ctx: Context): RegoValue | undefined {
    switch (term.type) {
      case 'scalar':
        return term.value;
      case 'var':
        return term.name === 'input' ? ctx.input : env.get(term.name);
      case 'ref': {
        let value = term.head.type === 'var' && term.head.name === 'input' ? ctx.input : env.get((term.head as Extract<Term, { type: 'var' }>).name);
        const path = term.path;
        for (let index = 0; index < path.length && value !== undefined; index++) {
          const operand = path[index] as Term;
          value = lookup(value, operand.type === 'scalar' ? operand.value : (env.get((operand as Extract<Term, { type: 'var' }>).name) as RegoValue));
        }
        return value;
      }
      case 'call': {
        // Arguments left to right; the call is undefined at the first undefined one, as in `evalTerms`.
        const args = new Array<RegoValue>(term.args.length);
        for (let index = 0; index < args.length; index++) {
          const value = this.directValue(term.args[index] as Term, env, ctx);
          if (value === undefined) return undefined;
          args[index] = value;
        }
        const target = term.target;
        if (target.kind === 'builtin') return this.builtinValue(target.name, args, term.location, ctx);
        return this.functionValue((target as Extract<typeof target, { kind: 'function' }>).path, args, term.location, ctx);
      }
      case 'arraycomp':
      case 'setcomp':
      case 'objectcomp':
        return this.comprehensionValue(term, env, ctx);
      default:
        throw new EvalError('eval_internal_error', term.location, 'term has no direct value');
    }
  }

  private evalRef(term: Extract<Term, { type: 'ref' }>, env: Env, ctx: Context, k: ValueContinuation): boolean {
    const head = term.head;
    if (head.type === 'var') {
      if (head.name === 'data') return this.evalDataRef(term.path, env, ctx, k);
      if (head.name === 'input') return ctx.input === undefined ? false : this.walk(ctx.input, term.path, 0, env, ctx, k);
      const value = env.get(head.name);
      if (value === undefined) throw new EvalError('rego_unsafe_var_error', head.location, `var ${head.name} is unsafe`);
      return this.walk(value, term.path, 0, env, ctx, k);
    }
    return this.evalTerm(head, env, ctx, (value) => this.walk(value, term.path, 0, env, ctx, k));
  }

  /** Applies ref operands to a value; free variables in operands iterate the collection. */
  private walk(value: RegoValue, path: Term[], index: number, env: Env, ctx: Context, k: ValueContinuation, baseDocument = false): boolean {
    if (index === path.length) return k(value);
    const operand = path[index] as Term;
    if (isUnboundVar(operand, env)) {
      const name = operand.name;
      return iterate(value, (key, member) => {
        this.step(operand.location);
        return bindVar(env, name, key, () => this.walk(member, path, index + 1, env, ctx, k, baseDocument));
      });
    }
    if (hasUnbound(operand, env)) {
      return iterate(value, (key, member) => {
        this.step(operand.location);
        return this.unifyValue(operand, key, env, ctx, () => this.walk(member, path, index + 1, env, ctx, k, baseDocument));
      });
    }
    return this.evalTerm(operand, env, ctx, (key) => {
      let member = lookup(value, key);
      // Base documents are JSON: OPA's store answers `data.x[2]` from the key "2".
      if (member === undefined && baseDocument && typeof key === 'number' && value instanceof RegoObject) member = value.get(String(key));
      return member === undefined ? false : this.walk(member, path, index + 1, env, ctx, k, baseDocument);
    });
  }

  private isShadowed(path: string[], ctx: Context): boolean {
    for (const shadow of ctx.shadowed) if (isPrefix(shadow, path)) return true;
    return false;
  }

  private evalDataRef(path: Term[], env: Env, ctx: Context, k: ValueContinuation): boolean {
    let node = ctx.shared.root;
    let index = 0;
    for (; index < path.length; index++) {
      if (ctx.shadowed.length > 0 && this.isShadowed(node.path, ctx)) break;
      // A node with rules of its own (e.g. `p[x].r := ...`) contributes to its children: read it whole.
      if (node.rules.length > 0) break;
      const operand = path[index] as Term;
      let key: RegoValue | undefined;
      if (operand.type === 'scalar') key = operand.value;
      else if (operand.type === 'var') key = env.get(operand.name);
      if (typeof key !== 'string') break;
      const child = node.children.get(key);
      if (!child) {
        if (!node.hasRules) {
          // Beyond the rule tree: plain base data.
          const base = valueAt(ctx.baseData, [...node.path, key]);
          return base === undefined ? false : this.walk(base, path, index + 1, env, ctx, k, true);
        }
        break;
      }
      node = child;
    }
    if ((ctx.shadowed.length > 0 && this.isShadowed(node.path, ctx)) || (!node.hasRules && node.children.size === 0)) {
      const base = valueAt(ctx.baseData, node.path) ?? (node.isPackage ? new RegoObject() : undefined);
      return base === undefined ? false : this.walk(base, path, index, env, ctx, k, true);
    }
    const value = this.materialize(node, ctx);
    return value === undefined ? false : this.walk(value, path, index, env, ctx, k);
  }

  // ------------------------------------------------------------------------------------------------------------
  // virtual documents

  /** The full value of a data node: base data merged with its rules' values and its children's. */
  private materialize(node: RuleNode, ctx: Context): RegoValue | undefined {
    const cached = ctx.cache.get(node);
    if (cached !== undefined) return cached === UNDEFINED ? undefined : cached;
    if (ctx.inProgress.has(node)) {
      const location = node.rules[0]?.rule.location ?? null;
      throw new EvalError('rego_recursion_error', location, `rule data.${node.path.join('.')} is recursive`);
    }
    ctx.inProgress.add(node);
    let value: RegoValue | undefined;
    try {
      value = this.computeNode(node, ctx);
    } finally {
      ctx.inProgress.delete(node);
    }
    ctx.cache.set(node, value === undefined ? UNDEFINED : value);
    return value;
  }

  private computeNode(node: RuleNode, ctx: Context): RegoValue | undefined {
    if (ctx.shadowed.length > 0 && this.isShadowed(node.path, ctx)) return valueAt(ctx.baseData, node.path);
    if (node.isFunction) return undefined;
    const value = node.rules.length > 0 || node.defaultRule ? this.evalRules(node, ctx) : undefined;
    const base = valueAt(ctx.baseData, node.path);
    if (node.children.size === 0) {
      if (value === undefined) return base ?? (node.isPackage ? new RegoObject() : undefined);
      if (base === undefined) return value;
      return this.merge(base, value, node, true);
    }
    if (value !== undefined && !(value instanceof RegoObject)) return value;
    let merged: RegoValue = base instanceof RegoObject ? base : new RegoObject();
    if (value instanceof RegoObject) merged = this.merge(merged, value, node, true);
    const children = new RegoObject();
    for (const [name, child] of node.children) {
      if (child.isFunction && child.rules.length === 0 && child.children.size === 0) continue;
      const childValue = this.materialize(child, ctx);
      if (childValue !== undefined) children.set(name, childValue);
    }
    return this.merge(merged, children, node);
  }

  /** Deep merge of two documents at one path (base data, rule values, child documents); a clash is a conflict. */
  private merge(a: RegoValue, b: RegoValue, node: RuleNode, firstWins = false): RegoValue {
    if (a instanceof RegoObject && b instanceof RegoObject) {
      if (!firstWins && (this.leafValues.has(a) || this.leafValues.has(b)) && !valuesEqual(a, b)) {
        throw new EvalError('eval_conflict_error', node.rules[0]?.rule.location ?? null, 'object keys must be unique');
      }
      if (a.size === 0) return b;
      if (b.size === 0) return a;
      const out = new RegoObject();
      for (const [key, member] of a.entries()) out.set(key, member);
      for (const [key, member] of b.entries()) {
        const existing = out.get(key);
        out.set(key, existing === undefined ? member : this.merge(existing, member, node, firstWins));
      }
      return out;
    }
    if (a instanceof RegoSet && b instanceof RegoSet) return RegoSet.of([...a.values(), ...b.values()]);
    if (firstWins || valuesEqual(a, b)) return a;
    throw new EvalError('eval_conflict_error', node.rules[0]?.rule.location ?? null, 'object keys must be unique');
  }

  private evalRules(node: RuleNode, ctx: Context): RegoValue | undefined {
    if (node.documentKind === 'object') return this.evalObjectRules(node, ctx);
    if (node.documentKind === 'set') {
      const set = new RegoSet();
      this.forEachCandidate(node.rules, node.ruleIndex, null, ctx, (rule) => {
        const env: Env = new Map();
        this.evalBody(rule.body, 0, env, ctx, () =>
          this.evalTerm(rule.value as Term, env, ctx, (member) => {
            set.add(member);
            return false;
          }),
        );
        return false;
      });
      return set;
    }
    let result: RegoValue | undefined;
    let resultRule: CompiledRule | undefined;
    this.forEachCandidate(node.rules, node.ruleIndex, null, ctx, (rule) => {
      this.evalRuleValues(rule, ctx, (value, producer) => {
        if (result === undefined) {
          result = value;
          resultRule = producer;
        } else if (!valuesEqual(result, value)) {
          throw new EvalError('eval_conflict_error', (producer ?? resultRule)?.rule.location ?? null, 'complete rules must not produce multiple outputs');
        }
        return false;
      });
      return false;
    });
    if (result === undefined && node.defaultRule && node.defaultRule.rule.kind !== 'function') {
      const defaultRule = node.defaultRule;
      this.evalTerm(defaultRule.value as Term, new Map(), ctx, (value) => {
        result = value;
        resultRule = defaultRule;
        return true;
      });
    }
    if (resultRule && ctx === this.root) this.producers.set(node, resultRule);
    return result;
  }

  /** The rule that gave a complete document its value in this evaluation (outside any `with`), if any. */
  producerOf(path: string[]): CompiledRule | undefined {
    const node = this.findNode(path);
    return node ? this.producers.get(node) : undefined;
  }

  /** Values of one rule (and its else chain) over all solutions of its body. */
  private evalRuleValues(rule: CompiledRule, ctx: Context, onValue: (value: RegoValue, producer: CompiledRule) => boolean): boolean {
    const env: Env = new Map();
    let found = false;
    const stop = this.evalBody(rule.body, 0, env, ctx, () => {
      found = true;
      if (!rule.value) return onValue(true, rule);
      return this.evalTerm(rule.value, env, ctx, (value) => onValue(value, rule));
    });
    if (!found && rule.elseRule) return this.evalRuleValues(rule.elseRule, ctx, onValue);
    return stop;
  }

  private evalObjectRules(node: RuleNode, ctx: Context): RegoValue {
    const root = new RegoObject();
    this.forEachCandidate(node.rules, node.ruleIndex, null, ctx, (rule) => {
      this.evalObjectRule(rule, rule, root, ctx);
      return false;
    });
    return root;
  }

  /** One partial object (or set-valued object) rule's entries, from `current` (the rule or a member of its else chain). */
  private evalObjectRule(rule: CompiledRule, current: CompiledRule, root: RegoObject, ctx: Context): void {
    const env: Env = new Map();
    let found = false;
    this.evalBody(current.body, 0, env, ctx, () => {
      found = true;
      return this.evalTerms(rule.rest, 0, [], env, ctx, (keys) => {
        if (!current.value) {
          this.insertObjectEntry(rule, root, keys, true);
          return false;
        }
        return this.evalTerm(current.value, env, ctx, (value) => {
          this.insertObjectEntry(rule, root, keys, value);
          return false;
        });
      });
    });
    if (!found && current.elseRule) this.evalObjectRule(rule, current.elseRule, root, ctx);
  }

  private insertObjectEntry(rule: CompiledRule, root: RegoObject, keys: RegoValue[], value: RegoValue): void {
    let object = root;
    for (let index = 0; index < keys.length - 1; index++) {
      const key = keys[index] as RegoValue;
      let next = object.get(key);
      if (next === undefined) {
        next = new RegoObject();
        object.set(key, next);
      } else if (!(next instanceof RegoObject)) {
        throw new EvalError('eval_conflict_error', rule.rule.location, 'object keys must be unique');
      }
      object = next;
    }
    const last = keys[keys.length - 1] as RegoValue;
    const existing = object.get(last);
    if (rule.rule.kind === 'partialset') {
      if (existing === undefined) object.set(last, RegoSet.of([value]));
      else if (existing instanceof RegoSet) existing.add(value);
      else throw new EvalError('eval_conflict_error', rule.rule.location, 'object keys must be unique');
      return;
    }
    if (existing !== undefined && !valuesEqual(existing, value)) {
      throw new EvalError('eval_conflict_error', rule.rule.location, 'object keys must be unique');
    }
    if (value instanceof RegoObject) this.leafValues.add(value);
    object.set(last, value);
  }

  // ------------------------------------------------------------------------------------------------------------
  // rule index

  /**
   * Calls `visit` with each of `rules` that can hold in this context, in their order, and stops when it answers
   * true. With an index, that is the rules the primary ref's value selects merged with the rules it does not
   * restrict, less those whose other tests fail. Replaced builtins (`with equal as ...`) could change what a test
   * means, so the index is bypassed under any replacement.
   */
  private forEachCandidate(rules: CompiledRule[], index: RuleIndex | null, args: RegoValue[] | null, ctx: Context, visit: (rule: CompiledRule) => boolean): boolean {
    if (index === null || ctx.mocks.size > 0) {
      for (const rule of rules) if (visit(rule)) return true;
      return false;
    }
    const primary = this.indexedValue(index.refs[0] as IndexedRef, args, ctx);
    let keyed: IndexedRule[] | undefined;
    if (typeof primary === 'string') keyed = index.byString.get(primary);
    else if (primary !== undefined) {
      const key = scalarIndexKey(primary);
      if (key !== undefined) keyed = index.byOther.get(key);
    }
    const unrestricted = index.unrestricted;
    let values: (RegoValue | undefined | typeof UNREAD)[] | null = null;
    let keyedAt = 0;
    let unrestrictedAt = 0;
    for (;;) {
      const fromKeyed = keyed?.[keyedAt];
      const fromUnrestricted = unrestricted[unrestrictedAt];
      let next: IndexedRule;
      if (fromKeyed && (!fromUnrestricted || fromKeyed.position < fromUnrestricted.position)) {
        next = fromKeyed;
        keyedAt++;
      } else if (fromUnrestricted) {
        next = fromUnrestricted;
        unrestrictedAt++;
      } else return false;
      if (next.residual.length > 0) {
        values ??= new Array<RegoValue | undefined | typeof UNREAD>(index.refs.length).fill(UNREAD);
        if (!this.residualHolds(next.residual, index, args, ctx, values)) continue;
      }
      if (visit(next.rule)) return true;
    }
  }

  private residualHolds(tests: IndexTest[], index: RuleIndex, args: RegoValue[] | null, ctx: Context, values: (RegoValue | undefined | typeof UNREAD)[]): boolean {
    for (const test of tests) {
      let value = values[test.ref];
      if (value === UNREAD) {
        value = this.indexedValue(index.refs[test.ref] as IndexedRef, args, ctx);
        values[test.ref] = value;
      }
      if (value === undefined || !scalarSetHas(test.accepted, value)) return false;
    }
    return true;
  }

  /** The value an index test reads, exactly as the rule body would read it in this context. */
  private indexedValue(ref: IndexedRef, args: RegoValue[] | null, ctx: Context): RegoValue | undefined {
    switch (ref.kind) {
      case 'argument':
        return args?.[ref.position];
      case 'input': {
        let value = ctx.input;
        for (const key of ref.path) {
          if (value === undefined) return undefined;
          value = lookup(value, key);
        }
        return value;
      }
      case 'data':
        return this.firstValue(ref.term, new Map(), ctx);
    }
  }

  // ------------------------------------------------------------------------------------------------------------
  // calls

  private findNode(path: string[]): RuleNode | undefined {
    let node: RuleNode | undefined = this.root.shared.root;
    for (const part of path) {
      node = node.children.get(part);
      if (!node) return undefined;
    }
    return node;
  }

  private call(
    target: Extract<Term, { type: 'call' }>['target'],
    name: string[],
    args: RegoValue[],
    location: SourceLocation,
    ctx: Context,
    k: ValueContinuation,
  ): boolean {
    if (target.kind === 'function') {
      const mock = ctx.mocks.get(`f:${target.path.join('.')}`);
      if (mock) return this.callMock(mock, args, location, ctx, k);
      return this.callFunction(target.path, args, location, ctx, k);
    }
    if (target.kind === 'builtin') {
      const mock = ctx.mocks.get(`b:${target.name}`);
      if (mock) return this.callMock(mock, args, location, ctx, k);
      return this.callBuiltin(target.name, args, location, ctx, k);
    }
    throw new EvalError('eval_internal_error', location, `unresolved call ${name.join('.')}`);
  }

  private callMock(mock: Mock, args: RegoValue[], location: SourceLocation, ctx: Context, k: ValueContinuation): boolean {
    if (mock.kind === 'value') return k(mock.value);
    // A replacement runs without any replacements (OPA: a mock never calls a mock, nor itself).
    const plain: Context = { ...ctx, mocks: new Map(), cache: new Map(), functionCache: new Map(), inProgress: new Set() };
    if (mock.kind === 'function') return this.callFunction(mock.path, args, location, plain, k);
    return this.callBuiltin(mock.name, args, location, plain, k);
  }

  private callFunction(path: string[], args: RegoValue[], location: SourceLocation, ctx: Context, k: ValueContinuation): boolean {
    const value = this.functionValue(path, args, location, ctx);
    return value === undefined ? false : k(value);
  }

  /** A function's one value for these arguments (cached per context), or undefined. */
  private functionValue(path: string[], args: RegoValue[], location: SourceLocation, ctx: Context): RegoValue | undefined {
    const node = this.findNode(path);
    if (!node || (node.functions.length === 0 && !node.defaultRule)) {
      throw new EvalError('eval_internal_error', location, `undefined function data.${path.join('.')}`);
    }
    const cacheKey = `${path.join('.')}(${args.map(canonicalKey).join(',')})`;
    const cached = ctx.functionCache.get(cacheKey);
    if (cached !== undefined) return cached === UNDEFINED ? undefined : cached;
    let result: RegoValue | undefined;
    this.forEachCandidate(node.functions, node.functionIndex, args, ctx, (definition) => {
      this.evalFunctionDefinition(definition, args, ctx, (value) => {
        if (result === undefined) result = value;
        else if (!valuesEqual(result, value)) {
          throw new EvalError('eval_conflict_error', location, 'functions must not produce multiple outputs for same inputs');
        }
        return false;
      });
      return false;
    });
    if (result === undefined && node.defaultRule?.value) {
      this.evalTerm(node.defaultRule.value, new Map(), ctx, (value) => {
        result = value;
        return true;
      });
    }
    ctx.functionCache.set(cacheKey, result === undefined ? UNDEFINED : result);
    return result;
  }

  private evalFunctionDefinition(definition: CompiledRule, args: RegoValue[], ctx: Context, onValue: ValueContinuation): void {
    const params = definition.args ?? [];
    if (params.length !== args.length) return;
    // Patterns bind before the body; computed parameters (e.g. templates over body variables) are checked after it.
    const immediate: number[] = [];
    const deferred: number[] = [];
    params.forEach((param, index) => (param.type === 'template' || param.type === 'call' ? deferred : immediate).push(index));
    const env: Env = new Map();
    let found = false;
    this.unifyParameters(params, args, immediate, 0, env, ctx, () =>
      this.evalBody(definition.body, 0, env, ctx, () =>
        this.unifyParameters(params, args, deferred, 0, env, ctx, () => {
          found = true;
          if (!definition.value) return onValue(true);
          return this.evalTerm(definition.value, env, ctx, onValue);
        }),
      ),
    );
    if (!found && definition.elseRule && this.unifyParameters(params, args, immediate, 0, env, ctx, () => true)) {
      this.evalFunctionDefinition(definition.elseRule, args, ctx, onValue);
    }
  }

  /** Unifies the parameters at `positions` (from `at` on) with their arguments. */
  private unifyParameters(params: Term[], args: RegoValue[], positions: number[], at: number, env: Env, ctx: Context, k: Continuation): boolean {
    if (at === positions.length) return k();
    const index = positions[at] as number;
    return this.unifyValue(params[index] as Term, args[index] as RegoValue, env, ctx, () => this.unifyParameters(params, args, positions, at + 1, env, ctx, k));
  }

  /** A builtin that threw: an error in strict mode (or when evaluation itself failed), else merely undefined. */
  private builtinFailure(error: unknown, location: SourceLocation): void {
    if (error instanceof EvalError) throw error;
    if (error instanceof BuiltinError) {
      if (this.root.shared.strict) throw new EvalError(error.code, location, error.message);
      return;
    }
    // Stack exhaustion is the evaluation's problem, not the builtin's; other RangeErrors are builtin failures.
    if (error instanceof RangeError && /call stack/i.test(error.message)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    if (this.root.shared.strict) throw new EvalError('eval_builtin_error', location, message);
  }

  private callBuiltin(name: string, args: RegoValue[], location: SourceLocation, ctx: Context, k: ValueContinuation): boolean {
    if (name === 'walk') return this.walkValue(args[0] as RegoValue, [], k);
    const value = this.builtinValue(name, args, location, ctx);
    return value === undefined ? false : k(value);
  }

  /** The value of a builtin other than the generator `walk`; undefined when it fails outside strict mode. */
  private builtinValue(name: string, args: RegoValue[], location: SourceLocation, ctx: Context): RegoValue | undefined {
    switch (name) {
      case 'internal.member_2':
        return this.member(args[0] as RegoValue, args[1] as RegoValue);
      case 'internal.member_3':
        return this.memberWithKey(args[0] as RegoValue, args[1] as RegoValue, args[2] as RegoValue);
      case 'print':
      case 'trace':
        return true;
      default:
        break;
    }
    const definition = ctx.shared.builtins.get(name);
    if (!definition) throw new EvalError('eval_internal_error', location, `unknown builtin ${name}`);
    let result: RegoValue | undefined;
    try {
      result = definition.implementation(args, ctx.shared.builtinContext);
    } catch (error) {
      this.builtinFailure(error, location);
      return undefined;
    }
    // One builtin call can be expensive (a long glob or regex): the deadline is checked after each, not only every
    // 1024 steps.
    if (overTimeBudget(ctx.shared)) throw new EvalError('eval_cancel_error', location, 'evaluation time budget exceeded');
    return result;
  }

  private member(value: RegoValue, collection: RegoValue): boolean {
    if (collection instanceof RegoSet) return collection.has(value);
    let found = false;
    iterate(collection, (_key, member) => (found = valuesEqual(member, value)));
    return found;
  }

  private memberWithKey(key: RegoValue, value: RegoValue, collection: RegoValue): boolean {
    if (collection instanceof RegoSet) return valuesEqual(key, value) && collection.has(value);
    const member = lookup(collection, key);
    return member !== undefined && valuesEqual(member, value);
  }

  /** `walk(x)`: every [path, value] pair of x, the root first. */
  private walkValue(value: RegoValue, path: RegoValue[], k: ValueContinuation): boolean {
    this.step(null);
    if (k([path.slice(), value])) return true;
    return iterate(value, (key, member) => this.walkValue(member, [...path, key], k));
  }
}
