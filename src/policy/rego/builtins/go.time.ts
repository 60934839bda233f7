/**
 * Go's time package as far as OPA's time builtins reach: civil dates from nanoseconds, IANA zones (through Intl),
 * and Go's reference-time layouts ("2006-01-02T15:04:05Z07:00") for both parsing and formatting.
 */
export class GoTimeError extends Error {}

const NS_PER_SECOND = 1_000_000_000n;
const NS_PER_DAY = 86_400n * NS_PER_SECOND;
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
export const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Days since 1970-01-01 of a proleptic Gregorian date (month 1-12, day may overflow; H. Hinnant's algorithm). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const carry = Math.floor((month - 1) / 12);
  const y0 = year + carry;
  const m = month - carry * 12;
  const y = m <= 2 ? y0 - 1 : y0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5);
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468 + (day - 1);
}

export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** A time zone: fixed UTC, or an IANA name resolved through Intl. */
export interface Zone {
  name: string;
  offsetSeconds(epochNs: bigint): number;
  abbreviation(epochNs: bigint): string;
}

export const UTC_ZONE: Zone = { name: 'UTC', offsetSeconds: () => 0, abbreviation: () => 'UTC' };

const zones = new Map<string, Zone>();

function offsetText(seconds: number): string {
  const sign = seconds < 0 ? '-' : '+';
  const magnitude = Math.abs(seconds);
  const hours = Math.floor(magnitude / 3600);
  const minutes = Math.floor((magnitude % 3600) / 60);
  return `${sign}${String(hours).padStart(2, '0')}${minutes === 0 ? '' : String(minutes).padStart(2, '0')}`;
}

export function loadZone(name: string): Zone {
  if (name === '' || name === 'UTC') return UTC_ZONE;
  const cached = zones.get(name);
  if (cached) return cached;
  let offsetFormat: Intl.DateTimeFormat;
  let nameFormat: Intl.DateTimeFormat;
  try {
    const timeZone = name === 'Local' ? undefined : name;
    offsetFormat = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    nameFormat = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'short' });
  } catch {
    throw new GoTimeError(`unknown time zone ${name}`);
  }
  const offsetSeconds = (epochNs: bigint): number => {
    const ms = Number(epochNs / 1_000_000n);
    const part = offsetFormat.formatToParts(new Date(ms)).find((item) => item.type === 'timeZoneName')?.value ?? 'GMT';
    const match = /GMT([+-])(\d{2}):(\d{2})(?::(\d{2}))?/.exec(part);
    if (!match) return 0;
    const seconds = Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4] ?? 0);
    return match[1] === '-' ? -seconds : seconds;
  };
  const zone: Zone = {
    name,
    offsetSeconds,
    abbreviation: (epochNs) => {
      const ms = Number(epochNs / 1_000_000n);
      const short = nameFormat.formatToParts(new Date(ms)).find((item) => item.type === 'timeZoneName')?.value ?? '';
      // Zones without a letter abbreviation print as a numeric offset in Go's tzdata (e.g. "+0530").
      return /^[A-Z]{2,5}$/.test(short) ? short : offsetText(offsetSeconds(epochNs));
    },
  };
  zones.set(name, zone);
  return zone;
}

/** A broken-down time in a zone. */
export interface CivilTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  nanosecond: number;
  weekday: number;
  yearDay: number;
  offsetSeconds: number;
  zoneAbbreviation: string;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const quotient = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? quotient - 1n : quotient;
}

export function civilTime(epochNs: bigint, zone: Zone): CivilTime {
  const offsetSeconds = zone.offsetSeconds(epochNs);
  const local = epochNs + BigInt(offsetSeconds) * NS_PER_SECOND;
  const days = floorDiv(local, NS_PER_DAY);
  const within = local - days * NS_PER_DAY;
  const { year, month, day } = civilFromDays(Number(days));
  const seconds = Number(within / NS_PER_SECOND);
  return {
    year,
    month,
    day,
    hour: Math.floor(seconds / 3600),
    minute: Math.floor((seconds % 3600) / 60),
    second: seconds % 60,
    nanosecond: Number(within % NS_PER_SECOND),
    weekday: (((Number(days) + 4) % 7) + 7) % 7,
    yearDay: Number(days) - daysFromCivil(year, 1, 1) + 1,
    offsetSeconds,
    zoneAbbreviation: zone.abbreviation(epochNs),
  };
}

/** Nanoseconds since the epoch of a civil time (fields may overflow, as Go's time.Date normalises them). */
export function epochNanoseconds(year: number, month: number, day: number, hour: number, minute: number, second: number, nanosecond: number, offsetSeconds: number): bigint {
  const days = BigInt(daysFromCivil(year, month, day));
  const seconds = BigInt(hour) * 3600n + BigInt(minute) * 60n + BigInt(second) - BigInt(offsetSeconds);
  return days * NS_PER_DAY + seconds * NS_PER_SECOND + BigInt(nanosecond);
}

// ---- layouts ----

export const NAMED_LAYOUTS: Record<string, string> = {
  ANSIC: 'Mon Jan _2 15:04:05 2006',
  UnixDate: 'Mon Jan _2 15:04:05 MST 2006',
  RubyDate: 'Mon Jan 02 15:04:05 -0700 2006',
  RFC822: '02 Jan 06 15:04 MST',
  RFC822Z: '02 Jan 06 15:04 -0700',
  RFC850: 'Monday, 02-Jan-06 15:04:05 MST',
  RFC1123: 'Mon, 02 Jan 2006 15:04:05 MST',
  RFC1123Z: 'Mon, 02 Jan 2006 15:04:05 -0700',
  RFC3339: '2006-01-02T15:04:05Z07:00',
  RFC3339Nano: '2006-01-02T15:04:05.999999999Z07:00',
  Kitchen: '3:04PM',
  Stamp: 'Jan _2 15:04:05',
  StampMilli: 'Jan _2 15:04:05.000',
  StampMicro: 'Jan _2 15:04:05.000000',
  StampNano: 'Jan _2 15:04:05.000000000',
  DateTime: '2006-01-02 15:04:05',
  DateOnly: '2006-01-02',
  TimeOnly: '15:04:05',
};

type Chunk = { literal: string } | { std: string };

const STD_PREFIXES = [
  'January', 'Jan', 'Monday', 'Mon', 'MST', '2006', '002', '01', '02', '03', '04', '05', '06', '__2', '_2', '15', '1', '2', '3', '4', '5',
  'PM', 'pm', '-07:00:00', '-070000', '-07:00', '-0700', '-07', 'Z07:00:00', 'Z070000', 'Z07:00', 'Z0700', 'Z07',
];

/** Splits a layout into literal text and Go's std elements (a port of time.nextStdChunk's decisions). */
function layoutChunks(layout: string): Chunk[] {
  const chunks: Chunk[] = [];
  let literal = '';
  let i = 0;
  const flush = (): void => {
    if (literal !== '') chunks.push({ literal });
    literal = '';
  };
  while (i < layout.length) {
    const rest = layout.slice(i);
    const char = layout[i] as string;
    // ".000", ",999": fractional seconds when the run of one repeated digit is not followed by another digit.
    const fraction = /^[.,](0+|9+)(?![0-9])/.exec(rest);
    if (fraction) {
      flush();
      chunks.push({ std: fraction[0] });
      i += fraction[0].length;
      continue;
    }
    let matched: string | undefined;
    for (const prefix of STD_PREFIXES) {
      if (!rest.startsWith(prefix)) continue;
      // "Mon" must not be the start of "Monday"-like words other than the element itself; Go checks the next rune.
      if ((prefix === 'Jan' || prefix === 'Mon') && /^[a-z]/.test(rest.slice(prefix.length)) && !rest.startsWith(prefix === 'Jan' ? 'January' : 'Monday')) continue;
      if (prefix === '_2' && rest.startsWith('_2006')) continue;
      matched = prefix;
      break;
    }
    if (matched === undefined) {
      literal += char;
      i++;
      continue;
    }
    flush();
    chunks.push({ std: matched });
    i += matched.length;
  }
  flush();
  return chunks;
}

function pad(value: number, width: number, fill = '0'): string {
  return String(value).padStart(width, fill);
}

function zoneOffset(offsetSeconds: number, std: string): string {
  if (std.startsWith('Z') && offsetSeconds === 0) return 'Z';
  const sign = offsetSeconds < 0 ? '-' : '+';
  const magnitude = Math.abs(offsetSeconds);
  const hours = pad(Math.floor(magnitude / 3600), 2);
  const minutes = pad(Math.floor((magnitude % 3600) / 60), 2);
  const seconds = pad(magnitude % 60, 2);
  const shape = std.replace(/^Z/, '-');
  switch (shape) {
    case '-07':
      return sign + hours;
    case '-0700':
      return sign + hours + minutes;
    case '-07:00':
      return `${sign}${hours}:${minutes}`;
    case '-070000':
      return sign + hours + minutes + seconds;
    default:
      return `${sign}${hours}:${minutes}:${seconds}`;
  }
}

export function formatTime(time: CivilTime, layout: string): string {
  let out = '';
  for (const chunk of layoutChunks(layout)) {
    if ('literal' in chunk) {
      out += chunk.literal;
      continue;
    }
    const std = chunk.std;
    const hour12 = time.hour % 12 === 0 ? 12 : time.hour % 12;
    switch (std) {
      case 'January':
        out += MONTH_NAMES[time.month - 1];
        break;
      case 'Jan':
        out += (MONTH_NAMES[time.month - 1] as string).slice(0, 3);
        break;
      case 'Monday':
        out += DAY_NAMES[time.weekday];
        break;
      case 'Mon':
        out += (DAY_NAMES[time.weekday] as string).slice(0, 3);
        break;
      case 'MST':
        out += time.zoneAbbreviation;
        break;
      case '2006':
        out += pad(time.year, 4);
        break;
      case '06':
        out += pad(time.year % 100, 2);
        break;
      case '01':
        out += pad(time.month, 2);
        break;
      case '1':
        out += String(time.month);
        break;
      case '02':
        out += pad(time.day, 2);
        break;
      case '_2':
        out += pad(time.day, 2, ' ');
        break;
      case '2':
        out += String(time.day);
        break;
      case '002':
        out += pad(time.yearDay, 3);
        break;
      case '__2':
        out += pad(time.yearDay, 3, ' ');
        break;
      case '15':
        out += pad(time.hour, 2);
        break;
      case '03':
        out += pad(hour12, 2);
        break;
      case '3':
        out += String(hour12);
        break;
      case '04':
        out += pad(time.minute, 2);
        break;
      case '4':
        out += String(time.minute);
        break;
      case '05':
        out += pad(time.second, 2);
        break;
      case '5':
        out += String(time.second);
        break;
      case 'PM':
        out += time.hour >= 12 ? 'PM' : 'AM';
        break;
      case 'pm':
        out += time.hour >= 12 ? 'pm' : 'am';
        break;
      default:
        if (std.startsWith('-') || std.startsWith('Z')) {
          out += zoneOffset(time.offsetSeconds, std);
        } else {
          // Fractional seconds: ".000" fixed width, ".999" trailing zeros (and the point) trimmed.
          const digits = std.length - 1;
          const fraction = pad(time.nanosecond, 9).slice(0, digits);
          if (std[1] === '0') out += std[0] + fraction;
          else {
            const trimmed = fraction.replace(/0+$/, '');
            if (trimmed !== '') out += std[0] + trimmed;
          }
        }
    }
  }
  return out;
}

interface ParsedFields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  nanosecond: number;
  pm: boolean | undefined;
  offsetSeconds: number | undefined;
  zoneName: string | undefined;
}

export function parseTime(layout: string, value: string): { fields: ParsedFields } {
  const fail = (rest: string, element: string): GoTimeError =>
    new GoTimeError(`parsing time ${JSON.stringify(value)} as ${JSON.stringify(layout)}: cannot parse ${JSON.stringify(rest)} as ${JSON.stringify(element)}`);
  const rangeError = (element: string): GoTimeError => new GoTimeError(`parsing time ${JSON.stringify(value)}: ${element} out of range`);
  const fields: ParsedFields = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0, nanosecond: 0, pm: undefined, offsetSeconds: undefined, zoneName: undefined };
  let rest = value;
  const number = (std: string, min: number, max: number): number => {
    const match = new RegExp(`^\\d{${min},${max}}`).exec(rest);
    if (!match) throw fail(rest, std);
    rest = rest.slice(match[0].length);
    return Number(match[0]);
  };
  const chunks = layoutChunks(layout);
  for (let index = 0; index < chunks.length; index++) {
    const chunk = chunks[index] as Chunk;
    if ('literal' in chunk) {
      if (!rest.startsWith(chunk.literal)) throw fail(rest, chunk.literal);
      rest = rest.slice(chunk.literal.length);
      continue;
    }
    const std = chunk.std;
    const before = rest;
    switch (std) {
      case 'January':
      case 'Jan': {
        const names = MONTH_NAMES.map((name) => (std === 'Jan' ? name.slice(0, 3) : name));
        const found = names.findIndex((name) => rest.toLowerCase().startsWith(name.toLowerCase()));
        if (found === -1) throw fail(rest, std);
        fields.month = found + 1;
        rest = rest.slice((names[found] as string).length);
        break;
      }
      case 'Monday':
      case 'Mon': {
        const names = DAY_NAMES.map((name) => (std === 'Mon' ? name.slice(0, 3) : name));
        const found = names.find((name) => rest.toLowerCase().startsWith(name.toLowerCase()));
        if (found === undefined) throw fail(rest, std);
        rest = rest.slice(found.length);
        break;
      }
      case '2006': {
        const match = /^\d{4}/.exec(rest);
        if (!match) throw fail(rest, std);
        fields.year = Number(match[0]);
        rest = rest.slice(4);
        break;
      }
      case '06': {
        const year = number(std, 2, 2);
        fields.year = year >= 69 ? 1900 + year : 2000 + year;
        break;
      }
      case '01':
      case '1':
        fields.month = number(std, std === '01' ? 2 : 1, 2);
        if (fields.month < 1 || fields.month > 12) throw rangeError('month');
        break;
      case '02':
      case '2':
        fields.day = number(std, std === '02' ? 2 : 1, 2);
        break;
      case '_2':
        if (rest.startsWith(' ')) rest = rest.slice(1);
        fields.day = number(std, 1, 2);
        break;
      case '002':
      case '__2':
        number(std, 3, 3);
        break;
      case '15':
        fields.hour = number(std, 1, 2);
        if (fields.hour > 23) throw rangeError('hour');
        break;
      case '03':
      case '3':
        fields.hour = number(std, std === '03' ? 2 : 1, 2);
        if (fields.hour > 12) throw rangeError('hour');
        break;
      case '04':
      case '4':
        fields.minute = number(std, std === '04' ? 2 : 1, 2);
        if (fields.minute > 59) throw rangeError('minute');
        break;
      case '05':
      case '5': {
        fields.second = number(std, std === '05' ? 2 : 1, 2);
        if (fields.second > 59) throw rangeError('second');
        // A fraction in the value right after the seconds is accepted even when the layout has none.
        const next = chunks[index + 1];
        const fraction = /^[.,](\d+)/.exec(rest);
        if (fraction && !(next && 'std' in next && /^[.,]/.test(next.std))) {
          fields.nanosecond = Number((fraction[1] as string).slice(0, 9).padEnd(9, '0'));
          rest = rest.slice(fraction[0].length);
        }
        break;
      }
      case 'PM':
      case 'pm': {
        const marker = rest.slice(0, 2).toUpperCase();
        if (marker !== 'AM' && marker !== 'PM') throw fail(rest, std);
        fields.pm = marker === 'PM';
        rest = rest.slice(2);
        break;
      }
      case 'MST': {
        const match = /^(UTC|GMT[+-]\d{1,2}|[A-Z]{3,5})/.exec(rest);
        if (!match) throw fail(rest, std);
        fields.zoneName = match[0];
        const gmt = /^GMT([+-]\d{1,2})$/.exec(match[0]);
        fields.offsetSeconds = gmt ? Number(gmt[1]) * 3600 : 0;
        rest = rest.slice(match[0].length);
        break;
      }
      default: {
        if (std.startsWith('-') || std.startsWith('Z')) {
          if (std.startsWith('Z') && rest.startsWith('Z')) {
            fields.offsetSeconds = 0;
            rest = rest.slice(1);
            break;
          }
          const shape = std.replace(/^Z/, '-');
          const patterns: Record<string, RegExp> = {
            '-07': /^([+-])(\d{2})/,
            '-0700': /^([+-])(\d{2})(\d{2})/,
            '-07:00': /^([+-])(\d{2}):(\d{2})/,
            '-070000': /^([+-])(\d{2})(\d{2})(\d{2})/,
            '-07:00:00': /^([+-])(\d{2}):(\d{2}):(\d{2})/,
          };
          const match = (patterns[shape] as RegExp).exec(rest);
          if (!match) throw fail(rest, std);
          const seconds = Number(match[2]) * 3600 + Number(match[3] ?? 0) * 60 + Number(match[4] ?? 0);
          fields.offsetSeconds = match[1] === '-' ? -seconds : seconds;
          rest = rest.slice(match[0].length);
        } else {
          const match = /^[.,](\d+)/.exec(rest);
          const fixed = std[1] === '0';
          if (!match) {
            if (fixed) throw fail(rest, std);
            break;
          }
          if (fixed && (match[1] as string).length !== std.length - 1) throw fail(rest, std);
          fields.nanosecond = Number((match[1] as string).slice(0, 9).padEnd(9, '0'));
          rest = rest.slice(match[0].length);
        }
      }
    }
    if (before === rest && std !== 'MST' && !std.startsWith('.') && !std.startsWith(',')) throw fail(rest, std);
  }
  if (rest !== '') throw new GoTimeError(`parsing time ${JSON.stringify(value)}: extra text: ${JSON.stringify(rest)}`);
  if (fields.pm !== undefined) {
    if (fields.pm && fields.hour < 12) fields.hour += 12;
    else if (!fields.pm && fields.hour === 12) fields.hour = 0;
  }
  const daysInMonth = [31, isLeapYear(fields.year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][fields.month - 1] as number;
  if (fields.day < 1 || fields.day > daysInMonth) throw rangeError('day');
  return { fields };
}

const DURATION_UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  'µs': 1000n,
  'μs': 1000n,
  ms: 1_000_000n,
  s: NS_PER_SECOND,
  m: 60n * NS_PER_SECOND,
  h: 3600n * NS_PER_SECOND,
};

/** A port of Go's time.ParseDuration (including its float arithmetic for fractions and its error texts). */
export function parseDuration(text: string): bigint {
  const quoted = JSON.stringify(text);
  const invalid = (): GoTimeError => new GoTimeError(`time: invalid duration ${quoted}`);
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') throw invalid();
  const limit = 1n << 63n;
  let total = 0n;
  while (rest !== '') {
    if (!/^[.0-9]/.test(rest)) throw invalid();
    const whole = /^[0-9]*/.exec(rest)?.[0] ?? '';
    rest = rest.slice(whole.length);
    let value = BigInt(whole === '' ? '0' : whole);
    if (value >= limit) throw invalid();
    let fraction = 0n;
    let scale = 1;
    let hasFraction = false;
    if (rest.startsWith('.')) {
      const digits = /^\.([0-9]*)/.exec(rest)?.[1] ?? '';
      rest = rest.slice(1 + digits.length);
      hasFraction = digits !== '';
      // Go stops accumulating fraction digits once another would overflow.
      for (const digit of digits) {
        if (fraction > (limit - 1n) / 10n) break;
        fraction = fraction * 10n + BigInt(digit);
        scale *= 10;
      }
    }
    if (whole === '' && !hasFraction) throw invalid();
    const unitText = /^[^.0-9]*/.exec(rest)?.[0] ?? '';
    if (unitText === '') throw new GoTimeError(`time: missing unit in duration ${quoted}`);
    rest = rest.slice(unitText.length);
    const unit = DURATION_UNITS[unitText];
    if (unit === undefined) throw new GoTimeError(`time: unknown unit ${JSON.stringify(unitText)} in duration ${quoted}`);
    if (value > (limit - 1n) / unit) throw invalid();
    value *= unit;
    if (fraction > 0n) {
      value += BigInt(Math.trunc(Number(fraction) * (Number(unit) / scale)));
      if (value > limit) throw invalid();
    }
    total += value;
    if (total > limit) throw invalid();
  }
  if (total > limit - 1n && !negative) throw invalid();
  return negative ? -total : total;
}
