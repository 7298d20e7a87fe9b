// Issue 27 F6: a flood of rejections flooded the journal. 6,000 unauthenticated posts from distinct addresses
// gave 11,952 warn lines and a 313 KB summary line (journald splits past 48 KB). The log is a contract: its
// lines are counted here on a captured stream with an injected clock.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { ActivityLog, MAX_WARN_LINES, type Rejection } from '../../src/inputs/https/activity-log.js';
import { createLogger } from '../../src/log.js';

function captured() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(line);
      cb();
    },
  });
  const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { lines, parsed, stream };
}

const refused = (remoteAddr: string, sensor: string | null = null): Rejection => ({
  code: 'AUTH_MISSING',
  status: 401,
  method: 'POST',
  path: '/generic',
  sensor,
  remoteAddr,
  message: 'missing header X-AUTH_KEY and X-SENSOR_NAME',
});

const ipv4 = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

test('F6: 6,000 rejections from distinct addresses: at most the cap in warn lines, one "more" line, a summary under 8 KB', () => {
  const log = captured();
  let clock = 1_000_000;
  const activity = new ActivityLog(
    createLogger({ level: 'info', format: 'json', stream: log.stream }),
    10_000,
    () => clock,
  );
  for (let i = 0; i < 6000; i++) {
    activity.reject(refused(ipv4(i)));
    activity.tlsFailure(ipv4(100_000 + i), 'not_tls', 'ERR_SSL_WRONG_VERSION_NUMBER');
    if (i % 1000 === 999) clock += 1000; // 6 s in all: one interval of the global cap
  }
  activity.summarise();
  const lines = log.parsed();
  const warns = lines.filter((l) => l.level === 40);
  const more = warns.filter((l) => typeof l.suppressed === 'number');
  assert.equal(warns.length - more.length, MAX_WARN_LINES);
  assert.equal(more.length, 1);
  assert.equal(more[0]?.suppressed, 12_000 - MAX_WARN_LINES);
  const summaries = log.lines.filter((l) => l.includes('"msg":"summary"'));
  assert.equal(summaries.length, 1);
  const summary = summaries[0] as string;
  assert.ok(summary.length <= 8192, `summary line is ${summary.length} bytes`);
  const s = JSON.parse(summary) as Record<string, unknown>;
  assert.equal(s.totalRejected, 6000);
  assert.equal(Object.keys(s.rejectedRequests as object).length, 20);
  assert.deepEqual(s.rejectedOmitted, { entries: 5980, count: 5980 });
  assert.equal(Object.keys(s.failedConnections as object).length, 20);
  assert.deepEqual(s.failedConnectionsOmitted, { entries: 5980, count: 5980 });
});

test('F6: the cap starts again each interval; one IPv6 /64 is one sender', () => {
  const log = captured();
  let clock = 0;
  const activity = new ActivityLog(
    createLogger({ level: 'info', format: 'json', stream: log.stream }),
    10_000,
    () => clock,
  );
  for (let i = 0; i < 100; i++) activity.reject(refused(`2001:db8:0:7::${i.toString(16)}`));
  assert.equal(log.parsed().filter((l) => l.level === 40).length, 1, 'one line for the /64');
  clock += 10_000;
  for (let i = 0; i < 200; i++) activity.reject(refused(ipv4(i)));
  const warns = log.parsed().filter((l) => l.level === 40);
  assert.equal(warns.length, 1 + MAX_WARN_LINES);
  clock += 10_000;
  activity.reject(refused('192.0.2.1'));
  const after = log.parsed().filter((l) => l.level === 40);
  assert.equal(after.at(-2)?.suppressed, 200 - MAX_WARN_LINES, 'the "more" line opens the next interval');
  assert.equal(after.at(-1)?.remoteAddr, '192.0.2.1');
  activity.summarise();
  const summary = log.parsed().find((l) => l.msg === 'summary');
  assert.equal(
    (summary?.rejectedRequests as Record<string, number>)['addr:2001:db8:0:7::/64 AUTH_MISSING'],
    100,
  );
});
