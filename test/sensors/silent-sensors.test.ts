// Black box through the real binary: a sensor with an expected interval that stops sending is silent in
// `sensor list`, /metrics, the dashboard and `check`, a webhook output receives one silence record naming it, and
// one "back" record at its next accepted record; a revoked sensor never; a restart of serve neither repeats a
// reported silence nor loses it; sensor set --expect-every. The cluster cases: silent-sensors-cluster.test.ts.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { request } from 'undici';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { startReceiver } from '../outputs/webhook-receiver.js';
import { events, type ListedSensor, listed, metrics, WAIT_MS, webhookConfig } from './silence-support.js';

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
  const shown = await runCli(['sensor', 'show', 'fw', '--data-dir', dir, '--config', config]);
  assert.match(shown.stdout, /^Status: +silent since \S+: nothing accepted for 3s/m);
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
