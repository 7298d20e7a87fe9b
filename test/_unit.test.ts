// test/unit/'s files, in this one process (test/helpers/together.ts says why); the check that npm test's script
// runs every folder of test/ once, each either so or file by file; and, under .ci/run, that every Debian package
// the tests drive is installed (test/helpers/needs.ts: nothing is skipped for one there).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DEBIAN_PACKAGES, EVERYTHING, isInstalled } from './helpers/needs.js';
import { runTogether } from './helpers/together.js';

const TEST = new URL('./', import.meta.url);

test("npm test's script runs every folder of test/ that holds tests, once: its files one by one, or together", () => {
  const script = (
    JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      scripts: { test: string };
    }
  ).scripts.test;
  const words = script.split(/\s+/);
  const folders = readdirSync(TEST, { withFileTypes: true })
    .filter(
      (e) => e.isDirectory() && readdirSync(new URL(`${e.name}/`, TEST)).some((f) => f.endsWith('.test.ts')),
    )
    .map((e) => e.name);
  assert.ok(folders.includes('unit') && folders.includes('server'), folders.join(' '));
  for (const folder of folders) {
    const ways = [words.includes(`test/${folder}/*.test.ts`), words.includes(`test/_${folder}.test.ts`)];
    assert.equal(ways.filter(Boolean).length, 1, `test/${folder}/ in npm test's script: ${script}`);
  }
});

// Only under .ci/run: on a developer's box each test that needs a missing package says so as it skips.
if (EVERYTHING)
  test('every Debian package of .ci/debian-packages is installed (THREATCOL_TEST_EVERYTHING=1, .ci/run)', () => {
    assert.ok(DEBIAN_PACKAGES.length >= 20, 'the list was read');
    const missing = DEBIAN_PACKAGES.filter((p) => !isInstalled(p.name)).map((p) => p.name);
    assert.deepEqual(missing, [], `not installed: ${missing.join(' ')} (.ci/run installs them)`);
  });

await runTogether(new URL('unit/', TEST));
