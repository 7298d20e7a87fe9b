// Black box: `sensor show NAME --syslog` prints sender configuration that works as printed: Debian's rsyslog
// runs its omfwd snippet (pinning the collector by fingerprint, presenting the pinned client certificate) and
// every threat it forwards is stored.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import test from 'node:test';
import { guard } from '../helpers/children.js';
import { runCli, spawnServe } from '../helpers/cli.js';
import { freeLoopbackPort } from '../helpers/free-port.js';
import { addRelpSensor } from '../helpers/relp-sensor.js';
import { storedSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const cefLines = readFileSync(new URL('../fixtures/syslog/cef.log', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => line.slice(line.indexOf('CEF:')));

interface Shown {
  host: string;
  port: number;
  transport: string;
  sha256: string;
  setup: { panos: string | null; fortigate: string | null; rsyslog: string; syslog_ng: string };
}

/** Runs rsyslogd with `conf` until the test ends; resolves once `ready` holds. */
async function runRsyslog(
  t: test.TestContext,
  dir: string,
  conf: string,
  ready: () => Promise<boolean>,
): Promise<() => string> {
  const path = join(dir, 'rsyslog.conf');
  writeFileSync(path, conf);
  let log = '';
  const rsyslog: ChildProcess = guard(
    spawn('rsyslogd', ['-n', '-f', path, '-i', join(dir, 'rsyslogd.pid')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  rsyslog.stdout?.on('data', (d) => (log += d));
  rsyslog.stderr?.on('data', (d) => (log += d));
  t.after(() => rsyslog.kill('SIGTERM'));
  await until(
    async () => {
      if (rsyslog.exitCode !== null) throw new Error(`rsyslogd exited: ${log}`);
      return ready();
    },
    15_000,
    'rsyslogd started',
  );
  return () => log;
}

test("rsyslog runs the printed omfwd snippet: the collector pinned by fingerprint, the sensor's client certificate presented, threats stored", async (t) => {
  const dir = makeTempDir(t);
  const { certPath, keyPath } = await addRelpSensor(dir, 'relay');
  const serve = await spawnServe(dir, [], { env: { THREATCOL_SYSLOG_LISTEN: '127.0.0.1:0' } });
  t.after(() => serve.stop());
  const tlsPort = serve.logs.find((l) => l.msg === 'syslog listening')?.tlsPort as number;

  const env = { THREATCOL_SYSLOG_LISTEN: `127.0.0.1:${tlsPort}` };
  const shown = await runCli(['sensor', 'show', 'relay', '--data-dir', dir, '--syslog', '--json'], { env });
  assert.equal(shown.code, 0, shown.stderr);
  const setup = JSON.parse(shown.stdout) as Shown;
  const served = new X509Certificate(readFileSync(join(dir, 'tls', 'cert.pem'))).fingerprint256;
  assert.deepEqual(
    [setup.host, setup.port, setup.transport, setup.sha256],
    ['127.0.0.1', tlsPort, 'tls', served],
  );
  assert.equal(setup.setup.panos, null, 'PAN-OS sends its own format, not CEF');
  assert.match(
    setup.setup.fortigate ?? '',
    /set mode reliable\n {4}set port \d+\n {4}set enc-algorithm high/,
  );
  assert.match(setup.setup.fortigate ?? '', /set format cef/);
  assert.match(setup.setup.syslog_ng, /syslog\("127\.0\.0\.1" port\(\d+\) transport\("tls"\)/);

  // The snippet as printed, only the client certificate's paths pointed at this test's files.
  const snippet = setup.setup.rsyslog
    .replace('/etc/rsyslog.d/threatcol-client.pem', certPath)
    .replace('/etc/rsyslog.d/threatcol-client.key', keyPath);
  assert.notEqual(snippet, setup.setup.rsyslog, 'the snippet names the client certificate');
  const inPort = await freeLoopbackPort();
  const conf = join(dir, 'rsyslog.conf');
  writeFileSync(
    conf,
    [
      `global(workDirectory="${dir}")`,
      'module(load="imtcp")',
      `input(type="imtcp" address="127.0.0.1" port="${inPort}" ruleset="fwd")`,
      'ruleset(name="fwd") {',
      snippet,
      '}',
      '',
    ].join('\n'),
  );
  let log = '';
  const rsyslog: ChildProcess = guard(
    spawn('rsyslogd', ['-n', '-f', conf, '-i', join(dir, 'rsyslogd.pid')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  rsyslog.stdout?.on('data', (d) => (log += d));
  rsyslog.stderr?.on('data', (d) => (log += d));
  t.after(() => rsyslog.kill('SIGTERM'));
  await until(
    async () => {
      if (rsyslog.exitCode !== null) throw new Error(`rsyslogd exited: ${log}`);
      return new Promise<boolean>((resolve) => {
        const probe = connect({ host: '127.0.0.1', port: inPort }, () => {
          probe.destroy();
          resolve(true);
        });
        probe.on('error', () => resolve(false));
      });
    },
    15_000,
    'rsyslogd listening',
  );
  const [checkPoint, escapes, sophos] = cefLines as [string, string, string];
  const sent = spawnSync(
    'logger',
    ['--tcp', '--octet-count', '-n', '127.0.0.1', '-P', String(inPort), '-t', 'ids'],
    {
      input: `${[checkPoint, escapes, sophos].join('\n')}\n`,
      timeout: 10_000,
    },
  );
  assert.equal(sent.status, 0, String(sent.stderr));

  const records = await storedSyslog(dir, 3, `three records forwarded by rsyslog (${log})`);
  assert.deepEqual(records.map((r) => [r.sensor, r.threat]).sort(), [
    ['relay', 'Virus detected'],
    ['relay', 'Web Server Enforcement Violation'],
    ['relay', 'detected a | in packet \\ here'],
  ]);
});

test('sensor show --syslog: PAN-OS and FortiGate text per format; plain TCP when that is all that listens; a sensor without syslog is refused', async (t) => {
  const dir = makeTempDir(t);
  for (const [name, format] of [
    ['pa', 'panos'],
    ['fg', 'fortinet'],
  ] as const) {
    const added = await runCli([
      'sensor',
      'add',
      name,
      '--data-dir',
      dir,
      '--syslog',
      '--format',
      format,
      '--from',
      '192.0.2.7/32',
    ]);
    assert.equal(added.code, 0, added.stderr);
  }
  const tcpOnly = { env: { THREATCOL_SYSLOG_TCP_LISTEN: '0.0.0.0:514' } };
  const pa = await runCli(
    ['sensor', 'show', 'pa', '--data-dir', dir, '--syslog', '--collector', 'collector.example'],
    tcpOnly,
  );
  assert.equal(pa.code, 0, pa.stderr);
  assert.match(pa.stdout, /Syslog Server collector\.example, Transport TCP, Port 514, Format IETF/);
  assert.match(pa.stdout, /Log Type threat/);
  assert.match(pa.stdout, /not created yet/);
  assert.doesNotMatch(pa.stdout, /FortiGate/);
  const fg = await runCli(['sensor', 'show', 'fg', '--data-dir', dir, '--syslog', '--json'], {
    env: { THREATCOL_SYSLOG_LISTEN: '192.0.2.10:6514' },
  });
  const json = JSON.parse(fg.stdout) as Shown;
  assert.equal(json.setup.panos, null);
  assert.match(json.setup.fortigate ?? '', /set server "192\.0\.2\.10"[\s\S]*set format default\nend$/);
  assert.match(json.setup.rsyslog, /StreamDriverPermittedPeers="SHA256:<collector SHA-256>"/);

  const plain = await runCli(['sensor', 'add', 'web', '--data-dir', dir]);
  assert.equal(plain.code, 0, plain.stderr);
  const refused = await runCli(['sensor', 'show', 'web', '--data-dir', dir, '--syslog']);
  assert.equal(refused.code, 65);
  assert.match(refused.stderr, /INVALID_ARGUMENT.*does not send syslog/);
});

test('Suricata through rsyslog: imfile reads eve.json, the printed omfwd snippet forwards it; alerts stored, other events not', async (t) => {
  const dir = makeTempDir(t);
  const added = await runCli([
    'sensor',
    'add',
    'opnsense',
    '--data-dir',
    dir,
    '--syslog',
    '--format',
    'suricata',
    '--from',
    '127.0.0.1/32',
  ]);
  assert.equal(added.code, 0, added.stderr);
  const serve = await spawnServe(dir, [], { env: { THREATCOL_SYSLOG_LISTEN: '127.0.0.1:0' } });
  t.after(() => serve.stop());
  const tlsPort = serve.logs.find((l) => l.msg === 'syslog listening')?.tlsPort as number;
  const shown = await runCli(['sensor', 'show', 'opnsense', '--data-dir', dir, '--syslog', '--json'], {
    env: { THREATCOL_SYSLOG_LISTEN: `127.0.0.1:${tlsPort}` },
  });
  assert.equal(shown.code, 0, shown.stderr);
  const snippet = (JSON.parse(shown.stdout) as Shown).setup.rsyslog;
  assert.doesNotMatch(snippet, /CertFile/, 'a sensor known by address presents no certificate');

  // EVE lines as Suricata writes them: two alerts and a flow event, the JSON after the syslog header.
  const eve = readFileSync(new URL('../fixtures/syslog/suricata.log', import.meta.url), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(line.indexOf('{')));
  const alerts = eve.filter((l) => l.includes('"event_type":"alert"'));
  assert.ok(alerts.length >= 2 && alerts.length < eve.length, 'the fixture has alerts and other events');
  const evePath = join(dir, 'eve.json');
  writeFileSync(evePath, `${eve.join('\n')}\n`);
  const log = await runRsyslog(
    t,
    dir,
    [
      `global(workDirectory="${dir}")`,
      'module(load="imfile")',
      `input(type="imfile" File="${evePath}" Tag="suricata" ruleset="fwd")`,
      'ruleset(name="fwd") {',
      snippet,
      '}',
      '',
    ].join('\n'),
    async () => true,
  );
  const records = await storedSyslog(
    dir,
    alerts.length,
    `${alerts.length} records forwarded by rsyslog (${log()})`,
  );
  assert.equal(records.length, alerts.length);
  assert.ok(records.every((r) => r.sensor === 'opnsense' && r.format === 'suricata'));
  assert.deepEqual(
    records.map((r) => r.threat).sort(),
    alerts.map((a) => (JSON.parse(a) as { alert: { signature: string } }).alert.signature).sort(),
  );
});
