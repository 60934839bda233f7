import { describe, expect, it } from 'vitest';
import { BuiltinError, type BuiltinContext } from '../src/policy/rego/rego.builtins.ts';
import { ALL_BUILTINS } from '../src/policy/rego/builtins/builtins.catalog.ts';
import { RegoObject, RegoSet, toJson, type RegoValue } from '../src/policy/rego/rego.value.ts';

/**
 * The builtins called directly, without the evaluator: exact values (bignums, decimals, Go formatting), OPA's error
 * codes and texts, and the RE2/glob semantics that the conformance cases only touch lightly.
 */
const builtins = new Map(ALL_BUILTINS.map((definition) => [definition.name, definition]));

function freshContext(): BuiltinContext {
  return { nowNs: 1_700_000_000_123_456_789n, cache: new Map() };
}

function call(name: string, operands: RegoValue[], context: BuiltinContext = freshContext()): RegoValue | undefined {
  const definition = builtins.get(name);
  if (!definition) throw new Error(`no builtin ${name}`);
  expect(operands.length).toBe(definition.arity);
  return definition.implementation(operands, context);
}

function failure(name: string, operands: RegoValue[]): BuiltinError {
  try {
    call(name, operands);
  } catch (error) {
    if (error instanceof BuiltinError) return error;
    throw error;
  }
  throw new Error(`${name} did not fail`);
}

function object(entries: Record<string, RegoValue>): RegoObject {
  return RegoObject.fromEntries(Object.entries(entries));
}

describe('the catalog', () => {
  it('registers each name once and every family the conformance suite uses', () => {
    const names = ALL_BUILTINS.map((definition) => definition.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of ['plus', 'minus', 'equal', 'count', 'array.flatten', 'and', 'object.get', 'sprintf', 'regex.match', 'glob.match']) {
      expect(builtins.has(name)).toBe(true);
    }
    for (const name of ['base64.decode', 'is_string', 'to_number', 'time.parse_ns', 'semver.compare', 'uuid.parse', 'io.jwt.decode']) {
      expect(builtins.has(name)).toBe(true);
    }
    for (const name of ['crypto.hmac.sha256', 'graph.reachable', 'internal.template_string', 'test.sleep', 'yaml.unmarshal']) {
      expect(builtins.has(name)).toBe(true);
    }
  });
});

describe('numbers', () => {
  it('keeps integers exact beyond 2^53 and 2^64', () => {
    expect(call('plus', [18446744073709551617n, 1])).toBe(18446744073709551618n);
    expect(call('minus', [-18446744073709551617n, 1])).toBe(-18446744073709551618n);
    expect(call('mul', [2147483647, 2147483647])).toBe(4611686014132420609n);
    expect(call('plus', [9007199254740991, 1])).toBe(9007199254740992n);
    expect(call('abs', [-9223372036854775808n])).toBe(9223372036854775808n);
    expect(call('product', [[18446744073709551617n, 2]])).toBe(36893488147419103234n);
    expect(call('sum', [RegoSet.of([9223372036854775807n, 1, 2])])).toBe(9223372036854775810n);
  });

  it('normalises results back to JS numbers when they fit', () => {
    expect(call('minus', [9007199254740993n, 2])).toBe(9007199254740991);
    expect(call('plus', [1.5, 2.5])).toBe(4);
    expect(call('plus', [1, 2.5])).toBe(3.5);
  });

  it('divides exactly only when the divisor divides the dividend', () => {
    expect(call('div', [6, 3])).toBe(2);
    expect(call('div', [1, 4])).toBe(0.25);
    expect(call('div', [36893488147419103234n, 2])).toBe(18446744073709551617n);
    const zero = failure('div', [1, 0]);
    expect(zero.code).toBe('eval_builtin_error');
    expect(zero.message).toBe('div: divide by zero');
  });

  it('takes the remainder with the sign of the dividend and rejects floats and zero', () => {
    expect(call('rem', [-17, 5])).toBe(-2);
    expect(call('rem', [17, -5])).toBe(2);
    expect(call('rem', [18446744073709551617n, 18446744073709551616n])).toBe(1);
    expect(call('rem', [100, -18446744073709551616n])).toBe(100);
    expect(failure('rem', [7, 0]).message).toBe('rem: modulo by zero');
    expect(failure('rem', [1.1, 1]).message).toBe('rem: modulo on floating-point number');
  });

  it('rounds half away from zero and leaves integers alone', () => {
    expect(call('round', [2.5])).toBe(3);
    expect(call('round', [-2.5])).toBe(-3);
    expect(call('ceil', [-1.99999])).toBe(-1);
    expect(call('floor', [-1.001])).toBe(-2);
    expect(call('round', [18446744073709551617n])).toBe(18446744073709551617n);
  });

  it('names the operand that breaks a pairing, as OPA does', () => {
    const setMinusNumber = failure('minus', [RegoSet.of([1]), 1]);
    expect(setMinusNumber.code).toBe('eval_type_error');
    expect(setMinusNumber.message).toBe('minus: operand 2 must be set but got number');
    expect(failure('minus', [1, RegoSet.of([1])]).message).toBe('minus: operand 2 must be number but got set');
    expect(failure('plus', ['1', 1]).message).toBe('plus: operand 1 must be number but got string');
  });

  it('shifts and masks integers, rejecting floats and negative shifts', () => {
    expect(call('bits.lsh', [9223372036854775807n, 1])).toBe(18446744073709551614n);
    expect(call('bits.and', [7, 9])).toBe(1);
    expect(failure('bits.or', [7.2, 42]).message).toBe('bits.or: operand 1 must be integer number but got floating-point number');
    expect(failure('bits.rsh', [7, -1]).message).toBe('bits.rsh: operand 2 must be an unsigned integer number but got a negative integer');
  });

  it('builds ranges in either direction and refuses absurd ones', () => {
    expect(call('numbers.range', [5, 2])).toEqual([5, 4, 3, 2]);
    expect(call('numbers.range_step', [0, -10, 2])).toEqual([0, -2, -4, -6, -8, -10]);
    expect(call('numbers.range_step', [0, 10, 99999999999999999999n])).toEqual([0]);
    expect(failure('numbers.range', [0, 1e12]).code).toBe('eval_builtin_error');
  });
});

describe('sprintf (Go fmt)', () => {
  const sprintf = (format: string, ...args: RegoValue[]): RegoValue | undefined => call('sprintf', [format, args]);

  it('formats integers, big integers and floats as Go does', () => {
    expect(sprintf('hi %02d', 5)).toBe('hi 05');
    expect(sprintf('hi %02X.%02X', 127, 1)).toBe('hi 7F.01');
    expect(sprintf('%.2f', 3.1415)).toBe('3.14');
    expect(sprintf('%s', 123456789123456789123n)).toBe('123456789123456789123');
    expect(sprintf('%v', 1234567.5)).toBe('1.2345675e+06');
    expect(sprintf('%v', 0.00001)).toBe('1e-05');
    expect(sprintf('%e', 1234.5678)).toBe('1.234568e+03');
    expect(sprintf('%x %o %b %+d', 255, 8, 5, 3)).toBe('ff 10 101 +3');
    expect(sprintf('%-4d|%4s|', 7, 'ab')).toBe('7   |  ab|');
  });

  it('prints non-numbers as Rego terms and marks verb mismatches like Go', () => {
    expect(sprintf('%v', [1, 'a', new RegoSet()])).toBe('[1, "a", set()]');
    expect(sprintf('%v', object({ b: 2, a: RegoSet.of([2, 1]) }))).toBe('{"a": {1, 2}, "b": 2}');
    expect(sprintf('%s', true)).toBe('true');
    expect(sprintf('%d', 'x')).toBe('%!d(string=x)');
    expect(sprintf('%s', 5)).toBe('%!s(int=5)');
    expect(sprintf('%d %d', 1)).toBe('1 %!d(MISSING)');
    expect(sprintf('%d', 1, 2)).toBe('1%!(EXTRA int=2)');
    expect(sprintf('100%%')).toBe('100%');
  });

  it('refuses absurd widths instead of building huge strings', () => {
    // Go abandons the verb and reports the unused argument.
    expect(sprintf('%99999999d', 1)).toBe('%!(NOVERB)%!(EXTRA int=1)');
  });
});

describe('strings', () => {
  it('counts positions in code points, not UTF-16 units', () => {
    expect(call('indexof', ['🍧🍨🧁🍰🍮', '🍮'])).toBe(4);
    expect(call('indexof_n', ['😇😀😇😀😇😀', '😀'])).toEqual([1, 3, 5]);
    expect(call('substring', ['aåäö', 2, -1])).toBe('äö');
    expect(call('count', ['åäö'])).toBe(3);
    expect(call('strings.reverse', ['1😀𝛾'])).toBe('𝛾😀1');
    expect(failure('substring', ['aaa', -1, -1]).message).toBe('substring: negative offset');
  });

  it('splits and replaces with Go semantics', () => {
    expect(call('split', ['', ''])).toEqual([]);
    expect(call('split', ['', '.'])).toEqual(['']);
    expect(call('split', ['test', ''])).toEqual(['t', 'e', 's', 't']);
    expect(call('strings.split_n', ['a.b.c.d', '.', -2])).toEqual(['c', 'd']);
    expect(call('strings.split_n', ['abc', '', 2])).toEqual(['a', 'b']);
    expect(call('replace', ['abc', '', '-'])).toBe('-a-b-c-');
    expect(call('strings.count', ['dummy', ''])).toBe(6);
    expect(call('strings.count', ['11111', '11'])).toBe(2);
    // Sorted keys, the earlier key winning at a position (Go's strings.NewReplacer).
    expect(call('strings.replace_n', [object({ foo: 'xxx', f: 'x' }), 'foo'])).toBe('xoo');
  });

  it('trims rune cutsets and Go whitespace', () => {
    expect(call('trim', ['¡¡¡foo, bar!!!', '!¡'])).toBe('foo, bar');
    expect(call('trim_space', [' \t\n foo, bar \n\t\r\n'])).toBe('foo, bar');
    // U+FEFF is not white space in Go (JavaScript's trim would remove it).
    expect(call('trim_space', ['\ufeffx'])).toBe('\ufeffx');
  });

  it('reports element type errors with OPA wording', () => {
    expect(failure('strings.any_prefix_match', [[1, 2, 3], ['f/']]).message).toBe(
      'strings.any_prefix_match: operand 1 must be array of strings but got array containing number',
    );
    expect(failure('concat', [',', RegoSet.of(['a', 1])]).message).toBe('concat: operand 2 must be set of strings but got set containing number');
    expect(failure('format_int', [4.1, 199]).code).toBe('eval_type_error');
    expect(call('format_int', [-15.5, 16])).toBe('-f');
  });

  it('interpolates templates, printing undefined parts and non-strings as terms', () => {
    expect(call('internal.template_string', [['a=', RegoSet.of(['x']), ', b=', new RegoSet(), ', c=', RegoSet.of([[1, 'y']])]])).toBe(
      'a=x, b=<undefined>, c=[1, "y"]',
    );
    expect(failure('internal.template_string', [[RegoSet.of([1, 2])]]).code).toBe('eval_builtin_error');
  });
});

describe('regex (RE2)', () => {
  it('uses Go regexp semantics for find, split and replace', () => {
    expect(call('regex.find_n', ['a.', 'paranormal', 2])).toEqual(['ar', 'an']);
    expect(call('regex.split', ['a', 'banana'])).toEqual(['b', 'n', 'n', '']);
    expect(call('regex.split', ['^[a-z ]+$', 'foobar baz'])).toEqual(['', '']);
    expect(call('regex.find_all_string_submatch_n', ['[^aouiye]([aouiye])([^aouiye])?', 'somestri', -1])).toEqual([
      ['som', 'o', 'm'],
      ['ri', 'i', ''],
    ]);
    expect(call('regex.replace', ['foo', '(foo)', '$1$1'])).toBe('foofoo');
    expect(call('regex.replace', ['foo barx', '[a-z]{2}', '_'])).toBe('_o __');
    // Go reads `$1x` as the (missing) group named "1x".
    expect(call('regex.replace', ['foo', '(foo)', '$1x'])).toBe('');
    expect(call('regex.replace', ['ab', '(?P<first>a)', '[${first}]'])).toBe('[a]b');
  });

  it('matches in linear time where a backtracking engine would not finish', () => {
    const evil = `${'a'.repeat(5000)}!`;
    expect(call('regex.match', ['^(a+)+$', evil])).toBe(false);
  });

  it('rejects invalid patterns with Go parser messages', () => {
    const invalid = failure('regex.match', ['$^[[[', 'something']);
    expect(invalid.code).toBe('eval_builtin_error');
    expect(invalid.message).toBe('regex.match: error parsing regexp: missing closing ]: `[[[`');
    expect(call('regex.is_valid', ['++'])).toBe(false);
    expect(call('regex.is_valid', [10])).toBe(false);
    // Perl look-arounds are not RE2.
    expect(call('regex.is_valid', ['a(?=b)'])).toBe(false);
  });

  it('matches templates and decides glob intersections', () => {
    expect(call('regex.template_match', ['urn:foo:{.*}', 'urn:foo:bar:baz', '{', '}'])).toBe(true);
    expect(call('regex.template_match', ['urn:{[a-z]+}:x', 'urn:FOO:x', '{', '}'])).toBe(false);
    expect(call('regex.globs_match', ['[a-z]+\\[[0-9]+\\]', 'foo\\[1\\]'])).toBe(true);
    expect(call('regex.globs_match', ['[a-z]+', '[0-9]*'])).toBe(false);
    expect(call('regex.globs_match', ['a.*', '.*b'])).toBe(true);
    expect(failure('regex.globs_match', ['pqrs]', '[a-b]+']).message).toBe(
      "regex.globs_match: input:pqrs], pos:5, set-close ']' with no preceding '[': the input provided is invalid",
    );
  });
});

describe('glob.match (gobwas semantics)', () => {
  const glob = (pattern: string, delimiters: RegoValue, text: string): RegoValue | undefined => call('glob.match', [pattern, delimiters, text]);

  it('stops * and ? at delimiters, ** crosses them', () => {
    expect(glob('*.github.com', ['.'], 'api.github.com')).toBe(true);
    expect(glob('*.github.com', ['.'], 'api.cdn.github.com')).toBe(false);
    expect(glob('api.**.com', ['.'], 'api.cdn.github.com')).toBe(true);
    expect(glob('?at', ['f'], 'fat')).toBe(false);
    expect(glob('*/*', ['/'], 'a/b/c')).toBe(false);
  });

  it('defaults an empty delimiter list to "." and null to none', () => {
    expect(glob('*', [], 'foo.bar')).toBe(false);
    expect(glob('*', null, 'foo.bar')).toBe(true);
  });

  it('supports classes, negation, alternatives and escapes', () => {
    expect(glob('[!a-c]at', [], 'fat')).toBe(true);
    expect(glob('[a-c]at', [], 'fat')).toBe(false);
    expect(glob('{cat,bat,[fr]at}', [], 'rat')).toBe(true);
    expect(glob('{cat,bat,[fr]at}', [], 'at')).toBe(false);
    expect(glob('\\*x', [], '*x')).toBe(true);
    expect(glob('\\*x', [], 'ax')).toBe(false);
    expect(glob('a(b)+c', [], 'a(b)+c')).toBe(true);
    expect(call('glob.quote_meta', ['*.github.com'])).toBe('\\*.github.com');
  });
});

describe('objects and JSON paths', () => {
  it('merges recursively and filters or removes by path', () => {
    const merged = call('object.union', [object({ a: object({ b: object({ c: 1 }) }), e: 1 }), object({ a: object({ b: 'foo', b1: 'bar' }), e: 17 })]);
    expect(toJson(merged as RegoValue)).toEqual({ a: { b: 'foo', b1: 'bar' }, e: 17 });
    const filtered = call('json.filter', [object({ a: [object({ '1': ['b', 'c', 'd'] }), object({ x: 'y' })] }), RegoSet.of(['a/0/1/2'])]);
    expect(toJson(filtered as RegoValue)).toEqual({ a: [{ '1': ['d'] }] });
    const removed = call('json.remove', [object({ a: [object({ b: 7, c: 8 }), object({ d: 9 })] }), RegoSet.of(['a/0/b', 'a/1'])]);
    expect(toJson(removed as RegoValue)).toEqual({ a: [{ c: 8 }] });
    expect(failure('json.remove', [object({}), RegoSet.of([1])]).message).toBe(
      'json.remove: operand 2 must be one of {set, array} containing string paths or array of path segments but got number',
    );
  });

  it('applies JSON patches atomically, including inside sets', () => {
    const moved = call('json.patch', [object({ foo: RegoSet.of(['a', 'b']), bar: RegoSet.of(['c']) }), [object({ op: 'move', from: 'foo/a', path: 'bar/a' })]]);
    expect(toJson(moved as RegoValue)).toEqual({ foo: ['b'], bar: ['a', 'c'] });
    expect(call('json.patch', [[1, 2, 3], [object({ op: 'add', path: '1.2', value: 'foo' })]])).toBeUndefined();
    expect(call('json.patch', [object({ a: 1 }), [object({ op: 'test', path: '/a', value: 2 })]])).toBeUndefined();
  });

  it('walks array paths in object.get and compares subsets recursively', () => {
    expect(call('object.get', [object({ a: object({ b: [object({ c: 1 })] }) }), ['a', 'b', 0, 'c'], 2])).toBe(1);
    expect(call('object.get', [object({ a: 1 }), ['b'], 2])).toBe(2);
    expect(call('object.subset', [[1, 2, 3, 4], [2, 3]])).toBe(true);
    expect(call('object.subset', [[1, 2, 3, 4], [2, 4]])).toBe(false);
    expect(call('object.subset', [object({ a: object({ x: 1, y: 2 }) }), object({ a: object({ x: 1 }) })])).toBe(true);
  });
});

describe('encodings', () => {
  it('decodes base64 strictly with Go error offsets', () => {
    expect(call('base64.decode', ['aGVsbG8='])).toBe('hello');
    expect(failure('base64.decode', ['aGVsbG8']).message).toBe('base64.decode: illegal base64 data at input byte 4');
    expect(failure('base64.decode', ['aGV$bG8=']).message).toBe('base64.decode: illegal base64 data at input byte 3');
    expect(call('base64url.decode', ['aGVsbG8'])).toBe('hello');
    expect(call('base64.is_valid', ["{'not':'base64'}"])).toBe(false);
  });

  it('turns invalid UTF-8 into one U+FFFD per byte, as Go counts runes', () => {
    expect(call('count', [call('base64.decode', ['2E84ZuPUd7zfvCZSNEchVpDEIj6PL7JfLpIqyxVG16k=']) as RegoValue])).toBe(30);
  });

  it('marshals JSON like Go: sorted keys, HTML escapes, exact big integers', () => {
    expect(call('json.marshal', [object({ b: RegoSet.of([3, 1]), a: '<&>' })])).toBe('{"a":"\\u003c\\u0026\\u003e","b":[1,3]}');
    expect(call('json.marshal', [[18446744073709551614n, 1.5]])).toBe('[18446744073709551614,1.5]');
    expect(call('json.marshal_with_options', [[1, 2], object({ prefix: '> ' })])).toBe('> [\n> \t1,\n> \t2\n> ]');
    const unknown = failure('json.marshal_with_options', [[], object({ include_winning_lottery_numbers: true })]);
    expect(unknown.code).toBe('eval_type_error');
    expect(unknown.message).toContain('object contained unknown key "include_winning_lottery_numbers"');
  });

  it('unmarshals JSON keeping big integers exact', () => {
    expect(toJson(call('json.unmarshal', ['{"n": 18446744073709551614, "f": 1.5}']) as RegoValue)).toEqual({ n: 18446744073709551614n, f: 1.5 });
    expect(call('json.is_valid', ['{'])).toBe(false);
    expect(failure('json.unmarshal', ['{"a" 1}']).code).toBe('eval_builtin_error');
  });

  it('escapes URL queries like Go', () => {
    expect(call('urlquery.encode', ['a b&c=ü'])).toBe('a+b%26c%3D%C3%BC');
    expect(call('urlquery.decode', ['a+b%26'])).toBe('a b&');
    expect(failure('urlquery.decode', ['%zz']).message).toBe('urlquery.decode: invalid URL escape "%zz"');
    expect(call('urlquery.encode_object', [object({ c: 'd', a: RegoSet.of(['b+1']) })])).toBe('a=b%2B1&c=d');
    expect(toJson(call('urlquery.decode_object', ['a=1&b&a=2']) as RegoValue)).toEqual({ a: ['1', '2'], b: [''] });
  });

  it('round-trips YAML and reports go-yaml style errors', () => {
    const text = call('yaml.marshal', [[object({ foo: RegoSet.of([1, 2, 3]) })]]);
    expect(toJson(call('yaml.unmarshal', [text as RegoValue]) as RegoValue)).toEqual([{ foo: [1, 2, 3] }]);
    expect(failure('yaml.unmarshal', ['[1,2,3']).message).toContain("yaml: line 1: did not find expected ',' or ']'");
  });
});

describe('casts and types', () => {
  it('parses number strings exactly and rejects non-finite spellings as type errors', () => {
    expect(call('to_number', ['3'])).toBe(3);
    expect(call('to_number', ['18446744073709551617'])).toBe(18446744073709551617n);
    expect(call('to_number', ['-0.5'])).toBe(-0.5);
    expect(call('to_number', [true])).toBe(1);
    expect(failure('to_number', ['broken']).message).toBe('to_number: strconv.ParseFloat: parsing "broken": invalid syntax');
    expect(failure('to_number', ['-Infinity']).code).toBe('eval_type_error');
    expect(failure('to_number', ['nan']).code).toBe('eval_type_error');
  });

  it('answers false, not undefined, for type checks that fail', () => {
    expect(call('is_number', [false])).toBe(false);
    expect(call('is_set', [new RegoSet()])).toBe(true);
    expect(call('type_name', [object({})])).toBe('object');
  });
});

describe('time', () => {
  it('parses Go layouts at the edges of the int64 range', () => {
    const layout = '2006-01-02T15:04:05Z07:00';
    expect(call('time.parse_ns', [layout, '1677-09-21T00:12:43.145224192-00:00'])).toBe(-9223372036854775808n);
    expect(call('time.parse_rfc3339_ns', ['2262-04-11T23:47:16.854775807-00:00'])).toBe(9223372036854775807n);
    expect(failure('time.parse_ns', [layout, '2262-04-11T23:47:16.854775808-00:00']).message).toBe('time.parse_ns: time outside of valid range');
    expect(call('time.parse_ns', ["01/02 03:04:05PM '06 -0700", "06/02 07:00:00PM '17 -0700"])).toBe(1496455200000000000n);
    expect(call('time.parse_ns', ['RFC822Z', '02 Jun 17 19:00 -0700'])).toBe(1496455200000000000n);
    expect(failure('time.parse_ns', ['2006-01-02', '2017-02-30']).code).toBe('eval_builtin_error');
  });

  it('parses Go durations exactly', () => {
    expect(call('time.parse_duration_ns', ['100ms'])).toBe(100000000);
    expect(call('time.parse_duration_ns', ['1h30m0.5s'])).toBe(5400500000000);
    expect(call('time.parse_duration_ns', ['-1.5µs'])).toBe(-1500);
    expect(failure('time.parse_duration_ns', ['10']).code).toBe('eval_builtin_error');
  });

  it('breaks timestamps down in zones and formats them with Go layouts', () => {
    expect(call('time.date', [[1517814000000000000n, 'America/Los_Angeles']])).toEqual([2018, 2, 4]);
    expect(call('time.clock', [[1517832000000000000n, 'America/New_York']])).toEqual([7, 0, 0]);
    expect(call('time.weekday', [1518350400000000000n])).toBe('Sunday');
    expect(call('time.date', [1582977600000000000n])).toEqual([2020, 2, 29]);
    expect(call('time.format', [1670006453141828752n])).toBe('2022-12-02T18:40:53.141828752Z');
    expect(call('time.format', [[1670006453141828752n, 'Asia/Kolkata', 'RFC1123Z']])).toBe('Sat, 03 Dec 2022 00:10:53 +0530');
    expect(failure('time.clock', [1582977600000000000000n]).message).toBe('time.clock: timestamp too big');
    expect(failure('time.date', [[0, 'Not/AZone']]).code).toBe('eval_builtin_error');
  });

  it('adds calendar dates with Go normalisation and diffs them', () => {
    expect(call('time.add_date', [1585852421593912000n, 3, 9, 12])).toBe(1705257221593912000n);
    expect(failure('time.add_date', [0, 2262, 1, 1]).message).toBe('time.add_date: time outside of valid range');
    // 2020-01-31 plus one month is 2020-03-02, as Go's AddDate normalises 2020-02-31.
    const january31 = call('time.parse_rfc3339_ns', ['2020-01-31T00:00:00Z']) as RegoValue;
    expect(call('time.date', [call('time.add_date', [january31, 0, 1, 0]) as RegoValue])).toEqual([2020, 3, 2]);
    expect(call('time.diff', [call('time.parse_rfc3339_ns', ['2021-03-01T00:00:00Z']) as RegoValue, january31])).toEqual([1, 1, 1, 0, 0, 0]);
  });

  it('keeps time.now_ns and uuid.rfc4122 stable within an evaluation', () => {
    const context = freshContext();
    expect(call('time.now_ns', [], context)).toBe(1700000000123456789n);
    const first = call('uuid.rfc4122', ['key'], context);
    expect(call('uuid.rfc4122', ['key'], context)).toBe(first);
    expect(call('uuid.rfc4122', ['other'], context)).not.toBe(first);
    expect(call('uuid.rfc4122', ['key'], freshContext())).not.toBe(first);
    expect(call('test.sleep', ['1ms'], context)).toBeNull();
  });

  it('bounds the total test.sleep of one evaluation', () => {
    const context = freshContext();
    expect(call('test.sleep', ['1h'], context)).toBeNull();
    expect(call('test.sleep', ['1h'], context)).toBeNull();
    expect(context.cache.get('test.sleep:slept_ms')).toBe(100);
    expect(failure('test.sleep', ['soon']).code).toBe('eval_builtin_error');
  });
});

describe('semver, uuid, jwt, crypto, graphs', () => {
  it('orders semantic versions with pre-releases first', () => {
    expect(call('semver.compare', ['1.0.0-alpha', '1.0.0'])).toBe(-1);
    expect(call('semver.compare', ['1.0.0-alpha.10', '1.0.0-alpha.9'])).toBe(1);
    expect(call('semver.compare', ['1.0.0+build', '1.0.0'])).toBe(0);
    expect(failure('semver.compare', ['1.0.0', '1']).message).toBe('semver.compare: operand 2: string "1" is not a valid SemVer');
  });

  it('parses UUIDs of every accepted form, with version 1/2 details', () => {
    expect(toJson(call('uuid.parse', ['{00000000-0000-4000-8000-000000000000}']) as RegoValue)).toEqual({ variant: 'RFC4122', version: 4 });
    const v2 = toJson(call('uuid.parse', ['000003e8-48b9-21ee-b200-325096b39f47']) as RegoValue) as Record<string, unknown>;
    expect(v2).toMatchObject({ clocksequence: 12800, domain: 'Person', id: 1000, macvariables: 'local:unicast', nodeid: '32-50-96-b3-9f-47', version: 2 });
    expect(call('uuid.parse', ['not-a-uuid'])).toBeUndefined();
  });

  it('decodes JWTs and reports bad segments with Go base64 offsets', () => {
    const token = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIwIiwiaXNzIjoib3BhIn0.XmVoLoHI3pxMtMO_WRONMSJzGUDP9pDjy8Jp0_tdRXY';
    expect(toJson(call('io.jwt.decode', [token]) as RegoValue)).toEqual([
      { alg: 'HS256', typ: 'JWT' },
      { iss: 'opa', sub: '0' },
      '5e65682e81c8de9c4cb4c3bf59138d3122731940cff690e3cbc269d3fb5d4576',
    ]);
    const broken = failure('io.jwt.decode', [token.replace('OiIw', 'O/Iw')]);
    expect(broken.code).toBe('eval_builtin_error');
    expect(broken.message).toMatch(/^io\.jwt\.decode: JWT payload had invalid encoding: illegal base64 data at input byte \d+$/);
    expect(failure('io.jwt.decode', ['a.b']).message).toBe('io.jwt.decode: encoded JWT must have 3 sections, found 2');
  });

  it('hashes and authenticates UTF-8 bytes', () => {
    expect(call('crypto.sha256', ['abc'])).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(call('crypto.hmac.sha256', ['message', 'key'])).toBe('6e9ef29b75fffc5b7abae527d58fdadb2fe42e7219011976917343065f58ed4a');
    expect(call('crypto.hmac.equal', ['abc', 'abc'])).toBe(true);
    expect(call('crypto.hmac.equal', ['abc', 'abcd'])).toBe(false);
  });

  it('finds reachable nodes and the paths to them', () => {
    const graph = object({ a: RegoSet.of(['b', 'c']), b: RegoSet.of(['d']), c: RegoSet.of(['d']), d: new RegoSet(), e: RegoSet.of(['f']), f: RegoSet.of(['e']) });
    expect(toJson(call('graph.reachable', [graph, RegoSet.of(['b', 'e'])]) as RegoValue)).toEqual(['b', 'd', 'e', 'f']);
    expect(toJson(call('graph.reachable_paths', [graph, RegoSet.of(['b', 'e'])]) as RegoValue)).toEqual([
      ['b', 'd'],
      ['e', 'f'],
    ]);
    expect(failure('graph.reachable', [object({ a: [] }), 'a']).code).toBe('eval_type_error');
  });

  it('parses byte and SI units', () => {
    expect(call('units.parse_bytes', ['1KB'])).toBe(1000);
    expect(call('units.parse_bytes', ['1.5KiB'])).toBe(1536);
    expect(call('units.parse', ['10m'])).toBe(0.01);
    expect(call('units.parse', ['2Gi'])).toBe(2147483648);
    expect(failure('units.parse_bytes', ['foo']).code).toBe('eval_builtin_error');
  });
});

describe('numbers beyond float64', () => {
  it('divides huge integers into a float and refuses results float64 cannot hold', () => {
    const huge = 10n ** 400n;
    expect(call('div', [huge + 1n, huge])).toBe(1);
    expect(call('div', [1, huge + 1n])).toBe(0);
    expect(failure('mul', [1e308, 10]).message).toBe('mul: number too large');
    expect(failure('div', [huge * 7n + 1n, 7]).code).toBe('eval_builtin_error');
  });

  it('parses JSON numbers without ever producing Infinity', () => {
    expect(call('json.unmarshal', ['1e30'])).toBe(10n ** 30n);
    expect(call('json.unmarshal', ['-0.0'])).toBe(0);
    expect(call('json.unmarshal', ['1.5e999'])).toBe(15n * 10n ** 998n);
    expect(failure('json.unmarshal', ['1.5e99999']).code).toBe('eval_builtin_error');
  });
});

describe('case mapping', () => {
  it('maps rune by rune like Go, never growing or depending on context', () => {
    expect(call('upper', ['straße'])).toBe('STRAßE');
    expect(call('lower', ['ΟΔΟΣ'])).toBe('οδοσ');
    expect(call('lower', ['İ'])).toBe('i');
    expect(call('upper', ['AbCdEf'])).toBe('ABCDEF');
  });
});

describe('sprintf float rounding', () => {
  it('rounds the exact binary value, ties to even, as Go strconv does', () => {
    const sprintf = (format: string, value: number): RegoValue | undefined => call('sprintf', [format, [value]]);
    expect(sprintf('%.0f', 2.5)).toBe('2');
    expect(sprintf('%.0f', 3.5)).toBe('4');
    expect(sprintf('%.1f', 0.25)).toBe('0.2');
    // 1.005 is 1.00499999999999989... in binary.
    expect(sprintf('%.2f', 1.005)).toBe('1.00');
    expect(sprintf('%5.1f', 99.95)).toBe('100.0');
    expect(sprintf('%.3g', 0.0001234)).toBe('0.000123');
    expect(sprintf('%08.3f', -1.5)).toBe('-001.500');
  });
});

describe('hostile inputs', () => {
  it('fails cleanly instead of exhausting the stack or the calendar', () => {
    let deep: RegoValue[] = [];
    const root = deep;
    for (let i = 0; i < 20_000; i++) {
      const next: RegoValue[] = [];
      deep.push(next);
      deep = next;
    }
    expect(failure('json.marshal', [root]).code).toBe('eval_builtin_error');
    expect(failure('sprintf', ['%v', [root]]).code).toBe('eval_builtin_error');
    const chain = RegoObject.fromEntries(Array.from({ length: 50_000 }, (_, i): [RegoValue, RegoValue] => [String(i), [String(i + 1)]]));
    expect(failure('graph.reachable_paths', [chain, ['0']]).code).toBe('eval_builtin_error');
    expect((call('graph.reachable', [chain, ['0']]) as RegoSet).size).toBe(50_000);
    expect(failure('time.add_date', [0, 10n ** 400n, 0, 0]).message).toBe('time.add_date: time outside of valid range');
    expect(failure('regex.globs_match', ['a'.repeat(3000), 'a'.repeat(3000)]).code).toBe('eval_builtin_error');
  });
});
