// Formats rows as a plain text table with aligned columns. Every cell is cleaned here (terminal-text.ts): a
// line break, escape or bidi control in a field from outside cannot forge a row or act on the terminal.
import { type CliIo, write, writeJson } from './io.js';
import { clean } from './terminal-text.js';

export function formatTable(header: string[], rows: string[][]): string {
  const safeRows = rows.map((r) => r.map(clean));
  const widths = header.map((h, i) => Math.max(h.length, ...safeRows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header.map(clean)), ...safeRows.map(line)].join('\n');
}

/**
 * How every `list` command prints its rows: a JSON array with --json, else a table, or `none` when there are no
 * rows (the JSON is then `[]`). Returns the exit code.
 */
export function printList<R>(
  io: CliIo,
  rows: readonly R[],
  how: { json?: boolean | undefined; none: string; header: string[]; cells: (row: R) => string[] },
): number {
  if (how.json) writeJson(io.stdout, rows);
  else if (rows.length === 0) write(io.stdout, how.none);
  else write(io.stdout, formatTable(how.header, rows.map(how.cells)));
  return 0;
}
