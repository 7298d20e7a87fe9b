// Black-box: the admin listener (DESIGN 11) on a real collector: /metrics parsed strictly with counters that
// move by exactly the requests sent, /healthz and /readyz, token auth, loopback rule, and its own port.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { errorCode, post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { type Family, parseExposition, sampleValue } from '../helpers/prometheus.js';
import { firewallRecord, genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const DESIGN_METRICS = [
  'threatcol_requests_total',
  'threatcol_records_accepted_total',
  'threatcol_records_duplicate_total',
  'threatcol_request_duration_seconds',
  'threatcol_store_sync_duration_seconds',
  'threatcol_store_batch_records',
  'threatcol_store_queue_records',
  'threatcol_tls_handshake_failures_total',
  'threatcol_connections_open',
  'threatcol_sensor_last_seen_timestamp_seconds',
];

async function scrape(adminUrl: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  const res = await fetch(`${adminUrl}/metrics`, { headers });
  const text = await res.text();
  const ms = performance.now() - started;
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return { families: parseExposition(text), ms, text };
}

const count = (f: Map<string, Family>, labels: Record<string, string>) =>
  sampleValue(f, 'threatcol_requests_total', labels);

test('/metrics: every DESIGN 11 metric and process metrics, counters move by exactly the requests sent', async (t) => {
  const s = await startTestServer(t);
  assert.ok(s.adminUrl);
  const key = await s.addSensor('fw-1');
  const as = { agent: s.agent, sensor: 'fw-1', key };

  const before = await scrape(s.adminUrl);
  for (const name of DESIGN_METRICS) assert.ok(before.families.has(name), `${name} is exposed`);
  for (const name of [
    'process_cpu_user_seconds_total',
    'process_resident_memory_bytes',
    'nodejs_heap_size_used_bytes',
  ]) {
    assert.ok(before.families.has(name), `${name} (process metric) is exposed`);
  }

  // Six distinct records (dedupe is on: identical firewall records within the window are one delivery).
  const pair = (i: number) => [
    firewallRecord({ sport: 40000 + 2 * i }),
    firewallRecord({ sport: 40001 + 2 * i }),
  ];
  for (let i = 0; i < 3; i++) assert.equal((await post(s.url, '/firewall', pair(i), as)).status, 200);
  // A retried delivery of the first request: answered 200, its 2 records counted as duplicates, not stored.
  const retried = await post(s.url, '/firewall', pair(0), as);
  assert.equal(retried.status, 200);
  assert.equal((retried.json as { duplicates?: number }).duplicates, 2);
  assert.equal((await post(s.url, '/generic', genericRecord(), as)).status, 200);
  const invalid = await post(s.url, '/generic', { nope: 1 }, as);
  assert.equal(errorCode(invalid), 'VALIDATION_FAILED');
  const wrongKey = await post(s.url, '/firewall', firewallRecord(), { ...as, key: 'tc_wrong' });
  assert.equal(errorCode(wrongKey), 'AUTH_INVALID');
  assert.equal((await post(s.url, '/nope', {}, as)).status, 404);

  const after = await scrape(s.adminUrl);
  const delta = (labels: Record<string, string>) =>
    count(after.families, labels) - count(before.families, labels);
  assert.equal(delta({ endpoint: 'firewall', status: '200', code: 'OK' }), 4);
  assert.equal(delta({ endpoint: 'generic', status: '200', code: 'OK' }), 1);
  assert.equal(delta({ endpoint: 'generic', status: '400', code: 'VALIDATION_FAILED' }), 1);
  assert.equal(delta({ endpoint: 'firewall', status: '401', code: 'AUTH_INVALID' }), 1);
  assert.equal(delta({ endpoint: 'other', status: '404', code: 'NOT_FOUND' }), 1);
  const accepted = (f: Map<string, Family>, endpoint: string) =>
    sampleValue(f, 'threatcol_records_accepted_total', { sensor: 'fw-1', endpoint });
  assert.equal(accepted(after.families, 'firewall') - accepted(before.families, 'firewall'), 6);
  assert.equal(accepted(after.families, 'generic') - accepted(before.families, 'generic'), 1);
  const durations = (f: Map<string, Family>) =>
    sampleValue(f, 'threatcol_request_duration_seconds_count', { endpoint: 'firewall' });
  assert.equal(durations(after.families) - durations(before.families), 5);
  const duplicates = (f: Map<string, Family>) => sampleValue(f, 'threatcol_records_duplicate_total');
  assert.equal(duplicates(after.families) - duplicates(before.families), 2);
  // Every durable batch is counted; the 7 records went in 4 requests, so in 1 to 4 batches.
  const batched = sampleValue(after.families, 'threatcol_store_batch_records_sum');
  assert.equal(batched - sampleValue(before.families, 'threatcol_store_batch_records_sum'), 7);
  assert.ok(sampleValue(after.families, 'threatcol_store_sync_duration_seconds_count') >= 1);
  const lastSeen = sampleValue(after.families, 'threatcol_sensor_last_seen_timestamp_seconds', {
    sensor: 'fw-1',
  });
  assert.ok(Math.abs(lastSeen - Date.now() / 1000) < 60, `last seen ${lastSeen}`);
  assert.ok(
    sampleValue(after.families, 'threatcol_connections_open') >= 1,
    'the agent keeps its connection open',
  );

  // Bounded cardinality: no label carries a client address or a record value.
  for (const family of after.families.values()) {
    for (const sample of family.samples) {
      for (const value of Object.values(sample.labels)) {
        assert.ok(
          !['127.0.0.1', '192.0.2.10', 'EICAR'].some((v) => value.includes(v)),
          `${sample.name} ${value}`,
        );
      }
    }
  }
  t.diagnostic(`scrape took ${after.ms.toFixed(1)} ms (${after.text.length} bytes)`);
});

test('a failed TLS handshake is counted by reason', async (t) => {
  const s = await startTestServer(t);
  assert.ok(s.adminUrl);
  const before = await scrape(s.adminUrl);
  // Plain HTTP on the TLS port: the handshake fails.
  const res = await fetch(`${s.url.replace('https:', 'http:')}/firewall`).catch(() => null);
  assert.equal(res, null);
  let delta = 0;
  for (let i = 0; i < 50 && delta === 0; i++) {
    const now = await scrape(s.adminUrl);
    const sum = (f: Map<string, Family>) =>
      sampleValue(f, 'threatcol_tls_handshake_failures_total', { reason: 'plain_http' });
    delta = sum(now.families) - sum(before.families);
    if (delta === 0) await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(delta, 1);
});

test('/healthz 200; /readyz 200 when the store accepts writes, 503 with the reason when it does not', async (t) => {
  const ok = await startTestServer(t);
  const health = await fetch(`${ok.adminUrl}/healthz`);
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'ok' });
  const ready = await fetch(`${ok.adminUrl}/readyz`);
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { status: 'ready' });

  // Below the free-space floor the store refuses writes (as root, a mode cannot make a directory unwritable).
  const full = await startTestServer(t, { overrides: { 'store.minFreeBytes': 2 ** 52 } });
  const notReady = await fetch(`${full.adminUrl}/readyz`);
  assert.equal(notReady.status, 503);
  const body = (await notReady.json()) as { status: string; reasons: string[] };
  assert.equal(body.status, 'not ready');
  assert.equal(body.reasons.length, 1);
  assert.match(body.reasons[0] as string, /store\.minFreeBytes/);
  assert.equal((await fetch(`${full.adminUrl}/healthz`)).status, 200, 'alive while not ready');
});

test('the admin listener never serves the sensors routes, and the sensors port never serves the admin routes', async (t) => {
  const s = await startTestServer(t);
  const key = await s.addSensor('fw-1');
  const onAdmin = await fetch(`${s.adminUrl}/firewall`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-auth_key': key, 'x-sensor_name': 'fw-1' },
    body: JSON.stringify(firewallRecord()),
  });
  assert.equal(onAdmin.status, 405);
  assert.equal((await fetch(`${s.adminUrl}/firewall`)).status, 404);
  for (const path of ['/metrics', '/healthz', '/readyz', '/', '/api/sensors']) {
    const r = await post(s.url, path, undefined, { agent: s.agent, method: 'GET' });
    assert.equal(r.status, 404, path);
  }
});

test('admin.token: every route needs the Bearer token (Basic with it as password for a browser)', async (t) => {
  const token = 'a-long-admin-token-0123456789';
  const s = await startTestServer(t, { overrides: { 'admin.token': token } });
  for (const path of ['/metrics', '/healthz', '/readyz', '/', '/api/sensors', '/api/feed']) {
    const none = await fetch(`${s.adminUrl}${path}`);
    assert.equal(none.status, 401, path);
    assert.match(none.headers.get('www-authenticate') ?? '', /Bearer/);
  }
  const wrong = await fetch(`${s.adminUrl}/healthz`, { headers: { authorization: `Bearer ${token}x` } });
  assert.equal(wrong.status, 401);
  const prefix = await fetch(`${s.adminUrl}/healthz`, {
    headers: { authorization: `Bearer ${token.slice(0, -1)}` },
  });
  assert.equal(prefix.status, 401);
  assert.equal(
    (await fetch(`${s.adminUrl}/healthz`, { headers: { authorization: `Bearer ${token}` } })).status,
    200,
  );
  await scrape(s.adminUrl as string, { authorization: `Bearer ${token}` });
  const basic = Buffer.from(`admin:${token}`).toString('base64');
  assert.equal(
    (await fetch(`${s.adminUrl}/readyz`, { headers: { authorization: `Basic ${basic}` } })).status,
    200,
  );
});

test('serve: a non-loopback admin.listen without a token exits 78; an admin port in use exits 69 naming admin.listen', async (t) => {
  const dir = makeTempDir(t);
  const open = await runCli([
    'serve',
    '--data-dir',
    dir,
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--admin-listen',
    '0.0.0.0:0',
  ]);
  assert.equal(open.code, 78, open.stderr);
  assert.match(
    open.stderr,
    /CONFIG_INVALID: .*admin\.listen: 0\.0\.0\.0:0 is not a loopback address: set admin\.token/,
  );
  const bad = await runCli(['serve', '--data-dir', dir, '--port', '0', '--admin-listen', 'localhost']);
  assert.equal(bad.code, 78, bad.stderr);
  assert.match(bad.stderr, /admin\.listen: must be host:port/);

  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.after(() => holder.close());
  const port = (holder.address() as { port: number }).port;
  const busy = await runCli([
    'serve',
    '--data-dir',
    dir,
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--admin-listen',
    `127.0.0.1:${port}`,
  ]);
  assert.equal(busy.code, 69, busy.stderr);
  assert.match(
    busy.stderr,
    new RegExp(`LISTEN_FAILED: admin\\.listen: cannot listen on 127\\.0\\.0\\.1:${port}: already in use`),
  );
});

test('admin.listen "" turns the listener off', async (t) => {
  const s = await startTestServer(t, { overrides: { 'admin.listen': '' } });
  assert.equal(s.adminUrl, null);
  assert.equal(s.daemon.adminAddress, null);
});
