// The HTTP receivers (webhook, elasticsearch, splunk_hec) against loopback servers whose answers never end: a
// body without end, a body trickled a byte at a time, a redirect. Each answer is read up to a cap and within one
// deadline, then the connection is dropped; what the cut answer counts as is per receiver (docs/outputs.md).
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { applyOutputDefaults } from '../../src/config/outputs-schema.js';
import { createElasticsearchReceiver } from '../../src/outputs/receivers/elasticsearch-receiver.js';
import {
  AuthDeliveryError,
  type OutgoingRecord,
  TransientDeliveryError,
} from '../../src/outputs/receivers/receiver.js';
import { createSplunkHecReceiver } from '../../src/outputs/receivers/splunk-hec-receiver.js';
import { createWebhookReceiver } from '../../src/outputs/receivers/webhook.js';
import { memoryLogger, outgoingRecords } from '../helpers/outgoing.js';
import { until } from '../helpers/until.js';

/** What the "endless" body stops at, so that a client that reads it all still ends (it must stop far sooner). */
const ENDLESS_LIMIT = 128 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

type Answer = (request: IncomingMessage, body: string, response: ServerResponse) => void;

interface Hostile {
  url: string;
  /** Bytes of body written per answer, in order. */
  written: number[];
  /** Answers whose connection the client closed before the body ended. */
  cut: number;
  requests: { path: string; body: string }[];
}

async function startServer(t: { after(fn: () => unknown): void }, answer: Answer): Promise<Hostile> {
  const state: Hostile = { url: '', written: [], cut: 0, requests: [] };
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (d: string) => (body += d));
    request.on('end', () => {
      state.requests.push({ path: request.url ?? '', body });
      response.on('close', () => {
        if (!response.writableFinished) state.cut += 1;
      });
      answer(request, body, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/** 200 (or `status`) and a body written as fast as the client reads it, up to ENDLESS_LIMIT, then silence. */
function endless(state: Hostile, status = 200, type = 'application/json'): Answer {
  return (_request, _body, response) => {
    const slot = state.written.push(0) - 1;
    response.writeHead(status, { 'content-type': type });
    response.write(status === 200 && type === 'application/json' ? '{"errors":false,"items":[' : '');
    const pump = () => {
      while (!response.destroyed && (state.written[slot] ?? 0) < ENDLESS_LIMIT) {
        state.written[slot] = (state.written[slot] ?? 0) + CHUNK.length;
        if (!response.write(CHUNK)) return;
      }
    };
    response.on('drain', pump);
    pump();
  };
}

/** 200 and one byte of body every 50 ms, never ending: each pause far shorter than the receiver's timeout. */
function trickle(state: Hostile, first = ''): Answer {
  return (_request, _body, response) => {
    const slot = state.written.push(0) - 1;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write(first);
    const timer = setInterval(() => {
      response.write(' ');
      state.written[slot] = (state.written[slot] ?? 0) + 1;
    }, 50);
    response.on('close', () => clearInterval(timer));
  };
}

const webhook = (url: string, timeoutMs = 1000) =>
  createWebhookReceiver(applyOutputDefaults({ type: 'webhook', url: `${url}/hook`, timeoutMs }), {});

/** A hang guard only: every answer here must end within about one timeout (1 s). */
const guard = () => AbortSignal.timeout(30_000);

const records = (n = 3): OutgoingRecord[] => outgoingRecords(n, (i) => ({ threat: `t${i}` }));

test('webhook: a 2xx whose body never ends is delivered after a capped read, the connection dropped', async (t) => {
  const server = await startServer(t, (request, body, response) =>
    endless(server, 200, 'text/plain')(request, body, response),
  );
  const receiver = webhook(server.url);
  t.after(() => receiver.close());
  for (let i = 0; i < 3; i++)
    assert.deepEqual(await receiver.send(records(), guard()), { refused: [], retry: [] });
  assert.equal(server.requests.length, 3);
  // The server sees each connection closed by the client (a moment after the client let go of it).
  await until(() => server.cut === 3, 10_000, 'each endless answer cut by the client');
  for (const bytes of server.written)
    assert.ok(bytes < 16 * 1024 * 1024, `the client stopped reading early (${bytes} bytes written)`);
});

test('webhook: a 2xx trickled a byte at a time is delivered once the answer deadline passes', async (t) => {
  const server = await startServer(t, (request, body, response) => trickle(server)(request, body, response));
  const receiver = webhook(server.url);
  t.after(() => receiver.close());
  const started = Date.now();
  assert.deepEqual(await receiver.send(records(), guard()), { refused: [], retry: [] });
  assert.ok(Date.now() - started >= 900, 'it waited for the body up to the deadline');
  assert.deepEqual(await receiver.send(records(), guard()), { refused: [], retry: [] });
  await until(() => server.cut === 2, 10_000, 'both answers cut by the client');
});

test('webhook: a non-2xx whose body never ends keeps its meaning (503 transient, 400 refused)', async (t) => {
  let status = 503;
  const server = await startServer(t, (request, body, response) =>
    endless(server, status, 'text/plain')(request, body, response),
  );
  const receiver = webhook(server.url);
  t.after(() => receiver.close());
  const failed = await receiver.send(records(2), guard()).catch((e: unknown) => e);
  assert.ok(failed instanceof TransientDeliveryError, String(failed));
  assert.match(failed.message, /^HTTP 503: x{20}/);
  status = 400;
  const report = await receiver.send(records(2), guard());
  assert.equal(report.refused.length, 2);
  assert.match(report.refused[0]?.answer ?? '', /^HTTP 400: x{200}…$/);

  await until(() => server.cut === 2, 10_000, 'both answers cut by the client');
});

test('webhook: a redirect is never followed nor dead-lettered: a transient failure naming where it points', async (t) => {
  let status = 302;
  const server = await startServer(t, (_request, _body, response) => {
    response.writeHead(status, { location: 'https://elsewhere.example/hook' });
    response.end('moved');
  });
  const receiver = webhook(server.url);
  t.after(() => receiver.close());
  for (const redirect of [301, 302, 303, 307, 308]) {
    status = redirect;
    const failed = await receiver.send(records(2), guard()).catch((e: unknown) => e);
    assert.ok(failed instanceof TransientDeliveryError, `${redirect}: ${String(failed)}`);
    assert.match(
      failed.message,
      new RegExp(`HTTP ${redirect}: redirected to https://elsewhere\\.example/hook, not followed`),
    );
  }
  assert.equal(server.requests.length, 5, 'sent once each, to the configured URL only');
  // The other classes, each named: 1xx cannot be a final answer, 401/403 pause, other 4xx refuse.
  status = 401;
  assert.ok((await receiver.send(records(1), guard()).catch((e: unknown) => e)) instanceof AuthDeliveryError);
  status = 410;
  assert.equal((await receiver.send(records(1), guard())).refused.length, 1);
});

test('elasticsearch: a bulk answer without end or trickled is a transient failure, never a delivery', async (t) => {
  let mode: 'endless' | 'trickle' = 'endless';
  const server = await startServer(t, (request, body, response) =>
    (mode === 'endless' ? endless(server) : trickle(server, '{"errors":false'))(request, body, response),
  );
  const log = memoryLogger();
  const receiver = createElasticsearchReceiver(
    {
      url: server.url,
      ca: null,
      connectTimeoutMs: 1000,
      headersTimeoutMs: 1000,
      bodyTimeoutMs: 1000,
      index: 'threats',
      username: null,
      password: null,
      apiKey: 'key',
      timestampField: null,
    },
    { logger: log.logger },
  );
  t.after(() => receiver.close());
  const over = await receiver.send(records(), guard()).catch((e: unknown) => e);
  assert.ok(over instanceof TransientDeliveryError, String(over));
  assert.match(over.message, /answer is over \d+ bytes/);
  assert.ok((server.written[0] ?? 0) < 16 * 1024 * 1024, `${server.written[0]} bytes written`);
  mode = 'trickle';
  const slow = await receiver.send(records(), guard()).catch((e: unknown) => e);
  assert.ok(slow instanceof TransientDeliveryError, String(slow));
  assert.match(slow.message, /answer did not end within 1000 ms/);
  await until(() => server.cut === 2, 10_000, 'both answers cut by the client');
});

test('elasticsearch: a large genuine bulk answer (2,000 refused items, long reasons) is still read whole', async (t) => {
  const reason = `failed to parse field [dst_port] of type [long] in document; preview: '${'y'.repeat(400)}'`;
  const server = await startServer(t, (_request, body, response) => {
    const items = body
      .split('\n')
      .filter((line, i) => i % 2 === 0 && line !== '')
      .map(() => ({ create: { status: 400, error: { type: 'mapper_parsing_exception', reason } } }));
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ errors: true, items }));
  });
  const receiver = createElasticsearchReceiver(
    {
      url: server.url,
      ca: null,
      connectTimeoutMs: 1000,
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 10_000,
      index: 'threats',
      username: null,
      password: null,
      apiKey: 'key',
      timestampField: null,
    },
    { logger: memoryLogger().logger },
  );
  t.after(() => receiver.close());
  const report = await receiver.send(records(2000), guard());
  assert.equal(report.refused.length, 2000, 'an answer of about 1 MB, larger than a webhook answer may be');
  assert.match(report.refused[1999]?.answer ?? '', /^400 mapper_parsing_exception: failed to parse/);
});

test('splunk_hec: an event answer or an ack poll without end is a transient failure', async (t) => {
  let poll: 'endless' | 'ok' = 'ok';
  let event: 'endless' | 'ack' = 'endless';
  const server = await startServer(t, (request, body, response) => {
    if (request.url?.startsWith('/services/collector/ack')) {
      if (poll === 'endless') return endless(server)(request, body, response);
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.end('{"acks":{"0":true}}');
    }
    if (event === 'endless') return endless(server)(request, body, response);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"text":"Success","code":0,"ackId":0}');
  });
  const receiver = createSplunkHecReceiver(
    {
      url: server.url,
      ca: null,
      connectTimeoutMs: 1000,
      headersTimeoutMs: 1000,
      bodyTimeoutMs: 1000,
      token: 'token',
      index: null,
      sourcetype: 'threatcol:threat',
      source: 'threatcol',
      host: null,
      ackPollIntervalMs: 5,
      ackTimeoutMs: 10_000,
    },
    { logger: memoryLogger().logger },
  );
  t.after(() => receiver.close());
  const over = await receiver.send(records(), guard()).catch((e: unknown) => e);
  assert.ok(over instanceof TransientDeliveryError, String(over));
  assert.match(over.message, /answer is over \d+ bytes/);
  event = 'ack';
  poll = 'endless';
  const polled = await receiver.send(records(), guard()).catch((e: unknown) => e);
  assert.ok(polled instanceof TransientDeliveryError, String(polled));
  assert.match(polled.message, /answer is over \d+ bytes/);
  poll = 'ok';
  assert.deepEqual(await receiver.send(records(), guard()), { refused: [], retry: [] });
  await until(() => server.cut === 2, 10_000, 'both answers cut by the client');
  for (const bytes of server.written) assert.ok(bytes < 16 * 1024 * 1024, `${bytes} bytes written`);
});
