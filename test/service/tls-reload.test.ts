// Certificate renewal without restart: a watched change (or SIGHUP) swaps the certificate for new connections,
// open keep-alive connections keep working, a bad pair is refused, and a near expiry is warned about.
import { strict as assert } from 'node:assert';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
import { loadConfig } from '../../src/config/load-config.js';
import { createFileRegistry } from '../../src/store/files/file-registry.js';
import { watchTlsFiles } from '../../src/tls/tls-watch.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { type HarnessDaemon, makeCert, startHarnessDaemon, writeCert } from './harness.js';

function open(port: number, ca: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Sends one HTTP/1.1 request on an open connection and reads its whole response. */
function roundTrip(socket: TLSSocket, request: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let data = '';
    const onData = (chunk: Buffer) => {
      data += chunk.toString('utf8');
      const end = data.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/content-length: (\d+)/i.exec(data.slice(0, end))?.[1] ?? 0);
      if (data.length < end + 4 + length) return;
      socket.off('data', onData);
      socket.off('error', reject);
      resolve({ status: Number(data.slice(9, 12)), body: data.slice(end + 4, end + 4 + length) });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(request);
  });
}

function postGeneric(sensor: string, key: string): string {
  const body = JSON.stringify(genericRecord());
  return [
    'POST /generic HTTP/1.1',
    'Host: localhost',
    'Content-Type: application/json',
    `X-AUTH_KEY: ${key}`,
    `X-SENSOR_NAME: ${sensor}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

async function setup(t: { after(fn: () => unknown): void }, certDays = 365) {
  const dataDir = makeTempDir(t);
  const certDir = join(dataDir, 'certs');
  mkdirSync(certDir);
  const certPath = join(certDir, 'cert.pem');
  const keyPath = join(certDir, 'key.pem');
  const first = await makeCert(certDays);
  writeCert(first, certPath, keyPath);
  return { dataDir, certPath, keyPath, first };
}

async function startWith(
  t: { after(fn: () => unknown): void },
  s: Awaited<ReturnType<typeof setup>>,
  options: { expiryCheckIntervalMs?: number } = {},
): Promise<HarnessDaemon> {
  return startHarnessDaemon(
    t,
    s.dataDir,
    { 'tls.cert': s.certPath, 'tls.key': s.keyPath, 'tls.pollIntervalMs': 60_000 },
    { tlsDebounceMs: 50, ...options },
  );
}

test('a changed certificate file is served to new connections while an open keep-alive connection keeps working', async (t) => {
  const s = await setup(t);
  const h = await startWith(t, s);
  const { key } = await createFileRegistry({ dataDir: s.dataDir, owner: null }).add({ name: 'fw1' });
  h.daemon.reload();
  assert.equal(h.daemon.fingerprint, s.first.fingerprint);

  const kept = await open(h.port, s.first.cert);
  t.after(() => kept.destroy());
  assert.equal(kept.getPeerCertificate().fingerprint256, s.first.fingerprint);
  assert.equal((await roundTrip(kept, postGeneric('fw1', key))).status, 200);

  const second = await makeCert(365);
  const mark = h.logs.length;
  writeCert(second, s.certPath, s.keyPath);
  const reloaded = await h.waitForLog((l) => l.msg === 'reloaded the TLS material', mark);
  assert.equal(reloaded.sha256, second.fingerprint);
  assert.equal(reloaded.reason, 'certificate or key file changed');
  assert.equal(h.daemon.fingerprint, second.fingerprint);

  const fresh = await open(h.port, second.cert);
  t.after(() => fresh.destroy());
  assert.equal(fresh.getPeerCertificate().fingerprint256, second.fingerprint);
  assert.equal((await roundTrip(fresh, postGeneric('fw1', key))).status, 200);

  // The connection opened before the swap is still the same TLS session with the old certificate, and works.
  assert.equal(kept.destroyed, false);
  assert.equal((await roundTrip(kept, postGeneric('fw1', key))).status, 200);
  assert.equal(kept.getPeerCertificate().fingerprint256, s.first.fingerprint);
});

test('a bad new certificate is refused with a log line and the old one stays in use (watch and SIGHUP)', async (t) => {
  const s = await setup(t);
  const h = await startWith(t, s);
  const other = await makeCert(365);

  // A key that does not belong to the certificate (the classic half-finished renewal).
  let mark = h.logs.length;
  writeCert({ ...s.first, key: other.key }, s.certPath, s.keyPath);
  const refused = await h.waitForLog(
    (l) => l.msg === 'new TLS material refused; keeping the current certificate',
    mark,
  );
  assert.match(String(refused.err), /key does not match/);
  assert.equal(refused.sha256, s.first.fingerprint);
  assert.equal(h.daemon.fingerprint, s.first.fingerprint);
  const socket = await open(h.port, s.first.cert);
  assert.equal(socket.getPeerCertificate().fingerprint256, s.first.fingerprint);
  socket.destroy();

  // Garbage in the certificate file, then SIGHUP: refused as well.
  writeCert({ ...s.first, cert: 'not a certificate\n' }, s.certPath, s.keyPath);
  mark = h.logs.length;
  h.daemon.reload();
  const again = await h.waitForLog(
    (l) => l.msg === 'new TLS material refused; keeping the current certificate',
    mark,
  );
  assert.equal(again.reason, 'SIGHUP');
  const still = await open(h.port, s.first.cert);
  assert.equal(still.getPeerCertificate().fingerprint256, s.first.fingerprint);
  still.destroy();
  assert.equal(h.logs.filter((l) => l.msg === 'reloaded the TLS material').length, 0);
});

test('a certificate expiring within 14 days is warned about at start and again at each daily check', async (t) => {
  const s = await setup(t, 5);
  const h = await startWith(t, s, { expiryCheckIntervalMs: 100 });
  const first = await h.waitForLog(
    (l) => typeof l.msg === 'string' && l.msg.startsWith('the TLS certificate expires'),
  );
  assert.equal(first.level, 40);
  assert.ok(Number(first.daysLeft) > 4.5 && Number(first.daysLeft) <= 5, String(first.daysLeft));
  const startIndex = h.logs.indexOf(first);
  const listening = h.logs.findIndex((l) => l.msg === 'threatcol is listening');
  assert.ok(startIndex < listening, 'the first warning comes at start');
  await h.waitForLog(
    (l) => typeof l.msg === 'string' && l.msg.startsWith('the TLS certificate expires'),
    startIndex + 1,
  );

  const fine = await setup(t, 30);
  const h2 = await startWith(t, fine);
  assert.equal(h2.logs.filter((l) => String(l.msg).includes('the TLS certificate expires')).length, 0);
});

test('without inotify, polling notices a changed certificate once, debounced', async (t) => {
  const s = await setup(t);
  let calls = 0;
  let notify: () => void = () => {};
  const watcher = watchTlsFiles({
    certPath: s.certPath,
    keyPath: s.keyPath,
    pollIntervalMs: 30,
    debounceMs: 30,
    useFsWatch: false,
    onChange: () => {
      calls += 1;
      notify();
    },
  });
  t.after(() => watcher.stop());
  // The watcher's timers do not hold the process open (unref), so this one does, and bounds the wait.
  const changed = new Promise<void>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error('no change noticed within 5 s')), 5000);
    notify = () => {
      clearTimeout(guard);
      resolve();
    };
  });
  writeCert(await makeCert(365), s.certPath, s.keyPath);
  await changed;
  // Quiet files do not call again (several poll intervals later).
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(calls, 1);
});

test('a switch to other certificate paths refused on reload is applied by the next reload once the pair is fixed', async (t) => {
  const s = await setup(t);
  // The configuration a reload reads: the same, but for tls.cert and tls.key (as an edited file would say).
  const pairB = { cert: join(s.dataDir, 'certs', 'b-cert.pem'), key: join(s.dataDir, 'certs', 'b-key.pem') };
  let paths = { cert: s.certPath, key: s.keyPath };
  const reread = () =>
    loadConfig({
      env: {},
      defaultConfigPath: '/nonexistent/threatcol.json',
      overrides: {
        dataDir: s.dataDir,
        'server.host': '127.0.0.1',
        'server.port': 0,
        'admin.listen': '127.0.0.1:0',
        'log.level': 'debug',
        'tls.cert': paths.cert,
        'tls.key': paths.key,
        'tls.pollIntervalMs': 60_000,
      },
    });
  const h = await startHarnessDaemon(
    t,
    s.dataDir,
    { 'tls.cert': s.certPath, 'tls.key': s.keyPath, 'tls.pollIntervalMs': 60_000 },
    { tlsDebounceMs: 50, reread },
  );
  const second = await makeCert(365);
  // Pair B half-written: its key does not belong to its certificate.
  writeCert({ ...second, key: s.first.key }, pairB.cert, pairB.key);
  paths = pairB;
  const refused = h.daemon.reload();
  assert.deepEqual(refused, { ok: true, applied: [], restartNeeded: ['tls.cert', 'tls.key'] });
  assert.equal(h.daemon.fingerprint, s.first.fingerprint);

  // Fixed: the reload after it switches, since nothing applied the switch yet.
  writeCert(second, pairB.cert, pairB.key);
  const applied = h.daemon.reload();
  assert.deepEqual(applied, { ok: true, applied: ['tls.cert', 'tls.key'], restartNeeded: [] });
  assert.equal(h.daemon.fingerprint, second.fingerprint);
  const socket = await open(h.port, second.cert);
  assert.equal(socket.getPeerCertificate().fingerprint256, second.fingerprint);
  socket.destroy();
});
