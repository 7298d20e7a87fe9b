// Issue 27 F6, black box: unauthenticated posts from 300 distinct addresses (127.0.x.y are all this box's)
// give at most MAX_WARN_LINES rejection lines, one "more" line and a summary of the top entries under 8 KB.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Agent, request } from 'undici';
import { MAX_WARN_LINES } from '../../src/inputs/https/activity-log.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { genericRecord } from '../helpers/records.js';

test('F6: 300 unauthenticated posts from distinct addresses: capped warn lines, a bounded summary', async (t) => {
  // One interval of the cap for the whole test, however slow the box.
  const s = await startTestServer(t, { overrides: { 'log.rejectIntervalMs': 600_000 } });
  const ca = readFileSync(join(s.dataDir, 'tls', 'cert.pem'), 'utf8');
  const body = JSON.stringify(genericRecord());
  for (let i = 0; i < 300; i++) {
    const localAddress = `127.0.${3 + Math.floor(i / 250)}.${1 + (i % 250)}`;
    const agent = new Agent({ localAddress, connect: { ca, servername: 'localhost' } });
    const res = await request(`${s.url}/generic`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      dispatcher: agent,
    });
    await res.body.text();
    await agent.close();
    assert.equal(res.statusCode, 401);
  }
  const code = await s.stop();
  assert.equal(code, 0);
  const rejected = s.logs.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('rejected: '));
  assert.equal(rejected.length, MAX_WARN_LINES);
  const more = s.logs.filter((l) => typeof l.suppressed === 'number');
  assert.deepEqual(
    more.map((l) => l.suppressed),
    [300 - MAX_WARN_LINES],
  );
  const summary = s
    .logText()
    .split('\n')
    .filter((l) => l.includes('"msg":"summary"'));
  assert.equal(summary.length, 1);
  assert.ok((summary[0] as string).length <= 8192, `summary line is ${(summary[0] as string).length} bytes`);
  const parsed = JSON.parse(summary[0] as string) as Record<string, unknown>;
  assert.equal(parsed.totalRejected, 300);
  assert.deepEqual(parsed.rejectedOmitted, { entries: 280, count: 280 });
});
