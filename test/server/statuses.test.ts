// Black-box: every documented status and code on the real HTTPS server, in DESIGN 2's order of checks.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { connect } from 'node:tls';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { errorCode, post } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/in-process-server.js';
import { firewallRecord, genericRecord, readStored } from '../helpers/records.js';

describe('statuses and codes', () => {
  let s: TestServer;
  let key: string;
  let revokedKey: string;
  const as = () => ({ agent: s.agent, sensor: 'fw-1', key });

  before(async () => {
    s = await startTestServer(
      { after: (fn) => after.push(fn) },
      { overrides: { 'server.maxBodyBytes': 65_536 } },
    );
    key = await s.addSensor('fw-1');
    revokedKey = await s.addSensor('old-fw');
    await s.revokeSensor('old-fw');
  });
  const after: (() => unknown)[] = [];
  test.after(async () => {
    for (const fn of after) await fn();
  });

  test('404 NOT_FOUND for any other path, 405 with Allow: POST for other methods', async () => {
    const r404 = await post(s.url, '/firewalls', firewallRecord(), as());
    assert.equal(r404.status, 404);
    assert.equal(errorCode(r404), 'NOT_FOUND');
    const r405 = await post(s.url, '/firewall', undefined, { ...as(), method: 'GET' });
    assert.equal(r405.status, 405);
    assert.equal(errorCode(r405), 'METHOD_NOT_ALLOWED');
    assert.equal(r405.headers.allow, 'POST');
    const withQuery = await post(s.url, '/generic?from=test', genericRecord(), as());
    assert.equal(withQuery.status, 200);
  });

  test('401 AUTH_MISSING names the missing header; empty counts as missing', async () => {
    const noKey = await post(s.url, '/firewall', firewallRecord(), { agent: s.agent, sensor: 'fw-1' });
    assert.equal(noKey.status, 401);
    assert.equal(errorCode(noKey), 'AUTH_MISSING');
    assert.match(noKey.text, /X-AUTH_KEY/);
    assert.doesNotMatch(noKey.text, /X-SENSOR_NAME/);
    const emptyName = await post(s.url, '/firewall', firewallRecord(), { agent: s.agent, sensor: '', key });
    assert.equal(errorCode(emptyName), 'AUTH_MISSING');
    assert.match(emptyName.text, /X-SENSOR_NAME/);
  });

  test('401 AUTH_INVALID: one identical answer for unknown sensor and wrong key', async () => {
    const unknown = await post(s.url, '/firewall', firewallRecord(), {
      agent: s.agent,
      sensor: 'nobody',
      key,
    });
    const wrong = await post(s.url, '/firewall', firewallRecord(), {
      agent: s.agent,
      sensor: 'fw-1',
      key: `${key}x`,
    });
    const other = await post(s.url, '/firewall', firewallRecord(), {
      agent: s.agent,
      sensor: 'fw-1',
      key: revokedKey,
    });
    const huge = await post(s.url, '/firewall', firewallRecord(), {
      agent: s.agent,
      sensor: 'fw-1',
      key: 'k'.repeat(5000),
    });
    for (const r of [unknown, wrong, other, huge]) {
      assert.equal(r.status, 401);
      assert.equal(r.text, unknown.text);
    }
    assert.equal(errorCode(unknown), 'AUTH_INVALID');
  });

  test('hyphen header aliases work; disagreeing spellings or repeated headers are refused', async () => {
    const hyphen = await post(s.url, '/generic', genericRecord(), {
      agent: s.agent,
      headers: { 'X-AUTH-KEY': key, 'X-SENSOR-NAME': 'fw-1' },
    });
    assert.equal(hyphen.status, 200, hyphen.text);
    const clash = await post(s.url, '/generic', genericRecord(), {
      ...as(),
      headers: { 'X-AUTH-KEY': revokedKey },
    });
    assert.equal(errorCode(clash), 'AUTH_INVALID');
    const res = await request(`${s.url}/generic`, {
      method: 'POST',
      headers: [
        'content-type',
        'application/json',
        'x-auth_key',
        key,
        'x-auth_key',
        key,
        'x-sensor_name',
        'fw-1',
      ],
      body: JSON.stringify(genericRecord()),
      dispatcher: s.agent,
    });
    assert.equal(res.statusCode, 401);
    await res.body.text();
  });

  test('an Authorization header (the firewall profile dummy credentials) is ignored', async () => {
    const r = await post(s.url, '/firewall', firewallRecord(), {
      ...as(),
      headers: { authorization: 'Basic ZHVtbXk6' },
    });
    assert.equal(r.status, 200, r.text);
  });

  test('403 SENSOR_REVOKED only with the right key', async () => {
    const r = await post(s.url, '/firewall', firewallRecord(), {
      agent: s.agent,
      sensor: 'old-fw',
      key: revokedKey,
    });
    assert.equal(r.status, 403);
    assert.equal(errorCode(r), 'SENSOR_REVOKED');
  });

  test('415 for other media types and encodings; parameters and case are fine', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx']) {
      const r = await post(s.url, '/generic', genericRecord(), { ...as(), contentType });
      assert.equal(r.status, 415, contentType);
      assert.equal(errorCode(r), 'UNSUPPORTED_MEDIA_TYPE');
    }
    const none = await post(s.url, '/generic', genericRecord(), { ...as(), contentType: null });
    assert.equal(none.status, 415);
    const ok = await post(s.url, '/generic', genericRecord(), {
      ...as(),
      contentType: 'Application/JSON; charset=UTF-8',
    });
    assert.equal(ok.status, 200);
    const br = await post(s.url, '/generic', genericRecord(), {
      ...as(),
      headers: { 'content-encoding': 'br' },
    });
    assert.equal(br.status, 415);
  });

  test('415 comes before the body: an unauthenticated client is refused before its media type', async () => {
    const r = await post(s.url, '/generic', 'x', { agent: s.agent, contentType: 'text/plain' });
    assert.equal(r.status, 401);
  });

  test('413 BODY_TOO_LARGE: declared, streamed (chunked) and after gzip; connection closed', async () => {
    const big = JSON.stringify(
      [genericRecord({ threat: 'x'.repeat(4000) })].concat(
        Array(20).fill(genericRecord({ threat: 'y'.repeat(4000) })),
      ),
    );
    const declared = await post(s.url, '/generic', big, as());
    assert.equal(declared.status, 413);
    assert.equal(errorCode(declared), 'BODY_TOO_LARGE');
    assert.equal(declared.headers.connection, 'close');
    // Chunked, so no Content-Length announces the size: the bound must hold while streaming.
    const streamed = await rawChunkedPost(s.url, key, 20, 8192);
    assert.match(streamed.response, /^HTTP\/1\.1 413 /);
    assert.match(streamed.response, /\r\nConnection: close\r\n/i);
    assert.match(streamed.response, /"BODY_TOO_LARGE"/);
    assert.ok(streamed.closedByServer, 'the server closes the connection');
    // A small gzip body that inflates past the limit.
    const bomb = gzipSync(Buffer.from(`["${'a'.repeat(2_000_000)}"]`));
    assert.ok(bomb.length < 65_536);
    const r = await post(s.url, '/generic', bomb, { ...as(), headers: { 'content-encoding': 'gzip' } });
    assert.equal(r.status, 413);
  });

  test('gzip bodies are accepted; corrupt gzip is INVALID_ENCODING', async () => {
    const ok = await post(s.url, '/generic', [genericRecord(), genericRecord()], { ...as(), gzip: true });
    assert.equal(ok.status, 200, ok.text);
    assert.equal((ok.json as { accepted: number }).accepted, 2);
    const bad = await post(s.url, '/generic', Buffer.from('not gzip at all'), {
      ...as(),
      headers: { 'content-encoding': 'gzip' },
    });
    assert.equal(bad.status, 400);
    assert.equal(errorCode(bad), 'INVALID_ENCODING');
  });

  test('400 INVALID_JSON with position; prototype poisoning refused', async () => {
    const r = await post(s.url, '/generic', '{"source_ip": }', as());
    assert.equal(r.status, 400);
    assert.equal(errorCode(r), 'INVALID_JSON');
    assert.equal((r.json as { error: { details: { position: number }[] } }).error.details[0]?.position, 14);
    const poison = await post(
      s.url,
      '/generic',
      `{"__proto__":{"admin":true},${JSON.stringify(genericRecord()).slice(1)}`,
      as(),
    );
    assert.equal(poison.status, 400);
    assert.equal(errorCode(poison), 'INVALID_JSON');
  });

  test('400 VALIDATION_FAILED lists every bad field; nothing of a bad batch is stored', async () => {
    const before = readStored(s.dataDir).length;
    const r = await post(
      s.url,
      '/firewall',
      [
        firewallRecord(),
        firewallRecord({
          src: '999.1.1.1',
          dport: 70000,
          sport: '12abc',
          time_received: '2026/02/30 00:00:00',
          app: 5,
        }),
      ],
      as(),
    );
    assert.equal(r.status, 400);
    assert.equal(errorCode(r), 'VALIDATION_FAILED');
    const details = (r.json as { error: { details: { path: string }[] } }).error.details
      .map((d) => d.path)
      .sort();
    assert.deepEqual(details, ['/1/app', '/1/dport', '/1/sport', '/1/src', '/1/time_received']);
    assert.equal(readStored(s.dataDir).length, before);

    const missing = await post(s.url, '/generic', {}, as());
    const paths = (missing.json as { error: { details: { path: string }[] } }).error.details
      .map((d) => d.path)
      .sort();
    assert.deepEqual(paths, [
      '/criticality',
      '/destination_ip',
      '/destination_port',
      '/protocol',
      '/source_ip',
      '/threat',
    ]);
  });

  test('ports and levels: digit strings converted; null, booleans, "", "12abc", floats refused', async () => {
    for (const bad of [null, true, '', '12abc', 1.5, -1, 65536, '065535', ' 80']) {
      const r = await post(s.url, '/generic', genericRecord({ destination_port: bad }), as());
      assert.equal(r.status, 400, `destination_port ${JSON.stringify(bad)}`);
    }
    for (const bad of [null, false, '', '5', 5, -1, 2.5, 'high']) {
      const r = await post(s.url, '/generic', genericRecord({ criticality: bad }), as());
      assert.equal(r.status, 400, `criticality ${JSON.stringify(bad)}`);
    }
    const ok = await post(
      s.url,
      '/generic',
      genericRecord({ destination_port: '8080', criticality: '4' }),
      as(),
    );
    assert.equal(ok.status, 200);
    const stored = readStored(s.dataDir).find((r) => r.id === (ok.json as { ids: string[] }).ids[0]);
    assert.equal(stored?.dst_port, 8080);
    assert.equal(stored?.criticality, 4);
    assert.equal(stored?.severity, 'critical');
  });

  test('arrays: 1..1000 records; empty or non-object bodies refused', async () => {
    for (const body of [[], 42, '"x"', null, [1], Array(1001).fill({})]) {
      const r = await post(s.url, '/generic', typeof body === 'string' ? body : JSON.stringify(body), as());
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 40));
      assert.equal(errorCode(r), 'VALIDATION_FAILED');
    }
    const tooMany = await post(s.url, '/generic', Array(1001).fill({}), as());
    assert.match(tooMany.text, /1 to 1000 records/);
    const many = await post(s.url, '/generic', Array(100).fill(genericRecord()), as());
    assert.equal(many.status, 200);
    assert.equal((many.json as { ids: string[] }).ids.length, 100);
    assert.equal(new Set((many.json as { ids: string[] }).ids).size, 100);
  });

  test('details are bounded to 20', async () => {
    const r = await post(s.url, '/generic', Array(30).fill({}), as());
    assert.equal((r.json as { error: { details: unknown[] } }).error.details.length, 20);
  });

  test('firewall: extra fields kept (bounded), criticality from the sender ignored, quoting repaired', async () => {
    const extra = await post(
      s.url,
      '/firewall',
      firewallRecord({ rule: 'allow-web', vsys: 'vsys1', criticality: 0 }),
      as(),
    );
    assert.equal(extra.status, 200);
    const stored = readStored(s.dataDir).find((r) => r.id === (extra.json as { ids: string[] }).ids[0]);
    assert.ok(stored);
    assert.equal((stored.original as Record<string, unknown>).rule, 'allow-web');
    assert.equal(stored?.criticality, 3);

    const tooMany: Record<string, unknown> = {};
    for (let i = 0; i < 65; i++) tooMany[`x${i}`] = i;
    assert.equal((await post(s.url, '/firewall', firewallRecord(tooMany), as())).status, 400);
    assert.equal((await post(s.url, '/firewall', firewallRecord({ nested: { a: 1 } }), as())).status, 400);
    assert.equal(
      (await post(s.url, '/firewall', firewallRecord({ app: 'a'.repeat(1025) }), as())).status,
      400,
    );
    assert.equal((await post(s.url, '/firewall', firewallRecord({ app: '', proto: '' }), as())).status, 200);
    assert.equal((await post(s.url, '/firewall', firewallRecord({ threat_name: '' }), as())).status, 400);

    const template = JSON.stringify(firewallRecord()).replace(
      'EICAR Test File Detection(86708)"',
      'Say "hi" \\d(86708)"',
    );
    const repaired = await post(s.url, '/firewall', template, as());
    assert.equal(repaired.status, 200, repaired.text);
    const r = readStored(s.dataDir).find((x) => x.id === (repaired.json as { ids: string[] }).ids[0]);
    assert.equal(r?.repaired, true);
    assert.equal(r?.threat, 'Say "hi" \\d');
    assert.equal(r?.threat_id, '86708');
    assert.equal((await post(s.url, '/generic', template, as())).status, 400);
  });

  test('firewall: criticality from the category map, then the default', async () => {
    const noSeverity = firewallRecord();
    delete noSeverity.severity;
    const r = await post(s.url, '/firewall', noSeverity, as());
    const stored = readStored(s.dataDir).find((x) => x.id === (r.json as { ids: string[] }).ids[0]);
    assert.equal(stored?.criticality, 2);
    assert.equal(stored?.criticality_source, 'default');
  });

  test('rejections log at warn, rate-limited per sensor and code, and never show the key', async () => {
    const count = () => s.logs.filter((l) => l.code === 'VALIDATION_FAILED' && l.sensor === 'fw-1').length;
    const start = count();
    for (let i = 0; i < 5; i++) await post(s.url, '/generic', {}, as());
    assert.ok(count() - start <= 1, 'at most one warn line per interval');
    assert.ok(s.logs.some((l) => l.level === 40 && l.code === 'VALIDATION_FAILED'));
    assert.ok(!s.logText().includes(key));
    assert.ok(!s.logText().includes(revokedKey));
  });
});

/** Sends a chunked body over a raw TLS socket and returns what the server answered. */
async function rawChunkedPost(
  url: string,
  key: string,
  chunks: number,
  chunkSize: number,
): Promise<{ response: string; closedByServer: boolean }> {
  const socket = connect({ host: '127.0.0.1', port: Number(new URL(url).port), rejectUnauthorized: false });
  await new Promise((resolve) => socket.once('secureConnect', resolve));
  let response = '';
  let closedByServer = false;
  socket.on('data', (d: Buffer) => {
    response += d.toString();
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closedByServer = true;
      resolve();
    }),
  );
  socket.write(
    `POST /generic HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-AUTH_KEY: ${key}\r\n` +
      'X-SENSOR_NAME: fw-1\r\nTransfer-Encoding: chunked\r\n\r\n',
  );
  const chunk = '['.repeat(chunkSize);
  for (let i = 0; i < chunks && !socket.destroyed; i++) {
    socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 3000))]);
  socket.destroy();
  return { response, closedByServer };
}
