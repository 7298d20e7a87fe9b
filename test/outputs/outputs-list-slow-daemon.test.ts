// Black box: `outputs list` against a collector that answers its admin listener late. A real serve SIGSTOPped for
// 4 s is waited for (its outputs shown running, not stopped), and an admin listener that accepts but never
// answers leaves the state unknown, never "stopped": a busy collector is not a stopped one.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli, spawnServe } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until } from '../helpers/until.js';
import { startReceiver } from './webhook-receiver.js';

interface Listed {
  source: string;
  daemon: string;
  outputs: { name: string; state: string }[];
}

test('outputs list waits for a collector that answers late, and shows a silent one as unknown, never stopped', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver({});
  t.after(() => receiver.close());
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ outputs: { hook: { type: 'webhook', url: receiver.url } } }));
  const list = (admin: string, ...extra: string[]) =>
    runCli(['outputs', 'list', '--data-dir', dir, '--config', config, '--admin-listen', admin, ...extra]);

  const serve = await spawnServe(dir, ['--config', config]);
  t.after(() => {
    serve.child.kill('SIGCONT');
    return serve.stop('SIGKILL');
  });
  const admin = new URL(serve.adminUrl as string).host;
  await until(
    async () => {
      const listed = JSON.parse((await list(admin, '--json')).stdout) as Listed;
      return listed.outputs[0]?.state === 'running';
    },
    OUTPUTS_THREAD_MS,
    'the output running',
  );

  // An admin listener that takes connections and never answers (a collector stuck for longer than the wait).
  const held: Socket[] = [];
  const silent = createServer((socket) => held.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const socket of held) socket.destroy();
    silent.close();
  });
  const silentAdmin = `127.0.0.1:${(silent.address() as { port: number }).port}`;
  const unanswered = Promise.all([list(silentAdmin, '--json'), list(silentAdmin)]);

  // The collector stopped for 4 s (longer than the 2 s list used to wait): its answer comes late, and counts.
  serve.child.kill('SIGSTOP');
  const late = list(admin, '--json');
  await sleep(4000);
  serve.child.kill('SIGCONT');
  const lateListed = JSON.parse((await late).stdout) as Listed;
  assert.deepEqual(
    [lateListed.source, lateListed.daemon, lateListed.outputs.map((o) => `${o.name}: ${o.state}`)],
    ['daemon', 'answered', ['hook: running']],
  );

  const [json, table] = await unanswered;
  assert.equal(json.code, 0, json.stderr);
  const listed = JSON.parse(json.stdout) as Listed;
  assert.deepEqual(
    [listed.source, listed.daemon, listed.outputs.map((o) => `${o.name}: ${o.state}`)],
    ['files', 'no answer in 10 s', ['hook: unknown']],
  );
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^hook\s+webhook\s+unknown \(the collector did not answer in 10 s\)/m);
  assert.match(table.stdout, /the collector did not answer on its admin listener in 10 s/);
  assert.doesNotMatch(table.stdout, /stopped/);
});
