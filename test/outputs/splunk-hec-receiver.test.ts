// The splunk_hec receiver against a loopback server implementing HEC's documented protocol (Splunk itself
// cannot run here): batches with the id as an indexed field, indexer acknowledgement polled until true, and
// HEC's failure answers (403, 400 invalid-event-number, 400 incorrect index, 429, 503, an ack that never comes).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AuthDeliveryError, TransientDeliveryError } from '../../src/outputs/receivers/receiver.js';
import {
  createSplunkHecReceiver,
  type SplunkHecOptions,
} from '../../src/outputs/receivers/splunk-hec-receiver.js';
import { type HecServer, startHecServer } from '../helpers/hec-server.js';
import { memoryLogger, outgoingRecords } from '../helpers/outgoing.js';
import { until } from '../helpers/until.js';

const TOKEN = '0f4b2c6e-5d3a-4e1f-9a8b-7c6d5e4f3a2b';

const signal = () => AbortSignal.timeout(30_000);

async function setUp(t: { after(fn: () => unknown): void }, overrides: Partial<SplunkHecOptions> = {}) {
  const server: HecServer = await startHecServer(t, TOKEN);
  const log = memoryLogger();
  const options: SplunkHecOptions = {
    url: server.url,
    ca: server.ca,
    connectTimeoutMs: 5000,
    headersTimeoutMs: 10_000,
    bodyTimeoutMs: 10_000,
    token: TOKEN,
    index: 'threats',
    sourcetype: 'threatcol:threat',
    source: 'threatcol',
    host: 'collector1',
    ackPollIntervalMs: 5,
    ackTimeoutMs: 60_000,
    ...overrides,
  };
  const receiver = createSplunkHecReceiver(options, { logger: log.logger });
  t.after(() => receiver.close());
  return { server, receiver, log, options };
}

test('a batch is one request; it counts as delivered only after its ackId is acknowledged', async (t) => {
  const { server, receiver, log } = await setUp(t);
  server.ackAfterPolls = 3;
  const records = outgoingRecords(250, (i) => ({ threat: `brute {force} "${i}" é` }));
  assert.deepEqual(await receiver.send(records, signal()), { refused: [], retry: [] });
  const posts = server.requests.filter((request) => request.path === '/services/collector/event');
  const polls = server.requests.filter((request) =>
    request.path.startsWith('/services/collector/ack?channel='),
  );
  assert.equal(posts.length, 1);
  assert.equal(polls.length, 4, 'three pending answers, then true');
  const channel = posts[0]?.headers['x-splunk-request-channel'];
  assert.match(String(channel), /^[0-9a-f-]{36}$/);
  assert.ok(polls.every((poll) => poll.path.endsWith(`channel=${channel}`)));
  assert.equal(server.events.length, 250);
  server.events.forEach((event, i) => {
    const record = records[i];
    assert.ok(record);
    assert.deepEqual(event.event, JSON.parse(record.line));
    assert.deepEqual(event.fields, { threatcol_id: record.id });
    assert.equal(event.index, 'threats');
    assert.equal(event.sourcetype, 'threatcol:threat');
    assert.equal(event.time, Date.parse(record.record.received_at) / 1000);
  });
  assert.ok(!log.text().includes(TOKEN), 'the token is never logged');
});

test('an ack that never comes: a transient failure after ackTimeoutMs, so the batch is sent again', async (t) => {
  let clock = 0;
  const server = await startHecServer(t, TOKEN);
  server.ackAfterPolls = Number.POSITIVE_INFINITY;
  const receiver = createSplunkHecReceiver(
    {
      url: server.url,
      ca: server.ca,
      connectTimeoutMs: 5000,
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 10_000,
      token: TOKEN,
      index: null,
      sourcetype: 'threatcol:threat',
      source: 'threatcol',
      host: null,
      ackPollIntervalMs: 1,
      ackTimeoutMs: 300_000,
    },
    // Each look at the clock moves it a minute: the fifth poll is at the five minutes.
    {
      logger: memoryLogger().logger,
      now: () => {
        const at = clock;
        clock += 60_000;
        return at;
      },
    },
  );
  t.after(() => receiver.close());
  await assert.rejects(receiver.send(outgoingRecords(3), signal()), (error) => {
    assert.ok(error instanceof TransientDeliveryError);
    assert.match(error.message, /not acknowledged within 300000 ms/);
    return true;
  });
  assert.equal(
    server.requests.filter((request) => request.path.startsWith('/services/collector/ack')).length,
    5,
  );
});

test('400 with invalid-event-number: that event refused with the answer, the others asked for again', async (t) => {
  const { server, receiver } = await setUp(t);
  const records = outgoingRecords(10, (i) => ({ threat: i === 6 ? 'INVALID-EVENT x' : `t${i}` }));
  const report = await receiver.send(records, signal());
  assert.deepEqual(report.refused, [
    { index: 6, answer: `splunk_hec ${server.url}: 400 code 6: Invalid data format` },
  ]);
  assert.deepEqual(report.retry, [0, 1, 2, 3, 4, 5, 7, 8, 9]);
  const again = report.retry.map((i) => records[i]).filter((record) => record !== undefined);
  assert.deepEqual(await receiver.send(again, signal()), { refused: [], retry: [] });
  // HEC took the six before the invalid one the first time: they are there twice, with the same id.
  const ids = server.events.map((event) => event.fields?.threatcol_id);
  assert.equal(ids.length, 15);
  assert.deepEqual(new Set(ids), new Set(again.map((record) => record.id)));
});

test('429 and 503 are transient (Retry-After kept); 403 and an incorrect index pause the output', async (t) => {
  const { server, receiver } = await setUp(t);
  const records = outgoingRecords(4);
  server.failNext.push(
    { status: 429, code: 9, text: 'Too many requests', retryAfter: '30' },
    { status: 503, code: 9, text: 'Server is busy' },
  );
  await assert.rejects(receiver.send(records, signal()), (error) => {
    assert.ok(error instanceof TransientDeliveryError);
    assert.equal(error.retryAfterMs, 30_000);
    return true;
  });
  await assert.rejects(receiver.send(records, signal()), /503 code 9: Server is busy/);
  assert.equal(server.events.length, 0);

  const { receiver: badToken } = await setUp(t, { token: 'wrong-token-value' });
  await assert.rejects(badToken.send(records, signal()), (error) => {
    assert.ok(error instanceof AuthDeliveryError);
    assert.match(error.message, /403 code 4: Invalid token/);
    assert.ok(!error.message.includes('wrong-token-value'));
    return true;
  });
  const { receiver: badIndex } = await setUp(t, { index: 'nope' });
  await assert.rejects(badIndex.send(records, signal()), /400 code 7: Incorrect index/);
  await assert.rejects(badIndex.send(records, signal()), AuthDeliveryError);

  assert.deepEqual(await receiver.send(records, signal()), { refused: [], retry: [] });
  assert.equal(server.events.length, 4);
});

test('without acknowledgement on the token, the 200 is the acknowledgement; an abort while polling rejects', async (t) => {
  const { server, receiver } = await setUp(t);
  server.acks = false;
  assert.deepEqual(await receiver.send(outgoingRecords(2), signal()), { refused: [], retry: [] });
  assert.equal(server.requests.length, 1);

  const { server: slow, receiver: polling } = await setUp(t, { ackPollIntervalMs: 60_000 });
  slow.ackAfterPolls = Number.POSITIVE_INFINITY;
  const controller = new AbortController();
  const sending = polling.send(outgoingRecords(2), controller.signal);
  await until(() => slow.events.length === 2, 10_000, 'the batch taken, its ack pending', 1);
  controller.abort(new Error('reload'));
  await assert.rejects(sending, /reload/);
});
