// Black box: the RELP listener of `threatcol serve`, spoken to by a bare RELP client (what each answer means and
// when it comes) and by Debian's rsyslog `omrelp` over TLS with a client certificate (rsyslog-relp).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { freeLoopbackPort } from '../helpers/free-port.js';
import { parseExposition } from '../helpers/prometheus.js';
import { connectRelp } from '../helpers/relp-client.js';
import { addRelpSensor, LIBRELP_OFFERS as OFFERS, sendRelpSamples } from '../helpers/relp-sensor.js';
import { spawnRsyslogd } from '../helpers/rsyslog.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { readStoredSyslog, storedSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until, untilDrained } from '../helpers/until.js';

const cef = (name: string) =>
  `<134>Nov 26 12:00:05 gw ids: CEF:0|Check Point|VPN-1|R81|IPS|${name}|High|src=10.1.1.5 dst=203.0.113.9 spt=51000 dpt=80 proto=TCP`;
const traffic =
  '<134>Nov 26 12:00:05 gw ids: CEF:0|Check Point|VPN-1|R81|Log|Accept|Unknown|src=10.1.1.5 act=Accept';

async function serveRelp(
  t: test.TestContext,
  dataDir: string,
  listen = '127.0.0.1:0',
  env: Record<string, string> = {},
): Promise<{ serve: ServeProcess; relp: number }> {
  const serve = await spawnServe(dataDir, [], { env: { THREATCOL_SYSLOG_RELP_LISTEN: listen, ...env } });
  t.after(() => serve.stop('SIGKILL'));
  const relp = serve.logs.find((l) => l.msg === 'syslog listening')?.relpPort;
  assert.equal(typeof relp, 'number', 'serve logs the RELP port');
  return { serve, relp: relp as number };
}

test('RELP: open is answered with the offers, each syslog 200 OK only once durable (kill -9 right after loses none), close ends the session', async (t) => {
  const dataDir = makeTempDir(t);
  const relay = await addRelpSensor(dataDir, 'relay');
  const { serve, relp } = await serveRelp(t, dataDir);
  const client = await connectRelp(relp, relay);
  client.send(1, 'open', OFFERS);
  const opened = await client.answer(1);
  assert.match(opened, /^200 OK\n/);
  assert.match(opened, /^commands=syslog$/m);
  assert.match(opened, /^relp_version=0$/m);

  client.send(2, 'syslog', cef('Acked one'));
  client.send(3, 'syslog', traffic);
  client.send(4, 'syslog', cef('Acked two'));
  assert.deepEqual(
    [await client.answer(2), await client.answer(3), await client.answer(4)],
    ['200 OK', '200 OK', '200 OK'],
  );
  assert.deepEqual(
    client.answers.map((a) => a.txnr),
    [1, 2, 3, 4],
    'answers come in the order of the frames',
  );
  // Acknowledged means durable: the process dies the hardest way right after the answers, the records are there.
  await serve.stop('SIGKILL');
  const records = await storedSyslog(dataDir, 2);
  assert.deepEqual(records.map((r) => [r.sensor, r.threat]).sort(), [
    ['relay', 'Acked one'],
    ['relay', 'Acked two'],
  ]);

  const again = await serveRelp(t, dataDir);
  const second = await connectRelp(again.relp, relay);
  second.send(1, 'open', OFFERS);
  assert.match(await second.answer(1), /^200 OK/);
  second.send(2, 'close');
  assert.equal(await second.answer(2), '');
  await second.closed;
});

test('RELP: a sender that ends its side after its last frame still gets the answer to it, then the end', async (t) => {
  const dataDir = makeTempDir(t);
  const relay = await addRelpSensor(dataDir, 'relay');
  const { relp } = await serveRelp(t, dataDir);
  const client = await connectRelp(relp, relay, { halfOpen: true });
  t.after(() => client.socket.destroy());
  client.send(1, 'open', OFFERS);
  assert.match(await client.answer(1), /^200 OK/);
  client.send(2, 'syslog', cef('Half-closed'));
  client.socket.end();
  // Without it the sender would send the message again on its next session: a duplicate.
  assert.equal(await client.answer(2), '200 OK');
  await client.closed; // the collector ends its side once answered (the test's timeout bounds it)
  assert.deepEqual(
    client.answers.map((a) => [a.txnr, a.command]),
    [
      [1, 'rsp'],
      [2, 'rsp'],
    ],
  );
  assert.deepEqual(
    (await storedSyslog(dataDir, 1)).map((r) => r.threat),
    ['Half-closed'],
  );
});

test('RELP: on SIGTERM each session gets its answers, then serverclose (txnr 0), then the end; what was answered is stored, nothing else', async (t) => {
  const dataDir = makeTempDir(t);
  const relay = await addRelpSensor(dataDir, 'relay');
  const { serve, relp } = await serveRelp(t, dataDir);
  const idle = await connectRelp(relp, relay);
  const busy = await connectRelp(relp, relay);
  for (const client of [idle, busy]) {
    client.send(1, 'open', OFFERS);
    assert.match(await client.answer(1), /^200 OK/);
  }
  busy.send(2, 'syslog', cef('Before 2'));
  assert.equal(await busy.answer(2), '200 OK');
  // Frames still arriving when the signal comes: each is answered before the hint, or not read at all.
  for (let txnr = 3; txnr <= 60; txnr++) busy.send(txnr, 'syslog', cef(`During ${txnr}`));
  serve.child.kill('SIGTERM');
  await Promise.all([idle.closed, busy.closed]);
  assert.deepEqual(await serve.exited, { code: 0, signal: null });

  const hint = { txnr: 0, command: 'serverclose', data: '' };
  const frames = (client: typeof busy) =>
    client.answers.map((a) => ({ txnr: a.txnr, command: a.command, data: a.data.toString('utf8') }));
  assert.deepEqual(frames(idle).slice(1), [hint], 'the idle session: serverclose, then the end');
  const busyFrames = frames(busy);
  assert.deepEqual(busyFrames.at(-1), hint, 'serverclose is the last frame');
  const answered = busyFrames.slice(1, -1);
  assert.deepEqual(
    answered,
    answered.map((_, i) => ({ txnr: i + 2, command: 'rsp', data: '200 OK' })),
    'answers in order, every one 200 OK, before the hint',
  );
  t.diagnostic(`${answered.length - 1} of the 58 frames sent with the signal were read and answered`);
  const names = answered.map((a) => (a.txnr === 2 ? 'Before 2' : `During ${a.txnr}`));
  const stored = (await readStoredSyslog(dataDir)).map((r) => String(r.threat));
  assert.deepEqual(stored.sort(), names.sort(), 'stored: exactly what was answered');
});

test('RELP: on SIGTERM a sender that keeps its side open after serverclose (as librelp does) does not hold the stop', async (t) => {
  /** A serve with one open session, stopped: ms from SIGTERM to its exit, and the client. */
  const stopWith = async (halfOpen: boolean) => {
    const dataDir = makeTempDir(t);
    const relay = await addRelpSensor(dataDir, 'relay');
    const { serve, relp } = await serveRelp(t, dataDir);
    const client = await connectRelp(relp, relay, { halfOpen });
    client.send(1, 'open', OFFERS);
    assert.match(await client.answer(1), /^200 OK/);
    const ended = new Promise<void>((resolve) => client.socket.once('end', () => resolve()));
    const started = Date.now();
    serve.child.kill('SIGTERM');
    await ended;
    assert.deepEqual(await serve.exited, { code: 0, signal: null });
    return { ms: Date.now() - started, client };
  };
  // The reference, in this run: a sender that closes its side when told (a stop with nothing to wait for).
  const reference = await stopWith(false);
  const { ms, client: quiet } = await stopWith(true);
  t.diagnostic(`serve exited ${ms} ms after SIGTERM (${reference.ms} ms with a sender that closes its side)`);
  // Before, serve waited for the sender to close its side, cut at 10 s: an upgrade refused connections that long.
  // Now it gives it a second. Compared with the reference, not timed alone: a busy box slows both stops.
  assert.ok(ms - reference.ms < 5000, `serve took ${ms} ms to stop (${reference.ms} ms without the wait)`);
  assert.deepEqual(
    quiet.answers.slice(1).map((a) => a.command),
    ['serverclose'],
  );
});

test('RELP: no pinned certificate is refused before a frame is read; a broken frame closes the session with a logged reason; revoke closes it', async (t) => {
  const dataDir = makeTempDir(t);
  const relay = await addRelpSensor(dataDir, 'relay');
  const stranger = join(dataDir, 'stranger');
  writeSelfSigned(`${stranger}.pem`, `${stranger}.key`, { cn: 'stranger' });
  const { serve, relp } = await serveRelp(t, dataDir);

  const refused = await connectRelp(relp, {
    cert: readFileSync(`${stranger}.pem`, 'utf8'),
    key: readFileSync(`${stranger}.key`, 'utf8'),
  });
  refused.send(1, 'open', OFFERS);
  refused.send(2, 'syslog', cef('Never stored'));
  await refused.closed;
  assert.deepEqual(refused.answers, []);
  assert.ok(serve.logs.some((l) => String(l.msg).includes('matches no active sensor')));

  const broken = await connectRelp(relp, relay);
  broken.send(1, 'open', OFFERS);
  assert.match(await broken.answer(1), /^200 OK/);
  broken.socket.write('2 syslog 5 toolong\n');
  await broken.closed;
  await until(
    () => serve.logs.some((l) => l.reason === 'DATALEN does not match the data: no LF after it'),
    10_000,
    'the reason logged',
  );

  const revoked = await connectRelp(relp, relay);
  revoked.send(1, 'open', OFFERS);
  assert.match(await revoked.answer(1), /^200 OK/);
  const done = await runCli(['sensor', 'revoke', 'relay', '--data-dir', dataDir]);
  assert.equal(done.code, 0, done.stderr);
  await revoked.closed; // the test's timeout bounds it: the registry watch sees the change within a second
  assert.deepEqual(await readStoredSyslog(dataDir), [], 'nothing was stored');
});

test('RELP: a frame out of TXNR sequence (repeated, skipped) closes the session before it is acted on, logged (a line per interval, then how many more) and counted as relp_protocol', async (t) => {
  const dataDir = makeTempDir(t);
  const relay = await addRelpSensor(dataDir, 'relay');
  const { serve, relp } = await serveRelp(t, dataDir, '127.0.0.1:0', {
    THREATCOL_LOG_REJECT_INTERVAL_MS: '1000',
  });

  const repeated = await connectRelp(relp, relay);
  repeated.send(1, 'open', OFFERS);
  repeated.send(2, 'syslog', cef('In sequence'));
  assert.equal(await repeated.answer(2), '200 OK');
  repeated.send(2, 'syslog', cef('Repeated'));
  await repeated.closed;

  const skipped = await connectRelp(relp, relay);
  skipped.send(1, 'open', OFFERS);
  skipped.send(3, 'syslog', cef('Skipped'));
  await skipped.closed;
  assert.deepEqual(
    skipped.answers.map((a) => a.txnr),
    [1],
    'the frame out of sequence is not answered',
  );

  // The first at once; the second within the interval is held back, then counted with its reason.
  const broke = 'RELP session closed: the sender broke the protocol';
  await until(
    () => serve.logs.some((l) => String(l.msg).startsWith(`${broke} (`)),
    10_000,
    'the count of the lines held back',
  );
  assert.deepEqual(
    serve.logs
      .filter((l) => String(l.msg).startsWith(broke))
      .map((l) => [l.level, l.msg, l.reason, l.suppressed]),
    [
      [40, broke, 'TXNR 2 out of sequence: 3 expected', undefined],
      [40, `${broke} (1 more)`, 'TXNR 3 out of sequence: 2 expected', 1],
    ],
  );
  const metrics = parseExposition(await (await fetch(`${serve.adminUrl}/metrics`)).text());
  const refused = metrics.get('threatcol_syslog_connections_refused_total')?.samples;
  assert.equal(refused?.find((s) => s.labels.reason === 'relp_protocol')?.value, 2);
  await serve.stop('SIGKILL');
  assert.deepEqual(
    (await readStoredSyslog(dataDir)).map((r) => r.threat),
    ['In sequence'],
    'what came out of sequence was not stored',
  );
});

/**
 * rsyslogd relaying what `logger` sends to its imtcp port to threatcol with the omrelp action `sensor show
 * --syslog` prints (docs/firewall-setup.md), its client certificate paths pointed at `identity`.
 */
async function rsyslogRelay(
  t: test.TestContext,
  dataDir: string,
  sensor: string,
  relp: number,
  identity: { certPath: string; keyPath: string },
  extra = '',
) {
  const shown = await runCli(['sensor', 'show', sensor, '--data-dir', dataDir, '--syslog', '--json'], {
    env: { THREATCOL_SYSLOG_RELP_LISTEN: `127.0.0.1:${relp}` },
  });
  assert.equal(shown.code, 0, shown.stderr);
  const printed = (JSON.parse(shown.stdout) as { setup: { rsyslog_relp: string | null } }).setup.rsyslog_relp;
  assert.ok(printed, 'sensor show prints the omrelp action when syslog.relpListen is set');
  let action = printed
    .replaceAll('/etc/rsyslog.d/threatcol-client.pem', identity.certPath)
    .replaceAll('/etc/rsyslog.d/threatcol-client.key', identity.keyPath);
  // A parameter the printed action already sets takes the test's value (rsyslog refuses one given twice, as
  // "parameter not known"); any other is added.
  for (const [param, name] of extra.matchAll(/([\w.]+)="[^"]*"/g)) {
    const given = new RegExp(`\\b${name?.replaceAll('.', '\\.')}="[^"]*"`);
    action = given.test(action) ? action.replace(given, param) : action.replace(/\)$/, ` ${param})`);
  }
  const input = await freeLoopbackPort();
  const rsyslog = await spawnRsyslogd(
    t,
    dataDir,
    [
      `global(workDirectory="${dataDir}")`,
      'module(load="imtcp")',
      `input(type="imtcp" address="127.0.0.1" port="${input}")`,
      action,
    ],
    [input],
  );
  const send = (lines: string[]) => {
    const r = spawnSync(
      'logger',
      ['--tcp', '--octet-count', '-n', '127.0.0.1', '-P', String(input), '-t', 'ids'],
      {
        input: `${lines.join('\n')}\n`,
        timeout: 60_000,
      },
    );
    assert.equal(r.status, 0, String(r.stderr));
  };
  return { rsyslog, send };
}

/** Every stored syslog record's threat name (all of them: storedSyslog reads the last 1000). */
async function storedThreatNames(dataDir: string): Promise<string[]> {
  return (await readStoredSyslog(dataDir, 1_000_000)).map((r) => String(r.threat));
}

const body = (message: string) => message.slice(message.indexOf('CEF:'));

test('rsyslog omrelp over TLS with a client certificate: each message stored once under the pinned sensor', async (t) => {
  const dataDir = makeTempDir(t);
  const relay = await addRelpSensor(dataDir, 'relay');
  const { relp } = await serveRelp(t, dataDir);
  const { rsyslog, send } = await rsyslogRelay(t, dataDir, 'relay', relp, relay);
  const names = Array.from({ length: 50 }, (_, i) => `Relayed ${i}`);
  send([...names.map((name) => body(cef(name))), body(traffic)]); // the traffic log is answered, not stored
  const records = await storedSyslog(dataDir, 50, `50 records relayed by omrelp (${rsyslog.log()})`);
  assert.deepEqual(records.map((r) => r.threat).sort(), [...names].sort());
  for (const r of records) {
    assert.equal(r.sensor, 'relay');
    assert.match(String(r.original), /^<13>\d{4}-\S+ \S+ ids CEF:0\|/); // rsyslog's forward format
  }
});

test('rsyslog omrelp, sensor known by address, while serve is killed -9 and restarted: after its retries every message is stored', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensorCli(dataDir, 'relay', ['--syslog', '--format', 'cef', '--from', '127.0.0.1/32']);
  // librelp does TLS only with a certificate of its own; the sensor does not pin it, any will do.
  const own = { certPath: join(dataDir, 'any.pem'), keyPath: join(dataDir, 'any.key') };
  writeSelfSigned(own.certPath, own.keyPath, { cn: 'any' });
  const port = await freeLoopbackPort();
  const first = await serveRelp(t, dataDir, `127.0.0.1:${port}`);
  // Retried every second (rsyslog's default waits 30 s and longer after each failure).
  const { rsyslog, send } = await rsyslogRelay(t, dataDir, 'relay', port, own, 'action.resumeInterval="1"');
  const count = 5000;
  const names = Array.from({ length: count }, (_, i) => `Kill ${i}`);
  send(names.map((name) => body(cef(name))));
  const stored = async (): Promise<number> => {
    const answer = await fetch(`${first.serve.adminUrl}/api/syslog-errors?sensor=relay`);
    return ((await answer.json()) as { counts: { stored: number }[] }).counts[0]?.stored ?? 0;
  };
  await until(async () => (await stored()) > 0, 30_000, `first messages stored (${rsyslog.log()})`);
  await first.serve.stop('SIGKILL');
  const beforeKill = (await storedThreatNames(dataDir)).length;

  const second = await serveRelp(t, dataDir, `127.0.0.1:${port}`);
  let got: string[] = [];
  // Until all are stored, or none more came for 15 s (rsyslog's retries are 1 s apart): rsyslog sometimes loses a
  // message or two at the reconnect (below), and waiting a full minute for them taught nothing more.
  const complete = await untilDrained(
    async () => {
      got = await storedThreatNames(dataDir);
      return count - new Set(got).size;
    },
    15_000,
    `all ${count} messages stored after the restart`,
    { limitMs: 60_000, everyMs: 500 },
  ).then(
    () => true,
    () => false,
  );
  const held = new Set(got);
  const missing = names.filter((n) => !held.has(n));
  const report = (await (await fetch(`${second.serve.adminUrl}/api/syslog-errors?sensor=relay`)).json()) as {
    counts: { received: number; stored: number; other: number; invalid: number }[];
  };
  t.diagnostic(
    `stored before the kill: ${beforeKill}; duplicates after the retry: ${got.length - held.size}; never received: ${missing.join(', ') || 'none'}${missing.length > 0 ? ` (${rsyslog.log()})` : ''}`,
  );
  assert.deepEqual(
    got.filter((n) => !names.includes(n)),
    [],
  );
  // threatcol's side: the restarted serve stored every message it read, and no session broke.
  assert.deepEqual(
    report.counts.map((c) => [c.received - c.stored, c.other, c.invalid]),
    [[0, 0, 0]],
  );
  assert.ok(!second.serve.logs.some((l) => String(l.msg).startsWith('RELP session closed')));
  // rsyslog 8.2302's omrelp now and then loses a message or two at the reconnect, one it never sent to the
  // restarted serve (its counters above), as rsyslog issues #247 and #841 describe: 3 of 16 runs here.
  assert.ok(complete || missing.length <= 2, `${missing.length} messages never stored`);
  // Resent are those not yet answered when the connection died: omrelp's window (128), and seen here once
  // twice over (librelp resends its window and rsyslog may retry its batch too). Bounded all the same.
  assert.ok(
    got.length - held.size <= 256,
    `${got.length - held.size} duplicates: more than two omrelp windows`,
  );
  assert.ok(second.serve.logs.some((l) => l.msg === 'syslog listening'));
});

test('send syslog --relp: every sample answered 200 OK and stored once; with a certificate no sensor pins it exits 69', async (t) => {
  const dataDir = makeTempDir(t);
  const relay = await addRelpSensor(dataDir, 'relay');
  const { relp } = await serveRelp(t, dataDir);
  const send = (certPath: string, keyPath: string) => sendRelpSamples(relp, { certPath, keyPath }, 300, 2);
  const sent = await send(relay.certPath, relay.keyPath);
  assert.equal(sent.code, 0, sent.stderr);
  const summary = JSON.parse(sent.stdout) as Record<string, unknown>;
  assert.deepEqual(
    [summary.to, summary.messages, summary.acknowledged, summary.refused, summary.connections],
    [`relp://127.0.0.1:${relp}`, 300, 300, 0, 2],
  );
  // Answered means stored: read at once, all 300 are there, each once.
  const records = await readStoredSyslog(dataDir);
  assert.equal(records.length, 300);
  assert.equal(new Set(records.map((r) => r.original)).size, 300);

  const stranger = join(dataDir, 'stranger');
  writeSelfSigned(`${stranger}.pem`, `${stranger}.key`, { cn: 'stranger' });
  const refused = await send(`${stranger}.pem`, `${stranger}.key`);
  assert.equal(refused.code, 69, refused.stderr);
  assert.match(refused.stderr, /CONNECTION_FAILED.*refused the RELP session: connection closed/);
  assert.equal((await readStoredSyslog(dataDir)).length, 300);
});
