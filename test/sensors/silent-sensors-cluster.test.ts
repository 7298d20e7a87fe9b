// Black box through the real binary: `serve --workers 2` (an HTTPS and a syslog sensor) and two collectors on one
// NATS server each report a silence once and its way back once, to a webhook output.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { startReceiver } from '../outputs/webhook-receiver.js';
import { events, exactly, listed, metrics, WAIT_MS, webhookConfig } from './silence-support.js';

test('serve --workers 2: an HTTPS and a syslog sensor each reported silent once and back once', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const config = webhookConfig(dir, receiver, { syslog: { tcpListen: '127.0.0.1:0' } });
  const key = await addSensorCli(dir, 'fw', ['--expect-every', '3s']);
  const added = await runCli([
    ...['sensor', 'add', 'sl', '--data-dir', dir, '--config', config],
    ...['--expect-every', '3s', '--syslog', '--format', 'cef', '--from', '127.0.0.1/32'],
  ]);
  assert.equal(added.code, 0, added.stderr);
  const serve = await spawnServe(dir, ['--config', config, '--workers', '2']);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  const tcpPort = await until(
    () => serve.logs.some((l) => l.msg === 'syslog listening'),
    WAIT_MS,
    'syslog listening',
  ).then(() => (serve.logs.find((l) => l.msg === 'syslog listening') as { tcpPort: number }).tcpPort);
  const sendBoth = async () => {
    assert.equal(
      (await post(serve.url, '/generic', [genericRecord()], { agent, sensor: 'fw', key })).status,
      200,
    );
    const sent = await runCli([
      ...['send', 'syslog', '--format', 'cef', '--sample', '--count', '1'],
      ...['--tcp', '--url', `127.0.0.1:${tcpPort}`],
    ]);
    assert.equal(sent.code, 0, sent.stderr);
  };
  await sendBoth();
  assert.deepEqual(await exactly(receiver, 2, 'two silences'), ['silent fw', 'silent sl']);
  const states = await listed(dir, ['--config', config]);
  assert.deepEqual([states.get('fw')?.state, states.get('sl')?.state], ['silent', 'silent']);
  // The primary's /metrics holds the series (the workers' own are summed before them).
  assert.match(await metrics(serve), /^threatcol_sensor_silent\{sensor="sl"\} 1$/m);
  await sendBoth();
  await until(
    () => events(receiver).filter((e) => e.startsWith('back')).length >= 2,
    WAIT_MS,
    'two ways back',
  );
  // Each sensor's own events in order: one silence, one way back (a new silence follows once the interval runs
  // out again, as nothing more is sent).
  for (const sensor of ['fw', 'sl']) {
    const own = events(receiver).filter((e) => e.endsWith(` ${sensor}`));
    assert.deepEqual(own.slice(0, 2), [`silent ${sensor}`, `back ${sensor}`], own.join(', '));
  }
});

test('NATS, two collectors: one silence and one way back for the cluster, whichever collector took the record', async (t) => {
  const node = await startNatsServer(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const dirs = [makeTempDir(t), makeTempDir(t)] as const;
  const config = webhookConfig(dirs[0], receiver, {
    store: { backend: 'nats', statsIntervalMs: 500 },
    nats: { servers: [node.url] },
  });
  const key = await addSensorCli(dirs[0], 'fw', ['--expect-every', '3s', '--config', config]);
  const serves = (await Promise.all(dirs.map((dir) => spawnServe(dir, ['--config', config])))) as [
    ServeProcess,
    ServeProcess,
  ];
  t.after(() => Promise.all(serves.map((s) => s.stop('SIGKILL'))));
  const send = async (serve: ServeProcess, dir: string) => {
    const agent = trustingAgent(dir);
    try {
      await until(
        async () =>
          (await post(serve.url, '/generic', [genericRecord()], { agent, sensor: 'fw', key })).status === 200,
        WAIT_MS,
        'a record stored',
      );
    } finally {
      await agent.close();
    }
  };
  await send(serves[0], dirs[0]);
  assert.deepEqual(await exactly(receiver, 1, 'the silence'), ['silent fw']);
  assert.equal((await listed(dirs[1], ['--config', config])).get('fw')?.state, 'silent');
  await send(serves[1], dirs[1]);
  await until(() => events(receiver).includes('back fw'), WAIT_MS, 'the way back');
  assert.deepEqual(events(receiver).slice(0, 2), ['silent fw', 'back fw']);
  const reporters = serves.filter((s) =>
    s.logs.some((l) => l.msg === 'this collector watches for silent sensors now'),
  );
  assert.equal(reporters.length, 1, 'one watcher for the cluster');
});
