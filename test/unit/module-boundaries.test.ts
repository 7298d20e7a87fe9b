// Module boundaries the review asked for: `check` does not import the server, and the helpers that were written
// several times exist once.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

test('check imports nothing from inputs/', () => {
  for (const file of sources(join(SRC, 'check'))) {
    assert.doesNotMatch(readFileSync(file, 'utf8'), /from '\.\.\/inputs\//, file);
  }
});

test('fs.watch, the directory fsync and the backward newline scan each live in one module', () => {
  const where = (pattern: RegExp) =>
    sources()
      .filter((f) => pattern.test(readFileSync(f, 'utf8')))
      .map((f) => f.slice(SRC.length));
  assert.deepEqual(where(/\bwatch(?:Fs)?\(\s*[a-zA-Z.]+,\s*\{\s*persistent/), ['watch-files.ts']);
  assert.deepEqual(where(/fsyncSync\(fd\)/), ['data-dir/file-owner.ts']);
  // The backward scan is the loop that walks a file from its end in chunks.
  assert.deepEqual(where(/while \((end|stop) > 0\)/), ['store/files/line-boundary.ts']);
  for (const user of ['store/files/segment-file.ts', 'store/files/file-record-log.ts']) {
    assert.match(readFileSync(join(SRC, user), 'utf8'), /lineStartBefore\(/, user);
  }
});
