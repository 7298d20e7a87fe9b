// `threatcol completion SHELL` prints scripts rendered at build time: they must be what the command tree renders.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { COMPLETION_SCRIPTS_FILE, renderCompletionScripts } from '../tools/completion-scripts.js';

test('src/cli/completion-scripts.ts is rendered from the current command definitions (else: npm run docs)', () => {
  const committed = readFileSync(
    fileURLToPath(new URL(`../../${COMPLETION_SCRIPTS_FILE}`, import.meta.url)),
    'utf8',
  );
  assert.ok(committed === renderCompletionScripts(), `${COMPLETION_SCRIPTS_FILE} is stale: run npm run docs`);
});
