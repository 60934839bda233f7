/**
 * A log line's ANSI escape sequences read into styled runs of text (no DOM; test/console-ansi.test.ts). Programs
 * colour their output with SGR sequences (`ESC [ … m`); the console shows those colours and drops every other escape
 * sequence (cursor moves, erasing, window titles, hyperlinks), which a line-by-line log cannot honour. The runs are
 * rendered as React text in spans: nothing of a line is ever read as HTML.
 *
 * Colours: the 16 palette colours (30–37, 90–97 and their backgrounds 40–47, 100–107; 38;5;0–15) stay palette indexes
 * so the stylesheet picks shades readable on the log's dark background; 38;5;16–255 and 38;2;r;g;b are exact colours.
 */

/** A palette index (0–15: black, red, green, yellow, blue, magenta, cyan, white, then their bright forms) or a CSS colour. */
export type AnsiColour = number | string;

export interface AnsiStyle {
  fg?: AnsiColour;
  bg?: AnsiColour;
  bold?: boolean;
  italic?: boolean;
  underline?: boolean;
}

export interface AnsiRun {
  text: string;
  style: AnsiStyle;
}

const ESC = '\u001b';

/**
 * ESC followed by: a CSI sequence (`[`, parameter bytes, intermediate bytes, one final byte), an OSC sequence (`]` up
 * to BEL or ESC \), another string sequence (P, X, ^, _ up to ESC \), or any single character (ESC 7, ESC c, …).
 * A sequence cut off at the end of the line matches too, so nothing of it is shown.
 */
// eslint-disable-next-line no-control-regex -- escape sequences are what this reads
const SEQUENCE = /\u001b(?:\[([0-?]*)[ -/]*([@-~])?|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[PX^_][^\u001b]*(?:\u001b\\)?|[\s\S]?)/g;
/** Control characters a line may still hold (tab excepted), shown as nothing. */
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** The 6×6×6 cube and the grey ramp of the 256-colour palette, as CSS colours. */
function colour256(index: number): AnsiColour | undefined {
  if (!Number.isInteger(index) || index < 0 || index > 255) return undefined;
  if (index < 16) return index;
  if (index >= 232) {
    const grey = 8 + (index - 232) * 10;
    return `rgb(${grey}, ${grey}, ${grey})`;
  }
  const cube = index - 16;
  const level = (value: number) => (value === 0 ? 0 : 55 + value * 40);
  return `rgb(${level(Math.floor(cube / 36))}, ${level(Math.floor(cube / 6) % 6)}, ${level(cube % 6)})`;
}

/** `38;5;n` or `38;2;r;g;b` starting at `codes[at]` (the 38 or 48): the colour and how many codes it used. */
function extendedColour(codes: number[], at: number): { colour: AnsiColour | undefined; used: number } {
  const mode = codes[at + 1];
  if (mode === 5) return { colour: colour256(codes[at + 2] ?? -1), used: 3 };
  if (mode === 2) {
    const [r, g, b] = [codes[at + 2], codes[at + 3], codes[at + 4]];
    const valid = [r, g, b].every((value) => value !== undefined && Number.isInteger(value) && value >= 0 && value <= 255);
    return { colour: valid ? `rgb(${r}, ${g}, ${b})` : undefined, used: 5 };
  }
  return { colour: undefined, used: codes.length - at };
}

/** The style after one SGR sequence's parameters (`1;31`, `` for a reset). */
export function applySgr(style: AnsiStyle, parameters: string): AnsiStyle {
  const codes = parameters === '' ? [0] : parameters.split(/[;:]/).map((code) => (code === '' ? 0 : Number(code)));
  let next: AnsiStyle = { ...style };
  for (let at = 0; at < codes.length; at += 1) {
    const code = codes[at] as number;
    if (code === 0) next = {};
    else if (code === 1) next.bold = true;
    else if (code === 3) next.italic = true;
    else if (code === 4) next.underline = true;
    else if (code === 22) delete next.bold;
    else if (code === 23) delete next.italic;
    else if (code === 24) delete next.underline;
    else if (code >= 30 && code <= 37) next.fg = code - 30;
    else if (code >= 90 && code <= 97) next.fg = code - 90 + 8;
    else if (code === 39) delete next.fg;
    else if (code >= 40 && code <= 47) next.bg = code - 40;
    else if (code >= 100 && code <= 107) next.bg = code - 100 + 8;
    else if (code === 49) delete next.bg;
    else if (code === 38 || code === 48) {
      const { colour, used } = extendedColour(codes, at);
      if (colour !== undefined) next[code === 38 ? 'fg' : 'bg'] = colour;
      at += used - 1;
    }
  }
  return next;
}

/** The line's text in runs of one style each; escape sequences and control characters are gone. */
export function parseAnsi(line: string): AnsiRun[] {
  const runs: AnsiRun[] = [];
  let style: AnsiStyle = {};
  const push = (text: string) => {
    const clean = text.replace(CONTROL, '');
    if (clean === '') return;
    const last = runs[runs.length - 1];
    if (last !== undefined && sameStyle(last.style, style)) last.text += clean;
    else runs.push({ text: clean, style });
  };
  if (!line.includes(ESC)) {
    push(line);
    return runs;
  }
  let from = 0;
  for (const match of line.matchAll(SEQUENCE)) {
    push(line.slice(from, match.index));
    from = match.index + match[0].length;
    const [sequence, parameters, final] = match;
    if (sequence.startsWith(`${ESC}[`) && final === 'm') style = applySgr(style, parameters ?? '');
  }
  push(line.slice(from));
  return runs;
}

/** The line as plain text (what a search matches). */
export function plainText(line: string): string {
  return line.includes(ESC) ? parseAnsi(line).map((run) => run.text).join('') : line.replace(CONTROL, '');
}

function sameStyle(a: AnsiStyle, b: AnsiStyle): boolean {
  return a.fg === b.fg && a.bg === b.bg && a.bold === b.bold && a.italic === b.italic && a.underline === b.underline;
}
