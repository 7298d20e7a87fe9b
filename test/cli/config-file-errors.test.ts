// What the CLI says about a configuration file it cannot use: a syntax error by line and column (an editor's
// coordinates, not V8's character offset), and a file the user may not read as PERMISSION_DENIED with the
// documented hint (root's 0640 conffile read by an ordinary user), not as an invalid configuration.
import { strict as assert } from 'node:assert';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { withLineAndColumn } from '../../src/config/load-config.js';
import { runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('a JSON syntax error in the configuration names its line and column', async (t) => {
  const dir = makeTempDir(t);
  const config = join(dir, 'config.json');
  writeFileSync(config, '{\n  // the port\n  "server": { "port": 8443 }\n  "log": {}\n}\n');
  const r = await runCli(['sensor', 'list', '--config', config, '--data-dir', dir]);
  assert.equal(r.code, 78, r.stderr);
  assert.match(
    r.stderr,
    /CONFIG_INVALID: the configuration file .* is not valid JSON: .* at line 4, column 3/,
  );
  assert.doesNotMatch(r.stderr, /position/);

  writeFileSync(config, '{\n  "server": {\n');
  const cut = await runCli(['sensor', 'list', '--config', config, '--data-dir', dir]);
  assert.equal(cut.code, 78, cut.stderr);
  assert.match(cut.stderr, /at line 3, column 1/);
});

test('line and column count from 1 and survive a message without a position', () => {
  assert.equal(
    withLineAndColumn('Unexpected token x in JSON at position 0', 'x'),
    'Unexpected token x at line 1, column 1',
  );
  assert.equal(withLineAndColumn('odd', '{}'), 'odd');
});

test('a configuration file the user may not read is PERMISSION_DENIED with the sudo hint', {
  skip: process.getuid?.() === 0 ? false : 'needs root to run the CLI as another user',
}, async (t) => {
  const dir = makeTempDir(t);
  chmodSync(dir, 0o755);
  const config = join(dir, 'config.json');
  writeFileSync(config, '{}');
  chmodSync(config, 0o640);
  const r = await runCli(['sensor', 'list', '--config', config, '--data-dir', dir], { uid: 65534 });
  assert.equal(r.code, 77, r.stderr);
  assert.match(
    r.stderr,
    /^threatcol: PERMISSION_DENIED: cannot read .*config\.json \(EACCES: permission denied\).*sudo -u threatcol/m,
  );
  assert.doesNotMatch(r.stderr, /CONFIG_INVALID/);
});
