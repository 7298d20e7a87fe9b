// Black box: the syslog listeners' connection slots under a flood of silent sockets (a sensor still gets in), and
// the overall cap on refusal log lines (thousands of refused addresses write a bounded number of lines).
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import test from 'node:test';
import { connect } from 'node:tls';
import { ensureDataDir } from '../../src/data-dir/ensure-data-dir.js';
import { createFileRegistry } from '../../src/store/files/file-registry.js';
import type { SensorSyslog } from '../../src/store/registry.js';
import { startTestServer, type TestServer } from '../helpers/in-process-server.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import {
  floodSilentSockets,
  type HeldSocket,
  onlyOldestClosed,
  openSilentSockets,
} from '../helpers/silent-sockets.js';
import { readStoredSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const cef = (name: string) =>
  `<134>Nov 26 12:00:05 gw ids: CEF:0|Check Point|VPN-1|R81|IPS|${name}|High|src=10.1.1.5 dst=203.0.113.9 spt=51000 dpt=80 proto=TCP`;
const framed = (message: string) => `${Buffer.byteLength(message)} ${message}`;

async function addSyslogSensor(dataDir: string, name: string, syslog: Partial<SensorSyslog>): Promise<void> {
  const registry = createFileRegistry({ dataDir, owner: ensureDataDir(dataDir) });
  await registry.add({
    name,
    timezone: 'UTC',
    syslog: { format: 'cef', from: [], client_cert_sha256: [], ...syslog },
  });
}

async function serveSyslog(
  t: test.TestContext,
  dataDir: string,
  overrides: Record<string, unknown>,
): Promise<{ server: TestServer; tls: number; tcp: number }> {
  const server = await startTestServer(t, {
    dataDir,
    overrides: {
      'log.level': 'info',
      'syslog.listen': '127.0.0.1:0',
      'syslog.tcpListen': '127.0.0.1:0',
      ...overrides,
    },
  });
  const line = server.logs.find((l) => l.msg === 'syslog listening');
  assert.ok(line, 'the daemon logs where syslog listens');
  return { server, tls: line.tlsPort as number, tcp: line.tcpPort as number };
}

/** Threat names stored so far. */
async function storedThreats(dataDir: string): Promise<string[]> {
  return (await readStoredSyslog(dataDir)).map((r) => String(r.threat));
}

/**
 * Sends `message` once over a fresh connection (`send` writes it once connected); resolves when the socket
 * closed, whatever happened to it. Then waits up to 3 s for it to be stored: whether this try got through.
 */
async function tryOnce(
  dataDir: string,
  name: string,
  open: (onConnected: (write: (text: string) => void) => void) => NodeJS.EventEmitter,
): Promise<boolean> {
  await new Promise<void>((resolve) => {
    const socket = open((write) => write(framed(cef(name))));
    socket.on('error', () => {});
    socket.on('close', () => resolve());
    setTimeout(() => (socket as unknown as { destroy(): void }).destroy(), 15_000).unref(); // hang guard
  });
  return until(async () => (await storedThreats(dataDir)).includes(name), 3_000, name).then(
    () => true,
    () => false,
  );
}

/** tryOnce's opener for the plain TCP listener on `port`: the message written once connected, then the end. */
function overTcp(port: number): Parameters<typeof tryOnce>[2] {
  return (connected) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => {
      connected((text) => socket.end(text));
    });
    socket.resume();
    return socket;
  };
}

// At a small scale of the same shape: the caps are 512 in all and 64 per address; 9 addresses of 64 silent
// sockets each (576) fill the TLS listener and keep 64 more knocking. A sensor on its own address gets in.
const CAPS = { 'server.maxConnections': 512, 'server.maxConnectionsPerAddress': 64 };
const FLOOD_ADDRESSES = Array.from({ length: 9 }, (_, i) => `127.0.0.${i + 2}`);
const TRIES = 3;

test('silent sockets filling the TLS listener: a pinned-certificate sensor gets its message stored within 3 tries', async (t) => {
  const dataDir = makeTempDir(t);
  const certPath = join(dataDir, 'fw.pem');
  const keyPath = join(dataDir, 'fw.key');
  writeSelfSigned(certPath, keyPath, { cn: 'fw' });
  const cert = readFileSync(certPath, 'utf8');
  const key = readFileSync(keyPath, 'utf8');
  const fingerprint = new X509Certificate(cert).fingerprint256.replaceAll(':', '').toLowerCase();
  await addSyslogSensor(dataDir, 'fw', { client_cert_sha256: [fingerprint] });
  const { tls } = await serveSyslog(t, dataDir, CAPS);

  const flood = floodSilentSockets(t, tls, FLOOD_ADDRESSES, 64);
  await until(() => flood.connects() >= 600, 30_000, 'the flood fills the listener');

  const results: boolean[] = [];
  for (let i = 1; i <= TRIES && !results.includes(true); i++) {
    results.push(
      await tryOnce(dataDir, `Pinned try ${i}`, (connected) => {
        const socket = connect({ host: '127.0.0.1', port: tls, cert, key, rejectUnauthorized: false }, () => {
          connected((text) => socket.end(text));
        });
        socket.resume();
        return socket;
      }),
    );
  }
  const floodConnects = flood.connects();
  await flood.stop();
  t.diagnostic(`stored on try ${results.indexOf(true) + 1}; the flood opened ${floodConnects} connections`);
  assert.ok(
    results.includes(true),
    `stored on none of ${TRIES} tries (flood opened ${floodConnects} connections)`,
  );
});

test('silent sockets filling the TLS listener leave the plain TCP listener free for an address sensor', async (t) => {
  const dataDir = makeTempDir(t);
  await addSyslogSensor(dataDir, 'gw', { from: ['127.0.0.1/32'] });
  const { tls, tcp } = await serveSyslog(t, dataDir, CAPS);

  const flood = floodSilentSockets(t, tls, FLOOD_ADDRESSES, 64);
  await until(() => flood.connects() >= 600, 30_000, 'the flood fills the listener');
  const results: boolean[] = [];
  for (let i = 1; i <= TRIES && !results.includes(true); i++) {
    results.push(await tryOnce(dataDir, `Address try ${i}`, overTcp(tcp)));
  }
  await flood.stop();
  assert.ok(results.includes(true), `stored on none of ${TRIES} tries`);
});

test('refusals from 300 addresses: at most 50 warn lines per interval, the rest counted in one line', async (t) => {
  const dataDir = makeTempDir(t);
  await addSyslogSensor(dataDir, 'gw', { from: ['127.0.0.1/32'] });
  const { server, tcp } = await serveSyslog(t, dataDir, { 'log.rejectIntervalMs': 600_000 });
  const refusal = (l: Record<string, unknown>) =>
    l.level === 40 && String(l.msg).includes('matches no active sensor');
  const addresses = Array.from(
    { length: 300 },
    (_, i) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`,
  );
  for (let i = 0; i < addresses.length; i += 50) {
    await Promise.all(
      addresses.slice(i, i + 50).map(
        (localAddress) =>
          new Promise<void>((resolve) => {
            const socket = createConnection({ host: '127.0.0.1', port: tcp, localAddress });
            socket.on('error', () => {});
            socket.on('close', () => resolve());
          }),
      ),
    );
  }
  const lines = server.logs.filter(refusal).length;
  assert.ok(lines >= 1 && lines <= 50, `${lines} refusal warn lines for 300 refused addresses`);
  await server.stop();
  const more = server.logs.find((l) => l.level === 40 && typeof l.suppressed === 'number');
  assert.equal(more?.suppressed, 300 - lines, 'the lines held back are counted in one line');
});

test('the syslog listeners share one cap: identified TCP connections filling it leave a TLS newcomer no slot', async (t) => {
  const dataDir = makeTempDir(t);
  await addSyslogSensor(dataDir, 'gw', { from: ['127.0.0.1/32'] });
  const { tls, tcp } = await serveSyslog(t, dataDir, {
    'server.maxConnections': 4,
    'server.maxConnectionsPerAddress': 4,
  });
  // Four plain TCP connections, each identified by its first message (stored): every slot held and proven.
  const held = await Promise.all(
    [0, 1, 2, 3].map(
      (i) =>
        new Promise<ReturnType<typeof createConnection>>((resolve) => {
          const socket = createConnection({ host: '127.0.0.1', port: tcp }, () => {
            socket.write(framed(cef(`Held ${i}`)));
            resolve(socket);
          });
          socket.on('error', () => {});
        }),
    ),
  );
  t.after(() => {
    for (const socket of held) socket.destroy();
  });
  await until(
    async () => (await storedThreats(dataDir)).filter((n) => n.startsWith('Held')).length === 4,
    15_000,
    'the four messages stored',
  );
  // A connection to the TLS listener is closed before its handshake (each listener counted apart, it had a
  // cap of its own and its handshake went through).
  const handshake = await new Promise<'secured' | 'closed'>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: tls, rejectUnauthorized: false }, () => {
      resolve('secured');
      socket.destroy();
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve('closed'));
  });
  assert.equal(handshake, 'closed');
});

test('HTTPS and syslog share one cap: a syslog sender over the per-address cap closes the oldest silent HTTPS socket', async (t) => {
  const dataDir = makeTempDir(t);
  await addSyslogSensor(dataDir, 'gw', { from: ['127.0.0.1/32'] });
  // A handshake timeout far past the test's waits: no socket closes for it.
  const { server, tcp } = await serveSyslog(t, dataDir, {
    'server.maxConnectionsPerAddress': 4,
    'server.handshakeTimeoutMs': 120_000,
  });
  const httpsPort = Number(new URL(server.url).port);
  // Four sockets to the HTTPS port that never start their handshake: the address's four slots, none proven.
  const silent = await openSilentSockets(httpsPort, 4);
  assert.equal(silent.filter((s) => s.socket.destroyed).length, 0, 'the four HTTPS sockets are held');

  const stored = await tryOnce(dataDir, 'Over the shared cap', overTcp(tcp));
  assert.ok(stored, 'the syslog message is stored');
  // Each listener counted apart, the HTTPS sockets kept all four slots of their own table.
  await onlyOldestClosed(silent);
  for (const s of silent) s.socket.destroy();
});

test('syslog.maxHeldBytes: connections holding unfinished messages past it lose the oldest; the others go on', async (t) => {
  const dataDir = makeTempDir(t);
  await addSyslogSensor(dataDir, 'gw', { from: ['127.0.0.1/32'] });
  // 1 MiB in all for messages of up to 16 KiB: 64 connections each holding an unfinished 15,000-byte message
  // (a 16 KiB buffer each) fill it.
  const { server, tcp } = await serveSyslog(t, dataDir, {
    'syslog.maxMessageBytes': 16_384,
    'syslog.maxHeldBytes': 1_048_576,
  });
  const start = (i: number) => `<134>${cef(`Held ${i}`)} msg=`.padEnd(15_000, 'x');
  const held: HeldSocket[] = [];
  for (let i = 0; i < 66; i++) {
    const [conn] = await openSilentSockets(tcp, 1);
    if (conn === undefined) throw new Error('no connection');
    conn.socket.write(start(i));
    held.push(conn);
    // The collector has read it before the next one comes.
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  try {
    await until(() => held.filter((c) => c.socket.destroyed).length >= 2, 10_000, 'two closed');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closed = held.flatMap((c, i) => (c.socket.destroyed ? [i] : []));
    assert.deepEqual(closed, [0, 1], 'the two whose messages began first');
    // A connection left open finishes its message: stored.
    held[65]?.socket.write('\n');
    await until(
      async () => (await storedThreats(dataDir)).includes('Held 65'),
      10_000,
      'the last message stored',
    );
    const warned = server.logs.filter((l) => String(l.msg).includes('syslog.maxHeldBytes'));
    assert.ok(warned.length >= 1, 'the close is logged');
  } finally {
    for (const c of held) c.socket.destroy();
  }
});
