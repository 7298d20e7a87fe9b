// The configuration's validator is compiled from the schema at build time: the committed one must be current.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CONFIG_VALIDATOR_FILE, renderConfigValidator } from '../tools/config-validator.js';

test('src/config/config-validator.ts is compiled from the current schema (else: npm run docs)', () => {
  const committed = readFileSync(
    fileURLToPath(new URL(`../../${CONFIG_VALIDATOR_FILE}`, import.meta.url)),
    'utf8',
  );
  assert.ok(committed === renderConfigValidator(), `${CONFIG_VALIDATOR_FILE} is stale: run npm run docs`);
});
