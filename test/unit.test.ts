// The unit tests (test/unit/), all in this one process: `npm test` runs every other folder's files each in a
// process of its own, and this file for test/unit/ (its script's glob, test/[!u]*/*.test.ts, leaves test/unit/ out).
// A unit file's tests take less CPU than starting a process for it with tsx: in one process the 63 files took
// 36 s of CPU against 67 s in a process each. Any unit file still runs alone: node --import tsx --test FILE.
// So the files share module state here (record ids' clock, caches): a test may not assume a fresh process.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';

const TEST = new URL('./', import.meta.url);

test("every folder of test/ but unit/ is one npm test's glob runs", () => {
  const folders = readdirSync(TEST, { withFileTypes: true })
    .filter(
      (e) => e.isDirectory() && readdirSync(new URL(`${e.name}/`, TEST)).some((f) => f.endsWith('.test.ts')),
    )
    .map((e) => e.name);
  assert.ok(folders.includes('unit'));
  assert.deepEqual(
    folders.filter((f) => f !== 'unit' && f.startsWith('u')),
    [],
    'a folder whose name starts with u is left out by test/[!u]*/*.test.ts: rename it or widen the glob',
  );
});

for (const file of readdirSync(new URL('unit/', TEST))
  .filter((f) => f.endsWith('.test.ts'))
  .sort())
  await import(new URL(`unit/${file}`, TEST).href);
