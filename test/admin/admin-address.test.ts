// admin.listen parsing and the loopback rule (DESIGN 11), through the config loader as serve uses it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { adminUrl, parseAdminListen } from '../../src/config/admin-address.js';
import { loadConfig } from '../../src/config/load-config.js';
import { ThreatcolError } from '../../src/errors.js';

const load = (env: Record<string, string>) =>
  loadConfig({ env, defaultConfigPath: '/nonexistent/threatcol.json', overrides: { dataDir: '/tmp/x' } });

test('admin.listen: host:port forms, loopback or not, "" for off, bad forms refused', () => {
  assert.deepEqual(parseAdminListen('127.0.0.1:9441'), { host: '127.0.0.1', port: 9441, loopback: true });
  assert.deepEqual(parseAdminListen('[::1]:0'), { host: '::1', port: 0, loopback: true });
  assert.deepEqual(parseAdminListen('localhost:9441'), { host: 'localhost', port: 9441, loopback: true });
  assert.deepEqual(parseAdminListen('127.8.0.1:1'), { host: '127.8.0.1', port: 1, loopback: true });
  assert.deepEqual(parseAdminListen('0.0.0.0:9441'), { host: '0.0.0.0', port: 9441, loopback: false });
  assert.deepEqual(parseAdminListen('[::]:9441'), { host: '::', port: 9441, loopback: false });
  assert.deepEqual(parseAdminListen('10.1.2.3:9441'), { host: '10.1.2.3', port: 9441, loopback: false });
  assert.equal(parseAdminListen(''), null);
  for (const bad of [
    '9441',
    'localhost',
    'example.com:9441',
    '127.0.0.1:65536',
    '::1:9441',
    '[10.0.0.1]:80',
    '127.0.0.1:',
  ]) {
    assert.throws(() => parseAdminListen(bad), Error, bad);
  }
  assert.equal(adminUrl('::1', 9441), 'http://[::1]:9441');
  assert.equal(adminUrl('0.0.0.0', 9441), 'http://127.0.0.1:9441');
});

test('config: a non-loopback admin.listen needs admin.token; default is 127.0.0.1:9441 without a token', () => {
  const defaults = load({}).config.admin;
  assert.deepEqual(defaults, { listen: '127.0.0.1:9441', token: null });
  assert.throws(
    () => load({ THREATCOL_ADMIN_LISTEN: '0.0.0.0:9441' }),
    (e: unknown) =>
      e instanceof ThreatcolError &&
      e.code === 'CONFIG_INVALID' &&
      /admin\.listen \(from THREATCOL_ADMIN_LISTEN="0\.0\.0\.0:9441"\): 0\.0\.0\.0:9441 is not a loopback address/.test(
        e.message,
      ),
  );
  const guarded = load({
    THREATCOL_ADMIN_LISTEN: '0.0.0.0:9441',
    THREATCOL_ADMIN_TOKEN: 'sixteen-chars-or-more',
  });
  assert.equal(guarded.config.admin.listen, '0.0.0.0:9441');
  assert.throws(() => load({ THREATCOL_ADMIN_TOKEN: 'short' }), /admin\.token/);
  assert.equal(load({ THREATCOL_ADMIN_LISTEN: '' }).config.admin.listen, '');
});
