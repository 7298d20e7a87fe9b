// `threatcol check` through the real binary: all OK against a healthy installation with a running daemon,
// and a FAIL line plus a non-zero exit for each kind of problem.
import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { shippedDataStatus } from '../helpers/shipped-data.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { makeCert, runCliAs, writeCert } from './harness.js';

interface Report {
  ok: boolean;
  checks: { name: string; status: 'ok' | 'warn' | 'fail'; message: string }[];
}

const isRoot = process.getuid?.() === 0;

const SERVICE_UID = 65534;

async function checkJson(args: string[], options: { uid?: number } = {}) {
  const r =
    options.uid === undefined
      ? await runCli(['check', '--json', ...args])
      : await runCliAs(['check', '--json', ...args], options.uid);
  const report = JSON.parse(r.stdout) as Report;
  const status = Object.fromEntries(report.checks.map((c) => [c.name, c.status]));
  return { ...r, report, status };
}

test('a healthy installation with a running daemon passes every check, in text and JSON', async (t) => {
  const dataDir = makeTempDir(t);
  if (isRoot) chownSync(dataDir, SERVICE_UID, SERVICE_UID);
  await addSensorCli(dataDir, 'fw1');
  const serve = await spawnServe(dataDir);
  t.after(() => serve.stop());
  const fingerprint = serve.logs.find((l) => l.msg === 'threatcol is listening')?.sha256 as string;

  const admin = (serve.adminUrl as string).replace('http://', '');
  const args = [
    '--data-dir',
    dataDir,
    '--host',
    '127.0.0.1',
    '--port',
    String(serve.port),
    '--admin-listen',
    admin,
  ];
  const text = await runCli(['check', ...args]);
  assert.equal(text.code, 0, text.stdout + text.stderr);
  const lines = text.stdout.trim().split('\n');
  assert.deepEqual(
    lines.map((l) => l.slice(0, 4).trim()),
    lines.map(() => 'OK'),
    text.stdout,
  );
  assert.match(text.stdout, /^OK +daemon +answering on https:\/\/127\.0\.0\.1:\d+\/ \(TLS\)/m);
  assert.ok(text.stdout.includes(fingerprint), 'the served certificate is named');
  assert.match(text.stdout, new RegExp(`^OK +ready +ready \\(http://${admin}/readyz\\)$`, 'm'));
  assert.equal(text.stderr, '');

  const json = await checkJson(args);
  assert.equal(json.code, 0);
  assert.equal(json.report.ok, true);
  assert.deepEqual(json.status, {
    config: 'ok',
    runtime: 'ok',
    tls: 'ok',
    'certificate expiry': 'ok',
    'data directory': 'ok',
    owner: 'ok',
    modes: 'ok',
    'free space': 'ok',
    store: 'ok',
    registry: 'ok',
    'enrich country': shippedDataStatus('country'),
    'enrich asn': shippedDataStatus('asn'),
    port: 'ok',
    daemon: 'ok',
    ready: 'ok',
  });
});

test('after a change of the port, a running daemon is told to restart, not to start', async (t) => {
  const dataDir = makeTempDir(t);
  const serve = await spawnServe(dataDir);
  t.after(() => serve.stop());
  // The port the file now names, free and not the daemon's: as after editing server.port.
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const moved = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  const admin = (serve.adminUrl as string).replace('http://', '');
  const args = [
    '--data-dir',
    dataDir,
    '--host',
    '127.0.0.1',
    '--port',
    String(moved),
    '--admin-listen',
    admin,
  ];
  const { report, status } = await checkJson(args);
  assert.equal(status.ready, 'ok');
  assert.equal(status.daemon, 'warn');
  const daemon = report.checks.find((c) => c.name === 'daemon')?.message ?? '';
  assert.match(
    daemon,
    new RegExp(`not on 127\\.0\\.0\\.1 port ${moved} .*restart to apply: systemctl restart threatcol`),
  );
  assert.doesNotMatch(daemon, /start it/);
});

test('a daemon that answers but is not ready (store below its free-space floor) is a FAIL with the reason', async (t) => {
  const dataDir = makeTempDir(t);
  const env = { THREATCOL_STORE_MIN_FREE_BYTES: String(2 ** 52) };
  const serve = await spawnServe(dataDir, [], { env });
  t.after(() => serve.stop());
  const admin = (serve.adminUrl as string).replace('http://', '');
  const r = await runCli(
    [
      'check',
      '--json',
      '--data-dir',
      dataDir,
      '--host',
      '127.0.0.1',
      '--port',
      String(serve.port),
      '--admin-listen',
      admin,
    ],
    { env },
  );
  assert.equal(r.code, 78);
  const ready = (JSON.parse(r.stdout) as Report).checks.find((c) => c.name === 'ready');
  assert.equal(ready?.status, 'fail');
  assert.match(
    ready?.message ?? '',
    /^not ready \(http:\/\/127\.0\.0\.1:\d+\/readyz, HTTP 503\): .*store\.minFreeBytes/,
  );
});

test('an invalid configuration is a FAIL with exit 78 and CHECK_FAILED', async (t) => {
  const dir = makeTempDir(t);
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ server: { prot: 443 } }));
  const r = await runCli(['check', '--config', config, '--data-dir', dir]);
  assert.equal(r.code, 78);
  assert.match(r.stdout, /^FAIL +config +.*server\.prot: unknown key/m);
  assert.match(r.stdout, /a running daemon keeps the configuration it has .*a restart would fail/);
  assert.match(r.stderr, /^threatcol: CHECK_FAILED: 1 check failed: config$/m);
});

test('TLS material: a key that does not match, and an expired certificate, are FAILs', async (t) => {
  const dir = makeTempDir(t);
  const [a, b, expired] = await Promise.all([makeCert(365), makeCert(365), makeCert(-1)]);
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  writeCert({ ...a, key: b.key }, certPath, keyPath);
  const args = ['--data-dir', dir, '--no-daemon', '--host', '127.0.0.1', '--port', '0'];
  const env = { THREATCOL_TLS_CERT: certPath, THREATCOL_TLS_KEY: keyPath };
  const mismatch = await runCli(['check', '--json', ...args], { env });
  assert.equal(mismatch.code, 78);
  const tls = (JSON.parse(mismatch.stdout) as Report).checks.find((c) => c.name === 'tls');
  assert.equal(tls?.status, 'fail');
  assert.match(String(tls?.message), /key does not match the certificate/);

  writeCert(expired, certPath, keyPath);
  const old = await runCli(['check', '--json', ...args], { env });
  assert.equal(old.code, 78);
  const status = Object.fromEntries((JSON.parse(old.stdout) as Report).checks.map((c) => [c.name, c.status]));
  assert.equal(status.tls, 'ok');
  assert.equal(status['certificate expiry'], 'fail');

  const soon = await makeCert(7);
  writeCert(soon, certPath, keyPath);
  const warn = await runCli(['check', '--json', ...args], { env });
  assert.equal(warn.code, 0, 'a warning alone does not fail');
  assert.match(warn.stdout, /"status": "warn",\s+"message": "expires on/);
});

test('data directory: a registry readable by others and (as root) a file not owned by the service user are FAILs', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensorCli(dataDir, 'fw1');
  chmodSync(join(dataDir, 'sensors.json'), 0o644);
  const args = ['--data-dir', dataDir, '--no-daemon', '--host', '127.0.0.1', '--port', '0'];
  const loose = await checkJson(args);
  assert.equal(loose.code, 78);
  assert.equal(loose.status.modes, 'fail');
  assert.match(loose.report.checks.find((c) => c.name === 'modes')?.message ?? '', /sensors\.json \(0644\)/);

  if (!isRoot) return;
  chmodSync(join(dataDir, 'sensors.json'), 0o600);
  chownSync(dataDir, SERVICE_UID, SERVICE_UID);
  chownSync(join(dataDir, 'sensors.json'), SERVICE_UID, SERVICE_UID);
  writeFileSync(join(dataDir, 'sensor-stats.json'), '{}'); // left behind root-owned, e.g. by a manual run
  const foreign = await checkJson(args);
  assert.equal(foreign.code, 78);
  assert.equal(foreign.status.modes, 'ok');
  assert.equal(foreign.status.owner, 'fail');
  assert.match(foreign.report.checks.find((c) => c.name === 'owner')?.message ?? '', /sensor-stats\.json/);
});

test('port taken by another program, and no daemon answering, are FAILs', async (t) => {
  const dataDir = makeTempDir(t);
  // Something that is not threatcol: accepts TCP and hangs up.
  const other = createServer((socket) => socket.destroy());
  other.listen({ host: '127.0.0.1', port: 0 });
  await once(other, 'listening');
  t.after(() => other.close());
  const { port } = other.address() as { port: number };
  const taken = await checkJson(['--data-dir', dataDir, '--host', '127.0.0.1', '--port', String(port)]);
  assert.equal(taken.code, 78);
  assert.equal(taken.status.port, 'fail');
  assert.equal(taken.status.daemon, 'fail');
  assert.match(
    taken.report.checks.find((c) => c.name === 'port')?.message ?? '',
    /in use by another program/,
  );
  other.close();
  await once(other, 'close');

  const nothing = await checkJson(['--data-dir', dataDir, '--host', '127.0.0.1', '--port', String(port)]);
  assert.equal(nothing.status.port, 'ok');
  assert.equal(nothing.status.daemon, 'fail');
  assert.match(nothing.report.checks.find((c) => c.name === 'daemon')?.message ?? '', /connection refused/);
});

const unprivilegedStart = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8'));
  } catch {
    return 0;
  }
})();

test('an unprivileged user who may not bind the port gets a FAIL naming the fix', {
  skip:
    !isRoot || unprivilegedStart <= 1
      ? 'needs root (to run the check as another user) and ports below net.ipv4.ip_unprivileged_port_start'
      : false,
}, async (t) => {
  const dataDir = join(makeTempDir(t), 'state');
  mkdirSync(dataDir, { mode: 0o700 });
  chownSync(dataDir, SERVICE_UID, SERVICE_UID);
  chmodSync(join(dataDir, '..'), 0o755);
  const r = await checkJson(['--data-dir', dataDir, '--no-daemon', '--host', '127.0.0.1', '--port', '1'], {
    uid: SERVICE_UID,
  });
  assert.equal(r.code, 78, r.stderr);
  assert.equal(r.status.port, 'fail');
  assert.equal(r.status.owner, 'ok');
  assert.match(r.report.checks.find((c) => c.name === 'port')?.message ?? '', /CAP_NET_BIND_SERVICE/);
});
