import { builtinFailure, defineBuiltins, operandTypeError, type BuiltinContext, type BuiltinDefinition } from '../rego.builtins.ts';
import { regoNumber, typeName, type RegoValue } from '../rego.value.ts';
import {
  civilTime,
  DAY_NAMES,
  epochNanoseconds,
  formatTime,
  GoTimeError,
  INT64_MAX,
  INT64_MIN,
  loadZone,
  NAMED_LAYOUTS,
  parseDuration,
  parseTime,
  UTC_ZONE,
  type Zone,
} from './go.time.ts';
import { oneOfError, operand, smallIntegerOperand, stringOperand } from './operands.ts';

/** Time builtins: nanoseconds since the epoch as exact integers, Go's layouts and zones. */
function withGoErrors<T>(name: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof GoTimeError) throw builtinFailure(name, error.message);
    throw error;
  }
}

function inRange(name: string, ns: bigint): RegoValue {
  if (ns < INT64_MIN || ns > INT64_MAX) throw builtinFailure(name, 'time outside of valid range');
  return regoNumber(ns);
}

function timestamp(name: string, value: RegoValue, position: number): bigint {
  if (typeof value === 'bigint') {
    if (value < INT64_MIN || value > INT64_MAX) throw builtinFailure(name, 'timestamp too big');
    return value;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || Math.abs(value) >= 2 ** 63) throw builtinFailure(name, 'timestamp too big');
    return BigInt(Math.trunc(value));
  }
  throw operandTypeError(name, position, 'number', typeName(value));
}

/** A time operand: `ns`, `[ns, zone]` or (time.format) `[ns, zone, layout]`. */
function zonedTime(name: string, operands: RegoValue[], allowLayout: boolean): { ns: bigint; zone: Zone; layout: string | undefined } {
  const value = operand(operands, 0);
  if (typeof value === 'number' || typeof value === 'bigint') return { ns: timestamp(name, value, 1), zone: UTC_ZONE, layout: undefined };
  if (!Array.isArray(value)) throw oneOfError(name, 1, ['number', 'array'], value);
  const maxLength = allowLayout ? 3 : 2;
  if (value.length < 1 || value.length > maxLength) {
    throw builtinFailure(name, `array should have ${allowLayout ? '2 or 3' : '2'} elements`);
  }
  const ns = timestamp(name, value[0] as RegoValue, 1);
  const zoneName = value[1] ?? '';
  if (typeof zoneName !== 'string') throw operandTypeError(name, 1, 'string time zone', typeName(zoneName));
  const layout = value[2];
  if (layout !== undefined && typeof layout !== 'string') throw operandTypeError(name, 1, 'string layout', typeName(layout));
  const zone = withGoErrors(name, () => loadZone(zoneName));
  return { ns, zone, layout: layout === undefined ? undefined : (NAMED_LAYOUTS[layout] ?? layout) };
}

function parseNs(name: string, layout: string, value: string): RegoValue {
  const { fields } = withGoErrors(name, () => parseTime(NAMED_LAYOUTS[layout] ?? layout, value));
  const ns = epochNanoseconds(fields.year, fields.month, fields.day, fields.hour, fields.minute, fields.second, fields.nanosecond, fields.offsetSeconds ?? 0);
  return inRange(name, ns);
}

/** Years, months or days beyond this cannot land inside the int64 nanosecond range. */
const MAX_CALENDAR_SHIFT = 10_000_000;

/** time.diff, after github.com/icza/gox (as OPA ports it): calendar difference with borrowing. */
function timeDiff(operands: RegoValue[]): RegoValue {
  const first = zonedTime('time.diff', [operand(operands, 0)], false);
  const second = zonedTime('time.diff', [operand(operands, 1)], false);
  let [a, b] = [first.ns, second.ns];
  if (a > b) [a, b] = [b, a];
  const t1 = civilTime(a, first.zone);
  const t2 = civilTime(b, first.zone);
  let year = t2.year - t1.year;
  let month = t2.month - t1.month;
  let day = t2.day - t1.day;
  let hour = t2.hour - t1.hour;
  let minute = t2.minute - t1.minute;
  let secondDiff = t2.second - t1.second;
  if (secondDiff < 0) {
    secondDiff += 60;
    minute--;
  }
  if (minute < 0) {
    minute += 60;
    hour--;
  }
  if (hour < 0) {
    hour += 24;
    day--;
  }
  if (day < 0) {
    // Days in t1's month: day 32 of it normalised lands (32 - length) days into the next month.
    const overflow = civilTime(epochNanoseconds(t1.year, t1.month, 32, 0, 0, 0, 0, 0), UTC_ZONE).day;
    day += 32 - overflow;
    month--;
  }
  if (month < 0) {
    month += 12;
    year--;
  }
  return [year, month, day, hour, minute, secondDiff];
}

/**
 * The most test.sleep may sleep in one evaluation, over all its calls. It blocks the event loop (OPA's test-only
 * builtin, kept for the conformance suite), so a policy must not be able to stall the server with it.
 */
const MAX_SLEEP_PER_EVALUATION_MS = 100;
const SLEPT_KEY = 'test.sleep:slept_ms';

function sleep(operands: RegoValue[], context: BuiltinContext): RegoValue {
  const duration = withGoErrors('test.sleep', () => parseDuration(stringOperand('test.sleep', operands, 1)));
  const slept = context.cache.get(SLEPT_KEY);
  const alreadySlept = typeof slept === 'number' ? slept : 0;
  const ms = Math.min(MAX_SLEEP_PER_EVALUATION_MS - alreadySlept, Math.max(0, Number(duration / 1_000_000n)));
  if (ms > 0) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    context.cache.set(SLEPT_KEY, alreadySlept + ms);
  }
  return null;
}

export const TIME_BUILTINS: BuiltinDefinition[] = defineBuiltins([
  { name: 'time.now_ns', arity: 0, implementation: (_operands, context) => regoNumber(context.nowNs) },
  {
    name: 'time.parse_ns',
    arity: 2,
    implementation: (operands) => parseNs('time.parse_ns', stringOperand('time.parse_ns', operands, 1), stringOperand('time.parse_ns', operands, 2)),
  },
  {
    name: 'time.parse_rfc3339_ns',
    arity: 1,
    implementation: (operands) => parseNs('time.parse_rfc3339_ns', 'RFC3339', stringOperand('time.parse_rfc3339_ns', operands, 1)),
  },
  {
    name: 'time.parse_duration_ns',
    arity: 1,
    implementation: (operands) =>
      regoNumber(withGoErrors('time.parse_duration_ns', () => parseDuration(stringOperand('time.parse_duration_ns', operands, 1)))),
  },
  {
    name: 'time.date',
    arity: 1,
    implementation: (operands) => {
      const { ns, zone } = zonedTime('time.date', operands, false);
      const time = civilTime(ns, zone);
      return [time.year, time.month, time.day];
    },
  },
  {
    name: 'time.clock',
    arity: 1,
    implementation: (operands) => {
      const { ns, zone } = zonedTime('time.clock', operands, false);
      const time = civilTime(ns, zone);
      return [time.hour, time.minute, time.second];
    },
  },
  {
    name: 'time.weekday',
    arity: 1,
    implementation: (operands) => {
      const { ns, zone } = zonedTime('time.weekday', operands, false);
      return DAY_NAMES[civilTime(ns, zone).weekday] as string;
    },
  },
  {
    name: 'time.add_date',
    arity: 4,
    implementation: (operands) => {
      const name = 'time.add_date';
      const ns = timestamp(name, operand(operands, 0), 1);
      const years = smallIntegerOperand(name, operands, 2);
      const months = smallIntegerOperand(name, operands, 3);
      const days = smallIntegerOperand(name, operands, 4);
      // Anything this large is out of range anyway; the bound keeps the calendar arithmetic exact.
      if (Math.abs(years) > MAX_CALENDAR_SHIFT || Math.abs(months) > MAX_CALENDAR_SHIFT || Math.abs(days) > MAX_CALENDAR_SHIFT) {
        throw builtinFailure(name, 'time outside of valid range');
      }
      const time = civilTime(ns, UTC_ZONE);
      const result = epochNanoseconds(time.year + years, time.month + months, time.day + days, time.hour, time.minute, time.second, time.nanosecond, 0);
      return inRange(name, result);
    },
  },
  { name: 'time.diff', arity: 2, implementation: timeDiff },
  {
    name: 'time.format',
    arity: 1,
    implementation: (operands) => {
      const { ns, zone, layout } = zonedTime('time.format', operands, true);
      return formatTime(civilTime(ns, zone), layout ?? (NAMED_LAYOUTS.RFC3339Nano as string));
    },
  },
  { name: 'test.sleep', arity: 1, implementation: sleep },
]);
