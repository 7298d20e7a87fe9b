// Black box: what `sensor add/set/show --syslog` and `check` tell a new user about a syslog sensor: the identity
// stored (format, networks, pinned certificate) with a pointer to the sender setup, and a warning while no
// syslog listener is configured to receive from it.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { runCli } from '../helpers/cli.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const NO_LISTENER =
  /^threatcol: warning: no syslog listener is configured \(syslog\.listen, syslog\.tcpListen and syslog\.relpListen are all off\): sensor fw cannot send until one is set, e\.g\. "syslog": \{"listen": "\[::\]:6514"\}/m;

test('no syslog listener: sensor add/set/show --syslog warn (exit 0) and check WARNs; with one, none warns', async (t) => {
  const dir = makeTempDir(t);
  const data = ['--data-dir', dir];
  const added = await runCli([
    'sensor',
    'add',
    'fw',
    ...data,
    '--syslog',
    '--format',
    'panos',
    '--from',
    '192.0.2.0/24',
  ]);
  assert.equal(added.code, 0, added.stderr);
  assert.match(added.stderr, NO_LISTENER);
  // The identity stored and where the sender's setup is, beside the HTTPS key.
  assert.match(added.stdout, /^Syslog: format panos; from 192\.0\.2\.0\/24\.$/m);
  assert.match(
    added.stdout,
    /^Sender setup \(address, port, certificate; PAN-OS, FortiGate, rsyslog, syslog-ng\): threatcol sensor show fw --syslog$/m,
  );
  assert.match(added.stdout, /^ {2}Key: /m);

  const shown = await runCli(['sensor', 'show', 'fw', ...data, '--syslog']);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stderr, NO_LISTENER);
  assert.match(shown.stdout, /^Syslog sender setup for sensor fw/);

  const certPath = join(dir, 'fw.pem');
  writeSelfSigned(certPath, join(dir, 'fw.key'), { cn: 'fw' });
  const sha = new X509Certificate(readFileSync(certPath)).fingerprint256.replaceAll(':', '').toLowerCase();
  const set = await runCli([
    'sensor',
    'set',
    'fw',
    ...data,
    '--syslog',
    '--format',
    'cef',
    '--from',
    '198.51.100.7/32',
    '--from',
    '2001:db8::/64',
    '--client-cert',
    certPath,
  ]);
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stderr, NO_LISTENER);
  // Everything that was set, not only the format.
  assert.match(
    set.stdout,
    /^Syslog: format cef; from 198\.51\.100\.7\/32, 2001:db8::\/64; by its client certificate\.$/m,
  );
  assert.match(set.stdout, new RegExp(`^ {2}pinned client certificate SHA-256 ${sha}$`, 'm'));
  assert.match(set.stdout, /threatcol sensor show fw --syslog$/m);

  const checked = await runCli(['check', '--no-daemon', ...data]);
  assert.match(checked.stdout, /^WARN\s+syslog\s+no syslog listener is configured .*sensor fw cannot send/m);

  // A description alone is no syslog change: no warning.
  const described = await runCli(['sensor', 'set', 'fw', ...data, '--description', 'edge']);
  assert.equal(described.code, 0, described.stderr);
  assert.equal(described.stderr, '');

  // With a listener configured nothing warns, and check names it.
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ dataDir: dir, syslog: { listen: '[::]:6514' } }));
  const quiet = await runCli(['sensor', 'show', 'fw', '--config', config, '--syslog']);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.equal(quiet.stderr, '');
  const ok = await runCli(['check', '--no-daemon', '--config', config]);
  assert.match(ok.stdout, /^OK\s+syslog\s+listening on TLS \[::\]:6514; 1 sensor sends syslog$/m);
});

test('check: no syslog line at all when no sensor sends syslog and nothing listens', async (t) => {
  const dir = makeTempDir(t);
  assert.equal((await runCli(['sensor', 'add', 'web', '--data-dir', dir])).code, 0);
  const checked = await runCli(['check', '--no-daemon', '--data-dir', dir]);
  assert.match(checked.stdout, /^OK\s+registry/m);
  assert.doesNotMatch(checked.stdout, /syslog/);
});
