// The elasticsearch receiver against a loopback server implementing `_bulk` as Elasticsearch documents it
// (Elasticsearch itself cannot run here): creates by id, 409 as already stored, per-item refusals and retries,
// whole-request 401, 429 and 503, over HTTPS verified against the output's own CA.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createElasticsearchReceiver,
  type ElasticsearchOptions,
} from '../../src/outputs/receivers/elasticsearch-receiver.js';
import { AuthDeliveryError, TransientDeliveryError } from '../../src/outputs/receivers/receiver.js';
import { type BulkServer, startBulkServer } from '../helpers/bulk-server.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { memoryLogger, outgoingRecords } from '../helpers/outgoing.js';

const API_KEY = 'VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==';
const PASSWORD = 'correct horse battery staple';

const options = (server: { url: string; ca: string }, overrides: Partial<ElasticsearchOptions> = {}) => ({
  url: server.url,
  ca: server.ca,
  connectTimeoutMs: 5000,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  index: 'threats-ds',
  username: null,
  password: null,
  apiKey: API_KEY,
  timestampField: '@timestamp',
  ...overrides,
});

const signal = () => AbortSignal.timeout(30_000);

async function setUp(t: { after(fn: () => unknown): void }, overrides: Partial<ElasticsearchOptions> = {}) {
  const server: BulkServer = await startBulkServer(t, `ApiKey ${API_KEY}`);
  const log = memoryLogger();
  const receiver = createElasticsearchReceiver(options(server, overrides), { logger: log.logger });
  t.after(() => receiver.close());
  return { server, receiver, log };
}

test('a batch is created by id with @timestamp; sent again, every item is a 409 and counts as delivered', async (t) => {
  const { server, receiver, log } = await setUp(t);
  const records = outgoingRecords(300, (i) => ({ threat: `scan ${i} é "q"` }));
  assert.deepEqual(await receiver.send(records, signal()), { refused: [], retry: [] });
  assert.equal(server.docs.size, 300);
  for (const record of records)
    assert.deepEqual(server.docs.get(`threats-ds/${record.id}`), {
      '@timestamp': record.record.received_at,
      ...JSON.parse(record.line),
    });
  assert.deepEqual(await receiver.send(records, signal()), { refused: [], retry: [] });
  assert.equal(server.docs.size, 300);
  const request = server.requests[0];
  assert.ok(request);
  assert.match(request.path, /^\/_bulk\?filter_path=/);
  assert.equal(request.headers['content-type'], 'application/x-ndjson');
  assert.ok(!log.text().includes(API_KEY), 'the API key is never logged');
});

test('a partial failure: mapping errors refused with type and reason, 429 items retried, then taken', async (t) => {
  const { server, receiver } = await setUp(t);
  const records = outgoingRecords(20, (i) => ({ threat: i % 7 === 3 ? 'MAPPING-ERROR here' : `t${i}` }));
  for (const i of [0, 5, 19]) server.rejectTimes.set(records[i]?.id as string, 1);
  const report = await receiver.send(records, signal());
  assert.deepEqual(
    report.refused.map((refused) => refused.index),
    [3, 10, 17],
  );
  assert.match(
    report.refused[0]?.answer ?? '',
    /^400 mapper_parsing_exception: failed to parse field \[threat\]/,
  );
  assert.deepEqual(report.retry, [0, 5, 19]);
  assert.equal(server.docs.size, 14);
  const again = report.retry.map((i) => records[i]).filter((record) => record !== undefined);
  assert.deepEqual(await receiver.send(again, signal()), { refused: [], retry: [] });
  assert.equal(server.docs.size, 17);
});

test('whole-request answers: 401 is an auth failure, 429 and 503 are transient with Retry-After', async (t) => {
  const { server, receiver } = await setUp(t);
  const records = outgoingRecords(5);
  server.failNext.push({ status: 429, retryAfter: '7' }, { status: 503 });
  await assert.rejects(receiver.send(records, signal()), (error) => {
    assert.ok(error instanceof TransientDeliveryError);
    assert.equal(error.retryAfterMs, 7000);
    assert.match(error.message, /HTTP 429: .*es_rejected_execution_exception/);
    return true;
  });
  await assert.rejects(receiver.send(records, signal()), TransientDeliveryError);
  assert.equal(server.docs.size, 0);

  const wrong = createElasticsearchReceiver(options(server, { apiKey: 'bm9wZTpub3Bl' }), {
    logger: memoryLogger().logger,
  });
  t.after(() => wrong.close());
  await assert.rejects(wrong.send(records, signal()), (error) => {
    assert.ok(error instanceof AuthDeliveryError);
    assert.match(error.message, /HTTP 401: .*security_exception/);
    assert.ok(!error.message.includes('bm9wZTpub3Bl'));
    return true;
  });
  assert.deepEqual(await receiver.send(records, signal()), { refused: [], retry: [] });
  assert.equal(server.docs.size, 5);
});

test('basic authentication, and a base URL with a path (behind a proxy prefix)', async (t) => {
  const authorization = `Basic ${Buffer.from(`elastic:${PASSWORD}`).toString('base64')}`;
  const server = await startBulkServer(t, authorization);
  const receiver = createElasticsearchReceiver(
    options(
      { url: `${server.url}/es/`, ca: server.ca },
      { apiKey: null, username: 'elastic', password: PASSWORD },
    ),
    { logger: memoryLogger().logger },
  );
  t.after(() => receiver.close());
  assert.deepEqual(await receiver.send(outgoingRecords(3), signal()), { refused: [], retry: [] });
  assert.equal(server.docs.size, 3);
  assert.equal(server.requests[0]?.headers.authorization, authorization);
  assert.match(server.requests[0]?.path ?? '', /^\/es\/_bulk\?/);
});

test('an unreachable receiver and a certificate the CA did not sign are transient failures', async (t) => {
  const { server, receiver } = await setUp(t);
  const other = await startHttpsReceiver(t, (_request, _body, response) => response.end());
  const untrusted = createElasticsearchReceiver(options({ url: server.url, ca: other.ca }), {
    logger: memoryLogger().logger,
  });
  t.after(() => untrusted.close());
  await assert.rejects(untrusted.send(outgoingRecords(1), signal()), (error) => {
    assert.ok(error instanceof TransientDeliveryError);
    assert.match(error.message, /certificate|self.signed/i);
    return true;
  });
  await server.close();
  await assert.rejects(receiver.send(outgoingRecords(1), signal()), TransientDeliveryError);
});
