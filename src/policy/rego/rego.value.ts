/**
 * Rego values, the data model every part of the engine shares (parser literals, evaluator, builtins).
 *
 *   null | boolean | number | bigint | string | RegoValue[] (array) | RegoObject | RegoSet
 *
 * Numbers: a JS number for every float and every integer within ±(2^53−1); a bigint only for integers beyond that
 * (normalised by `regoNumber`, so one integer never has two forms). Objects and sets accept any value as key or
 * member; string keys/members (the common case) live in a plain Map/Set, others under a canonical text key.
 * Values are immutable once built: builders (`set`, `add`) are for construction only.
 */
export type RegoValue = null | boolean | number | bigint | string | RegoValue[] | RegoObject | RegoSet;

export function regoNumber(value: number | bigint): number | bigint {
  if (typeof value === 'bigint') {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
  }
  return Object.is(value, -0) ? 0 : value;
}

export function isNumber(value: RegoValue): value is number | bigint {
  return typeof value === 'number' || typeof value === 'bigint';
}

/** Canonical text of a non-string key or member: equal values (1 and 1.0, {a:1} built in any order) share it. */
export function canonicalKey(value: RegoValue): string {
  if (value === null) return 'n';
  switch (typeof value) {
    case 'boolean':
      return value ? 't' : 'f';
    case 'string':
      return `s${JSON.stringify(value)}`;
    case 'number':
      return Number.isInteger(value) && !Number.isSafeInteger(value) ? `#${BigInt(value).toString()}` : `#${String(value)}`;
    case 'bigint':
      return `#${value.toString()}`;
    default:
      break;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalKey).join(',')}]`;
  if (value instanceof RegoObject) {
    const entries = [...value.entries()].sort(([a], [b]) => compareValues(a, b));
    return `{${entries.map(([k, v]) => `${canonicalKey(k)}:${canonicalKey(v)}`).join(',')}}`;
  }
  return `<${[...value.values()].sort(compareValues).map(canonicalKey).join(',')}>`;
}

export class RegoObject {
  private readonly byString = new Map<string, RegoValue>();
  private readonly byCanonical = new Map<string, [RegoValue, RegoValue]>();

  static fromEntries(entries: Iterable<[RegoValue, RegoValue]>): RegoObject {
    const object = new RegoObject();
    for (const [key, value] of entries) object.set(key, value);
    return object;
  }

  get size(): number {
    return this.byString.size + this.byCanonical.size;
  }

  /** Construction only. */
  set(key: RegoValue, value: RegoValue): void {
    if (typeof key === 'string') this.byString.set(key, value);
    else this.byCanonical.set(canonicalKey(key), [key, value]);
  }

  get(key: RegoValue): RegoValue | undefined {
    if (typeof key === 'string') return this.byString.get(key);
    return this.byCanonical.get(canonicalKey(key))?.[1];
  }

  has(key: RegoValue): boolean {
    return typeof key === 'string' ? this.byString.has(key) : this.byCanonical.has(canonicalKey(key));
  }

  *entries(): IterableIterator<[RegoValue, RegoValue]> {
    yield* this.byString.entries();
    for (const entry of this.byCanonical.values()) yield entry;
  }

  *keys(): IterableIterator<RegoValue> {
    for (const [key] of this.entries()) yield key;
  }
}

export class RegoSet {
  private readonly strings = new Set<string>();
  private readonly byCanonical = new Map<string, RegoValue>();

  static of(values: Iterable<RegoValue>): RegoSet {
    const set = new RegoSet();
    for (const value of values) set.add(value);
    return set;
  }

  get size(): number {
    return this.strings.size + this.byCanonical.size;
  }

  /** Construction only. */
  add(value: RegoValue): void {
    if (typeof value === 'string') this.strings.add(value);
    else this.byCanonical.set(canonicalKey(value), value);
  }

  has(value: RegoValue): boolean {
    return typeof value === 'string' ? this.strings.has(value) : this.byCanonical.has(canonicalKey(value));
  }

  *values(): IterableIterator<RegoValue> {
    yield* this.strings.values();
    yield* this.byCanonical.values();
  }
}

/** Rego's type order: null < boolean < number < string < array < object < set. */
function typeRank(value: RegoValue): number {
  if (value === null) return 0;
  switch (typeof value) {
    case 'boolean':
      return 1;
    case 'number':
    case 'bigint':
      return 2;
    case 'string':
      return 3;
    default:
      return Array.isArray(value) ? 4 : value instanceof RegoObject ? 5 : 6;
  }
}

function compareNumbers(a: number | bigint, b: number | bigint): number {
  if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
  // Mixed: a bigint is beyond the safe range; compare exactly when the number is an integer.
  const big = typeof a === 'bigint' ? a : (b as bigint);
  const num = typeof a === 'bigint' ? (b as number) : a;
  let order: number;
  if (!Number.isFinite(num)) order = num > 0 ? -1 : 1;
  else if (Number.isInteger(num)) order = big < BigInt(num) ? -1 : big > BigInt(num) ? 1 : 0;
  else order = Number(big) < num ? -1 : 1;
  return typeof a === 'bigint' ? order : -order;
}

/** Strings order by UTF-8 bytes (= code points), not by JS UTF-16 units. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 && y < 0xd800) return x - y;
    const cx = a.codePointAt(i) as number;
    const cy = b.codePointAt(i) as number;
    return cx < cy ? -1 : cx > cy ? 1 : 0;
  }
  return a.length - b.length;
}

function compareSequences(a: RegoValue[], b: RegoValue[]): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const order = compareValues(a[i] as RegoValue, b[i] as RegoValue);
    if (order !== 0) return order;
  }
  return a.length - b.length;
}

/** Total order over Rego values (sorting, set canonical order, comparison operators). */
export function compareValues(a: RegoValue, b: RegoValue): number {
  const rank = typeRank(a) - typeRank(b);
  if (rank !== 0) return rank;
  if (a === null) return 0;
  if (typeof a === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (isNumber(a)) return compareNumbers(a, b as number | bigint);
  if (typeof a === 'string') return compareStrings(a, b as string);
  if (Array.isArray(a)) return compareSequences(a, b as RegoValue[]);
  if (a instanceof RegoObject) {
    const other = b as RegoObject;
    const keysA = [...a.keys()].sort(compareValues);
    const keysB = [...other.keys()].sort(compareValues);
    const length = Math.min(keysA.length, keysB.length);
    for (let i = 0; i < length; i++) {
      const keyOrder = compareValues(keysA[i] as RegoValue, keysB[i] as RegoValue);
      if (keyOrder !== 0) return keyOrder;
      const valueOrder = compareValues(a.get(keysA[i] as RegoValue) as RegoValue, other.get(keysB[i] as RegoValue) as RegoValue);
      if (valueOrder !== 0) return valueOrder;
    }
    return keysA.length - keysB.length;
  }
  return compareSequences([...(a as RegoSet).values()].sort(compareValues), [...(b as RegoSet).values()].sort(compareValues));
}

export function valuesEqual(a: RegoValue, b: RegoValue): boolean {
  if (a === b) return true;
  if (typeof a === 'string' || typeof b === 'string') return false;
  return compareValues(a, b) === 0;
}

export type RegoTypeName = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object' | 'set';

/** The name `type_name` answers and error messages use. */
export function typeName(value: RegoValue): RegoTypeName {
  return (['null', 'boolean', 'number', 'string', 'array', 'object', 'set'] as const)[typeRank(value)] as RegoTypeName;
}

/** JSON data (as JSON.parse gives it, big integers possibly as bigint) to a Rego value. */
export function fromJson(value: unknown): RegoValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return regoNumber(value);
  if (Array.isArray(value)) return value.map(fromJson);
  if (typeof value === 'object') {
    const object = new RegoObject();
    for (const [key, member] of Object.entries(value as Record<string, unknown>)) object.set(key, fromJson(member));
    return object;
  }
  throw new TypeError(`not JSON: ${typeof value}`);
}

/**
 * A Rego value as JSON: sets become arrays in Rego order, non-string object keys their JSON text. Big integers stay
 * bigint (the caller serialises them exactly).
 */
export function toJson(value: RegoValue): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toJson);
  if (value instanceof RegoSet) return [...value.values()].sort(compareValues).map(toJson);
  const out: Record<string, unknown> = {};
  for (const [key, member] of value.entries()) {
    out[typeof key === 'string' ? key : JSON.stringify(toJson(key), (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))] = toJson(member);
  }
  return out;
}
