// `threatcol store migrate --to nats` on real processes: a files store filled by a real `serve`, a real
// nats-server; every record in the stream exactly once with identical content, sensors honoured by a `serve`
// on NATS, re-runs and an interrupted run store nothing twice, --dry-run stores nothing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { request } from 'undici';
import type { MigrateSummary } from '../../src/cli/store-migrate.js';
import { loadConfig } from '../../src/config/load-config.js';
import { copySensors } from '../../src/store/copy-store.js';
import { encodeToken, recordSubject } from '../../src/store/nats/names.js';
import { openStore } from '../../src/store/open-store.js';
import type { Sensor } from '../../src/store/registry.js';
import { addSensorCli, BIN, cleanEnv, runCli, spawnServe } from '../helpers/cli.js';
import { errorCode, post, trustingAgent } from '../helpers/client.js';
import { freePort, startNatsServer } from '../helpers/nats-server.js';
import { openStoreAt } from '../helpers/open-store.js';
import { firewallRecord, genericRecord, readStoreText } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';

interface Summary {
  dry_run: boolean;
  records: { read: number; copied: number; already_present: number; not_records: number };
  sensors: { copied: string[]; already_present: string[]; conflicting: string[]; overwritten: string[] };
}

/** A files store with an active, a revoked and a rotating sensor, records from both endpoints. */
async function filledFilesStore(t: Parameters<typeof makeTempDir>[0]) {
  const dataDir = makeTempDir(t);
  const keys = {
    active: await addSensorCli(dataDir, 'fw-active', [
      '--description',
      'Paris edge',
      '--timezone',
      'Europe/Paris',
    ]),
    gone: await addSensorCli(dataDir, 'fw.gone'),
    oldRotating: await addSensorCli(dataDir, 'gen-rotating'),
    newRotating: '',
  };
  const rotate = await runCli([
    'sensor',
    'rotate',
    'gen-rotating',
    '--grace',
    '2h',
    '--json',
    '--data-dir',
    dataDir,
  ]);
  assert.equal(rotate.code, 0, rotate.stderr);
  keys.newRotating = (JSON.parse(rotate.stdout) as { key: string }).key;

  const serve = await spawnServe(dataDir);
  const agent = trustingAgent(dataDir);
  try {
    for (let i = 0; i < 10; i++) {
      const fw = await post(
        serve.url,
        '/firewall',
        Array.from({ length: 5 }, (_, j) => firewallRecord({ sport: 1000 + i * 10 + j })),
        { agent, sensor: 'fw-active', key: keys.active },
      );
      assert.equal(fw.status, 200, fw.text);
      const gen = await post(
        serve.url,
        '/generic',
        Array.from({ length: 4 }, (_, j) => genericRecord({ destination_port: 2000 + i * 10 + j })),
        { agent, sensor: 'gen-rotating', key: i % 2 ? keys.oldRotating : keys.newRotating },
      );
      assert.equal(gen.status, 200, gen.text);
    }
    // With an Idempotency-Key the stored line carries dedupe_key: migrated as it is.
    const once = await post(serve.url, '/generic', genericRecord(), {
      agent,
      sensor: 'fw.gone',
      key: keys.gone,
      headers: { 'idempotency-key': 'k-1' },
    });
    assert.equal(once.status, 200, once.text);
  } finally {
    await agent.close();
    await serve.stop();
  }
  const revoke = await runCli(['sensor', 'revoke', 'fw.gone', '--data-dir', dataDir]);
  assert.equal(revoke.code, 0, revoke.stderr);
  const lines = readStoreText(dataDir).split('\n').filter(Boolean);
  const sensors = (JSON.parse(readFileSync(join(dataDir, 'sensors.json'), 'utf8')) as { sensors: Sensor[] })
    .sensors;
  return { dataDir, keys, lines, sensors };
}

test('store migrate --to nats: dry run, interrupted run, full copy, re-run, sensors honoured on NATS', async (t) => {
  const nats = await startNatsServer(t);
  const env = { THREATCOL_NATS_SERVERS: nats.url, THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '15000' };
  const { dataDir, keys, lines, sensors } = await filledFilesStore(t);
  assert.equal(lines.length, 10 * 5 + 10 * 4 + 1);
  const migrate = (...extra: string[]) =>
    runCli(['store', 'migrate', '--to', 'nats', '--data-dir', dataDir, '--json', ...extra], { env });

  const nc = await connect({ servers: nats.url });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const streamCount = async () => (await jsm.streams.info('THREATCOL')).state.messages;
  const kv = await new Kvm(nc).open('threatcol_sensors');
  const kvSensors = async () => {
    const out = new Map<string, unknown>();
    for await (const key of await kv.keys()) out.set(key, (await kv.get(key))?.json());
    return out;
  };

  // --dry-run: counts, stores nothing (the empty stream and bucket exist afterwards, as after any command).
  const dry = await migrate('--dry-run');
  assert.equal(dry.code, 0, dry.stderr);
  const drySummary = JSON.parse(dry.stdout) as Summary;
  assert.equal(drySummary.dry_run, true);
  assert.deepEqual(drySummary.records, {
    read: lines.length,
    copied: lines.length,
    already_present: 0,
    not_records: 0,
  });
  assert.equal(drySummary.sensors.copied.length, 3);
  assert.equal(await streamCount(), 0);
  assert.equal((await kvSensors()).size, 0);

  // An interrupted earlier run: a third of the records already in the stream, published without a
  // Nats-Msg-Id, so only migrate's own pass over the stream (not JetStream's duplicate window) can skip them.
  const js = jetstream(nc);
  const early = lines.slice(0, 30);
  for (const line of early) {
    const r = JSON.parse(line) as { endpoint: 'firewall' | 'generic'; sensor: string };
    await js.publish(recordSubject(r.endpoint, r.sensor), line);
  }

  const first = await migrate();
  assert.equal(first.code, 0, first.stderr);
  const summary = JSON.parse(first.stdout) as Summary;
  assert.deepEqual(summary.records, {
    read: lines.length,
    copied: lines.length - 30,
    already_present: 30,
    not_records: 0,
  });
  assert.deepEqual([...summary.sensors.copied].sort(), ['fw-active', 'fw.gone', 'gen-rotating']);
  assert.deepEqual(summary.sensors.conflicting, []);

  // Every record exactly once, byte for byte the stored line, read back through the CLI on NATS.
  assert.equal(await streamCount(), lines.length);
  const natsEnv = { ...env, THREATCOL_STORE_BACKEND: 'nats' };
  const tail = await runCli(
    ['threats', 'tail', '-n', '1000', '--json', '--no-follow', '--data-dir', makeTempDir(t)],
    {
      env: natsEnv,
    },
  );
  assert.equal(tail.code, 0, tail.stderr);
  const inStream = tail.stdout.split('\n').filter(Boolean);
  assert.deepEqual([...inStream].sort(), [...lines].sort());
  assert.ok(
    inStream.some((l) => l.includes('"dedupe_key":')),
    'the Idempotency-Key record kept its field',
  );

  // Sensors stored as they are: hashes, status, revoked_at, keys with their grace expiry, dates.
  const stored = await kvSensors();
  for (const s of sensors) assert.deepEqual(stored.get(encodeToken(s.name)), s);
  assert.ok(sensors.find((s) => s.name === 'gen-rotating')?.keys.some((k) => k.expires_at !== null));

  // Run again: nothing copied, the stream unchanged.
  const again = await migrate();
  assert.equal(again.code, 0, again.stderr);
  const againSummary = JSON.parse(again.stdout) as Summary;
  assert.deepEqual(againSummary.records, {
    read: lines.length,
    copied: 0,
    already_present: lines.length,
    not_records: 0,
  });
  assert.equal(againSummary.sensors.already_present.length, 3);
  assert.equal(await streamCount(), lines.length);

  // A collector on NATS honours the migrated keys: active and both rotating keys accepted, revoked refused.
  const natsDir = makeTempDir(t);
  const serve = await spawnServe(natsDir, [], { env: natsEnv });
  t.after(() => serve.stop());
  // serve listens before its first read of the bucket: wait for that read (an event, not a sleep).
  await until(
    () => serve.logs.some((l) => l.msg === 'sensor registry loaded' && l.sensors === 3),
    15_000,
    'the registry loaded',
    20,
  );
  const agent = trustingAgent(natsDir);
  t.after(() => agent.close());
  const send = (sensor: string, key: string) =>
    post(serve.url, '/generic', genericRecord(), { agent, sensor, key });
  assert.equal((await send('fw-active', keys.active)).status, 200);
  assert.equal((await send('gen-rotating', keys.oldRotating)).status, 200);
  assert.equal((await send('gen-rotating', keys.newRotating)).status, 200);
  const refused = await send('fw.gone', keys.gone);
  assert.equal(refused.status, 403);
  assert.equal(errorCode(refused), 'SENSOR_REVOKED');
  assert.equal(await streamCount(), lines.length + 3);

  // A sensor changed in NATS since: reported and left alone (exit 65), replaced only with --overwrite-sensors.
  const set = await runCli(
    ['sensor', 'set', 'fw-active', '--description', 'changed in NATS', '--data-dir', natsDir],
    {
      env: natsEnv,
    },
  );
  assert.equal(set.code, 0, set.stderr);
  const conflict = await migrate();
  assert.equal(conflict.code, 65, conflict.stderr);
  assert.match(conflict.stderr, /SENSOR_EXISTS: .*fw-active.*--overwrite-sensors/);
  assert.deepEqual((JSON.parse(conflict.stdout) as Summary).sensors.conflicting, ['fw-active']);
  assert.equal((stored.get('fw-active') as Sensor).description, 'Paris edge');
  assert.equal(((await kvSensors()).get('fw-active') as Sensor).description, 'changed in NATS');
  const overwrite = await migrate('--overwrite-sensors');
  assert.equal(overwrite.code, 0, overwrite.stderr);
  assert.deepEqual((JSON.parse(overwrite.stdout) as Summary).sensors.overwritten, ['fw-active']);
  assert.equal(((await kvSensors()).get('fw-active') as Sensor).description, 'Paris edge');
  assert.equal(await streamCount(), lines.length + 3);

  // The text summary, for people.
  const text = await runCli(['store', 'migrate', '--to', 'nats', '--data-dir', dataDir], { env });
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    new RegExp(
      `records 0 copied, ${lines.length} already present; sensors 0 copied, 3 already present, 0 conflicting`,
    ),
  );
});

test('store migrate: NATS unreachable exits 69 naming the server; --to accepts only nats', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensorCli(dataDir, 'fw-a');
  const port = await freePort();
  const r = await runCli(['store', 'migrate', '--to', 'nats', '--data-dir', dataDir], {
    env: { THREATCOL_NATS_SERVERS: `nats://127.0.0.1:${port}`, THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '1000' },
  });
  assert.equal(r.code, 69, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(`threatcol: UNAVAILABLE: NATS unreachable \\(nats://127\\.0\\.0\\.1:${port}\\)`),
  );
  const usage = await runCli(['store', 'migrate', '--to', 'files', '--data-dir', dataDir]);
  assert.equal(usage.code, 64);
  assert.match(usage.stderr, /threatcol: USAGE: .*--to/);
});

test('store migrate killed (-9) midway, then run again: every record in the stream exactly once', async (t) => {
  const total = 20_000;
  const dataDir = makeTempDir(t);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir },
  });
  const files = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  const log = await files.openRecordLog({ retentionIntervalMs: 0 });
  for (let i = 0; i < total; i += 1000) {
    await log.append(
      Array.from({ length: 1000 }, (_, j) => record({ threat: `t${i + j}`, sensor: `s${j % 3}` })),
    );
  }
  await log.close();
  await files.close();

  const nats = await startNatsServer(t);
  const env = { THREATCOL_NATS_SERVERS: nats.url };
  const nc = await connect({ servers: nats.url });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const count = async () => {
    try {
      return (await jsm.streams.info('THREATCOL')).state.messages;
    } catch {
      return 0; // not created yet
    }
  };

  const child = spawn(process.execPath, [BIN, 'store', 'migrate', '--to', 'nats', '--data-dir', dataDir], {
    env: cleanEnv(env),
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  // Killed as soon as part of the records are in: some batches acknowledged, one in flight.
  await until(
    async () => child.exitCode !== null || (await count()) >= 2000,
    30_000,
    'part of the records copied',
    20,
  );
  child.kill('SIGKILL');
  await exited;
  const before = await count();
  t.diagnostic(`killed with ${before} of ${total} records in the stream`);
  assert.ok(before > 0 && before < total, `${before} records when killed: not an interruption`);

  const again = await runCli(['store', 'migrate', '--to', 'nats', '--data-dir', dataDir, '--json'], { env });
  assert.equal(again.code, 0, again.stderr);
  const summary = JSON.parse(again.stdout) as Summary;
  assert.equal(summary.records.read, total);
  assert.equal(summary.records.copied + summary.records.already_present, total);
  assert.equal(summary.records.already_present, before);
  assert.equal(await count(), total);
  const tail = await runCli(
    ['threats', 'tail', '-n', String(total + 10), '--json', '--no-follow', '--data-dir', dataDir],
    {
      env: { ...env, THREATCOL_STORE_BACKEND: 'nats' },
    },
  );
  assert.equal(tail.code, 0, tail.stderr);
  const threats = tail.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { threat: string }).threat);
  assert.equal(new Set(threats).size, total);
  assert.equal(threats.length, total);
});

test('store migrate: lines that are not records (null, no sensor name, an endpoint no subject can hold) are skipped and counted, the rest copied', async (t) => {
  const dataDir = makeTempDir(t);
  mkdirSync(join(dataDir, 'threats'), { recursive: true });
  const good = [record({ threat: 'a' }), record({ threat: 'b', endpoint: 'firewall' })];
  const bad = [
    'null',
    '{}',
    JSON.stringify(record({ threat: 'no sensor', sensor: '' })),
    JSON.stringify(record({ threat: 'bad endpoint', endpoint: 'generic.x' as 'generic' })),
    JSON.stringify(record({ threat: 'sensor with escapes', sensor: 'fw\u001b[2J' })),
  ];
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '');
  const lines = [JSON.stringify(good[0]), ...bad, JSON.stringify(good[1])];
  writeFileSync(join(dataDir, 'threats', `${day}-000001.ndjson`), `${lines.join('\n')}\n`);
  const nats = await startNatsServer(t);
  const env = { THREATCOL_NATS_SERVERS: nats.url, THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '15000' };

  const migrate = await runCli(['store', 'migrate', '--to', 'nats', '--data-dir', dataDir, '--json'], {
    env,
  });
  assert.equal(migrate.code, 0, migrate.stderr);
  const summary = JSON.parse(migrate.stdout) as Summary;
  assert.deepEqual(summary.records, { read: 2, copied: 2, already_present: 0, not_records: bad.length });
  assert.match(migrate.stderr, /not a threatcol record was skipped/);
  const text = await runCli(['store', 'migrate', '--to', 'nats', '--data-dir', dataDir], { env });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`2 already present, ${bad.length} skipped \\(not records`));
  const tail = await runCli(['threats', 'tail', '--json', '--no-follow', '--data-dir', dataDir], {
    env: { ...env, THREATCOL_STORE_BACKEND: 'nats' },
  });
  assert.deepEqual(
    tail.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { threat: string }).threat),
    ['a', 'b'],
  );
});

test('store migrate copies the blocklist: blocks, allow entries and feeds served from NATS with their credentials; a re-run skips them, a newer one in NATS is kept', async (t) => {
  const nats = await startNatsServer(t);
  const env = { THREATCOL_NATS_SERVERS: nats.url, THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '15000' };
  const natsEnv = { ...env, THREATCOL_STORE_BACKEND: 'nats' };
  const dataDir = makeTempDir(t);
  const cli = async (args: string[], options: { env?: Record<string, string> } = {}) => {
    const r = await runCli([...args, '--data-dir', dataDir], options);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  await cli(['allow', 'add', '203.0.113.0/24', '--reason', 'partner']);
  await cli(['block', 'add', '198.51.100.7', '--for', '2h', '--reason', 'scanner']);
  await cli(['block', 'add', '198.51.100.8', '--for', '2h', '--reason', 'scanner too']);
  await cli(['block', 'remove', '198.51.100.8']);
  const feed = JSON.parse(await cli(['feed', 'add', 'edge', '--format', 'plain', '--json'])) as {
    username: string;
    password: string;
  };
  const migrate = async (...extra: string[]) => {
    const r = await runCli(['store', 'migrate', '--to', 'nats', '--data-dir', dataDir, '--json', ...extra], {
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as MigrateSummary).decisions;
  };
  const onNats = async (args: string[]) => {
    const r = await runCli([...args, '--json', '--data-dir', makeTempDir(t)], { env: natsEnv });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Record<string, unknown>[];
  };

  // The block, the allow entry, the feed and the removed block's mark: four entries (and nothing in a dry run).
  assert.deepEqual(await migrate('--dry-run'), {
    copied: 4,
    already_present: 0,
    left_in_target: [],
    only_in_target: [],
  });
  assert.deepEqual(await onNats(['block', 'list']), []);
  assert.deepEqual(await migrate(), {
    copied: 4,
    already_present: 0,
    left_in_target: [],
    only_in_target: [],
  });
  const blocks = await onNats(['block', 'list']);
  assert.deepEqual(
    blocks.map((b) => [b.address, b.reason]),
    [['198.51.100.7/32', 'scanner']],
  );
  assert.deepEqual(
    (await onNats(['allow', 'list'])).map((a) => [a.network, a.reason]),
    [['203.0.113.0/24', 'partner']],
  );

  // A collector on NATS serves the feed to the firewall's old credentials.
  const natsDir = makeTempDir(t);
  const serve = await spawnServe(natsDir, [], { env: natsEnv });
  t.after(() => serve.stop());
  const agent = trustingAgent(natsDir);
  t.after(() => agent.close());
  const fetchFeed = async (password: string) => {
    const res = await request(`${serve.url}/feeds/edge`, {
      headers: { authorization: `Basic ${Buffer.from(`${feed.username}:${password}`).toString('base64')}` },
      dispatcher: agent,
    });
    return { status: res.statusCode, text: await res.body.text() };
  };
  // serve may answer before its first read of the bucket: wait for the feed (an event, not a sleep).
  let served = { status: 0, text: '' };
  await until(
    async () => {
      served = await fetchFeed(feed.password);
      return served.status === 200;
    },
    15_000,
    'the migrated feed served',
    50,
  );
  assert.deepEqual(served.text.split('\n').filter(Boolean), ['198.51.100.7']);
  assert.equal((await fetchFeed(`${feed.password}x`)).status, 401);

  // Again: nothing copied. A block changed on NATS since is NATS's to keep (exit 0, named).
  assert.deepEqual(await migrate(), {
    copied: 0,
    already_present: 4,
    left_in_target: [],
    only_in_target: [],
  });
  const r = await runCli(
    ['block', 'add', '198.51.100.7', '--for', '5h', '--reason', 'seen again', '--data-dir', natsDir],
    { env: natsEnv },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(await migrate(), {
    copied: 0,
    already_present: 3,
    left_in_target: ['block 198.51.100.7/32'],
    only_in_target: [],
  });
  assert.deepEqual(
    (await onNats(['block', 'list'])).map((b) => b.reason),
    ['seen again'],
  );
  const text = await runCli(['store', 'migrate', '--to', 'nats', '--data-dir', dataDir], { env });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /; decisions 0 copied, 3 already present, 1 left as they are in NATS \(/);
  assert.match(
    text.stdout,
    /^Decisions NATS holds with other content, left as they are: block 198\.51\.100\.7\/32$/m,
  );
});

test('store migrate run again leaves a sensor deleted in NATS deleted (its old key withdrawn), unless the files store issued it since', async (t) => {
  const nats = await startNatsServer(t);
  const env = { THREATCOL_NATS_SERVERS: nats.url, THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '15000' };
  const dataDir = makeTempDir(t);
  await addSensorCli(dataDir, 'fw1');
  const open = (overrides: Record<string, unknown>, dir: string) => openStoreAt(dir, overrides);
  const source = await open({}, dataDir);
  const target = await open({ 'store.backend': 'nats', 'nats.servers': [nats.url] }, makeTempDir(t));
  t.after(() => target.close());
  const options = { dryRun: false, overwriteSensors: false };

  assert.deepEqual((await copySensors(source, target, options)).copied, ['fw1']);
  // Withdrawn on NATS (its key leaked, say) after the first run.
  await target.registry.delete('fw1');
  const again = await copySensors(source, target, options);
  assert.deepEqual(again, {
    copied: [],
    alreadyPresent: [],
    conflicting: [],
    overwritten: [],
    removedInTarget: ['fw1'],
  });
  assert.deepEqual(await target.registry.list(), []);
  assert.deepEqual((await copySensors(source, target, { ...options, dryRun: true })).removedInTarget, [
    'fw1',
  ]);
  await source.close();

  // The command says so, and still exits 0 (nothing for the operator to decide).
  const migrate = async (...extra: string[]) => {
    const r = await runCli(['store', 'migrate', '--to', 'nats', '--data-dir', dataDir, ...extra], { env });
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  const text = await migrate();
  assert.match(text, /sensors 0 copied, 0 already present, 0 conflicting, 1 left deleted in NATS;/);
  assert.match(
    text,
    /\nSensors deleted in NATS since an earlier run, left deleted \(the files store's copy is older than the deletion\): fw1\n/,
  );
  assert.deepEqual((JSON.parse(await migrate('--json')) as MigrateSummary).sensors.removed_in_target, [
    'fw1',
  ]);
  assert.deepEqual(await target.registry.list(), []);

  // A key issued in the files store after the deletion is newer than it: copied.
  const rotated = await runCli(['sensor', 'rotate', 'fw1', '--grace', '0s', '--data-dir', dataDir]);
  assert.equal(rotated.code, 0, rotated.stderr);
  const summary = JSON.parse(await migrate('--json')) as MigrateSummary;
  assert.deepEqual(summary.sensors.copied, ['fw1']);
  const files = (JSON.parse(readFileSync(join(dataDir, 'sensors.json'), 'utf8')) as { sensors: Sensor[] })
    .sensors;
  assert.deepEqual(await target.registry.list(), files);
});
