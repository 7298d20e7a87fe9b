// Black box: `threatcol serve` with the syslog input on, fed by util-linux `logger` over TCP and a node TLS client.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { connect } from 'node:tls';
import { runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { storedSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/syslog/${name}.log`, import.meta.url), 'utf8')
    .split('\n')
    .filter(Boolean);

async function serveWithSyslog(
  t: test.TestContext,
  dataDir: string,
  env: Record<string, string> = {},
): Promise<{ serve: ServeProcess; tls: number; tcp: number }> {
  const serve = await spawnServe(dataDir, [], {
    env: { THREATCOL_SYSLOG_LISTEN: '127.0.0.1:0', THREATCOL_SYSLOG_TCP_LISTEN: '127.0.0.1:0', ...env },
  });
  t.after(() => serve.stop());
  const line = serve.logs.find((l) => l.msg === 'syslog listening');
  assert.ok(line, 'serve logs where syslog listens');
  assert.ok(
    serve.logs.some((l) => l.level === 40 && String(l.msg).includes('plain TCP')),
    'plain TCP warns',
  );
  return { serve, tls: line.tlsPort as number, tcp: line.tcpPort as number };
}

async function addSensor(dataDir: string, name: string, ...args: string[]): Promise<void> {
  const added = await runCli([
    'sensor',
    'add',
    name,
    '--data-dir',
    dataDir,
    '--timezone',
    'Europe/Berlin',
    ...args,
  ]);
  assert.equal(added.code, 0, added.stderr);
}

/** The stored syslog records, once `count` of them are there (bounded wait: the store is polled). */
test('logger over plain TCP, octet counting and LF framing: each CEF threat stored once, traffic not stored', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensor(dataDir, 'cp-gw', '--syslog', '--format', 'cef', '--from', '127.0.0.1/32');
  const { tcp } = await serveWithSyslog(t, dataDir, { THREATCOL_STORE_STATS_INTERVAL_MS: '100' });
  const [checkPoint, escapes, sophos, traffic] = fixture('cef') as [string, string, string, string];
  // logger writes its own header; the CEF text is the message (logger reads it from stdin, one per line).
  const cef = (line: string) => line.slice(line.indexOf('CEF:'));
  const send = (framing: string[], lines: string[]) => {
    const r = spawnSync('logger', ['--tcp', ...framing, '-n', '127.0.0.1', '-P', String(tcp), '-t', 'cef'], {
      input: `${lines.join('\n')}\n`,
      timeout: 10_000,
    });
    assert.equal(r.status, 0, String(r.stderr));
  };
  send(['--octet-count'], [cef(checkPoint), cef(traffic), cef(escapes)]);
  send([], [cef(sophos)]);
  const records = await storedSyslog(dataDir, 3);
  assert.deepEqual(
    records.map((r) => [r.sensor, r.format, r.threat, r.src_ip, r.dst_port, r.criticality]).sort(),
    [
      ['cp-gw', 'cef', 'Virus detected', '10.1.1.7', 80, 2],
      ['cp-gw', 'cef', 'Web Server Enforcement Violation', '10.1.1.5', 80, 3],
      ['cp-gw', 'cef', 'detected a | in packet \\ here', '10.0.0.1', 443, 4],
    ],
  );
  for (const r of records) assert.match(String(r.original), /^<\d+>.*CEF:0\|/);
  // Last seen, last address and the record count work as for HTTPS senders.
  let shown: Record<string, unknown> = {};
  for (let i = 0; i < 50 && shown.records_received !== 3; i++) {
    shown = JSON.parse((await runCli(['sensor', 'show', 'cp-gw', '--data-dir', dataDir, '--json'])).stdout);
    if (shown.records_received !== 3) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(shown.records_received, 3);
  assert.equal(shown.last_address, '127.0.0.1');
  assert.equal(typeof shown.last_seen, 'string');
});

test('TLS with a pinned client certificate: octet-counted EVE alerts stored; no certificate from an unlisted address refused', async (t) => {
  const dataDir = makeTempDir(t);
  const certPath = join(dataDir, 'client.pem');
  const keyPath = join(dataDir, 'client.key');
  writeSelfSigned(certPath, keyPath, { cn: 'opnsense' });
  await addSensor(dataDir, 'opnsense', '--syslog', '--format', 'suricata', '--client-cert', certPath);
  const { serve, tls } = await serveWithSyslog(t, dataDir);
  const frames = fixture('suricata')
    .map((m) => `${Buffer.byteLength(m)} ${m}`)
    .join('');

  const sendTls = (options: { cert?: string; key?: string }) =>
    new Promise<'closed'>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: tls, rejectUnauthorized: false, ...options }, () => {
        socket.end(frames);
      });
      socket.on('error', reject);
      socket.on('close', () => resolve('closed'));
      socket.resume();
    });
  await sendTls({ cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') });
  const records = await storedSyslog(dataDir, 2);
  assert.deepEqual(records.map((r) => [r.sensor, r.format, r.threat, r.threat_id, r.dst_port]).sort(), [
    ['opnsense', 'suricata', 'ET USER_AGENTS Go HTTP Client User-Agent', '2024897', 80],
    ['opnsense', 'suricata', 'GPL ICMP_INFO PING *NIX', '2100366', 0],
  ]);

  // Without the certificate (and the sensor lists no address) the connection is closed unread and logged.
  await sendTls({}).catch(() => 'closed');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.ok(serve.logs.some((l) => String(l.msg).includes('matches no active sensor')));
  assert.equal((await storedSyslog(dataDir, 2)).length, 2);
});

test('revoking a syslog sensor closes its open connection', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensor(dataDir, 'fg', '--syslog', '--format', 'fortinet', '--from', '127.0.0.0/8');
  const { tcp } = await serveWithSyslog(t, dataDir);
  const { createConnection } = await import('node:net');
  const socket = createConnection({ host: '127.0.0.1', port: tcp });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => {});
  const [ips] = fixture('fortinet') as [string];
  socket.write(`${Buffer.byteLength(ips)} ${ips}`);
  assert.equal((await storedSyslog(dataDir, 1))[0]?.threat, 'Apache.Log4j.Error.Log.Remote.Code.Execution');
  const revoked = await runCli(['sensor', 'revoke', 'fg', '--data-dir', dataDir]);
  assert.equal(revoked.code, 0, revoked.stderr);
  await closed; // the test's timeout bounds it: the registry watch sees the change within a second
});

test('an over-long message is stored truncated and flagged; past the per-address cap of identified connections a newcomer is closed', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensor(dataDir, 'sophos', '--syslog', '--format', 'cef', '--from', '127.0.0.1');
  const { serve, tcp } = await serveWithSyslog(t, dataDir, {
    THREATCOL_SYSLOG_MAX_MESSAGE_BYTES: '480',
    THREATCOL_SERVER_MAX_CONNECTIONS_PER_ADDRESS: '1',
  });
  const { createConnection } = await import('node:net');
  const first = createConnection({ host: '127.0.0.1', port: tcp });
  first.on('error', () => {});
  await new Promise<void>((resolve) => first.once('connect', () => resolve()));
  // Its first message identifies it (plain TCP): from then on no newcomer can take its slot.
  first.write('<134>CEF:0|Sophos|XG|19.0|1|First one|Low|src=10.1.1.9 dst=198.51.100.4 dpt=22 proto=TCP\n');
  await storedSyslog(dataDir, 1);
  // The second connection from the same address is over the cap: closed without a byte read.
  const second = createConnection({ host: '127.0.0.1', port: tcp });
  second.on('error', () => {});
  await new Promise<void>((resolve) => second.once('close', () => resolve()));
  assert.ok(serve.logs.some((l) => String(l.msg).startsWith('too many connections on the sensors')));

  const long = `<134>CEF:0|Sophos|XG|19.0|2|Virus detected|Medium|src=10.1.1.7 dst=198.51.100.4 dpt=80 proto=TCP msg=${'x'.repeat(1000)}`;
  first.end(
    `${long}\n<134>CEF:0|Sophos|XG|19.0|3|Short one|Low|src=10.1.1.8 dst=198.51.100.4 dpt=443 proto=TCP\n`,
  );
  const records = await storedSyslog(dataDir, 3);
  const byThreat = new Map(records.map((r) => [r.threat, r]));
  assert.equal(byThreat.get('Virus detected')?.truncated, true);
  assert.equal(byThreat.get('Virus detected')?.original, long.slice(0, 480));
  assert.equal(byThreat.get('Short one')?.truncated, undefined);
});

test('sensor add --syslog stores the identity sensor show prints; an incomplete one is refused', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensor(
    dataDir,
    'pa',
    '--syslog',
    '--format',
    'panos',
    '--from',
    '192.0.2.0/24',
    '--from',
    '2001:db8::7',
  );
  const json = await runCli(['sensor', 'show', 'pa', '--data-dir', dataDir, '--json']);
  assert.deepEqual(JSON.parse(json.stdout).syslog, {
    format: 'panos',
    from: ['192.0.2.0/24', '2001:db8::7'],
    client_cert_sha256: [],
  });
  const human = await runCli(['sensor', 'show', 'pa', '--data-dir', dataDir]);
  assert.match(human.stdout, /^Syslog: +panos, from 192\.0\.2\.0\/24 2001:db8::7$/m);
  const set = async (...args: string[]) => {
    const r = await runCli(['sensor', 'set', 'pa', '--data-dir', dataDir, ...args]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse((await runCli(['sensor', 'show', 'pa', '--data-dir', dataDir, '--json'])).stdout)
      .syslog;
  };
  assert.deepEqual(await set('--syslog', '--format', 'cef', '--from', '10.0.0.0/8'), {
    format: 'cef',
    from: ['10.0.0.0/8'],
    client_cert_sha256: [],
  });
  assert.equal(await set('--no-syslog'), undefined);
  assert.equal(
    (await runCli(['sensor', 'set', 'pa', '--data-dir', dataDir, '--no-syslog', '--format', 'cef'])).code,
    64,
  );
  for (const args of [
    ['--syslog', '--from', '10.0.0.0/8'],
    ['--syslog', '--format', 'cef'],
    ['--format', 'cef'],
    ['--syslog', '--format', 'cef', '--from', '10.0.0.300/8'],
  ]) {
    const r = await runCli(['sensor', 'add', 'x', '--data-dir', dataDir, ...args]);
    assert.equal(r.code, 64, `${args.join(' ')}: ${r.stderr}`);
  }
});
