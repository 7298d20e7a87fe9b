// The suite runs on the Node.js runtime package.json pins, installed from the lockfile: the runner itself, a `node`
// found on PATH (what bin/threatcol's `#!/usr/bin/env node` and the tests' spawns get), and the lockfile holds
// the runtime package of both architectures the .deb is built for, each with its integrity hash.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pinnedRuntime, RUNTIME_PACKAGES } from '../../packaging/runtime.js';

const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url));
const pinned = pinnedRuntime(CHECKOUT);

test('the test runner, and the `node` on its PATH, are the pinned runtime from node_modules', () => {
  assert.equal(
    process.version,
    `v${pinned.version}`,
    `run the suite with npm test (node is ${process.execPath})`,
  );
  assert.equal(realpathSync(process.execPath), realpathSync(pinned.node));
  const onPath = execFileSync(
    'sh',
    ['-c', 'command -v node && node -p "process.version + \\" \\" + process.execPath"'],
    {
      encoding: 'utf8',
    },
  );
  const [, line] = onPath.trim().split('\n');
  assert.equal(line, `v${pinned.version} ${realpathSync(pinned.node)}`, onPath);
});

test('package-lock.json pins the runtime of both architectures at one version, with integrity hashes', () => {
  const lock = JSON.parse(readFileSync(join(CHECKOUT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, Record<string, unknown>>;
  };
  const manifest = JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')) as {
    optionalDependencies: Record<string, string>;
  };
  for (const [arch, name] of Object.entries(RUNTIME_PACKAGES)) {
    assert.equal(manifest.optionalDependencies[name], pinned.version, `${name} pinned at the same version`);
    const entry = lock.packages[`node_modules/${name}`];
    assert.ok(entry, `${name} in the lockfile`);
    assert.equal(entry.version, pinned.version);
    assert.match(String(entry.integrity), /^sha512-[A-Za-z0-9+/]{86}==$/);
    assert.equal(entry.cpu, arch);
    assert.equal(entry.os, 'linux');
    assert.equal(entry.optional, true, 'optional: npm installs only the one for the machine');
    assert.notEqual(entry.dev, true, 'not dev: npm ci --omit=dev still installs it');
  }
});
