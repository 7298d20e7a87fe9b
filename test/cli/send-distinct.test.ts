// Black box: `send --count N` posts N distinct records and its summary says what the collector stored, read
// back with the CLI (`threats tail`) from a fresh store; `--repeat` is reported as duplicates.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { LoadSummary } from '../../src/client/load-test.js';
import { addSensorCli, type CliResult, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const SENSORS = ['fw-load', 'gen-load', 'fw-repeat', 'gen-repeat'] as const;
type Sensor = (typeof SENSORS)[number];

let serve: ServeProcess;
let dataDir: string;
const keyFiles = new Map<Sensor, string>();

before(async () => {
  dataDir = makeTempDir();
  const work = makeTempDir();
  // Added before serve starts: the daemon reads them at start, so no request is needed to wait for them.
  await Promise.all(
    SENSORS.map(async (name) => {
      const file = join(work, `${name}.key`);
      writeFileSync(file, `${await addSensorCli(dataDir, name)}\n`, { mode: 0o600 });
      keyFiles.set(name, file);
    }),
  );
  // Rate limit off: 500 records in well under a second would pass the default 5000/s per sensor at times.
  serve = await spawnServe(dataDir, [], { env: { THREATCOL_RATE_LIMIT_RECORDS_PER_SECOND: '0' } });
});

after(async () => {
  await serve.stop();
});

/** `threatcol send ARGS` as sensor `sensor`, against the collector, trusting its own certificate. */
function send(sensor: Sensor, args: string[]): Promise<CliResult> {
  const target = ['--url', serve.url, '--data-dir', dataDir, '--sensor', sensor];
  return runCli(['send', ...args, ...target, '--key-file', keyFiles.get(sensor) as string], {
    timeoutMs: 60_000,
  });
}

async function sendJson(sensor: Sensor, args: string[]): Promise<LoadSummary> {
  const r = await send(sensor, [...args, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as LoadSummary;
}

/** What the store holds for a sensor, read as a user would (`threats tail`): records, distinct originals. */
async function storedFor(sensor: Sensor): Promise<{ records: number; distinct: number }> {
  const tail = await runCli(
    ['threats', 'tail', '--no-follow', '-n', '100000', '--json', '--sensor', sensor, '--data-dir', dataDir],
    { timeoutMs: 60_000 },
  );
  assert.equal(tail.code, 0, tail.stderr);
  const lines = tail.stdout.split('\n').filter((l) => l !== '');
  const originals = new Set(
    lines.map((l) => JSON.stringify((JSON.parse(l) as { original: unknown }).original)),
  );
  return { records: lines.length, distinct: originals.size };
}

test('send firewall --sample --count 500: 500 distinct records stored, as the summary says', async () => {
  const s = await sendJson('fw-load', ['firewall', '--sample', '--count', '500', '--concurrency', '8']);
  assert.deepEqual(
    [s.requests, s.records, s.stored, s.duplicates, s.statuses, s.errors],
    [500, 500, 500, 0, { '200': 500 }, 0],
  );
  assert.deepEqual(await storedFor('fw-load'), { records: 500, distinct: 500 });
});

test('send generic --count: single and batched records are all distinct, and all stored', async () => {
  const [single, batched] = await Promise.all([
    send('gen-load', ['generic', '--sample', '--count', '500', '--concurrency', '4']),
    sendJson('gen-load', ['generic', '--sample', '--batch', '10', '--count', '50', '--concurrency', '4']),
  ]);
  assert.equal(single.code, 0, single.stderr);
  assert.match(single.stdout, /^requests {3}500 in \d+\.\d\d s\nrecords {4}500 stored, 0 duplicates\n/);
  assert.deepEqual([batched.records, batched.stored, batched.duplicates], [500, 500, 0]);
  assert.deepEqual(await storedFor('gen-load'), { records: 1000, distinct: 1000 });
});

test('--repeat: the 64 bodies are stored once, every repeat is reported as a duplicate (both endpoints)', async () => {
  const [fw, gen] = await Promise.all([
    sendJson('fw-repeat', ['firewall', '--sample', '--repeat', '--count', '500', '--concurrency', '4']),
    send('gen-repeat', [
      'generic',
      '--sample',
      '--batch',
      '2',
      '--repeat',
      '--count',
      '100',
      '--concurrency',
      '4',
    ]),
  ]);
  assert.deepEqual([fw.requests, fw.records, fw.stored, fw.duplicates], [500, 500, 64, 436]);
  assert.deepEqual(await storedFor('fw-repeat'), { records: 64, distinct: 64 });
  // /generic: 64 bodies of 2 records with a key each, then 36 of them again.
  assert.equal(gen.code, 0, gen.stderr);
  assert.match(
    gen.stdout,
    /\nrecords {4}128 stored, 72 duplicates \(retried deliveries: stored before, not again\)\n/,
  );
  assert.deepEqual(await storedFor('gen-repeat'), { records: 128, distinct: 128 });
});

test('--data with --count needs --repeat; --repeat needs --count', async () => {
  const [noRepeat, noCount] = await Promise.all([
    send('fw-load', ['generic', '--data', '{}', '--count', '5']),
    send('fw-load', ['generic', '--sample', '--repeat']),
  ]);
  assert.equal(noRepeat.code, 64);
  assert.match(noRepeat.stderr, /USAGE: --data sends the same body every time: add --repeat/);
  assert.equal(noCount.code, 64);
  assert.match(noCount.stderr, /USAGE: --concurrency, --rate and --repeat need --count/);
});
