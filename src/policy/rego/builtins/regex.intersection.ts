import { builtinFailure } from '../rego.builtins.ts';

/**
 * regex.globs_match: whether two regex-style globs (literals, `.`, `[...]` classes, each optionally followed by
 * `*`, `+` or `?`) match at least one common string. A port of the semantics of the Go library OPA uses
 * (github.com/yashtewari/glob-intersection), decided here by a breadth-first search of the product automaton, which
 * is linear in the product of the two glob lengths.
 */
interface CharSet {
  negated: boolean;
  ranges: [number, number][];
}

interface Token {
  set: CharSet;
  /** 'one': exactly once; 'star': zero or more; 'optional': zero or one. */
  repeat: 'one' | 'star' | 'optional';
}

const MAX_CODE_POINT = 0x10ffff;
/** Bound on the product automaton, so two long globs cannot exhaust memory. */
const MAX_PRODUCT_STATES = 4_000_000;

function invalid(input: string, position: number, message: string): Error {
  return builtinFailure('regex.globs_match', `input:${input}, pos:${position}, ${message}: the input provided is invalid`);
}

function parseClass(input: string, chars: string[], start: number): [CharSet, number] {
  let i = start + 1;
  const set: CharSet = { negated: false, ranges: [] };
  if (chars[i] === '^') {
    set.negated = true;
    i++;
  }
  let first = true;
  while (i < chars.length && (chars[i] !== ']' || first)) {
    first = false;
    let char = chars[i] as string;
    if (char === '\\') {
      i++;
      if (i >= chars.length) throw invalid(input, i, "escape '\\' at end of input");
      char = chars[i] as string;
    }
    const low = char.codePointAt(0) as number;
    if (chars[i + 1] === '-' && i + 2 < chars.length && chars[i + 2] !== ']') {
      let highChar = chars[i + 2] as string;
      i += 2;
      if (highChar === '\\') {
        i++;
        if (i >= chars.length) throw invalid(input, i, "escape '\\' at end of input");
        highChar = chars[i] as string;
      }
      const high = highChar.codePointAt(0) as number;
      if (high < low) throw invalid(input, i + 1, 'invalid range in set');
      set.ranges.push([low, high]);
    } else {
      set.ranges.push([low, low]);
    }
    i++;
  }
  if (i >= chars.length) throw invalid(input, start + 1, "set-open '[' with no closing ']'");
  return [set, i + 1];
}

function parseGlob(input: string): Token[] {
  const chars = Array.from(input);
  const tokens: Token[] = [];
  let i = 0;
  while (i < chars.length) {
    const char = chars[i] as string;
    let set: CharSet;
    switch (char) {
      case '.':
        set = { negated: true, ranges: [] };
        i++;
        break;
      case '[':
        [set, i] = parseClass(input, chars, i);
        break;
      case ']':
        throw invalid(input, i + 1, "set-close ']' with no preceding '['");
      case '*':
      case '+':
      case '?':
        throw invalid(input, i + 1, `quantifier '${char}' with no preceding token`);
      case '\\': {
        i++;
        const escaped = chars[i];
        if (escaped === undefined) throw invalid(input, i, "escape '\\' at end of input");
        const code = escaped.codePointAt(0) as number;
        set = { negated: false, ranges: [[code, code]] };
        i++;
        break;
      }
      default: {
        const code = char.codePointAt(0) as number;
        set = { negated: false, ranges: [[code, code]] };
        i++;
      }
    }
    const quantifier = chars[i];
    if (quantifier === '*') {
      tokens.push({ set, repeat: 'star' });
      i++;
    } else if (quantifier === '+') {
      tokens.push({ set, repeat: 'one' }, { set, repeat: 'star' });
      i++;
    } else if (quantifier === '?') {
      tokens.push({ set, repeat: 'optional' });
      i++;
    } else {
      tokens.push({ set, repeat: 'one' });
    }
  }
  return tokens;
}

/** Whether the ranges cover every code point in [low, high]. */
function covers(ranges: [number, number][], low: number, high: number): boolean {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  let next = low;
  for (const [start, end] of sorted) {
    if (start > next) return false;
    if (end >= next) next = end + 1;
    if (next > high) return true;
  }
  return next > high;
}

function intersects(a: CharSet, b: CharSet): boolean {
  if (!a.negated && !b.negated) return a.ranges.some(([lowA, highA]) => b.ranges.some(([lowB, highB]) => lowA <= highB && lowB <= highA));
  if (a.negated && b.negated) return !covers([...a.ranges, ...b.ranges], 0, MAX_CODE_POINT);
  const [positive, negative] = a.negated ? [b, a] : [a, b];
  return positive.ranges.some(([low, high]) => !covers(negative.ranges, low, high));
}

export function globsMatch(left: string, right: string): boolean {
  const a = parseGlob(left);
  const b = parseGlob(right);
  const width = b.length + 1;
  if ((a.length + 1) * width > MAX_PRODUCT_STATES) throw builtinFailure('regex.globs_match', 'globs too long');
  const seen = new Uint8Array((a.length + 1) * width);
  const queue: number[] = [0];
  seen[0] = 1;
  const visit = (i: number, j: number): void => {
    const key = i * width + j;
    if (seen[key] === 0) {
      seen[key] = 1;
      queue.push(key);
    }
  };
  while (queue.length > 0) {
    const key = queue.pop() as number;
    const i = Math.floor(key / width);
    const j = key % width;
    if (i === a.length && j === b.length) return true;
    const tokenA = a[i];
    const tokenB = b[j];
    if (tokenA && tokenA.repeat !== 'one') visit(i + 1, j);
    if (tokenB && tokenB.repeat !== 'one') visit(i, j + 1);
    if (tokenA && tokenB && intersects(tokenA.set, tokenB.set)) {
      visit(tokenA.repeat === 'star' ? i : i + 1, tokenB.repeat === 'star' ? j : j + 1);
      if (tokenA.repeat === 'star') visit(i + 1, tokenB.repeat === 'star' ? j : j + 1);
      if (tokenB.repeat === 'star') visit(tokenA.repeat === 'star' ? i : i + 1, j + 1);
    }
  }
  return false;
}
