// Retention and outputs through the real binary (DESIGN 13): a stalled output keeps the segments it has not
// passed; with `maxLag` they go, and exactly the records it had not forwarded are counted and shown.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, spawnServe } from '../helpers/cli.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
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
