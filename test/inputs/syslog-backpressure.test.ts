// A syslog connection never reads further than it can store: paused while its messages are not durable, and an
// append the store refuses is retried, not dropped. Real sockets and the real files record log, behind a gate.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import test from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import pino, { type Logger } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/schema.js';
import { serveRelpSession } from '../../src/inputs/syslog/relp-session.js';
import { type ConnectionDeps, serveSyslogConnection } from '../../src/inputs/syslog/syslog-connection.js';
import { createSyslogIntake } from '../../src/inputs/syslog/syslog-intake.js';
import { createSyslogListener } from '../../src/inputs/syslog/syslog-listener.js';
import { SyslogTally } from '../../src/inputs/syslog/syslog-tally.js';
import { LogThrottle } from '../../src/log-throttle.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { openStore } from '../../src/store/open-store.js';
import type { Sensor } from '../../src/store/registry.js';
import type { RecordLog, Store } from '../../src/store/store.js';
import { readTlsPair } from '../../src/tls/certificate.js';
import { freeLoopbackPort } from '../helpers/free-port.js';
import { spawnRsyslogd } from '../helpers/rsyslog.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const sensor: Sensor = {
  name: 'fg',
  description: '',
  timezone: 'UTC',
  status: 'active',
  created_at: '2026-11-26T00:00:00.000Z',
  revoked_at: null,
  keys: [],
  syslog: { format: 'fortinet', from: ['127.0.0.1/32'], client_cert_sha256: [] },
};

const message = (i: number) =>
  `<185>date=2026-11-26 time=12:00:05 type="utm" subtype="ips" level="alert" severity="high" srcip=10.1.1.5 dstip=203.0.113.9 srcport=${1000 + (i % 60000)} dstport=80 proto=6 attack="Probe ${i}" attackid=${i}`;
const frame = (i: number) => {
  const m = message(i);
  return `${Buffer.byteLength(m)} ${m}`;
};

/** The real record log, whose appends wait for `open()` (and fail the first `failures` times). */
function gated(log: RecordLog, failures: number) {
  let opened = false;
  const waiting: (() => void)[] = [];
  let calls = 0;
  const gate: RecordLog = {
    get queuedRecords() {
      return log.queuedRecords;
    },
    close: () => log.close(),
    async append(records: StoredRecord[]) {
      calls++;
      if (!opened) await new Promise<void>((resolve) => waiting.push(resolve));
      if (failures > 0) {
        failures--;
        throw new Error('store unavailable (test)');
      }
      return log.append(records);
    },
  };
  return {
    gate,
    calls: () => calls,
    open() {
      opened = true;
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

/**
 * The real record log behind a script: each append's threats are recorded, then `script(n)` (n from 1) says what
 * it does: wait for `open()`, fail (the store refusing), or store.
 */
function scripted(log: RecordLog, script: (n: number) => 'hold' | 'refuse' | 'store') {
  const calls: string[][] = [];
  const waiting: (() => void)[] = [];
  let opened = false;
  const gate: RecordLog = {
    get queuedRecords() {
      return log.queuedRecords;
    },
    close: () => log.close(),
    async append(records: StoredRecord[]) {
      calls.push(records.map((r) => r.threat));
      const action = script(calls.length);
      if (action === 'hold' && !opened) await new Promise<void>((resolve) => waiting.push(resolve));
      if (action === 'refuse') throw new Error('store unavailable (test)');
      return log.append(records);
    },
  };
  return {
    gate,
    calls,
    open() {
      opened = true;
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

/** A logger whose lines (parsed) are kept in `lines`. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

/** What a connection's intake stores through: `recordLog`, the store's statistics, a silent logger. */
function intakeDeps(
  config: Config,
  recordLog: RecordLog,
  store: Store,
  tally: SyslogTally,
  logger: Logger = pino({ level: 'silent' }),
): ConnectionDeps {
  const throttledLog = new LogThrottle(logger, config.log.rejectIntervalMs);
  return { config, recordLog, stats: store.stats, logger, now: Date.now, tally, throttledLog };
}

/**
 * A plain-TCP server serving each connection with serveSyslogConnection for `sensor` through `recordLog`; its
 * port, and the server side of its last connection.
 */
async function syslogServer(
  t: test.TestContext,
  config: Config,
  recordLog: RecordLog,
  store: Store,
  logger?: Logger,
) {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    const deps = intakeDeps(config, recordLog, store, new SyslogTally(), logger);
    serveSyslogConnection(socket, createSyslogIntake(sensor, '127.0.0.1', deps), '127.0.0.1', deps);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  return { port, last: () => sockets.at(-1) };
}

/** A plain-TCP client of `port`, connected, destroyed at the test's end. */
async function tcpClient(t: test.TestContext, port: number): Promise<Socket> {
  const client = createConnection({ host: '127.0.0.1', port });
  client.on('error', () => {});
  t.after(() => client.destroy());
  await new Promise<void>((resolve) => client.once('connect', () => resolve()));
  return client;
}

/** The threats the store holds, in the order stored. */
async function storedThreats(store: Store): Promise<string[]> {
  const seen: string[] = [];
  await store.reader.scan(0, (record) => seen.push(record.threat));
  return seen;
}

/** A data directory, its configuration (`overrides` applied), the files store and its record log. */
async function filesLog(t: test.TestContext, overrides: Record<string, unknown> = {}) {
  const dataDir = makeTempDir(t);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir, ...overrides },
  });
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  const log = await store.openRecordLog({ retentionIntervalMs: 0 });
  return { dataDir, config, store, log };
}

/** A syslog listener (TLS with a pair written into `dataDir`, plain TCP as `config` says) appending to `recordLog`. */
function tlsListener(dataDir: string, config: Config, recordLog: RecordLog, store: Store, logger: Logger) {
  writeSelfSigned(join(dataDir, 'cert.pem'), join(dataDir, 'key.pem'), { cn: 'syslog' });
  const listener = createSyslogListener({
    config,
    tls: readTlsPair(join(dataDir, 'cert.pem'), join(dataDir, 'key.pem'), true),
    recordLog,
    stats: store.stats,
    logger,
    now: Date.now,
  });
  listener.updateSensors([sensor]);
  return listener;
}

test('over the unsynced bound the socket is paused until the store catches up; a refused append is retried', async (t) => {
  const { config, store, log } = await filesLog(t, { 'syslog.maxUnsyncedMessages': 50 });
  const g = gated(log, 1);
  const tally = new SyslogTally();
  const counts = tally.totals;
  let serverSocket: Socket | undefined;
  const server = createServer((socket) => {
    serverSocket = socket;
    const deps = intakeDeps(config, g.gate, store, tally);
    serveSyslogConnection(socket, createSyslogIntake(sensor, '127.0.0.1', deps), '127.0.0.1', deps);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const port = (server.address() as { port: number }).port;

  const client = createConnection({ host: '127.0.0.1', port });
  client.on('error', () => {});
  // A failed assertion must not leave appends waiting on the gate and the sockets open.
  t.after(() => {
    g.open();
    client.destroy();
    serverSocket?.destroy();
  });
  await new Promise<void>((resolve) => client.once('connect', () => resolve()));
  const drainedOrWaited = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 50);
      client.once('drain', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  // Write until the server has paused and the kernel's buffers are full, so node holds a megabyte at the
  // sender (loopback buffers hold several megabytes); bounded at 200,000 messages (~40 MB).
  let i = 0;
  while (i < 200_000 && !(serverSocket?.isPaused() && client.writableLength > 1_000_000)) {
    const batch = Array.from({ length: 500 }, (_, k) => frame(i + k)).join('');
    i += 500;
    if (!client.write(batch)) await drainedOrWaited();
  }
  const total = i;
  // The server stopped reading: a bounded number of messages read, the rest held by TCP at the sender.
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(serverSocket?.isPaused(), true);
  assert.ok(counts.threats < total, `read ${counts.threats} of ${total} while nothing was durable`);
  assert.ok(client.writableLength > 0, 'the sender is held back by TCP');
  const readWhilePaused = counts.threats;
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(counts.threats, readWhilePaused, 'nothing more is read while the store has not caught up');

  // Open the store (its first append fails once and is retried): everything arrives, once.
  g.open();
  await new Promise<void>((resolve) => client.end(resolve));
  await new Promise<void>((resolve) => serverSocket?.once('close', () => resolve()));
  while (log.queuedRecords > 0 || counts.threats < total)
    await new Promise((resolve) => setTimeout(resolve, 50));
  // Appends still waiting on the retry timer land within a second or so.
  let stored: string[] = [];
  for (let tries = 0; tries < 100 && stored.length < total; tries++) {
    const seen: string[] = [];
    await store.reader.scan(0, (record) => seen.push(record.threat));
    stored = seen;
    if (stored.length < total) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(new Set(stored).size, total);
  assert.equal(stored.length, total);
  await log.close();
  await store.close();
});

test('RELP: a message whose append the store refused is never answered, so rsyslog omrelp sends it again', async (t) => {
  const { dataDir, config, store, log } = await filesLog(t);
  t.after(async () => {
    await log.close();
    await store.close();
  });
  // The store refuses its first append (overloaded, the disk low, NATS down), then takes them all.
  const g = gated(log, 1);
  g.open();
  const relay: Sensor = {
    ...sensor,
    name: 'relay',
    syslog: { ...sensor.syslog, format: 'cef' } as Sensor['syslog'],
  };
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    const deps = intakeDeps(config, g.gate, store, new SyslogTally());
    serveRelpSession(socket, createSyslogIntake(relay, '127.0.0.1', deps), '127.0.0.1', deps);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const relp = (server.address() as { port: number }).port;
  // Debian's rsyslog: logger's lines in by TCP, out by omrelp (plain TCP), retried every second.
  const input = await freeLoopbackPort();
  const rsyslog = await spawnRsyslogd(
    t,
    dataDir,
    [
      `global(workDirectory="${dataDir}")`,
      'module(load="imtcp")',
      'module(load="omrelp")',
      `input(type="imtcp" address="127.0.0.1" port="${input}")`,
      // The queue `sensor show --syslog` prints, kept in memory here.
      `action(type="omrelp" target="127.0.0.1" port="${relp}" queue.type="LinkedList" action.resumeRetryCount="-1" action.resumeInterval="1")`,
    ],
    [input],
  );
  const send = (names: string[]) => {
    const sent = spawnSync(
      'logger',
      ['--tcp', '--octet-count', '-n', '127.0.0.1', '-P', String(input), '-t', 'ids'],
      {
        input: `${names
          .map((name) => `CEF:0|Check Point|VPN-1|R81|IPS|${name}|High|src=10.1.1.5 dst=203.0.113.9 dpt=80`)
          .join('\n')}\n`,
      },
    );
    assert.equal(sent.status, 0, String(sent.stderr));
  };
  const names = Array.from({ length: 6 }, (_, i) => `Refused ${i}`);
  send(names.slice(0, 5));
  await until(() => g.calls() > 0, 30_000, 'the first append');
  // librelp finds its session ended when it next sends (a sender's stream goes on): it opens a new one and
  // sends again every message it had no answer for, then the new one.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  send(names.slice(5));
  let stored = new Set<string>();
  await until(
    async () => {
      const seen = new Set<string>();
      await store.reader.scan(0, (record) => seen.add(record.threat));
      stored = seen;
      return names.every((name) => stored.has(name));
    },
    30_000,
    'every message stored',
    200,
  ).catch(() => {});
  assert.deepEqual(
    names.filter((name) => !stored.has(name)),
    [],
    `never stored (${g.calls()} appends; rsyslog: ${rsyslog.log()})`,
  );
});

test('a graceful stop while the store refuses: the refused append is tried again before the store closes', async (t) => {
  const { dataDir, config, store, log } = await filesLog(t, { 'syslog.tcpListen': '127.0.0.1:0' });
  // The first append is refused (overloaded, the disk low); its retry would come a second later.
  const g = gated(log, 1);
  g.open();
  const listener = tlsListener(dataDir, config, g.gate, store, pino({ level: 'silent' }));
  const { tcp } = await listener.listen();
  const client = createConnection({ host: '127.0.0.1', port: tcp?.port as number });
  client.on('error', () => {});
  t.after(() => client.destroy());
  client.write(frame(1));
  await until(() => g.calls() >= 1, 10_000, 'the first append (refused)');
  // The daemon's order at a stop: the syslog listeners, then the store.
  await listener.close();
  await log.close();
  const stored: string[] = [];
  await store.reader.scan(0, (record) => stored.push(record.threat));
  await store.close();
  assert.deepEqual(stored, ['Probe 1']);
});

test('a message begun when the store refuses is not closed as stalled: the clock stops while threatcol holds the connection back', async (t) => {
  const { config, store, log } = await filesLog(t, { 'syslog.stallTimeoutMs': 2000 });
  t.after(async () => {
    await log.close();
    await store.close();
  });
  let refusing = true;
  const g = scripted(log, () => (refusing ? 'refuse' : 'store'));
  const { logger, lines } = capturingLogger();
  const { port, last } = await syslogServer(t, config, g.gate, store, logger);
  const client = await tcpClient(t, port);
  let closed = false;
  client.once('close', () => {
    closed = true;
  });
  // One complete message and the start of the next, in one write; the store refuses the first.
  const second = message(2);
  client.write(`${message(1)}\n${second.slice(0, 40)}`);
  await until(() => g.calls.length >= 1 && last()?.isPaused() === true, 10_000, 'the refused append');
  await new Promise((resolve) => setTimeout(resolve, 4000));
  assert.equal(closed, false, 'the connection stays open while the store refuses');
  assert.equal(last()?.destroyed, false);
  // The store recovers: the retry stores the first, then the rest of the second arrives.
  refusing = false;
  await until(async () => (await storedThreats(store)).length === 1, 10_000, 'the first stored');
  client.write(`${second.slice(40)}\n`);
  await until(async () => (await storedThreats(store)).length === 2, 10_000, 'the second stored');
  assert.deepEqual(await storedThreats(store), ['Probe 1', 'Probe 2']);
  assert.equal(closed, false);
  assert.equal(
    lines.filter((l) => String(l.msg).includes('syslog.stallTimeoutMs')).length,
    0,
    'no stall logged',
  );
});

test('a message left unfinished when a backpressure pause ends is closed as stalled: the clock starts again as reading resumes', async (t) => {
  const { config, store, log } = await filesLog(t, {
    'syslog.maxUnsyncedMessages': 1,
    'syslog.stallTimeoutMs': 1000,
  });
  t.after(async () => {
    await log.close();
    await store.close();
  });
  const { logger, lines } = capturingLogger();
  const { port } = await syslogServer(t, config, log, store, logger);
  const client = await tcpClient(t, port);
  let closed = false;
  client.once('close', () => {
    closed = true;
  });
  // The threat fills the unsynced bound (a pause until it is durable); the next message is begun, never ended.
  client.write(`${message(1)}\n<185>date=2026`);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  assert.equal(closed, true, 'closed for the unfinished message');
  assert.deepEqual(await storedThreats(store), ['Probe 1']);
  assert.ok(
    lines.some(
      (l) =>
        l.level === 40 &&
        l.msg === 'syslog connection closed: a message did not complete within syslog.stallTimeoutMs',
    ),
    'the stall is logged',
  );
});

test('a refused append keeps the connection paused until its retry stored it: what was read after it is stored after it', async (t) => {
  const { config, store, log } = await filesLog(t);
  t.after(async () => {
    await log.close();
    await store.close();
  });
  // The first append waits (a slow fsync), the second is refused once, the rest are stored.
  const g = scripted(log, (n) => (n === 1 ? 'hold' : n === 2 ? 'refuse' : 'store'));
  t.after(() => g.open());
  const { port, last } = await syslogServer(t, config, g.gate, store);
  const client = await tcpClient(t, port);
  client.write(`${message(1)}\n`);
  await until(() => g.calls.length === 1, 10_000, 'the first append (held)');
  client.write(`${message(2)}\n`);
  await until(() => g.calls.length === 2 && last()?.isPaused() === true, 10_000, 'the second (refused)');
  client.write(`${message(3)}\n`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  // The first is stored now; the second's retry comes a second after its refusal.
  g.open();
  await until(async () => (await storedThreats(store)).length === 3, 10_000, 'all three stored');
  assert.deepEqual(
    g.calls,
    [['Probe 1'], ['Probe 2'], ['Probe 2'], ['Probe 3']],
    'no append before the retry',
  );
  assert.deepEqual(await storedThreats(store), ['Probe 1', 'Probe 2', 'Probe 3']);
});

test("a store refusing every connection's appends is logged a line per interval with how many more, not a line per retry", async (t) => {
  const { dataDir, config, store, log } = await filesLog(t, {
    'syslog.tcpListen': '127.0.0.1:0',
    'log.rejectIntervalMs': 1000,
  });
  t.after(async () => {
    await log.close();
    await store.close();
  });
  const g = scripted(log, () => 'refuse');
  const { logger, lines } = capturingLogger();
  const listener = tlsListener(dataDir, config, g.gate, store, logger);
  const { tcp } = await listener.listen();
  let closed = false;
  t.after(async () => {
    if (!closed) await listener.close();
  });
  // 20 connections, each with a message the store refuses, then retries every second.
  for (let i = 0; i < 20; i++) (await tcpClient(t, tcp?.port as number)).write(frame(i));
  await until(() => g.calls.length >= 80, 20_000, 'three retries of each');
  closed = true;
  await listener.close();
  const retrying = lines.filter((l) => String(l.msg).startsWith('cannot store syslog messages; retrying'));
  t.diagnostic(`${g.calls.length} appends refused, ${retrying.length} lines`);
  // A line at once, then one a second at most (and the count held back at the stop): not one per refusal.
  assert.ok(retrying.length <= 8, `${retrying.length} lines for ${g.calls.length} refusals`);
  assert.equal(retrying[0]?.msg, 'cannot store syslog messages; retrying');
  assert.equal(retrying[0]?.level, 50);
  const counted = retrying.reduce((sum, l) => sum + (typeof l.suppressed === 'number' ? l.suppressed : 1), 0);
  assert.ok(counted >= 60, `the lines count ${counted} of the refusals`);
  assert.match(String(retrying.at(-1)?.msg), /^cannot store syslog messages; retrying \(\d+ more\)$/);
});

for (const transport of ['tcp', 'tls'] as const) {
  test(`${transport}: a sender that ends its side after its last message gets the collector's end once it is stored, and the connection closes`, async (t) => {
    const { dataDir, config, store, log } = await filesLog(t, {
      'syslog.tcpListen': '127.0.0.1:0',
      'syslog.listen': '127.0.0.1:0',
    });
    // The append waits (a slow fsync) until the test opens the gate.
    const g = scripted(log, () => 'hold');
    const listener = tlsListener(dataDir, config, g.gate, store, pino({ level: 'silent' }));
    const ports = await listener.listen();
    t.after(async () => {
      g.open();
      await listener.close();
      await log.close();
      await store.close();
    });
    const raw = createConnection({
      host: '127.0.0.1',
      port: (transport === 'tcp' ? ports.tcp : ports.tls)?.port as number,
      allowHalfOpen: true,
    });
    const client = transport === 'tcp' ? raw : tlsConnect({ socket: raw, rejectUnauthorized: false });
    client.on('error', () => {});
    t.after(() => client.destroy());
    await once(client, transport === 'tcp' ? 'connect' : 'secureConnect');
    let ended = false;
    client.once('end', () => {
      ended = true;
    });
    const closed = once(client, 'close');
    client.resume();
    client.end(frame(1));
    await until(() => g.calls.length === 1, 10_000, 'the append');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(ended, false, 'not ended while the message is not stored');
    g.open();
    await closed; // the test's timeout bounds it: no half-open socket is left
    assert.equal(ended, true, "the collector's end came");
    assert.deepEqual(await storedThreats(store), ['Probe 1']);
  });
}
