// Renders the keys of an output (common ones, then each type's) as the table of docs/configuration.md.
import { outputKeyRows } from './outputs-schema.js';

export function renderOutputKeysTable(): string {
  const lines = ['| key | type | default | meaning |', '|---|---|---|---|'];
  for (const row of outputKeyRows()) {
    const cell = (text: string) => text.replaceAll('|', '\\|');
    lines.push(
      `| \`${row.key}\` | ${row.type || 'all'} | \`${JSON.stringify(row.default)}\` | ${cell(row.description)} |`,
    );
  }
  return lines.join('\n');
}
