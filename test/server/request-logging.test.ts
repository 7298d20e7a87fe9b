// What the journal gets: a 500 at error with its stack every time (never rate-limited away), an accepted request
// at debug.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { connect } from 'node:tls';
import { errorCode, post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { genericRecord } from '../helpers/records.js';
import { until } from '../helpers/until.js';

test('internal errors are logged at error with the stack, each one; accepted requests at debug', async (t) => {
  // The fault: the clock throws when the request pipeline asks it, nowhere else (a stand-in for a bug).
  let broken = false;
  const now = () => {
    if (broken && new Error().stack?.includes('handleIngest')) throw new TypeError('the clock broke');
    return Date.now();
  };
  const server = await startTestServer(t, { now });
  const key = await server.addSensor('s1');
  const ok = await post(server.url, '/generic', genericRecord(), { sensor: 's1', key, agent: server.agent });
  assert.equal(ok.status, 200, ok.text);
  const accepted = server.logs.filter((l) => l.msg === 'accepted');
  assert.equal(accepted.length, 1);
  assert.equal(accepted[0]?.level, 20);
  assert.equal(accepted[0]?.sensor, 's1');
  assert.equal(accepted[0]?.path, '/generic');
  assert.equal(accepted[0]?.records, 1);
  assert.equal(accepted[0]?.remoteAddr, '127.0.0.1');

  broken = true;
  for (let i = 0; i < 3; i++) {
    const reply = await post(server.url, '/generic', genericRecord(), {
      sensor: 's1',
      key,
      agent: server.agent,
    });
    assert.equal(reply.status, 500);
    assert.equal(errorCode(reply), 'INTERNAL');
    assert.doesNotMatch(reply.text, /clock broke|at /, 'a 500 never shows internals');
  }
  broken = false;
  const errors = server.logs.filter((l) => l.level === 50 && l.code === 'INTERNAL');
  assert.equal(errors.length, 3, 'one error line per 500, none rate-limited away');
  const err = errors[0]?.err as { message?: string; stack?: string } | undefined;
  assert.equal(err?.message, 'the clock broke');
  assert.match(err?.stack ?? '', /TypeError: the clock broke\n\s+at /);
  assert.equal(errors[0]?.sensor, null, 'the failure came before authentication');
  assert.equal(errors[0]?.path, '/generic');
  assert.ok(!server.logText().includes(key), 'the key never reaches the log');
});

test('a sender that hangs up in the middle of its body is logged at debug, with its sensor and address', async (t) => {
  const server = await startTestServer(t);
  const key = await server.addSensor('s1');
  const socket = connect({
    host: '127.0.0.1',
    port: Number(new URL(server.url).port),
    rejectUnauthorized: false,
  });
  socket.on('error', () => {});
  await once(socket, 'secureConnect');
  socket.write(
    `POST /generic HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-AUTH_KEY: ${key}\r\n` +
      `X-SENSOR_NAME: s1\r\nContent-Length: 1000\r\n\r\n[{"source_ip":`,
  );
  await new Promise((r) => setTimeout(r, 100));
  socket.destroy();
  await until(
    () => server.logs.some((l) => l.msg === 'the client hung up before its request was read'),
    5000,
  );
  const gone = server.logs.find((l) => l.msg === 'the client hung up before its request was read');
  assert.equal(gone?.level, 20);
  assert.equal(gone?.sensor, 's1');
  assert.equal(gone?.path, '/generic');
  assert.equal(gone?.remoteAddr, '127.0.0.1');
});
