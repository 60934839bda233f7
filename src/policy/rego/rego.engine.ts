import type { Expr, Module, Term } from './rego.ast.ts';
import type { BuiltinDefinition } from './rego.builtins.ts';
import { ALL_BUILTINS } from './builtins/builtins.catalog.ts';
import { CompileError, compileModules, compileQuery, type CompileContext, type CompiledModules } from './rego.compiler.ts';
import { DEFAULT_EVAL_BUDGET, EvalError, Evaluator, type EvalBudget } from './rego.evaluator.ts';
import { RegoSyntaxError } from './rego.lexer.ts';
import { parseModule, parseQuery } from './rego.parser.ts';
import { RegoObject, type RegoValue } from './rego.value.ts';

/**
 * The engine's public face: compile a policy once, evaluate queries or decisions against it many times.
 * Errors: a `CompileError` (parse, safety, recursion, limits) with file, line and column; an `EvalError` from
 * evaluation (conflicts, strict builtin errors, budget exhaustion) in OPA's `<file>:<row>: <code>: <text>` form.
 */
export { CompileError } from './rego.compiler.ts';
export { EvalError } from './rego.evaluator.ts';

export interface CompileLimits {
  /** Total source size in bytes, all modules together. */
  maxSourceBytes: number;
  maxRules: number;
  /** Nesting of terms, bodies and comprehensions. */
  maxNestingDepth: number;
}

export const DEFAULT_COMPILE_LIMITS: CompileLimits = { maxSourceBytes: 256 * 1024, maxRules: 1000, maxNestingDepth: 64 };

export interface PolicySource {
  file: string;
  source: string;
}

export interface CompileOptions {
  limits?: Partial<CompileLimits>;
  /** File name used in messages when a single source string is given. */
  file?: string;
  /**
   * Rule indexing (default on): rules that test a ref for a constant are tried only when the ref has that value.
   * Off, every rule is evaluated: the results are the same, only slower.
   */
  indexRules?: boolean;
}

export interface CompiledPolicy {
  modules: Module[];
  tree: CompiledModules;
  /** Package of the first module: where `decide` looks for `allow`. */
  packagePath: string[];
  builtins: Map<string, BuiltinDefinition>;
  context: CompileContext;
  limits: CompileLimits;
  allowQuery: Expr[];
  /** `[...packagePath, 'allow']`: the rule `decide` reads. */
  allowPath: string[];
}

export interface EvaluateOptions {
  input?: RegoValue;
  data?: RegoValue;
  strictBuiltinErrors?: boolean;
  budget?: Partial<EvalBudget>;
  /** Fixed clock for time.now_ns (nanoseconds since the epoch); defaults to the wall clock at the start. */
  nowNs?: bigint;
}

export type QueryRow = Record<string, RegoValue>;

const BUILTIN_REGISTRY = new Map<string, BuiltinDefinition>(ALL_BUILTINS.map((definition) => [definition.name, definition]));

function compileContext(builtins: Map<string, BuiltinDefinition>): CompileContext {
  return { builtins: new Map([...builtins].map(([name, definition]) => [name, { arity: definition.arity }])) };
}

function asCompileError(error: unknown, file: string): unknown {
  if (error instanceof RegoSyntaxError) return new CompileError('rego_parse_error', error.location, error.detail);
  // The parser bounds nesting, but long operator chains still recurse in the compiler: reject, never crash.
  if (error instanceof RangeError) return new CompileError('rego_compile_error', { file, row: 1, col: 1 }, 'policy is too deeply nested');
  return error;
}

/** Compiles one or more modules; throws a CompileError with line and column on any problem. */
export function compilePolicy(source: string | PolicySource[], options: CompileOptions = {}): CompiledPolicy {
  const limits: CompileLimits = { ...DEFAULT_COMPILE_LIMITS, ...options.limits };
  const sources: PolicySource[] = typeof source === 'string' ? [{ file: options.file ?? 'policy.rego', source }] : source;
  const size = sources.reduce((total, entry) => total + Buffer.byteLength(entry.source, 'utf8'), 0);
  if (size > limits.maxSourceBytes) {
    throw new CompileError('rego_compile_error', { file: sources[0]?.file ?? 'policy.rego', row: 1, col: 1 }, `policy source exceeds ${limits.maxSourceBytes} bytes`);
  }
  const context = compileContext(BUILTIN_REGISTRY);
  try {
    const modules = sources.map((entry) => parseModule(entry.source, entry.file, { maxNestingDepth: limits.maxNestingDepth }));
    const tree = compileModules(modules, context, { maxRules: limits.maxRules }, { indexRules: options.indexRules ?? true });
    const packagePath = modules[0]?.packagePath ?? [];
    const location = modules[0]?.packageLocation ?? { file: 'policy.rego', row: 1, col: 1 };
    const allowRef: Term = {
      type: 'ref',
      head: { type: 'var', name: 'data', location },
      path: [...packagePath, 'allow'].map((value) => ({ type: 'scalar', value, location })),
      location,
    };
    const allowQuery: Expr[] = [
      { kind: 'unify', left: { type: 'var', name: 'allow', location }, right: allowRef, negated: false, withs: [], location },
    ];
    return { modules, tree, packagePath, builtins: BUILTIN_REGISTRY, context, limits, allowQuery, allowPath: [...packagePath, 'allow'] };
  } catch (error) {
    throw asCompileError(error, sources[0]?.file ?? 'policy.rego');
  }
}

/** Parses and compiles a query against a compiled policy (its function names are known to the query). */
export function prepareQuery(policy: CompiledPolicy, query: string): Expr[] {
  try {
    const body = parseQuery(query, 'query', { maxNestingDepth: policy.limits.maxNestingDepth });
    return compileQuery(body, policy.context, policy.tree.functionArity);
  } catch (error) {
    throw asCompileError(error, 'query');
  }
}

const EMPTY_DATA = new RegoObject();

/** Built field by field: object spreads here cost more than a whole small decision. */
function evaluator(policy: CompiledPolicy, options: Omit<EvaluateOptions, 'input'>, input: RegoValue | undefined): Evaluator {
  const budget = options.budget;
  return new Evaluator({
    input,
    data: options.data ?? EMPTY_DATA,
    strictBuiltinErrors: options.strictBuiltinErrors ?? false,
    budget: {
      maxSteps: budget?.maxSteps ?? DEFAULT_EVAL_BUDGET.maxSteps,
      maxMilliseconds: budget?.maxMilliseconds ?? DEFAULT_EVAL_BUDGET.maxMilliseconds,
    },
    builtins: policy.builtins,
    root: policy.tree.root,
    nowNs: options.nowNs,
  });
}

/** The variables a query's solutions report: named in the query, not `_` or compiler-generated. */
export function queryVariables(body: Expr[]): string[] {
  const names = new Set<string>();
  const visit = (term: Term): void => {
    switch (term.type) {
      case 'var':
        if (!term.name.includes('$') && term.name !== 'data' && term.name !== 'input' && !term.name.startsWith('__localq')) names.add(term.name);
        return;
      case 'ref':
        visit(term.head);
        term.path.forEach(visit);
        return;
      case 'array':
      case 'set':
        term.items.forEach(visit);
        return;
      case 'object':
        for (const [k, v] of term.entries) {
          visit(k);
          visit(v);
        }
        return;
      case 'call':
        term.args.forEach(visit);
        return;
      default:
        return;
    }
  };
  for (const expr of body) {
    switch (expr.kind) {
      case 'term':
        visit(expr.term);
        break;
      case 'unify':
      case 'assign':
        visit(expr.left);
        visit(expr.right);
        break;
      case 'somein':
        if (expr.key) visit(expr.key);
        visit(expr.value);
        visit(expr.domain);
        break;
      case 'some':
        expr.vars.forEach(visit);
        break;
      case 'every':
        visit(expr.domain);
        break;
    }
  }
  return [...names];
}

/** Evaluates a query; one row per solution with every query variable bound in it. */
export function evaluateQuery(policy: CompiledPolicy, query: string | Expr[], options: EvaluateOptions = {}): QueryRow[] {
  const body = typeof query === 'string' ? prepareQuery(policy, query) : query;
  const variables = queryVariables(body);
  const rows: QueryRow[] = [];
  evaluator(policy, options, options.input).run(body, (env) => {
    const row: QueryRow = {};
    for (const name of variables) {
      const value = env.get(name);
      if (value !== undefined) row[name] = value;
    }
    rows.push(row);
    return false;
  });
  return rows;
}

/** The value of a rule (a dotted path relative to the policy's package, or starting with `data.`), or undefined. */
export function evaluateRule(policy: CompiledPolicy, path: string, options: EvaluateOptions = {}): RegoValue | undefined {
  const parts = path.startsWith('data.') ? path.slice(5).split('.') : [...policy.packagePath, ...path.split('.')];
  const location = { file: 'query', row: 1, col: 1 };
  const body: Expr[] = [
    {
      kind: 'unify',
      left: { type: 'var', name: 'value', location },
      right: { type: 'ref', head: { type: 'var', name: 'data', location }, path: parts.map((value) => ({ type: 'scalar', value, location })), location },
      negated: false,
      withs: [],
      location,
    },
  ];
  const rows = evaluateQuery(policy, body, options);
  return rows[0]?.value;
}

export interface DecidingRule {
  file: string;
  line: number;
  column: number;
  isDefault: boolean;
}

export interface PolicyDecision {
  allowed: boolean;
  /** `allow` was true, another value, undefined, or evaluation failed (error, budget). */
  outcome: 'allowed' | 'not-true' | 'undefined' | 'error';
  /** The value `allow` had when it was not true. */
  value?: RegoValue;
  /** The `allow` rule (or default) whose value decided, when one did. */
  rule?: DecidingRule;
  error?: string;
}

/** Evaluates `allow` in the policy's package: only the boolean `true` allows; everything else denies. */
export function decide(policy: CompiledPolicy, input: RegoValue, options: Omit<EvaluateOptions, 'input'> = {}): PolicyDecision {
  try {
    const run = evaluator(policy, options, input);
    let value: RegoValue | undefined;
    run.run(policy.allowQuery, (env) => {
      value = env.get('allow');
      return true;
    });
    const producer = run.producerOf(policy.allowPath)?.rule;
    const rule: DecidingRule | undefined = producer
      ? { file: producer.file, line: producer.location.row, column: producer.location.col, isDefault: producer.isDefault }
      : undefined;
    if (value === undefined) return { allowed: false, outcome: 'undefined' };
    if (value === true) return { allowed: true, outcome: 'allowed', ...(rule ? { rule } : {}) };
    return { allowed: false, outcome: 'not-true', value, ...(rule ? { rule } : {}) };
  } catch (error) {
    if (error instanceof EvalError || error instanceof CompileError) return { allowed: false, outcome: 'error', error: error.message };
    if (error instanceof RangeError) return { allowed: false, outcome: 'error', error: 'evaluation exceeded the maximum depth' };
    // Fail closed: whatever went wrong, the request is denied rather than the caller failing.
    return { allowed: false, outcome: 'error', error: `internal evaluation error: ${error instanceof Error ? error.message : String(error)}` };
  }
}
