// Every code in the error catalogue appears in the error table of docs/errors.md, and the table lists no other code.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CATALOGUE } from '../../src/errors.js';

test('the error table of docs/errors.md and the catalogue agree, with the same statuses and exit codes', () => {
  // The whole file is the error page: every table row of the form | `CODE` | status | exit | is an entry.
  const section = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map<string, { status: string; exit: string }>();
  for (const line of section.split('\n')) {
    const m = /^\| `([A-Z_]+)` \| (\S+) \| (\d+) \|/.exec(line);
    if (m) rows.set(m[1] as string, { status: m[2] as string, exit: m[3] as string });
  }
  assert.deepEqual([...rows.keys()].sort(), Object.keys(CATALOGUE).sort());
  for (const [code, entry] of Object.entries(CATALOGUE)) {
    const row = rows.get(code);
    assert.equal(row?.status, entry.status === 0 ? '-' : String(entry.status), code);
    assert.equal(row?.exit, String(entry.exit), code);
  }
});
