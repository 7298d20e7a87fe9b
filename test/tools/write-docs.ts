// Regenerates the documents derived from code: config/threatcol.example.json and the README's configuration table.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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
console.log('wrote config/threatcol.example.json and the README configuration table');
