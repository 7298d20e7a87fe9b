// Regenerates the documents derived from code: config/threatcol.example.json, the configuration table in
// docs/configuration.md and docs/cli.md (the command reference, from the commander definitions and their prose).
// The code derived from code (src/generated/) is the build's: packaging/generate/write-generated.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderCliMarkdown } from '../../src/cli/manual/index.js';
import { buildProgram } from '../../src/cli/whole-program.js';
import { renderConfigTable, renderExampleConfig } from '../../src/config/describe-config.js';
import { renderOutputKeysTable } from '../../src/config/describe-outputs.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
// Where the configuration table lives, between its markers (test/unit/config.test.ts reads the same file).
const CONFIG_DOC = 'docs/configuration.md';

writeFileSync(`${root}config/threatcol.example.json`, renderExampleConfig());
/** The document with the text between `<!-- NAME:start -->` and `<!-- NAME:end -->` replaced. */
function fill(doc: string, name: string, text: string): string {
  const start = `<!-- ${name}:start -->`;
  const a = doc.indexOf(start);
  const b = doc.indexOf(`<!-- ${name}:end -->`);
  if (a === -1 || b === -1) throw new Error(`${CONFIG_DOC} lacks the ${name} markers`);
  return `${doc.slice(0, a + start.length)}\n${text}\n${doc.slice(b)}`;
}
let doc = readFileSync(`${root}${CONFIG_DOC}`, 'utf8');
doc = fill(doc, 'config-table', renderConfigTable());
doc = fill(doc, 'output-keys', renderOutputKeysTable());
writeFileSync(`${root}${CONFIG_DOC}`, doc);
writeFileSync(`${root}docs/cli.md`, renderCliMarkdown(buildProgram()));
console.log(`wrote config/threatcol.example.json, the configuration table in ${CONFIG_DOC} and docs/cli.md`);
