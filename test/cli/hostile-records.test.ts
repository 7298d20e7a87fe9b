// Stored data that is not a record (`null`, `5`, `{}`) and records whose fields carry terminal escapes, in a
// files segment and in a real NATS stream: `threats tail` and `threats stats` skip and count the first, clean
// the second, and exit 0 without a single escape or bell byte on the terminal.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { recordSubject } from '../../src/store/nats/names.js';
import { runCli, spawnServe } from '../helpers/cli.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const EVIL = '\u001b]0;OWNED\u0007\u001b[2J\u009b31m\u202e';
const NOT_RECORDS = [
  'null',
  '5',
  '{}',
  '[]',
  '"text"',
  '{"received_at":"2026-11-26T10:00:00Z"}',
  // Whole records but for one field's type: a port that is text (escapes and all) is no port.
  JSON.stringify(storedGenericRecord({ sensor: 'fw1', src_port: EVIL, dst_port: EVIL })),
];

function hostileLines(): { good: string; evil: string; lines: string[] } {
  const good = JSON.stringify(storedGenericRecord({ sensor: 'fw1', threat: 'SSH brute force' }));
  const evil = JSON.stringify(
    storedGenericRecord({
      sensor: 'fw1',
      threat: `T${EVIL}`,
      src_ip: `192.0.2.1${EVIL}`,
      src_port: 4444,
      protocol: EVIL,
    }),
  );
  return { good, evil, lines: [good, ...NOT_RECORDS, evil] };
}

/** No byte a terminal acts on: ESC, BEL, CSI (C1), CR, bidi overrides. */
function assertInert(text: string, what: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for exactly these
  assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/, what);
}

async function readBack(env: Record<string, string>, dataDir: string): Promise<void> {
  const tail = await runCli(['threats', 'tail', '--no-follow', '-n', '20', '--data-dir', dataDir], { env });
  assert.equal(tail.code, 0, tail.stderr);
  assertInert(tail.stdout, 'tail stdout');
  assertInert(tail.stderr, 'tail stderr');
  const shown = tail.stdout.trim().split('\n');
  assert.equal(shown.length, 2, tail.stdout);
  assert.match(
    shown[1] as string,
    /192\.0\.2\.1\?\]0;OWNED\?\?\[2J\?31m\?:4444 → .* \?\]0;OWNED.* T\?\]0;OWNED/,
  );
  // The skip is said on stderr (the store's log, at warn) with how many.
  assert.match(tail.stderr, /not a threatcol record was skipped/);
  assert.match(tail.stderr, new RegExp(`"total":${NOT_RECORDS.length}\\b`));

  const json = await runCli(['threats', 'tail', '--no-follow', '--json', '--data-dir', dataDir], { env });
  assert.equal(json.code, 0, json.stderr);
  assertInert(json.stdout, 'tail --json stdout');
  const records = json.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { protocol: unknown });
  assert.deepEqual(
    records.map((r) => r.protocol),
    ['TCP', EVIL],
  );

  for (const by of ['threat', 'src_ip', 'sensor', 'criticality', 'endpoint']) {
    const stats = await runCli(['threats', 'stats', '--by', by, '--data-dir', dataDir], { env });
    assert.equal(stats.code, 0, stats.stderr);
    assertInert(stats.stdout, `stats --by ${by}`);
    assert.match(stats.stdout, /^2 records/);
    assert.match(stats.stderr, /not a threatcol record was skipped/);
  }
}

test('files: lines that are not records are skipped and counted, escapes in fields never reach the terminal', async (t) => {
  const dataDir = makeTempDir(t);
  mkdirSync(join(dataDir, 'threats'), { recursive: true });
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '');
  const { lines } = hostileLines();
  writeFileSync(join(dataDir, 'threats', `${day}-000001.ndjson`), `${lines.join('\n')}\n`);
  await readBack({}, dataDir);
});

test('NATS: messages that are not records are skipped and counted, escapes in fields never reach the terminal', async (t) => {
  const nats = await startNatsServer(t);
  const dataDir = makeTempDir(t);
  const env = {
    THREATCOL_STORE_BACKEND: 'nats',
    THREATCOL_NATS_SERVERS: nats.url,
    THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '3000',
  };
  // Any command creates the stream; then a publisher with rights on the subjects adds what it likes.
  const first = await runCli(['threats', 'tail', '--no-follow', '--data-dir', dataDir], { env });
  assert.equal(first.code, 0, first.stderr);
  const nc = await connect({ servers: nats.url });
  t.after(() => nc.close());
  const js = jetstream(nc);
  for (const line of hostileLines().lines) await js.publish(recordSubject('generic', 'fw1'), line);
  await readBack(env, dataDir);
});

/** The dashboard feed's first events: up to `ready` or `failure`. */
function feedStart(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        text += d;
        if (text.includes('event: ready') || text.includes('event: failure')) {
          resolve(text);
          req.destroy();
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test('NATS: the dashboard feed skips messages that are not records instead of failing every tab', async (t) => {
  const nats = await startNatsServer(t);
  const dataDir = makeTempDir(t);
  const env = { THREATCOL_STORE_BACKEND: 'nats', THREATCOL_NATS_SERVERS: nats.url };
  const serve = await spawnServe(dataDir, [], { env });
  t.after(() => serve.stop());
  const nc = await connect({ servers: nats.url });
  t.after(() => nc.close());
  const js = jetstream(nc);
  for (const line of hostileLines().lines) await js.publish(recordSubject('generic', 'fw1'), line);
  const feed = await feedStart(`${serve.adminUrl}/api/feed`);
  assert.match(feed, /event: ready/);
  assert.doesNotMatch(feed, /event: failure/);
  assert.match(feed, /SSH brute force/);
});
