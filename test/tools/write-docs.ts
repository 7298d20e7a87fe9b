// Regenerates the documents derived from code: config/threatcol.example.json, the README's configuration table
// and docs/cli.md (the command reference, from the commander definitions and their prose).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildProgram } from '../../src/cli/main.js';
import { renderCliMarkdown } from '../../src/cli/manual/index.js';
import { renderConfigTable, renderExampleConfig } from '../../src/config/describe-config.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
writeFileSync(`${root}config/threatcol.example.json`, renderExampleConfig());
const readme = readFileSync(`${root}README.md`, 'utf8');
const start = '<!-- config-table:start -->';
const end = '<!-- config-table:end -->';
const a = readme.indexOf(start);
const b = readme.indexOf(end);
if (a === -1 || b === -1) throw new Error('README lacks the config-table markers');
writeFileSync(
  `${root}README.md`,
  `${readme.slice(0, a + start.length)}\n${renderConfigTable()}\n${readme.slice(b)}`,
);
writeFileSync(`${root}docs/cli.md`, renderCliMarkdown(buildProgram()));
console.log('wrote config/threatcol.example.json, the README configuration table and docs/cli.md');
