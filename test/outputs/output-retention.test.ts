// Retention and outputs (DESIGN 13): a stalled output keeps the segments it has not passed; with `maxLag` they go,
// and exactly the records it had not forwarded are counted and shown (the real binary); an output a reload adds
// holds from then on, one it removes no longer (the daemon in process, retention every 100 ms).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { ensureDataDir } from '../../src/data-dir/ensure-data-dir.js';
import { createFileRegistry } from '../../src/store/files/file-registry.js';
import { skippedRecords } from '../../src/store/files/output-holds.js';
import { runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord, storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until } from '../helpers/until.js';
import { startHarnessDaemon } from '../service/harness.js';
import { listedOutputs } from './output-serve.js';
import { startReceiver } from './webhook-receiver.js';

const DAY_MS = 86_400_000;
const dayName = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');

function writeSegment(dir: string, at: number, records: number): string {
  const file = `${dayName(at)}-000001.ndjson`;
  const lines = Array.from({ length: records }, (_, i) =>
    JSON.stringify(
      storedGenericRecord({ received_at: new Date(at + i).toISOString(), threat: `d${dayName(at)}-${i}` }),
    ),
  );
  mkdirSync(join(dir, 'threats'), { recursive: true });
  writeFileSync(join(dir, 'threats', file), `${lines.join('\n')}\n`);
  return join(dir, 'threats', file);
}

test('retention keeps segments a stalled output has not passed; with maxLag it drops them and reports exactly what', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  receiver.mode = 'down';
  const now = Date.now();
  const old = [writeSegment(dir, now - 10 * DAY_MS, 5), writeSegment(dir, now - 9 * DAY_MS, 7)];
  writeSegment(dir, now - 1000, 2);
  const config = join(dir, 'config.json');
  const writeConfig = (maxLag: string | null) =>
    writeFileSync(
      config,
      JSON.stringify({
        store: { retention: { days: 3 } },
        outputs: { siem: { type: 'webhook', url: receiver.url, retryMaxMs: 1000, maxLag } },
      }),
    );
  writeConfig(null);
  // The output's position at the oldest record: it has forwarded nothing yet.
  const replay = await runCli([
    'outputs',
    'replay',
    'siem',
    '--since',
    '30d',
    '--data-dir',
    dir,
    '--config',
    config,
  ]);
  assert.equal(replay.code, 0, replay.stderr);

  let serve = await spawnServe(dir, ['--config', config]);
  t.after(() => serve.stop('SIGKILL'));
  for (const file of old) assert.ok(existsSync(file), `${file} is kept for the output`);
  await serve.stop();

  writeConfig('2d');
  serve = await spawnServe(dir, ['--config', config]);
  for (const file of old) assert.ok(!existsSync(file), `${file} is removed once past maxLag`);
  const warned = serve.logs.filter((l) =>
    String(l.msg).startsWith('retention removed records an output had not forwarded'),
  );
  assert.deepEqual(
    warned.map((l) => l.records),
    [5, 7],
  );
  const [siem] = await listedOutputs(dir, config, serve);
  assert.equal(siem?.position.skippedRecords, 12);
  assert.equal(siem?.position.lagRecords, 2, 'what is left is still owed to the output');

  receiver.mode = 'up';
  const deadline = Date.now() + 20_000;
  while (receiver.accepted.size < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(
    receiver.accepted.size,
    2,
    'the records left are forwarded; the skipped ones are not pretended',
  );
});

test('an output added by a reload holds retention from then on: every record it had not passed is delivered or counted skipped', async (t) => {
  const dataDir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  receiver.mode = 'down';
  const registry = createFileRegistry({ dataDir, owner: ensureDataDir(dataDir) });
  const { key } = await registry.add({ name: 'fw', timezone: null });
  // Segments of about two requests each, and a size bound of two segments: without a hold, retention leaves
  // the newest two or three.
  const overrides = {
    dataDir,
    'server.host': '127.0.0.1',
    'server.port': 0,
    'admin.listen': '127.0.0.1:0',
    'log.level': 'debug',
    'store.segmentMaxBytes': 4096,
    'store.retention.maxBytes': 8192,
    'store.retention.days': 30,
  };
  const hook = { type: 'webhook', url: receiver.url, batch: { maxWaitMs: 50 } };
  let outputs: Record<string, unknown> = {};
  const h = await startHarnessDaemon(t, dataDir, overrides, {
    retentionIntervalMs: 100,
    outputTiming: { retryBaseMs: 50, retryCapMs: 200 },
    reread: () =>
      loadConfig({
        env: {},
        defaultConfigPath: '/nonexistent/threatcol.json',
        overrides: { ...overrides, outputs },
      }),
  });
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const url = `https://127.0.0.1:${h.port}`;
  const send = async (threat: string) => {
    const records = [genericRecord({ threat: `${threat}a${'x'.repeat(1200)}` }), genericRecord({ threat })];
    const reply = await post(url, '/generic', records, { agent, sensor: 'fw', key });
    assert.equal(reply.status, 200, reply.text);
    return (JSON.parse(reply.text) as { ids: string[] }).ids;
  };
  await send('before');

  outputs = { hook };
  assert.deepEqual(h.daemon.reload(), { ok: true, applied: ['outputs.hook'], restartNeeded: [] });
  await until(
    () => existsSync(join(dataDir, 'outputs', 'hook.cursor.json')),
    OUTPUTS_THREAD_MS,
    'the output starts',
  );
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push(...(await send(`after${i}`)));

  // A segment past the age bound, written last: once it is gone, retention has run over everything above.
  const marker = join(dataDir, 'threats', `${dayName(Date.now() - 40 * DAY_MS)}-000001.ndjson`);
  writeFileSync(
    marker,
    `${JSON.stringify(storedGenericRecord({ received_at: new Date(Date.now() - 40 * DAY_MS).toISOString() }))}\n`,
  );
  await until(() => !existsSync(marker), 20_000, 'a retention run after the records');

  receiver.mode = 'up';
  await until(() => receiver.accepted.has(ids.at(-1) as string), OUTPUTS_THREAD_MS, 'the output catches up');
  const missing = ids.filter((id) => !receiver.accepted.has(id));
  assert.equal(
    skippedRecords(dataDir, 'hook'),
    missing.length,
    'what the output did not get is counted skipped',
  );
  assert.deepEqual(missing, [], 'retention deleted none of what the output had not passed');

  // Removed by a reload while behind: it holds nothing more.
  receiver.mode = 'down';
  for (let i = 0; i < 6; i++) await send(`late${i}`);
  outputs = {};
  assert.equal(h.daemon.reload().ok, true);
  writeFileSync(
    marker,
    `${JSON.stringify(storedGenericRecord({ received_at: new Date(Date.now() - 40 * DAY_MS).toISOString() }))}\n`,
  );
  await until(() => !existsSync(marker), 20_000, 'a retention run after the reload');
  const left = readdirSync(join(dataDir, 'threats')).map((f) => statSync(join(dataDir, 'threats', f)).size);
  assert.ok(left.reduce((a, b) => a + b, 0) <= 8192 + 4096, `kept within the bound: ${left.join(' ')}`);
});
