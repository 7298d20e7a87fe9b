// An output failing for over a minute is a warning in /readyz's detail, never its status (DESIGN 13), and goes
// away with the next delivered batch. The daemon runs in this process with a clock the test moves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { genericRecord } from '../helpers/records.js';
import { OUTPUTS_THREAD_MS, until } from '../helpers/until.js';
import { startReceiver } from './webhook-receiver.js';

test('/readyz: 200 with a warning once an output has failed for over a minute; none after it delivers again', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  receiver.mode = 'down';
  let skew = 0;
  const server = await startTestServer(t, {
    now: () => Date.now() + skew,
    overrides: {
      outputs: { hook: { type: 'webhook', url: receiver.url, retryMaxMs: 1000, batch: { maxWaitMs: 20 } } },
    },
  });
  t.after(() => server.stop());
  const key = await server.addSensor('fw');
  assert.equal(
    (await post(server.url, '/generic', [genericRecord()], { agent: server.agent, sensor: 'fw', key }))
      .status,
    200,
  );
  const readyz = async () =>
    (await fetch(`${server.adminUrl}/readyz`)).json() as Promise<{ status: string; warnings?: string[] }>;
  await until(() => server.logs.some((l) => l.msg === 'output delivery failed; retrying'), OUTPUTS_THREAD_MS);
  assert.deepEqual(await readyz(), { status: 'ready' }, 'failing for less than a minute: no warning yet');

  skew = 61_000;
  const late = await readyz();
  assert.equal(late.status, 'ready');
  assert.match(
    late.warnings?.[0] ?? '',
    /^output hook has failed for 6\d s: HTTP 503: down for maintenance$/,
  );

  receiver.mode = 'up';
  await until(() => receiver.accepted.size === 1, OUTPUTS_THREAD_MS, 'delivered once the receiver is back');
  await until(async () => (await readyz()).warnings === undefined, OUTPUTS_THREAD_MS, 'the warning goes');
});
