import { describe, expect, it } from 'vitest';
import { CompileError, compilePolicy, decide, EvalError, evaluateQuery, evaluateRule } from '../src/policy/rego/rego.engine.ts';
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
