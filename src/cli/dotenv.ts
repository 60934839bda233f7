import { CliError } from './sign-in.ts';

/**
 * A .env file read the way dotenv and docker compose read them, for `slipway var import`:
 *
 * - `KEY=value`, with an optional `export ` before the key and spaces around `=`; blank lines and lines starting
 *   with `#` are skipped.
 * - Unquoted values are trimmed; ` #` (a `#` after white space) starts a comment, so `a#b` and URLs with fragments
 *   keep their `#`.
 * - `'single'` and `` `backtick` `` quotes keep their content as it is; `"double"` quotes understand `\n`, `\r`,
 *   `\t`, `\"`, `\\` and `\$` (any other backslash stays). Quoted values may span lines; a comment may follow the
 *   closing quote.
 * - Nothing is expanded: `${X}` stays text, and a value that is exactly `$NAME` is an alias, as with `var set`.
 * - A key given twice takes its last value.
 *
 * A line that is none of these is an error naming the file and line, so a half-understood file imports nothing.
 */

export interface DotenvEntry {
  key: string;
  value: string;
  /** The line the entry starts on (1-based). */
  line: number;
}

const ASSIGNMENT = /^\s*(?:export\s+)?([^\s=]+)\s*=[ \t]*/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DOUBLE_QUOTE_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\', $: '$' };

export function parseDotenv(text: string, file: string): DotenvEntry[] {
  const source = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const byKey = new Map<string, DotenvEntry>();
  let position = 0;
  let lineNumber = 1;
  const fail = (line: number, message: string): never => {
    throw new CliError(`${file}, line ${line}: ${message}`);
  };

  while (position < source.length) {
    const end = source.indexOf('\n', position);
    const lineEnd = end === -1 ? source.length : end;
    const line = source.slice(position, lineEnd);
    const startLine = lineNumber;
    if (line.trim() === '' || line.trimStart().startsWith('#')) {
      position = lineEnd + 1;
      lineNumber += 1;
      continue;
    }
    const assignment = ASSIGNMENT.exec(line);
    if (assignment === null) fail(startLine, 'expected KEY=value');
    const key = (assignment as RegExpExecArray)[1] as string;
    if (!NAME.test(key)) fail(startLine, `"${key}" is not a variable name (letters, digits and _, not starting with a digit)`);
    let cursor = position + (assignment as RegExpExecArray)[0].length;
    const quote = source[cursor];
    let value: string;
    if (quote === '"' || quote === "'" || quote === '`') {
      cursor += 1;
      value = '';
      for (;;) {
        const character = source[cursor];
        if (character === undefined) return fail(startLine, `the value of ${key} opens a ${quote} quote that is never closed`);
        if (character === quote) break;
        if (character === '\n') lineNumber += 1;
        if (quote === '"' && character === '\\') {
          const next = source[cursor + 1];
          const escaped = next === undefined ? undefined : DOUBLE_QUOTE_ESCAPES[next];
          if (escaped !== undefined) {
            value += escaped;
            cursor += 2;
            continue;
          }
        }
        value += character;
        cursor += 1;
      }
      cursor += 1;
      const restEnd = source.indexOf('\n', cursor);
      const rest = source.slice(cursor, restEnd === -1 ? source.length : restEnd);
      if (rest.trim() !== '' && !/^\s+#|^#/.test(rest)) fail(lineNumber, `unexpected text after the quoted value of ${key}: ${rest.trim()}`);
      position = restEnd === -1 ? source.length : restEnd + 1;
    } else {
      // From just after the `=`, so that `KEY= # note` is empty while `COLOR=#fff` keeps its `#`.
      const raw = source.slice(cursor - ((assignment as RegExpExecArray)[0].match(/[ \t]+$/)?.[0].length ?? 0), lineEnd);
      const comment = /\s#/.exec(raw);
      value = (comment === null ? raw : raw.slice(0, comment.index)).trim();
      position = lineEnd + 1;
    }
    lineNumber += 1;
    byKey.delete(key);
    byKey.set(key, { key, value, line: startLine });
  }
  return [...byKey.values()];
}
