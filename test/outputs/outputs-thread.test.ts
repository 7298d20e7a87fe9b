// Where forwarding runs (docs/operations.md, "Where forwarding runs"): while an output is enabled, in one thread
// of serve's process at a nice level OUTPUTS_NICE (15) above the rest, so a saturated CPU serves ingest first; with none, no
// such thread. Read from /proc, as an operator's `top -H` would show it; an output added or removed by a reload
// starts or ends the thread.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { OUTPUTS_NICE } from '../../src/outputs/run-outputs.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until } from '../helpers/until.js';
import { serveWithOutputs } from './output-serve.js';
import { startReceiver } from './webhook-receiver.js';

/** The nice level of one thread of `pid` (its main thread: `tid` = `pid`); null once it ended. */
function niceOf(pid: number, tid: string | number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch {
    return null;
  }
}

/** How many threads of `pid` run OUTPUTS_NICE levels below its main thread. */
function lowered(pid: number): number {
  const main = niceOf(pid, pid) as number;
  return readdirSync(`/proc/${pid}/task`).filter((tid) => niceOf(pid, tid) === main + OUTPUTS_NICE).length;
}

test('an enabled output forwards from one thread at nice +15; none enabled, no such thread; a reload starts and ends it', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const hook = { type: 'webhook', url: receiver.url, startAt: 'oldest', batch: { maxWaitMs: 20 } };
  const { config, serve, post } = await serveWithOutputs(t, dir, { hook: { ...hook, enabled: false } });
  const pid = serve.child.pid as number;

  await post([genericRecord({ threat: 'one' })]);
  assert.equal(niceOf(pid, pid), 0, "serve's main thread takes records at the priority it was started with");
  assert.equal(lowered(pid), 0, 'a disabled output starts no thread');

  writeFileSync(config, JSON.stringify({ outputs: { hook } }));
  serve.child.kill('SIGHUP');
  await until(() => receiver.accepted.size === 1, OUTPUTS_THREAD_MS, 'the enabled output forwards');
  assert.equal(lowered(pid), 1, 'one thread at nice +15 forwards');
  await post([genericRecord({ threat: 'two' })]);
  await until(() => receiver.accepted.size === 2, OUTPUTS_THREAD_MS);
  assert.ok(
    serve.logs.some((l) => l.msg === 'output started' && l.output === 'hook'),
    "the thread's lines are in serve's log, with their fields",
  );

  writeFileSync(config, JSON.stringify({ outputs: {} }));
  serve.child.kill('SIGHUP');
  await until(() => lowered(pid) === 0, OUTPUTS_THREAD_MS, 'the thread ends with the last output');
  const listed = await (await fetch(`${serve.adminUrl}/api/outputs`)).json();
  assert.deepEqual(
    (listed as { outputs: { name: string; state: string }[] }).outputs.map((o) => [o.name, o.state]),
    [['hook', 'removed']],
  );
});
