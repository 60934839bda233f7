import { quoteString } from './term.text.ts';

/**
 * A port of the part of Go's fmt.Sprintf that OPA's `sprintf` reaches. OPA hands Go one of four argument kinds:
 * an int (integers within int64), a *big.Int (integers beyond), a float64, or a string (strings, and every other
 * Rego value as its term text). Verbs a kind does not support print Go's `%!verb(type=value)` marker, as in OPA.
 */
export type GoArgument =
  | { kind: 'int'; value: bigint }
  | { kind: 'bigint'; value: bigint }
  | { kind: 'float'; value: number }
  | { kind: 'string'; value: string };

interface Spec {
  minus: boolean;
  plus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  width: number | undefined;
  precision: number | undefined;
}

const MAX_WIDTH = 1_000_000;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function goIntArgument(value: bigint): GoArgument {
  return value >= INT64_MIN && value <= INT64_MAX ? { kind: 'int', value } : { kind: 'bigint', value };
}

function typeLabel(argument: GoArgument): string {
  switch (argument.kind) {
    case 'int':
      return 'int';
    case 'bigint':
      return '*big.Int';
    case 'float':
      return 'float64';
    case 'string':
      return 'string';
  }
}

function plainValue(argument: GoArgument): string {
  switch (argument.kind) {
    case 'int':
    case 'bigint':
      return argument.value.toString();
    case 'float':
      return formatFloat(argument.value, 'g', undefined, false);
    case 'string':
      return argument.value;
  }
}

function badVerb(verb: string, argument: GoArgument): string {
  if (argument.kind === 'bigint') return `%!${verb}(big.Int=${argument.value.toString()})`;
  return `%!${verb}(${typeLabel(argument)}=${plainValue(argument)})`;
}

function pad(text: string, spec: Spec, zeroAllowed: boolean): string {
  if (spec.width === undefined) return text;
  const width = spec.width;
  const length = [...text].length;
  if (length >= width) return text;
  const fill = width - length;
  if (spec.minus) return text + ' '.repeat(fill);
  if (spec.zero && zeroAllowed) {
    const sign = text[0] === '-' || text[0] === '+' || text[0] === ' ' ? (text[0] as string) : '';
    return sign + '0'.repeat(fill) + text.slice(sign.length);
  }
  return ' '.repeat(fill) + text;
}

function signOf(negative: boolean, spec: Spec): string {
  if (negative) return '-';
  if (spec.plus) return '+';
  return spec.space ? ' ' : '';
}

function formatInteger(value: bigint, verb: string, spec: Spec): string | undefined {
  const negative = value < 0n;
  const magnitude = negative ? -value : value;
  let digits: string;
  let prefix = '';
  switch (verb) {
    case 'd':
    case 'v':
      digits = magnitude.toString(10);
      break;
    case 'b':
      digits = magnitude.toString(2);
      if (spec.sharp) prefix = '0b';
      break;
    case 'o':
      digits = magnitude.toString(8);
      if (spec.sharp) prefix = '0';
      break;
    case 'O':
      digits = magnitude.toString(8);
      prefix = '0o';
      break;
    case 'x':
      digits = magnitude.toString(16);
      if (spec.sharp) prefix = '0x';
      break;
    case 'X':
      digits = magnitude.toString(16).toUpperCase();
      if (spec.sharp) prefix = '0X';
      break;
    default:
      return undefined;
  }
  if (spec.precision !== undefined) {
    if (spec.precision === 0 && magnitude === 0n) digits = '';
    else digits = digits.padStart(spec.precision, '0');
  }
  const text = signOf(negative, spec) + prefix + digits;
  return pad(text, spec, spec.precision === undefined);
}

interface Decimal {
  /** Significant digits, the first non-zero unless the value is zero. */
  digits: string;
  /** The value is 0.digits × 10^point. */
  point: number;
}

/** The exact decimal expansion of a positive finite double (every double is a finite decimal). */
function exactDecimal(value: number): Decimal {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  const bits = view.getBigUint64(0);
  const exponentBits = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & ((1n << 52n) - 1n);
  let exponent = -1074;
  if (exponentBits !== 0) {
    mantissa |= 1n << 52n;
    exponent = exponentBits - 1075;
  }
  if (exponent >= 0) {
    const digits = (mantissa << BigInt(exponent)).toString();
    return { digits, point: digits.length };
  }
  // mantissa / 2^k = mantissa × 5^k / 10^k
  const digits = (mantissa * 5n ** BigInt(-exponent)).toString();
  return { digits, point: digits.length + exponent };
}

/** Rounds to `keep` leading digits, ties to even, as strconv does on the exact value. */
function roundDecimal(decimal: Decimal, keep: number): Decimal {
  const digits = `0${decimal.digits}`;
  const position = keep + 1;
  let point = decimal.point + 1;
  if (position <= 0) return { digits: '0', point: 1 };
  if (position >= digits.length) return strip({ digits: digits.padEnd(position, '0'), point });
  let head = digits.slice(0, position);
  const next = digits[position] as string;
  const rest = digits.slice(position + 1);
  const lastOdd = Number(head[head.length - 1]) % 2 === 1;
  if (next > '5' || (next === '5' && (/[1-9]/.test(rest) || lastOdd))) {
    const incremented = (BigInt(head) + 1n).toString().padStart(head.length, '0');
    if (incremented.length > head.length) point += 1;
    head = incremented;
  }
  return strip({ digits: head, point });
}

function strip(decimal: Decimal): Decimal {
  let { digits, point } = decimal;
  while (digits.length > 1 && digits[0] === '0') {
    digits = digits.slice(1);
    point -= 1;
  }
  if (/^0+$/.test(digits)) return { digits: '0', point: 1 };
  return { digits, point };
}

/** Digits of |value|: the shortest that round-trip when `significant` is undefined, else rounded to that many. */
function decimalDigits(value: number, significant: number | undefined): Decimal {
  const magnitude = Math.abs(value);
  if (magnitude === 0) return { digits: '0'.repeat(significant ?? 1), point: 1 };
  if (significant === undefined) {
    // JavaScript's shortest round-trip digits are Go's shortest digits too.
    const [mantissa, exponent] = magnitude.toExponential().split('e') as [string, string];
    return { digits: mantissa.replace('.', ''), point: Number(exponent) + 1 };
  }
  const rounded = roundDecimal(exactDecimal(magnitude), significant);
  return { digits: rounded.digits.padEnd(significant, '0').slice(0, significant), point: rounded.point };
}

function exponentForm(digits: string, point: number, fractionDigits: number, upper: boolean): string {
  const first = digits[0] ?? '0';
  let rest = digits.slice(1);
  if (rest.length < fractionDigits) rest = rest.padEnd(fractionDigits, '0');
  const exponent = digits === '0' ? 0 : point - 1;
  const sign = exponent < 0 ? '-' : '+';
  const magnitude = String(Math.abs(exponent)).padStart(2, '0');
  return `${first}${rest.length > 0 ? `.${rest}` : ''}${upper ? 'E' : 'e'}${sign}${magnitude}`;
}

function fixedForm(value: number, fractionDigits: number): string {
  const magnitude = Math.abs(value);
  const { digits, point } = magnitude === 0 ? { digits: '0', point: 1 } : roundDecimal(exactDecimal(magnitude), exactDecimal(magnitude).point + fractionDigits);
  const integral = point > 0 ? digits.slice(0, point).padEnd(point, '0') : '0';
  const fraction = (point < 0 ? '0'.repeat(-point) + digits : digits.slice(Math.max(point, 0))).padEnd(fractionDigits, '0').slice(0, fractionDigits);
  return fractionDigits > 0 ? `${integral}.${fraction}` : integral;
}

/** Go's strconv.FormatFloat for the verbs e, f, g (and upper-case forms), without the sign. */
function formatFloatMagnitude(value: number, verb: string, precision: number | undefined, sharp: boolean): string {
  const upper = verb === 'E' || verb === 'G';
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return 'Inf';
  switch (verb) {
    case 'e':
    case 'E': {
      const fraction = precision ?? 6;
      const { digits, point } = decimalDigits(value, fraction + 1);
      return exponentForm(digits, point, fraction, upper);
    }
    case 'f':
    case 'F':
      return fixedForm(value, precision ?? 6);
    default: {
      const shortest = precision === undefined;
      const significant = shortest ? undefined : Math.max(precision, 1);
      const { digits, point } = decimalDigits(value, significant);
      const trimmed = sharp ? digits : digits.replace(/0+$/, '') || '0';
      let eprec = significant ?? 6;
      if (!shortest && eprec > trimmed.length && trimmed.length >= point) eprec = trimmed.length;
      if (shortest) eprec = 6;
      const exponent = point - 1;
      if (exponent < -4 || exponent >= eprec) return exponentForm(trimmed, point, 0, upper);
      const fraction = Math.max(trimmed.length - point, 0);
      return fixedForm(value, fraction);
    }
  }
}

function formatFloat(value: number, verb: string, precision: number | undefined, sharp: boolean): string {
  const body = formatFloatMagnitude(value, verb === 'v' ? 'g' : verb, precision, sharp);
  return (value < 0 || Object.is(value, -0) ? '-' : '') + body;
}

function formatArgument(argument: GoArgument, verb: string, spec: Spec): string {
  switch (argument.kind) {
    case 'int':
    case 'bigint': {
      if (argument.kind === 'bigint' && verb === 's') return pad(argument.value.toString(), spec, true);
      if (argument.kind === 'int' && (verb === 'c' || verb === 'q' || verb === 'U')) {
        const code = Number(argument.value);
        const char = code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
        if (verb === 'c') return pad(char, spec, false);
        if (verb === 'q') return pad(`'${char}'`, spec, false);
        return pad(`U+${code.toString(16).toUpperCase().padStart(4, '0')}`, spec, false);
      }
      return formatInteger(argument.value, verb, spec) ?? badVerb(verb, argument);
    }
    case 'float': {
      if (!'eEfFgGv'.includes(verb)) return badVerb(verb, argument);
      let text = formatFloat(argument.value, verb, spec.precision, spec.sharp);
      if (!text.startsWith('-')) text = signOf(false, spec) + text;
      return pad(text, spec, Number.isFinite(argument.value));
    }
    case 'string': {
      let text = argument.value;
      switch (verb) {
        case 's':
        case 'v':
          if (spec.precision !== undefined) text = [...text].slice(0, spec.precision).join('');
          return pad(text, spec, true);
        case 'q':
          return pad(quoteString(text), spec, false);
        case 'x':
        case 'X': {
          const hex = Buffer.from(text, 'utf8').toString('hex');
          return pad(verb === 'X' ? hex.toUpperCase() : hex, spec, false);
        }
        default:
          return badVerb(verb, argument);
      }
    }
  }
}

function argumentText(argument: GoArgument): string {
  return argument.kind === 'bigint' ? argument.value.toString() : plainValue(argument);
}

export function goSprintf(format: string, args: GoArgument[]): string {
  let out = '';
  let next = 0;
  let i = 0;
  while (i < format.length) {
    const percent = format.indexOf('%', i);
    if (percent === -1) {
      out += format.slice(i);
      break;
    }
    out += format.slice(i, percent);
    i = percent + 1;
    const spec: Spec = { minus: false, plus: false, sharp: false, space: false, zero: false, width: undefined, precision: undefined };
    for (; i < format.length; i++) {
      const flag = format[i];
      if (flag === '-') spec.minus = true;
      else if (flag === '+') spec.plus = true;
      else if (flag === '#') spec.sharp = true;
      else if (flag === ' ') spec.space = true;
      else if (flag === '0') spec.zero = !spec.minus;
      else break;
    }
    let overflow = false;
    const readNumber = (): number | undefined => {
      if (format[i] === '*') {
        i++;
        const argument = args[next];
        next++;
        return argument?.kind === 'int' ? Number(argument.value) : undefined;
      }
      const start = i;
      while (i < format.length && format.charCodeAt(i) >= 48 && format.charCodeAt(i) <= 57) i++;
      if (i === start) return undefined;
      const value = Number(format.slice(start, i));
      // Go gives up on widths and precisions past a million ("crazy long number"); so do we, which also keeps a
      // policy from building huge strings.
      if (value > MAX_WIDTH) {
        overflow = true;
        i = format.length;
      }
      return value;
    };
    spec.width = readNumber();
    if (spec.width !== undefined && spec.width < 0) {
      spec.minus = true;
      spec.width = -spec.width;
    }
    if (format[i] === '.') {
      i++;
      spec.precision = readNumber() ?? 0;
    }
    if (overflow || i >= format.length) {
      out += '%!(NOVERB)';
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i) as number);
    i += verb.length;
    if (verb === '%') {
      out += '%';
      continue;
    }
    const argument = args[next];
    if (argument === undefined) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    next++;
    if (verb === 'T') {
      out += pad(typeLabel(argument), spec, false);
      continue;
    }
    out += formatArgument(argument, verb, spec);
  }
  if (next < args.length) {
    const extra = args.slice(next).map((argument) => `${typeLabel(argument)}=${argumentText(argument)}`);
    out += `%!(EXTRA ${extra.join(', ')})`;
  }
  return out;
}
