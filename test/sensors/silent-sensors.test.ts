// Black box through the real binary: a sensor with an expected interval that stops sending is silent in
// `sensor list`, /metrics and `check`, a webhook output receives one silence record naming it, and one "back"
// record at its next accepted record (HTTPS and syslog alike); a revoked sensor never; a restart of serve
// neither repeats a reported silence nor loses it; `serve --workers 2` and a two-collector NATS cluster report
// each once.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { request } from 'undici';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { startReceiver, type TestReceiver } from '../outputs/webhook-receiver.js';

/** The hang guard of each wait: an interval of 3 s plus a look every 2 s, many times over for a loaded box. */
const WAIT_MS = 60_000;

interface ListedSensor {
  name: string;
  state: string;
  status: string;
  expect_every: string | null;
  silent_since: string | null;
}

async function listed(dir: string, extra: string[] = []): Promise<Map<string, ListedSensor>> {
  const r = await runCli(['sensor', 'list', '--data-dir', dir, '--json', ...extra]);
  assert.equal(r.code, 0, r.stderr);
  return new Map((JSON.parse(r.stdout) as ListedSensor[]).map((s) => [s.name, s]));
}

/** The collector's own records the webhook received, in order: `silent fw`, `back fw`. */
function events(receiver: TestReceiver): string[] {
  return receiver.bodies.flatMap(({ body }) =>
    ((JSON.parse(body) as { records?: Record<string, unknown>[] }).records ?? [])
      .filter((r) => r.endpoint === 'collector')
      .map((r) => `${String(r.threat).replace('sensor ', '')} ${String(r.sensor)}`),
  );
}

function webhookConfig(dir: string, receiver: TestReceiver, extra: Record<string, unknown> = {}): string {
  const path = join(dir, 'config.json');
  writeFileSync(
    path,
    JSON.stringify({
      outputs: {
        alerts: {
          type: 'webhook',
          url: receiver.url,
          filter: { minCriticality: 3 },
          batch: { maxWaitMs: 50 },
        },
      },
      ...extra,
    }),
  );
  return path;
}

async function metrics(serve: ServeProcess): Promise<string> {
  const r = await request(`${serve.adminUrl}/metrics`);
  return r.body.text();
}

test('silent sensors: silent within its interval, one event each way through a restart; revoked never; check warns', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const config = webhookConfig(dir, receiver);
  const key = await addSensorCli(dir, 'fw', ['--expect-every', '3s']);
  await addSensorCli(dir, 'gone', ['--expect-every', '3s']);
  assert.equal((await runCli(['sensor', 'revoke', 'gone', '--data-dir', dir])).code, 0);
  await addSensorCli(dir, 'unwatched');
  let serve = await spawnServe(dir, ['--config', config]);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  const send = async () =>
    assert.equal(
      (await post(serve.url, '/generic', [genericRecord()], { agent, sensor: 'fw', key })).status,
      200,
    );
  const t0 = Date.now();
  const mark = (what: string) => t.diagnostic(`${what}: ${Date.now() - t0} ms`);
  await send();

  const silentAfter = await until(
    async () => (await listed(dir, ['--config', config])).get('fw')?.state === 'silent',
    WAIT_MS,
    'fw silent in sensor list',
  );
  const fw = (await listed(dir, ['--config', config])).get('fw') as ListedSensor;
  assert.equal(fw.expect_every, '3s');
  assert.ok(fw.silent_since !== null && Date.parse(fw.silent_since) <= Date.now(), fw.silent_since ?? '');
  mark('silent listed');
  await until(() => events(receiver).length === 1, WAIT_MS, 'the silence delivered');
  mark('silence delivered');
  assert.deepEqual(events(receiver), ['silent fw']);
  const text = await runCli(['sensor', 'list', '--data-dir', dir, '--config', config]);
  assert.match(text.stdout, /^fw\s+silent since \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/m);
  const row = (
    (await (await request(`${serve.adminUrl}/api/sensors`)).body.json()) as {
      sensors: { name: string; silent_since: string | null }[];
    }
  ).sensors.find((r) => r.name === 'fw');
  assert.equal(row?.silent_since, fw.silent_since, 'the dashboard marks it, with when it went quiet');
  const m = await metrics(serve);
  assert.match(m, /^threatcol_sensor_silent\{sensor="fw"\} 1$/m);
  assert.match(m, /^threatcol_sensor_last_seen_seconds\{sensor="fw"\} \d+(\.\d+)?$/m);
  assert.doesNotMatch(m, /threatcol_sensor_silent\{sensor="(gone|unwatched)"\}/);
  const checked = await runCli(['check', '--no-daemon', '--data-dir', dir, '--config', config]);
  assert.match(checked.stdout, /^WARN\s+sensors\s+1 silent sensor: fw \(since /m);

  mark('checked');
  // A restart neither repeats the silence nor forgets it.
  await serve.stop();
  mark('stopped');
  serve = await spawnServe(dir, ['--config', config]);
  mark('restarted');
  const looked = Date.now();
  await until(() => Date.now() - looked > 5000, WAIT_MS, 'two looks after the restart', 250);
  assert.equal((await listed(dir, ['--config', config])).get('fw')?.state, 'silent');
  assert.deepEqual(events(receiver), ['silent fw'], 'the silence is not reported again');

  await send();
  await until(
    async () => (await listed(dir, ['--config', config])).get('fw')?.state === 'active',
    WAIT_MS,
    'fw active again',
  );
  mark('active');
  await until(() => events(receiver).length === 2, WAIT_MS, 'the way back delivered');
  mark('back delivered');
  assert.deepEqual(events(receiver), ['silent fw', 'back fw']);
  const states = await listed(dir, ['--config', config]);
  assert.equal(states.get('gone')?.state, 'revoked');
  assert.equal(states.get('unwatched')?.state, 'active');
  assert.equal(states.get('unwatched')?.expect_every, null);
  // The silence record as stored: the collector's own, naming the sensor, its interval and how long.
  const tail = await runCli([
    'threats',
    'tail',
    '--data-dir',
    dir,
    '--json',
    '-n',
    '10',
    '--no-follow',
    '--endpoint',
    'collector',
  ]);
  const own = tail.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r.endpoint === 'collector');
  assert.deepEqual(
    // (and a new silence after it, once the interval ran out again while the test looked)
    own.slice(0, 2).map((r) => [r.sensor, r.threat, r.criticality]),
    [
      ['fw', 'sensor silent', 3],
      ['fw', 'sensor back', 3],
    ],
  );
  // Shown by the dashboard, never counted as threats: two records were sent, two are counted.
  const rows = (await (await request(`${serve.adminUrl}/api/sensors`)).body.json()) as {
    sensors: { name: string; silent_since: string | null }[];
  };
  assert.equal(rows.sensors.find((r) => r.name === 'unwatched')?.silent_since, null);
  const stats = await runCli(['threats', 'stats', '--data-dir', dir, '--since', '1h', '--json']);
  assert.equal((JSON.parse(stats.stdout) as { total: number }).total, 2, stats.stdout);
  const summary = await (await request(`${serve.adminUrl}/api/summary`)).body.text();
  assert.doesNotMatch(summary, /sensor silent|sensor back/);
  const original = own[0]?.original as Record<string, unknown>;
  assert.equal(original.expect_every, '3s');
  assert.equal(original.event, 'sensor_silent');
  assert.ok((original.silent_for_seconds as number) >= 0);
  t.diagnostic(`silent in sensor list ${silentAfter} ms after the record`);
});

/** Waits until the webhook holds `n` of the collector's records, then two looks more (none should come). */
async function exactly(receiver: TestReceiver, n: number, what: string): Promise<string[]> {
  await until(() => events(receiver).length >= n, WAIT_MS, what);
  const at = Date.now();
  await until(() => Date.now() - at > 4500, WAIT_MS, 'two more looks', 250);
  return [...events(receiver)].sort();
}

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

test('sensor set --expect-every: a duration, off whatever the default, default back to sensors.expectEvery', async (t) => {
  const dir = makeTempDir(t);
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ sensors: { expectEvery: '1d' } }));
  await addSensorCli(dir, 'fw');
  const expectEvery = async (...args: string[]) => {
    const set = await runCli(['sensor', 'set', 'fw', '--data-dir', dir, '--config', config, ...args]);
    assert.equal(set.code, 0, set.stderr);
    const shown = await runCli(['sensor', 'show', 'fw', '--data-dir', dir, '--config', config, '--json']);
    return (JSON.parse(shown.stdout) as { expect_every: string | null }).expect_every;
  };
  assert.equal(await expectEvery('--expect-every', '90m'), '1h30m');
  assert.equal(await expectEvery('--expect-every', 'off'), null);
  assert.equal(await expectEvery('--expect-every', 'default'), '1d');
  const bad = await runCli(['sensor', 'set', 'fw', '--data-dir', dir, '--expect-every', 'soon']);
  assert.equal(bad.code, 64, bad.stderr);
  assert.match(bad.stderr, /--expect-every "soon" is not a duration of at least 1s/);
});
