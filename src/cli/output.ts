import type { CliIo } from './sign-in.ts';

/** How a team command prints: the API's JSON with --json, a readable table or sentence otherwise. */
export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** Columns padded to their widest cell; an empty list prints `empty` instead of a lone header. */
export function printTable(io: CliIo, headers: string[], rows: string[][], empty: string): void {
  if (rows.length === 0) {
    io.out(`${empty}\n`);
    return;
  }
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  io.out(`${[line(headers), ...rows.map(line)].join('\n')}\n`);
}
