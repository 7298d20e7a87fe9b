// The pure parts of `serve --workers`: restart back-off, the primary's connection ledger and a worker's counted
// sockets, token leases (the primary's bucket and a worker's leased limiter), the primary's dedupe broker, and the
// reader merging several writers' segments.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { ConnectionLedger } from '../../src/cluster/connection-ledger.js';
import { CountedSockets } from '../../src/cluster/counted-sockets.js';
import { DedupeBroker } from '../../src/cluster/ipc-dedupe.js';
import { LeasedRateLimiter } from '../../src/cluster/leased-rate-limit.js';
import { RestartBackoff } from '../../src/cluster/restart-backoff.js';
import { RateLimiter } from '../../src/inputs/https/rate-limit.js';
import { localDedupeIndex } from '../../src/store/files/dedupe/dedupe-index.js';
import { DedupeWindow } from '../../src/store/files/dedupe/dedupe-window.js';
import { createFileRecordReader } from '../../src/store/files/read-records.js';
import { applyRetention } from '../../src/store/files/retention.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('restart back-off doubles while a worker keeps dying soon after its start, and starts over after a stable run', () => {
  let now = 0;
  const b = new RestartBackoff({
    now: () => now,
    firstDelayMs: 100,
    maxDelayMs: 1000,
    stableAfterMs: 60_000,
  });
  const delays: number[] = [];
  for (let i = 0; i < 6; i++) {
    b.started(1);
    now += 10;
    delays.push(b.nextDelay(1));
  }
  assert.deepEqual(delays, [100, 200, 400, 800, 1000, 1000]);
  b.started(1);
  now += 60_000;
  assert.equal(b.nextDelay(1), 100);
  b.started(2);
  assert.equal(b.nextDelay(2), 100, 'slots back off independently');
});

test("the connection ledger caps per address group and in all, across workers, and frees a dead worker's", () => {
  const l = new ConnectionLedger({ max: 3, perGroup: 2, unproven: 3 });
  assert.deepEqual(l.acquire(1, 1, 'a'), []);
  assert.deepEqual(l.acquire(2, 1, 'a'), []);
  l.prove(1, 1);
  l.prove(2, 1);
  assert.equal(l.acquire(1, 2, 'a'), null, 'third from one address, on any worker, with both proven');
  assert.deepEqual(l.acquire(2, 2, 'b'), []);
  l.prove(2, 2);
  assert.equal(l.acquire(1, 3, 'c'), null, 'over the total, every connection proven');
  l.release(2, 1);
  assert.deepEqual(l.acquire(1, 3, 'a'), []);
  assert.deepEqual(
    l.acquire(3, 1, 'c'),
    [{ worker: 1, conn: 3 }],
    'full: the oldest unproven connection, on another worker, makes room (that worker is told to close it)',
  );
  l.release(1, 3); // the worker's late close of it: already released
  assert.equal(l.open, 3);
  l.releaseWorker(1);
  assert.equal(l.open, 2);
  assert.deepEqual(l.acquire(3, 2, 'a'), []);
  l.release(9, 9); // unknown: ignored
  assert.equal(l.open, 3);
});

test("a worker's counted sockets: the primary's close is told once, never for a socket this worker closed first", async (t) => {
  const peers: Socket[] = [];
  const server = createServer((socket) => {
    socket.on('error', () => {});
    peers.push(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    for (const peer of peers) peer.destroy();
    server.close();
  });
  const { port } = server.address() as { port: number };
  const connect = async (): Promise<Socket> => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.on('error', () => {});
    await once(socket, 'connect');
    return socket;
  };
  const sent: unknown[] = [];
  const told: string[] = [];
  const counted = new CountedSockets((message) => sent.push(message));
  const [a, b, c] = [await connect(), await connect(), await connect()];
  const proven = counted.admit(a, 'g', (reason) => told.push(`a ${reason}`));
  counted.admit(b, 'g', (reason) => told.push(`b ${reason}`));
  counted.admit(c, 'g', (reason) => told.push(`c ${reason}`));
  proven();
  // The primary makes room from b: closed here, told as made room for, not counted closed again.
  const bClosed = once(b, 'close');
  counted.closedByPrimary(2, true);
  assert.equal(b.destroyed, true);
  // c closed here first (a newcomer on this worker took its slot; its listener counted it then), and the
  // primary's word about it arrives before its close event: nothing more is told.
  c.destroy();
  counted.closedByPrimary(3, true);
  // A newcomer over a full cap: refused.
  const d = await connect();
  counted.admit(d, 'g', (reason) => told.push(`d ${reason}`));
  const dClosed = once(d, 'close');
  counted.closedByPrimary(4, false);
  await Promise.all([bClosed, dClosed]);
  const aClosed = once(a, 'close');
  a.destroy();
  await aClosed;
  assert.deepEqual(told, ['b evicted', 'd refused']);
  // The primary counts a close only of the connections it did not close itself: a's.
  assert.deepEqual(
    sent.filter((m) => (m as { tc: string }).tc !== 'conn-open'),
    [
      { tc: 'conn-proven', conn: 1 },
      { tc: 'conn-close', conn: 1 },
    ],
  );
});

test('leases: the workers together never get more than one bucket', async () => {
  let now = 0;
  const bucket = new RateLimiter(100, 1000);
  const ask = async (sensor: string, need: number, want: number) => bucket.lease(sensor, need, want, now);
  const a = new LeasedRateLimiter(100, ask);
  const b = new LeasedRateLimiter(100, ask);
  let passed = 0;
  for (let i = 0; i < 40; i++) {
    const limiter = i % 2 === 0 ? a : b;
    if ((await limiter.take('s', 50, now)) === 0) passed += 50;
  }
  assert.equal(passed, 1000, 'the burst, in all');
  assert.ok((await a.take('s', 50, now)) >= 1, 'refused with a wait');
  now += 1000; // 100 tokens come back in a second
  assert.equal(await b.take('s', 50, now), 0);
  assert.equal(await a.take('s', 50, now), 0);
  assert.ok((await a.take('s', 50, now)) >= 1);
  // Unlimited: no lease at all.
  const free = new LeasedRateLimiter(0, () => Promise.reject(new Error('not asked')));
  assert.equal(free.take('s', 1000, now), 0);
});

const line = (id: string, worker: string) =>
  `${JSON.stringify(storedGenericRecord({ id, received_at: '2026-11-21T10:00:00.000Z', sensor: 's', criticality: 1, threat: worker }))}\n`;

test("readRecent merges every writer's segments by id; follow reads a new writer; retention keeps each writer's newest", async (t) => {
  const dataDir = makeTempDir(t);
  const dir = join(dataDir, 'threats');
  mkdirSync(dir);
  // Two days; on the second, two workers with interleaved ids and a single-process segment.
  writeFileSync(join(dir, '20261120-w1-000001.ndjson'), line('01', 'w1'));
  writeFileSync(join(dir, '20261121-000001.ndjson'), line('02', 'single'));
  writeFileSync(join(dir, '20261121-w1-000001.ndjson'), line('03', 'w1') + line('06', 'w1'));
  writeFileSync(join(dir, '20261121-w1-000002.ndjson'), line('08', 'w1'));
  writeFileSync(
    join(dir, '20261121-w2-000001.ndjson'),
    line('04', 'w2') + line('05', 'w2') + line('07', 'w2'),
  );
  const reader = createFileRecordReader(dataDir);
  const ids = async (limit: number) => (await reader.readRecent({ limit })).records.map((r) => r.record.id);
  assert.deepEqual(await ids(3), ['06', '07', '08']);
  assert.deepEqual(await ids(100), ['01', '02', '03', '04', '05', '06', '07', '08']);

  const { cursor } = await reader.readRecent({ limit: 0 });
  const stop = new AbortController();
  const seen: string[] = [];
  let wake: () => void = () => {};
  const following = reader.follow(cursor, {
    signal: stop.signal,
    pollIntervalMs: 20,
    onRecords: (batch) => {
      for (const r of batch) seen.push(r.record.id);
      wake();
    },
  });
  writeFileSync(
    join(dir, '20261121-w2-000001.ndjson'),
    line('04', 'w2') + line('05', 'w2') + line('07', 'w2') + line('09', 'w2'),
  );
  writeFileSync(join(dir, '20261121-w3-000001.ndjson'), line('10', 'w3'));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`followed ${seen.join(',')}`)), 5000);
    wake = () => {
      if (seen.includes('09') && seen.includes('10')) {
        clearTimeout(timer);
        resolve();
      }
    };
    wake();
  });
  stop.abort();
  await following;
  assert.deepEqual([...seen].sort(), ['09', '10'], 'only the new lines, of an old and a new writer');

  // Size bound of 1 byte: everything goes but the newest segment of each writer series.
  const result = applyRetention({
    dataDir,
    days: null,
    maxBytes: 1,
    now: Date.parse('2026-11-21T12:00:00Z'),
  });
  assert.deepEqual(result.removed.map((r) => r.file).sort(), [
    '20261120-w1-000001.ndjson',
    '20261121-w1-000001.ndjson',
  ]);
});

test("the dedupe broker: a key claimed by one worker is a duplicate for another once stored; a dead worker's claims are released", async () => {
  const now = 1_000_000;
  const broker = new DedupeBroker(
    localDedupeIndex(new DedupeWindow(120_000), () => now, pino({ level: 'silent' })),
  );
  const replies: unknown[] = [];
  const claim = (slot: number, req: number, key: string, id: string) =>
    new Promise<unknown>((resolve) =>
      broker.onClaim(slot, { tc: 'dedupe-claim', req, keys: [key], ids: [id] }, (reply) => {
        replies.push(reply);
        resolve(reply);
      }),
    );
  // Worker 1 claims k1 and stores it: worker 2's retry is a duplicate of worker 1's id.
  assert.deepEqual(await claim(1, 1, 'k1', 'id-a'), { tc: 'dedupe-claimed', req: 1, firstIds: [null] });
  broker.onSettle(1, { tc: 'dedupe-settle', req: 1, error: null });
  assert.deepEqual(await claim(2, 1, 'k1', 'id-b'), { tc: 'dedupe-claimed', req: 1, firstIds: ['id-a'] });
  broker.onSettle(2, { tc: 'dedupe-settle', req: 1, error: null });

  // Worker 1 claims k2 and dies before storing: worker 2's retry waits for it, then stores it itself later.
  assert.deepEqual(await claim(1, 2, 'k2', 'id-c'), { tc: 'dedupe-claimed', req: 2, firstIds: [null] });
  const waiting = claim(2, 2, 'k2', 'id-d');
  broker.workerGone(1);
  assert.deepEqual(await waiting, {
    tc: 'dedupe-claimed',
    req: 2,
    error: 'worker 1 exited while storing',
  });
  assert.deepEqual(await claim(2, 3, 'k2', 'id-e'), { tc: 'dedupe-claimed', req: 3, firstIds: [null] });

  // A failed append releases its key too.
  broker.onSettle(2, { tc: 'dedupe-settle', req: 3, error: 'disk full' });
  assert.deepEqual(await claim(1, 4, 'k2', 'id-f'), { tc: 'dedupe-claimed', req: 4, firstIds: [null] });
  assert.equal(replies.length, 6);
});
