/**
 * A `.env` file read into rows, in the browser (the import API takes parsed rows: importEnvironmentVariable and its
 * kin). What the common tools accept (docker compose, dotenv): `NAME=value`, an optional `export ` before the name,
 * blank lines and `#` comments skipped, a value in double quotes (with \n, \t, \" and \\ escapes, and spanning lines),
 * in single quotes (taken as written) or bare (trimmed, a ` #` starting a comment). A line that is none of these is a
 * problem the import shows with its line number, instead of guessing. No DOM: unit-tested in test/console-dotenv.test.ts.
 */
export interface DotenvRow {
  /** 1-based line of the row's name. */
  line: number;
  name: string;
  value: string;
}

export interface DotenvProblem {
  line: number;
  message: string;
}

const ASSIGNMENT = /^\s*(?:export\s+)?([^\s=#]+)\s*=\s?(.*)$/;
const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\', $: '$' };

export function parseDotenv(text: string): { rows: DotenvRow[]; problems: DotenvProblem[] } {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const rows: DotenvRow[] = [];
  const problems: DotenvProblem[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] as string;
    const number = index + 1;
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const assignment = ASSIGNMENT.exec(line);
    if (assignment === null) {
      problems.push({ line: number, message: 'is not NAME=value' });
      continue;
    }
    const name = assignment[1] as string;
    const raw = (assignment[2] as string).trimStart();
    if (raw.startsWith('"')) {
      // Double quotes: escapes, and the value may continue on the next lines until the closing quote.
      let value = '';
      let rest = raw.slice(1);
      let closed = false;
      for (;;) {
        let position = 0;
        while (position < rest.length) {
          const character = rest[position] as string;
          if (character === '\\' && position + 1 < rest.length) {
            const next = rest[position + 1] as string;
            value += ESCAPES[next] ?? `\\${next}`;
            position += 2;
          } else if (character === '"') {
            closed = true;
            break;
          } else {
            value += character;
            position += 1;
          }
        }
        if (closed) {
          const after = rest.slice(position + 1).trim();
          if (after !== '' && !after.startsWith('#')) problems.push({ line: number, message: `has text after the closing quote of ${name}` });
          else rows.push({ line: number, name, value });
          break;
        }
        if (index + 1 >= lines.length) {
          problems.push({ line: number, message: `opens a quote that is never closed (${name})` });
          break;
        }
        index += 1;
        value += '\n';
        rest = lines[index] as string;
      }
      continue;
    }
    if (raw.startsWith("'")) {
      const end = raw.indexOf("'", 1);
      if (end === -1) problems.push({ line: number, message: `opens a quote that is never closed (${name})` });
      else rows.push({ line: number, name, value: raw.slice(1, end) });
      continue;
    }
    const comment = raw.search(/\s#/);
    rows.push({ line: number, name, value: (comment === -1 ? raw : raw.slice(0, comment)).trim() });
  }
  return { rows, problems };
}
