import { describe, expect, it, vi } from 'vitest';
import { CompileError, compilePolicy, decide, EvalError, evaluateQuery, evaluateRule, type EvaluateOptions } from '../src/policy/rego/rego.engine.ts';
import { fromJson, RegoSet, toJson, type RegoValue } from '../src/policy/rego/rego.value.ts';

function compileFailure(source: string): CompileError {
  try {
    compilePolicy(source, { file: 'policy.rego' });
  } catch (error) {
    if (error instanceof CompileError) return error;
    throw error;
  }
  throw new Error('expected a compile error');
}

function evalFailure(run: () => unknown): EvalError {
  try {
    run();
  } catch (error) {
    if (error instanceof EvalError) return error;
    throw error;
  }
  throw new Error('expected an evaluation error');
}

function rowsAsJson(rows: Record<string, RegoValue>[]): unknown[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, toJson(value)])));
}

describe('parser errors', () => {
  it('reports the file, line and column of the offending token', () => {
    const error = compileFailure('package authz\n\nallow if {\n  input.method == \n}\n');
    expect(error.code).toBe('rego_parse_error');
    expect(error.line).toBe(5);
    expect(error.column).toBe(1);
    expect(error.message).toMatch(/^policy\.rego:5: rego_parse_error: /);
  });

  it('locates an unterminated string on its line', () => {
    const error = compileFailure('package authz\nallow if input.x == "abc\n');
    expect(error.code).toBe('rego_parse_error');
    expect(error.line).toBe(2);
  });

  it('rejects a module without a package', () => {
    const error = compileFailure('allow := true\n');
    expect(error.code).toBe('rego_parse_error');
    expect(error.line).toBe(1);
  });

  it('rejects nesting beyond the configured limit with a located error', () => {
    const deep = `package p\nx := ${'['.repeat(20)}1${']'.repeat(20)}\n`;
    expect(() => compilePolicy(deep, { limits: { maxNestingDepth: 10 } })).toThrow(CompileError);
    expect(compilePolicy(deep, { limits: { maxNestingDepth: 30 } }).packagePath).toEqual(['p']);
  });

  it('enforces the source size and rule count limits', () => {
    const many = `package p\n${Array.from({ length: 20 }, (_, i) => `r${i} := ${i}`).join('\n')}\n`;
    expect(() => compilePolicy(many, { limits: { maxRules: 10 } })).toThrow(/more than 10 rules/);
    expect(() => compilePolicy(many, { limits: { maxSourceBytes: 50 } })).toThrow(/exceeds 50 bytes/);
  });

  it('rejects an unknown builtin at its call site', () => {
    const error = compileFailure('package p\n\nallow if {\n  http.send({"url": "x"})\n}\n');
    expect(error.code).toBe('rego_type_error');
    expect(error.line).toBe(4);
    expect(error.column).toBe(3);
    expect(error.detail).toBe('undefined function http.send');
  });
});

describe('compiler checks', () => {
  it('rejects a builtin called with the wrong number of operands', () => {
    const error = compileFailure('package p\n\nallow if count([1], [2], [3]) > 0\n');
    expect(error.code).toBe('rego_type_error');
    expect(error.detail).toContain('count: arity mismatch');
  });

  it('rejects assigning a variable twice with :=', () => {
    const error = compileFailure('package p\n\nallow if {\n  x := 1\n  x := 2\n}\n');
    expect(error.code).toBe('rego_compile_error');
    expect(error.detail).toBe('var x assigned above');
    expect(error.line).toBe(5);
  });

  it('rejects a path defined both as a value and as a set', () => {
    const error = compileFailure('package p\n\nq := 1\n\nq contains 2\n');
    expect(error.code).toBe('rego_type_error');
    expect(error.detail).toBe('conflicting rules data.p.q found');
  });

  it('rejects a variable no expression binds', () => {
    const error = compileFailure('package p\n\nallow if {\n  x > 1\n}\n');
    expect(error.code).toBe('rego_unsafe_var_error');
    expect(error.detail).toBe('var x is unsafe');
    expect(error.line).toBe(4);
  });

  it('rejects an unsafe head variable', () => {
    const error = compileFailure('package p\n\nq contains y if input.x == 1\n');
    expect(error.code).toBe('rego_unsafe_var_error');
    expect(error.detail).toBe('var y is unsafe');
  });

  it('reorders a body so that generators run before the expressions that need their variables', () => {
    const policy = compilePolicy('package p\n\nq contains x if {\n  x > 1\n  x := input.xs[_]\n}\n');
    expect(toJson(evaluateRule(policy, 'q', { input: fromJson({ xs: [1, 2, 3] }) }) as RegoValue)).toEqual([2, 3]);
  });

  it('rejects recursion between rules', () => {
    const error = compileFailure('package p\n\nallow if a\n\na if b\n\nb if a\n');
    expect(error.code).toBe('rego_recursion_error');
    expect(error.message).toContain('is recursive');
  });
});

describe('evaluation semantics', () => {
  it('distinguishes undefined from false', () => {
    const policy = compilePolicy('package p\n\nyes := input.x == 1\n\nonly_if if input.x == 1\n');
    expect(evaluateRule(policy, 'yes', { input: fromJson({ x: 2 }) })).toBe(false);
    expect(evaluateRule(policy, 'only_if', { input: fromJson({ x: 2 }) })).toBeUndefined();
    expect(evaluateRule(policy, 'yes', {})).toBeUndefined();
    expect(evaluateQuery(policy, 'data.p.only_if', { input: fromJson({ x: 2 }) })).toEqual([]);
    expect(evaluateQuery(policy, 'not data.p.only_if', { input: fromJson({ x: 2 }) })).toEqual([{}]);
  });

  it('raises a conflict when a complete rule has two values', () => {
    const policy = compilePolicy('package p\n\nv := 1 if input.a\n\nv := 2 if input.b\n', { file: 'c.rego' });
    expect(evaluateRule(policy, 'v', { input: fromJson({ a: true }) })).toBe(1);
    const error = evalFailure(() => evaluateRule(policy, 'v', { input: fromJson({ a: true, b: true }) }));
    expect(error.code).toBe('eval_conflict_error');
    expect(error.message).toMatch(/^c\.rego:\d+: eval_conflict_error: complete rules must not produce multiple outputs$/);
  });

  it('raises a conflict for duplicate keys in a partial object and for functions with two outputs', () => {
    const objects = compilePolicy('package p\n\nobj[k] := v if {\n  some k, v in {"a": 1, "b": 2}\n}\n\nobj["a"] := 3\n');
    expect(evalFailure(() => evaluateRule(objects, 'obj')).code).toBe('eval_conflict_error');
    const functions = compilePolicy('package p\n\nf(x) := 1 if x > 0\n\nf(x) := 2 if x > 1\n\nr := f(5)\n');
    const error = evalFailure(() => evaluateRule(functions, 'r'));
    expect(error.code).toBe('eval_conflict_error');
    expect(error.detail).toBe('functions must not produce multiple outputs for same inputs');
  });

  it('keeps big integers exact', () => {
    const policy = compilePolicy('package p\n\nbig := 9007199254740993 + 1\n');
    expect(evaluateRule(policy, 'big')).toBe(9007199254740994n);
  });

  it('applies default, else, with and comprehensions', () => {
    const policy = compilePolicy(
      [
        'package p',
        'default level := "none"',
        'level := "admin" if input.role == "admin"',
        'else := "user" if input.role',
        'names := {n | some u in input.users; n := u.name}',
        'mocked := x if x := level with input.role as "admin"',
      ].join('\n'),
    );
    expect(evaluateRule(policy, 'level', { input: fromJson({ role: 'admin' }) })).toBe('admin');
    expect(evaluateRule(policy, 'level', { input: fromJson({ role: 'dev' }) })).toBe('user');
    expect(evaluateRule(policy, 'level', { input: fromJson({}) })).toBe('none');
    expect(evaluateRule(policy, 'mocked', { input: fromJson({}) })).toBe('admin');
    const names = evaluateRule(policy, 'names', { input: fromJson({ users: [{ name: 'b' }, { name: 'a' }, { name: 'b' }] }) });
    expect(names).toBeInstanceOf(RegoSet);
    expect(toJson(names as RegoValue)).toEqual(['a', 'b']);
  });

  it('turns a failing builtin into undefined, or into an error in strict mode', () => {
    const policy = compilePolicy('package p\n\nr := 1 / input.d\n', { file: 'd.rego' });
    expect(evaluateRule(policy, 'r', { input: fromJson({ d: 0 }) })).toBeUndefined();
    const error = evalFailure(() => evaluateRule(policy, 'r', { input: fromJson({ d: 0 }), strictBuiltinErrors: true }));
    expect(error.code).toBe('eval_builtin_error');
    expect(error.message).toBe('d.rego:3: eval_builtin_error: div: divide by zero');
  });

  it('reports one row per solution of a query', () => {
    const policy = compilePolicy('package p\n\nxs := [3, 1, 2]\n');
    const rows = rowsAsJson(evaluateQuery(policy, 'x := data.p.xs[i]; x > 1'));
    expect(rows).toEqual(
      expect.arrayContaining([
        { x: 3, i: 0 },
        { x: 2, i: 2 },
      ]),
    );
    expect(rows).toHaveLength(2);
  });
});

describe('iteration, every, with and print', () => {
  it('iterates sets and objects in sorted order, as OPA does', () => {
    const policy = compilePolicy('package p\n\nmembers := [x | some x in {"b", "c", "a", 1}]\n\nkeys := [k | some k, _ in {"z": 1, "m": 2, "a": 3}]\n');
    expect(toJson(evaluateRule(policy, 'members') as RegoValue)).toEqual([1, 'a', 'b', 'c']);
    expect(toJson(evaluateRule(policy, 'keys') as RegoValue)).toEqual(['a', 'm', 'z']);
  });

  it('holds every only when the body holds for each element', () => {
    const policy = compilePolicy('package p\n\nall_small if every x in input.xs { x < 10 }\n');
    expect(evaluateRule(policy, 'all_small', { input: fromJson({ xs: [1, 2, 3] }) })).toBe(true);
    expect(evaluateRule(policy, 'all_small', { input: fromJson({ xs: [1, 20, 3] }) })).toBeUndefined();
    expect(evaluateRule(policy, 'all_small', { input: fromJson({ xs: [] }) })).toBe(true);
  });

  it('replaces a builtin and data with `with` only inside the expression', () => {
    const policy = compilePolicy('package p\n\nn := count(input.xs)\n\nmocked := v if v := n with count as 99\n\nplain := n\n');
    const input = fromJson({ xs: [1, 2] });
    expect(evaluateRule(policy, 'mocked', { input })).toBe(99);
    expect(evaluateRule(policy, 'plain', { input })).toBe(2);
  });

  it('never fails on print, even with undefined operands', () => {
    const policy = compilePolicy('package p\n\nallow if {\n  print("missing:", input.missing)\n  input.ok\n}\n');
    expect(decide(policy, fromJson({ ok: true })).allowed).toBe(true);
  });
});

describe('long policies', () => {
  it('evaluates a body of thousands of expressions without exhausting the stack', () => {
    const checks = Array.from({ length: 5000 }, (_, i) => `  input.n > ${-i}`).join('\n');
    const policy = compilePolicy(`package p\n\nallow if {\n${checks}\n}\n`, { limits: { maxSourceBytes: 1024 * 1024 } });
    expect(decide(policy, fromJson({ n: 1 })).allowed).toBe(true);
    expect(decide(policy, fromJson({ n: -10 })).allowed).toBe(false);
  });

  it('rejects an operator chain too deep to compile with a compile error, not a crash', () => {
    const chain = Array.from({ length: 50_000 }, () => '1').join(' + ');
    expect(() => compilePolicy(`package p\n\nallow if ${chain} > 0\n`, { limits: { maxSourceBytes: 1024 * 1024 } })).toThrow(CompileError);
  });
});

describe('budgets', () => {
  const pathological = 'package p\n\nn := numbers.range(1, 3000)\n\npairs contains [a, b] if {\n  some a in n\n  some b in n\n}\n\nallow if count(pairs) > 0\n';

  it('stops an evaluation that exceeds its step budget with an error', () => {
    const policy = compilePolicy(pathological);
    const error = evalFailure(() => evaluateRule(policy, 'allow', { budget: { maxSteps: 10_000 } }));
    expect(error.code).toBe('eval_cancel_error');
    expect(error.detail).toBe('evaluation step budget exceeded');
  });

  it('denies when the budget runs out during a decision', () => {
    const policy = compilePolicy(pathological);
    const decision = decide(policy, fromJson({}), { budget: { maxSteps: 10_000 } });
    expect(decision.allowed).toBe(false);
    expect(decision.outcome).toBe('error');
    expect(decision.error).toContain('eval_cancel_error');
  });

  it('counts the CPU time an evaluation uses, not the time its process waits for a core', () => {
    // A few thousand steps, a few milliseconds of CPU (tens when cold on a busy host, well under the 200 ms budget):
    // while it runs, the wall clock jumps a second at every reading, as it does for a process descheduled on a busy
    // host. A 200 ms wall-clock budget would cancel it at the first look.
    const cheap = compilePolicy('package p\n\nallow if count([x | some x in numbers.range(1, 3000)]) == 3000\n');
    const realNow = Date.now.bind(Date);
    let readings = 0;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + (readings += 1) * 1000);
    try {
      expect(decide(cheap, fromJson({}), { budget: { maxSteps: 1_000_000, maxMilliseconds: 200 } })).toMatchObject({ allowed: true, outcome: 'allowed' });
      // Beyond the two readings of the set-up, the evaluation looked at the clock (and found the budget long past).
      expect(readings).toBeGreaterThan(2);
    } finally {
      clock.mockRestore();
    }
    // What does use its CPU time is still stopped by it.
    const decision = decide(compilePolicy(pathological), fromJson({}), { budget: { maxSteps: 100_000_000, maxMilliseconds: 200 } });
    expect(decision.error).toContain('evaluation time budget exceeded');
  });
});

describe('decide', () => {
  const policy = compilePolicy(
    [
      'package slipway.agent',
      'allow if {',
      '  input.request.method == "GET"',
      '  startswith(input.request.path, "/organization/")',
      '}',
      'allow := "yes" if input.request.method == "PUT"',
      'allow if input.request.method == "DELETE"',
      'allow := false if input.request.method == "DELETE"',
    ].join('\n'),
  );

  it('allows only when allow is exactly true, naming the rule that decided', () => {
    expect(decide(policy, fromJson({ request: { method: 'GET', path: '/organization/1' } }))).toEqual({
      allowed: true,
      outcome: 'allowed',
      rule: { file: 'policy.rego', line: 2, column: 1, isDefault: false },
    });
  });

  it('names the default rule when it decided', () => {
    const withDefault = compilePolicy('package p\n\ndefault allow := false\n\nallow if input.ok\n');
    expect(decide(withDefault, fromJson({ ok: false }))).toEqual({
      allowed: false,
      outcome: 'not-true',
      value: false,
      rule: { file: 'policy.rego', line: 3, column: 1, isDefault: true },
    });
  });

  it('denies when allow is undefined', () => {
    expect(decide(policy, fromJson({ request: { method: 'GET', path: '/other' } }))).toEqual({ allowed: false, outcome: 'undefined' });
  });

  it('denies when allow has a value other than true', () => {
    expect(decide(policy, fromJson({ request: { method: 'PUT', path: '/organization/1' } }))).toEqual({
      allowed: false,
      outcome: 'not-true',
      value: 'yes',
      rule: { file: 'policy.rego', line: 6, column: 1, isDefault: false },
    });
  });

  it('denies when evaluation fails', () => {
    const decision = decide(policy, fromJson({ request: { method: 'DELETE', path: '/organization/1' } }));
    expect(decision.allowed).toBe(false);
    expect(decision.outcome).toBe('error');
    expect(decision.error).toContain('eval_conflict_error');
  });

  it('denies when input is not what the policy expects', () => {
    expect(decide(policy, 'not an object').allowed).toBe(false);
    expect(decide(policy, null).allowed).toBe(false);
  });
});

describe('rule indexing', () => {
  type Outcome = { value: unknown } | { error: string };

  function outcome(source: string, rule: string, options: EvaluateOptions, indexRules: boolean): Outcome {
    const policy = compilePolicy(source, { indexRules });
    try {
      const value = evaluateRule(policy, rule, options);
      return { value: value === undefined ? 'undefined' : toJson(value) };
    } catch (error) {
      if (error instanceof EvalError) return { error: error.message };
      throw error;
    }
  }

  /** The rule's value (or error) with the index, after checking that evaluating every rule gives the same. */
  function evaluateBothWays(source: string, rule: string, input?: unknown, data?: unknown): Outcome {
    const options: EvaluateOptions = {
      ...(input !== undefined ? { input: fromJson(input) } : {}),
      ...(data !== undefined ? { data: fromJson(data) } : {}),
    };
    const indexed = outcome(source, rule, options, true);
    const label = `${rule} for ${JSON.stringify(input, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value))}`;
    expect(indexed, label).toEqual(outcome(source, rule, options, false));
    return indexed;
  }

  it('selects complete rules by the constant a ref must equal, with ==, = either way round, and in', () => {
    const source = [
      'package p',
      'level := "read" if input.method == "GET"',
      'level := "read" if "HEAD" = input.method',
      'level := "write" if input.method in {"PUT", "POST"}',
      'level := "delete" if input.method in ["DELETE"]',
      'level := "public" if input.path[0] == "public"',
      'code := "one" if input.n == 1',
      'code := "big" if input.n == 9007199254740993',
      'code := "yes" if input.n == true',
    ].join('\n');
    const cases: [unknown, unknown][] = [
      [{ method: 'GET' }, 'read'],
      [{ method: 'HEAD' }, 'read'],
      [{ method: 'POST' }, 'write'],
      [{ method: 'PUT' }, 'write'],
      [{ method: 'DELETE' }, 'delete'],
      [{ method: 'PATCH' }, 'undefined'],
      [{ method: ['GET'] }, 'undefined'],
      [{ method: 'PATCH', path: ['public', 'x'] }, 'public'],
      [{}, 'undefined'],
      ['GET', 'undefined'],
    ];
    for (const [input, level] of cases) expect(evaluateBothWays(source, 'level', input)).toEqual({ value: level });
    expect(evaluateBothWays(source, 'level')).toEqual({ value: 'undefined' });
    expect(evaluateBothWays(source, 'code', { n: 1.0 })).toEqual({ value: 'one' });
    expect(evaluateBothWays(source, 'code', { n: 9007199254740993n })).toEqual({ value: 'big' });
    expect(evaluateBothWays(source, 'code', { n: '1' })).toEqual({ value: 'undefined' });
    expect(evaluateBothWays(source, 'code', { n: true })).toEqual({ value: 'yes' });
    const conflict = evaluateBothWays(source, 'level', { method: 'GET', path: ['public'] });
    expect(conflict).toEqual({ error: expect.stringContaining('eval_conflict_error: complete rules must not produce multiple outputs') });
  });

  it('keeps else chains, defaults and conflicts', () => {
    const source = [
      'package p',
      'default grade := "none"',
      'grade := "a" if input.x == 1',
      'else := "b" if input.x == 2',
      'else := "c" if input.y == "late"',
      'grade := "d" if input.y == "early"',
      'grade := "a" if input.z == 0',
    ].join('\n');
    expect(evaluateBothWays(source, 'grade', { x: 1 })).toEqual({ value: 'a' });
    expect(evaluateBothWays(source, 'grade', { x: 2 })).toEqual({ value: 'b' });
    expect(evaluateBothWays(source, 'grade', { x: 3, y: 'late' })).toEqual({ value: 'c' });
    expect(evaluateBothWays(source, 'grade', { y: 'early' })).toEqual({ value: 'd' });
    expect(evaluateBothWays(source, 'grade', { x: 1, z: 0 })).toEqual({ value: 'a' });
    expect(evaluateBothWays(source, 'grade', { x: 9 })).toEqual({ value: 'none' });
    expect(evaluateBothWays(source, 'grade', {})).toEqual({ value: 'none' });
    expect(evaluateBothWays(source, 'grade', { x: 2, y: 'early' })).toEqual({ error: expect.stringContaining('eval_conflict_error') });
    expect(evaluateBothWays(source, 'grade', { x: 1, y: 'early' })).toEqual({ error: expect.stringContaining('eval_conflict_error') });
  });

  it('reads the ref in the context `with` makes, for input, base data and replaced builtins', () => {
    const source = [
      'package p',
      'op := "list" if input.operation == "listProject"',
      'op := "edit" if input.operation == "editProject"',
      'edited := x if x := op with input.operation as "editProject"',
      'replaced := x if x := op with input as {"operation": "listProject"}',
      'flipped := x if x := op with equal as neq',
      'role := "admin" if data.roles.alice == "admin"',
      'role := "user" if data.roles.alice == "user"',
      'promoted := x if x := role with data.roles.alice as "admin"',
    ].join('\n');
    const input = { operation: 'editProject' };
    const data = { roles: { alice: 'user' } };
    expect(evaluateBothWays(source, 'op', input, data)).toEqual({ value: 'edit' });
    expect(evaluateBothWays(source, 'edited', { operation: 'listProject' }, data)).toEqual({ value: 'edit' });
    expect(evaluateBothWays(source, 'replaced', input, data)).toEqual({ value: 'list' });
    expect(evaluateBothWays(source, 'flipped', input, data)).toEqual({ value: 'list' });
    expect(evaluateBothWays(source, 'role', input, data)).toEqual({ value: 'user' });
    expect(evaluateBothWays(source, 'promoted', input, data)).toEqual({ value: 'admin' });
    expect(evaluateBothWays(source, 'role', input, {})).toEqual({ value: 'undefined' });
  });

  it('selects partial set and object rules the same way', () => {
    const source = [
      'package p',
      'perms contains "read" if input.role == "viewer"',
      'perms contains "read" if input.role == "editor"',
      'perms contains "write" if input.role == "editor"',
      'perms contains "audit" if input.team == "security"',
      'limits.cpu := 2 if input.tier == "free"',
      'limits.cpu := 8 if input.tier == "pro"',
      'limits.memory := 4 if input.tier in {"free", "pro"}',
      'limits.memory := 16 if input.tier == "pro"',
    ].join('\n');
    expect(evaluateBothWays(source, 'perms', { role: 'editor' })).toEqual({ value: ['read', 'write'] });
    expect(evaluateBothWays(source, 'perms', { role: 'viewer', team: 'security' })).toEqual({ value: ['audit', 'read'] });
    expect(evaluateBothWays(source, 'perms', { role: 'guest' })).toEqual({ value: [] });
    expect(evaluateBothWays(source, 'limits', { tier: 'free' })).toEqual({ value: { cpu: 2, memory: 4 } });
    expect(evaluateBothWays(source, 'limits', { tier: 'pro' })).toEqual({ error: expect.stringContaining('eval_conflict_error') });
    expect(evaluateBothWays(source, 'limits', { tier: 'team' })).toEqual({ value: {} });
  });

  it('selects function definitions by constant arguments and by tests on parameters', () => {
    const source = [
      'package p',
      'price("small") := 1',
      'price("large") := 3',
      'price(size) := 2 if size == "medium"',
      'price(size) := 10 if size == "huge"',
      'else := 5 if size == "big"',
      'default price(_) := 0',
      'total := price(input.size)',
      'tag(x) := "int" if x == 1',
      'tag(x) := "float" if x == 1.0',
      'tag(x) := "two" if x == 2',
      'tagged := tag(input.size)',
      'fee(kind, size) := 7 if size == "xl"',
      'fee(kind, size) := 3 if { kind == "ssd"; size == "s" }',
      'fee("hdd", size) := 1',
      'fees := [fee("ssd", "xl"), fee("ssd", "s"), fee("hdd", "s"), fee("xl", "ssd")]',
    ].join('\n');
    const prices: [unknown, number][] = [
      ['small', 1],
      ['large', 3],
      ['medium', 2],
      ['huge', 10],
      ['big', 5],
      ['tiny', 0],
      [1, 0],
    ];
    for (const [size, price] of prices) expect(evaluateBothWays(source, 'total', { size })).toEqual({ value: price });
    expect(evaluateBothWays(source, 'tagged', { size: 2 })).toEqual({ value: 'two' });
    expect(evaluateBothWays(source, 'tagged', { size: 3 })).toEqual({ value: 'undefined' });
    expect(evaluateBothWays(source, 'tagged', { size: 1 })).toEqual({ error: expect.stringContaining('functions must not produce multiple outputs') });
    expect(evaluateBothWays(source, 'fees', {})).toEqual({ value: 'undefined' });
    expect(evaluateBothWays(source.replace('fee("xl", "ssd")', 'fee("any", "xl")'), 'fees', {})).toEqual({ value: [7, 3, 1, 7] });
  });

  it('never reads a rule for the index: a rule a body does not reach cannot fail the evaluation', () => {
    const source = [
      'package p',
      'conflicting := 1 if input.a',
      'conflicting := 2 if input.a',
      'guarded := "one" if {',
      '  input.enabled',
      '  conflicting == 1',
      '}',
      'guarded := "two" if {',
      '  input.enabled',
      '  conflicting == 2',
      '}',
    ].join('\n');
    expect(evaluateBothWays(source, 'guarded', { a: true, enabled: false })).toEqual({ value: 'undefined' });
    expect(evaluateBothWays(source, 'guarded', { a: true, enabled: true })).toEqual({ error: expect.stringContaining('eval_conflict_error') });
  });

  it('agrees with evaluating every rule on generated policies', () => {
    // A fixed-seed generator: rules mixing indexable tests (==, =, in) with ones that are not (negation, !=, with,
    // local variables, comprehensions), else chains, defaults, partial sets and functions.
    let seed = 20_261_122;
    const random = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const pick = <T>(values: T[]): T => values[random(values.length)] as T;
    const constants = ['"a"', '"b"', '1', '1.0', '2', 'true', 'null', '"1"'];
    const refs = ['input.m', 'input.n', 'input.arr[0]', 'input.o.k', 'data.d.x'];
    const test = (parameter?: string): string => {
      const ref = parameter && random(2) === 0 ? parameter : pick(refs);
      const forms = [
        `${ref} == ${pick(constants)}`,
        `${pick(constants)} = ${ref}`,
        `${ref} in {${pick(constants)}, ${pick(constants)}}`,
        `not ${ref} == ${pick(constants)}`,
        `${ref} != ${pick(constants)}`,
        `${ref} == ${pick(constants)} with input.m as ${pick(constants)}`,
        `count([v | some v in input.arr; v != ${pick(constants)}]) >= ${random(3)}`,
        `local${random(1000)} := ${ref}`,
      ];
      return pick(forms);
    };
    const body = (parameter?: string): string => Array.from({ length: 1 + random(3) }, () => test(parameter)).join('\n  ');
    const policy = (): string => {
      const lines = ['package t'];
      for (let i = 0; i <= random(5); i++) {
        if (random(2) === 0) lines.push(`allow := ${pick(constants)} if {\n  ${body()}\n}`);
        else lines.push(`allow := ${pick(constants)} if {\n  ${body()}\n} else := ${pick(constants)} if {\n  ${body()}\n}`);
      }
      if (random(2) === 0) lines.push(`default allow := ${pick(constants)}`);
      for (let i = 0; i <= random(4); i++) lines.push(`s contains ${pick(constants)} if {\n  ${body()}\n}`);
      for (let i = 0; i <= random(4); i++) {
        if (random(2) === 0) lines.push(`f(${pick(constants)}) := ${pick(constants)}`);
        else lines.push(`f(p) := ${pick(constants)} if {\n  ${body('p')}\n}`);
      }
      lines.push('r := f(input.m)');
      return lines.join('\n');
    };
    const scalar = (): unknown => pick(['a', 'b', 1, 2, true, null, '1']);
    let compared = 0;
    for (let i = 0; i < 120; i++) {
      const source = policy();
      for (let j = 0; j < 4; j++) {
        const input = { m: scalar(), n: scalar(), arr: [scalar(), scalar()], o: { k: scalar() } };
        const data = { d: { x: scalar() } };
        for (const rule of ['allow', 's', 'r']) {
          evaluateBothWays(source, rule, input, data);
          compared++;
        }
      }
    }
    expect(compared).toBe(1440);
  });

  it('tries only the candidate rules: a decision over 300 indexed rules fits a budget that evaluating all of them exceeds', () => {
    const rules = Array.from({ length: 300 }, (_, i) => `allow if {\n  input.operation_id == "operation${i}"\n  count([s | some s in input.path; s != ""]) >= 1\n}`);
    const source = `package p\n${rules.join('\n')}\n`;
    const input = fromJson({ operation_id: 'operation299', path: ['project', 'x'] });
    const budget = { maxSteps: 100 };
    expect(decide(compilePolicy(source), input, { budget })).toMatchObject({ allowed: true, outcome: 'allowed', rule: { line: 1198 } });
    const everyRule = decide(compilePolicy(source, { indexRules: false }), input, { budget });
    expect(everyRule.outcome).toBe('error');
    expect(everyRule.error).toContain('evaluation step budget exceeded');
    expect(decide(compilePolicy(source, { indexRules: false }), input).outcome).toBe('allowed');
  });
});
