// Feeds under readers a server cannot choose: a firewall polling while the decisions cannot be read yet (NATS down
// since the collector started) is told to come back (503), never refused its own password (401, counted as a
// failed login, then 429: PAN-OS stops enforcing a list it was refused); and readers of a large feed that read
// slowly or not at all each hold a slice of the body, not an encrypted copy of all of it. The real binary.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from 'node:tls';
import { pino } from 'pino';
import { request } from 'undici';
import { loadConfig } from '../../src/config/load-config.js';
import type { DecisionChange } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import { spawnServe } from '../helpers/cli.js';
import { trustingAgent } from '../helpers/client.js';
import { blockChange, feedAuthorization, feedChange } from '../helpers/decisions.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { rssBytes } from '../reliability/support.js';

const GUARD_MS = 30_000;
const PASSWORD = 'secret-password-readers';

/** `changes` written to the store of `dataDir` (with `overrides`) before a collector starts on it. */
async function seed(dataDir: string, overrides: Record<string, unknown>, changes: DecisionChange[]) {
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent',
    overrides: { dataDir, ...overrides },
  });
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  try {
    await store.decisions.apply(changes);
  } finally {
    await store.close();
  }
}

test('while the decisions cannot be read (NATS down since the start) a poll is answered 503 with Retry-After, never 401 or 429; 200 once NATS is back', async (t) => {
  const node = await startNatsServer(t);
  const dataDir = makeTempDir(t);
  const now = Date.now();
  await seed(dataDir, { 'store.backend': 'nats', 'nats.servers': [node.url] }, [
    blockChange('198.51.100.7/32', now, now + 3_600_000),
    feedChange('edge', PASSWORD),
  ]);
  await node.kill();
  const serve = await spawnServe(dataDir, [], {
    env: { THREATCOL_STORE_BACKEND: 'nats', THREATCOL_NATS_SERVERS: node.url },
  });
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const poll = async () => {
    const res = await request(`${serve.url}/feeds/edge`, {
      headers: { authorization: feedAuthorization('edge', PASSWORD) },
      dispatcher: agent,
    });
    return { status: res.statusCode, retryAfter: res.headers['retry-after'], text: await res.body.text() };
  };
  // More polls than the failed logins an address is allowed (20).
  const answers = [];
  for (let i = 0; i < 25; i++) answers.push(await poll());
  assert.deepEqual([...new Set(answers.map((a) => a.status))], [503], JSON.stringify(answers.slice(0, 3)));
  assert.equal(answers[0]?.retryAfter, '5');
  await node.start();
  let last = { status: 0, text: '' };
  await until(
    async () => {
      last = await poll();
      return last.status === 200;
    },
    GUARD_MS,
    'the feed once NATS is back',
    100,
  );
  assert.equal(last.text, '198.51.100.7\n');
});

test('readers of a large feed that never read hold a slice each, not the body: the server grows by a few MB, not by a copy per reader', async (t) => {
  const dataDir = makeTempDir(t);
  const now = Date.now();
  const blocks = Array.from({ length: 100_000 }, (_, i) =>
    blockChange(`198.18.${i >> 8}.${i & 0xff}/32`, now, now + 7 * 86_400_000, {
      rule: 'critical',
      who: null,
    }),
  );
  await seed(dataDir, {}, [...blocks, feedChange('big', PASSWORD, 'json')]);
  const serve = await spawnServe(dataDir);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  // One poll read whole: the body is rendered (once) and its size known.
  const first = await request(`${serve.url}/feeds/big`, {
    headers: { authorization: feedAuthorization('big', PASSWORD) },
    dispatcher: agent,
  });
  const size = (await first.body.arrayBuffer()).byteLength;
  assert.equal(first.statusCode, 200);
  assert.ok(size > 5_000_000, `${size} bytes`);
  const before = rssBytes(serve.child.pid as number);

  // Readers that send the request, then never read: each holds what its sockets' buffers do not take.
  const READERS = 30;
  const { port } = new URL(serve.url);
  const sockets = await Promise.all(
    Array.from(
      { length: READERS },
      () =>
        new Promise<ReturnType<typeof connect>>((resolve, reject) => {
          const socket = connect({ host: '127.0.0.1', port: Number(port), rejectUnauthorized: false }, () => {
            socket.write(
              `GET /feeds/big HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${feedAuthorization('big', PASSWORD)}\r\n\r\n`,
            );
            socket.pause();
            resolve(socket);
          });
          socket.once('error', reject);
        }),
    ),
  );
  t.after(() => {
    for (const s of sockets) s.destroy();
  });
  // Written as far as each socket takes it (the server is idle once every reader's buffers are full).
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const grown = rssBytes(serve.child.pid as number) - before;
  t.diagnostic(
    `${READERS} readers of a ${(size / 1e6).toFixed(1)} MB feed that never read: the server grew ${(grown / 1e6).toFixed(1)} MB`,
  );
  // A copy each would be READERS x size (360 MB); a slice each, a few MB.
  assert.ok(grown < 60_000_000, `grew ${grown} bytes`);
});
