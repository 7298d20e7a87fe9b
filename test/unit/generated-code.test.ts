// src/ holds what people write: the code rendered from other code lives in src/generated/ alone, written by the
// build from the current sources, never committed, linted or counted among the sources.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { GENERATED_DIR, generatedFiles, renderGenerated } from '../../packaging/generate/write-generated.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('no file of src/ outside src/generated/ says it is generated', () => {
  const generated = readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .filter((path) =>
      /\bgenerated\b.*do not edit/i.test(readFileSync(join(ROOT, path), 'utf8').slice(0, 300)),
    );
  assert.ok(generated.length > 0, 'the build wrote no generated file');
  assert.deepEqual(
    generated.filter((path) => !path.startsWith(`${GENERATED_DIR}/`)),
    [],
  );
});

test('src/generated/ holds what the build renders from the current sources (else: npm run build)', () => {
  const rendered = renderGenerated();
  assert.deepEqual(generatedFiles().sort(), [...rendered.keys()].sort(), 'stale: run npm run build');
  for (const [file, text] of rendered)
    assert.ok(readFileSync(join(ROOT, file), 'utf8') === text, `${file} is stale: run npm run build`);
});

test('git ignores src/generated/ but its README, and biome leaves it out', (t) => {
  const biome = JSON.parse(readFileSync(join(ROOT, '.biome.json'), 'utf8')) as {
    files: { includes: string[] };
  };
  assert.ok(biome.files.includes.includes(`!${GENERATED_DIR}`));
  if (!existsSync(join(ROOT, '.git'))) return t.skip('not a git checkout');
  const ignored = (path: string) => {
    try {
      execFileSync('git', ['check-ignore', '--quiet', '--no-index', path], { cwd: ROOT });
      return true;
    } catch {
      return false;
    }
  };
  for (const file of generatedFiles()) assert.ok(ignored(file), `${file} is not ignored by git`);
  assert.equal(ignored(`${GENERATED_DIR}/README.md`), false);
  // `duplicates` and biome read what git tracks: nothing generated may be committed either.
  const tracked = execFileSync('git', ['ls-files', GENERATED_DIR], { cwd: ROOT, encoding: 'utf8' });
  assert.deepEqual(tracked.split('\n').filter(Boolean), [`${GENERATED_DIR}/README.md`]);
});
