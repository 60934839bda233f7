import { readFileSync } from 'node:fs';
import { compilePolicy, CompileError, EvalError, evaluateQuery, type CompiledPolicy } from '../rego.engine.ts';
import { canonicalKey, compareValues, RegoObject, RegoSet, regoNumber, type RegoValue } from '../rego.value.ts';

/**
 * Runs OPA conformance cases (shape and comparison rules: ../shared/opa-conformance/README.md) against the engine.
 *
 *   npm run conformance:rego -- <cases.json> [--category <name>] [--verbose]
 *
 * Prints a per-category table and ends with `N passed, M failed`. Exits 0 once the run completes (the summary line
 * is the result); 2 on a usage error.
 */
interface ConformanceCase {
  id: string;
  category: string;
  query: string;
  modules: string[];
  data: RegoValue;
  input?: RegoValue;
  input_term?: string;
  want_result?: RegoValue[];
  want_error?: string;
  want_error_code?: string;
  sort_bindings: boolean;
  strict_error: boolean;
}

/** JSON with big integers kept exact (bigint beyond ±(2^53−1)), straight into Rego values. */
function parseJson(text: string): RegoValue {
  let position = 0;
  const fail = (message: string): never => {
    throw new SyntaxError(`${message} at offset ${position}`);
  };
  const skip = (): void => {
    while (position < text.length && ' \t\n\r'.includes(text[position] as string)) position++;
  };
  const value = (): RegoValue => {
    skip();
    const c = text[position];
    if (c === '{') {
      position++;
      const object = new RegoObject();
      skip();
      if (text[position] === '}') {
        position++;
        return object;
      }
      for (;;) {
        skip();
        const key = value();
        if (typeof key !== 'string') fail('object key must be a string');
        skip();
        if (text[position] !== ':') fail('expected :');
        position++;
        object.set(key, value());
        skip();
        if (text[position] === ',') {
          position++;
          continue;
        }
        if (text[position] === '}') {
          position++;
          return object;
        }
        fail('expected , or }');
      }
    }
    if (c === '[') {
      position++;
      const items: RegoValue[] = [];
      skip();
      if (text[position] === ']') {
        position++;
        return items;
      }
      for (;;) {
        items.push(value());
        skip();
        if (text[position] === ',') {
          position++;
          continue;
        }
        if (text[position] === ']') {
          position++;
          return items;
        }
        fail('expected , or ]');
      }
    }
    if (c === '"') {
      const start = position;
      position++;
      while (text[position] !== '"') {
        if (text[position] === '\\') position++;
        position++;
        if (position >= text.length) fail('unterminated string');
      }
      position++;
      return JSON.parse(text.slice(start, position)) as string;
    }
    const match = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(position, position + 400));
    if (match) {
      position += match[0].length;
      if (match[1] === undefined && match[2] === undefined) return regoNumber(BigInt(match[0]));
      return regoNumber(Number(match[0]));
    }
    for (const [word, literal] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, position)) {
        position += word.length;
        return literal;
      }
    }
    return fail('unexpected token');
  };
  const result = value();
  skip();
  if (position !== text.length) fail('trailing data');
  return result;
}

function field(object: RegoObject, name: string): RegoValue | undefined {
  return object.get(name);
}

function toCase(value: RegoValue): ConformanceCase {
  if (!(value instanceof RegoObject)) throw new TypeError('case must be an object');
  const text = (name: string): string | undefined => {
    const member = field(value, name);
    return typeof member === 'string' ? member : undefined;
  };
  const modules = field(value, 'modules');
  const wantResult = field(value, 'want_result');
  const result: ConformanceCase = {
    id: text('id') ?? '?',
    category: text('category') ?? '?',
    query: text('query') ?? '',
    modules: Array.isArray(modules) ? modules.filter((m): m is string => typeof m === 'string') : [],
    data: field(value, 'data') ?? new RegoObject(),
    sort_bindings: field(value, 'sort_bindings') === true,
    strict_error: field(value, 'strict_error') === true,
  };
  if (value.has('input')) result.input = field(value, 'input') as RegoValue;
  const inputTerm = text('input_term');
  if (inputTerm !== undefined) result.input_term = inputTerm;
  if (Array.isArray(wantResult)) result.want_result = wantResult;
  const wantError = text('want_error');
  if (wantError !== undefined) result.want_error = wantError;
  const wantErrorCode = text('want_error_code');
  if (wantErrorCode !== undefined) result.want_error_code = wantErrorCode;
  return result;
}

/** JSON text of a value (Go's encoding, no spaces), for non-string object keys. */
function jsonText(value: RegoValue): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return JSON.stringify(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value instanceof RegoSet) return jsonText(asJson(value));
  const json = asJson(value) as RegoObject;
  const keys = [...json.keys()].sort(compareValues) as string[];
  return `{${keys.map((key) => `${JSON.stringify(key)}:${jsonText(json.get(key) as RegoValue)}`).join(',')}}`;
}

/** A value as OPA's harness compares it: JSON (sets → sorted arrays, non-string keys → their JSON text). */
function asJson(value: RegoValue): RegoValue {
  if (Array.isArray(value)) return value.map(asJson);
  if (value instanceof RegoSet) return [...value.values()].sort(compareValues).map(asJson);
  if (value instanceof RegoObject) {
    const object = new RegoObject();
    for (const [key, member] of value.entries()) object.set(typeof key === 'string' ? key : jsonText(key), asJson(member));
    return object;
  }
  return value;
}

function rowKey(row: RegoValue, sortBindings: boolean): string {
  if (!(row instanceof RegoObject)) return canonicalKey(row);
  const normalised = new RegoObject();
  for (const [key, value] of row.entries()) {
    let json = asJson(value);
    if (sortBindings && Array.isArray(json)) json = [...json].sort(compareValues);
    normalised.set(key, json);
  }
  return canonicalKey(normalised);
}

interface Outcome {
  passed: boolean;
  detail: string;
  /** For error cases: whether the code, and the message, matched. */
  codeMatched?: boolean;
  messageMatched?: boolean;
}

function runCase(testCase: ConformanceCase): Outcome {
  let policy: CompiledPolicy;
  let rows: RegoValue[];
  try {
    policy = compilePolicy(
      testCase.modules.map((source, index) => ({ file: `test-${index}.rego`, source })),
      { limits: { maxSourceBytes: 4 * 1024 * 1024, maxRules: 100_000 } },
    );
    let input: RegoValue | undefined = testCase.input;
    if (testCase.input_term !== undefined) {
      const [row] = evaluateQuery(compilePolicy('package __input_term__'), `__input_term__ = ${testCase.input_term}`);
      input = row?.__input_term__;
    }
    rows = evaluateQuery(policy, testCase.query, {
      ...(input !== undefined ? { input } : {}),
      data: testCase.data,
      strictBuiltinErrors: testCase.strict_error,
      budget: { maxSteps: 50_000_000, maxMilliseconds: 20_000 },
    }).map((row) => RegoObject.fromEntries(Object.entries(row)));
  } catch (error) {
    if (!(error instanceof EvalError || error instanceof CompileError)) {
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return { passed: false, detail: `crash: ${message}` };
    }
    const code = error.code;
    const message = error.message;
    if (testCase.want_error === undefined && testCase.want_error_code === undefined) {
      return { passed: false, detail: `unexpected error: ${message}` };
    }
    const codeMatched = testCase.want_error_code === undefined || testCase.want_error_code === code;
    const messageMatched = testCase.want_error === undefined || message.includes(testCase.want_error);
    return {
      passed: codeMatched && messageMatched,
      detail: `error ${message}; want code ${testCase.want_error_code ?? '(any)'}, message containing ${JSON.stringify(testCase.want_error ?? '')}`,
      codeMatched,
      messageMatched,
    };
  }
  if (testCase.want_error !== undefined || testCase.want_error_code !== undefined) {
    return {
      passed: false,
      detail: `no error; want ${testCase.want_error_code ?? ''} ${JSON.stringify(testCase.want_error ?? '')}; got ${rows.map((r) => jsonText(asJson(r))).join(' ')}`,
      codeMatched: false,
      messageMatched: false,
    };
  }
  const want = testCase.want_result ?? [];
  const expected = new Set(want.map((row) => rowKey(row, testCase.sort_bindings)));
  const actual = new Set(rows.map((row) => rowKey(row, testCase.sort_bindings)));
  const same = expected.size === actual.size && [...expected].every((key) => actual.has(key));
  return {
    passed: same,
    detail: `want ${want.map((r) => jsonText(asJson(r))).join(' ') || '(undefined)'}\n      got  ${rows.map((r) => jsonText(asJson(r))).join(' ') || '(undefined)'}`,
  };
}

function main(argv: string[]): number {
  let file: string | undefined;
  let category: string | undefined;
  let verbose = false;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    if (argument === '--verbose') verbose = true;
    else if (argument === '--category') category = argv[++index];
    else if (argument === '--') continue;
    else file = argument;
  }
  if (!file) {
    process.stderr.write('usage: rego.conformance.ts <cases.json> [--category <name>] [--verbose]\n');
    return 2;
  }
  const parsed = parseJson(readFileSync(file, 'utf8'));
  if (!Array.isArray(parsed)) throw new TypeError('the case file must hold a JSON array');
  const cases = parsed.map(toCase).filter((testCase) => category === undefined || testCase.category === category);
  const table = new Map<string, { passed: number; failed: number }>();
  let passed = 0;
  let failed = 0;
  let errorCases = 0;
  let codeMatches = 0;
  let messageMatches = 0;
  for (const testCase of cases) {
    const outcome = runCase(testCase);
    const row = table.get(testCase.category) ?? { passed: 0, failed: 0 };
    table.set(testCase.category, row);
    if (testCase.want_error !== undefined || testCase.want_error_code !== undefined) {
      errorCases++;
      if (outcome.codeMatched) codeMatches++;
      if (outcome.messageMatched) messageMatches++;
    }
    if (outcome.passed) {
      passed++;
      row.passed++;
    } else {
      failed++;
      row.failed++;
      if (verbose) process.stdout.write(`FAIL ${testCase.id}\n      ${outcome.detail}\n`);
    }
  }
  const width = Math.max(8, ...[...table.keys()].map((name) => name.length));
  process.stdout.write(`${'category'.padEnd(width)}  passed  failed   total\n`);
  for (const [name, row] of [...table].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    process.stdout.write(`${name.padEnd(width)}  ${String(row.passed).padStart(6)}  ${String(row.failed).padStart(6)}  ${String(row.passed + row.failed).padStart(6)}\n`);
  }
  process.stdout.write(`error cases: ${errorCases}, right code: ${codeMatches}, same message: ${messageMatches}\n`);
  process.stdout.write(`${passed} passed, ${failed} failed\n`);
  // A completed run exits 0 even with failures, so `npm run` adds no error lines after the summary line.
  return 0;
}

process.exitCode = main(process.argv.slice(2));
