// Black box: a configuration error caused by a THREATCOL_* variable names the variable and its value, and does
// not blame the configuration file the variable overrode.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('check: a bad THREATCOL_SYSLOG_LISTEN is named with its value, the valid file is not blamed', async (t) => {
  const dir = makeTempDir(t);
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ dataDir: join(dir, 'data') }));
  const r = await runCli(['check', '--no-daemon', '--config', config], {
    env: { THREATCOL_SYSLOG_LISTEN: ':::6514' },
  });
  assert.equal(r.code, 78, r.stderr);
  const line = r.stdout.split('\n').find((l) => /^FAIL\s+config/.test(l)) ?? '';
  assert.match(line, /syslog\.listen \(from THREATCOL_SYSLOG_LISTEN=":::6514"\): must be host:port/);
  assert.doesNotMatch(line, /config\.json/, 'the file is valid: not blamed');
});

test('a variable and a file key both wrong: each named by its source; a secret is not echoed', async (t) => {
  const dir = makeTempDir(t);
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ dataDir: join(dir, 'data'), server: { port: 'x' } }));
  const r = await runCli(['sensor', 'list', '--config', config], {
    env: { THREATCOL_SERVER_MAX_BODY_BYTES: 'lots', THREATCOL_ADMIN_TOKEN: 'x' },
  });
  assert.equal(r.code, 78, r.stderr);
  assert.match(r.stderr, new RegExp(`the configuration is invalid \\(${config.replaceAll('/', '\\/')}\\)`));
  assert.match(r.stderr, /server\.port: must be integer/);
  assert.match(
    r.stderr,
    /server\.maxBodyBytes \(from THREATCOL_SERVER_MAX_BODY_BYTES="lots"\): must be integer/,
  );
  assert.match(
    r.stderr,
    /admin\.token \(from THREATCOL_ADMIN_TOKEN\): must NOT have fewer than 16 characters/,
  );
  assert.doesNotMatch(r.stderr, /THREATCOL_ADMIN_TOKEN=/);
});
