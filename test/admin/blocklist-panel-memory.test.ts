// One copy of the decisions per process: the dashboard's Blocklist panel reads the one the feeds and the engine
// read. A real collector (the binary, files backend) with 150,000 blocks written through the store; its heap
// after a full collection (asked over the process's own inspector) is taken before and after the panel is
// visited, and compared with what one copy of those decisions weighs (measured here, in the same run).
// Uses dist/ (npm run build).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { request } from 'undici';
import { loadConfig } from '../../src/config/load-config.js';
import type { DecisionChange, DecisionsStore } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import { type ServeProcess, spawnServe } from '../helpers/cli.js';
import { trustingAgent } from '../helpers/client.js';
import { blockChange, feedAuthorization, feedChange } from '../helpers/decisions.js';
import { usedHeapAfterGc } from '../helpers/heap.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

/** Enough that a copy (~58 MiB) stands far above the heap's noise (well under 1 MiB); written in a few seconds. */
const BLOCKS = 150_000;
const GUARD_MS = 60_000;
const PASSWORD = 'panel-memory-password-1';

function blocks(now: number): DecisionChange[] {
  const changes: DecisionChange[] = [];
  for (let i = 0; i < BLOCKS; i++) {
    // 198.18.0.0/15 holds 131,072 addresses; the rest are IPv6 /64s.
    const address =
      i < 131_072
        ? `198.${18 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}/32`
        : `2001:db8:${(i >> 12).toString(16)}:${((i & 0xfff) + 1).toString(16)}::/64`;
    changes.push(
      blockChange(address, now - i * 10, now + 86_400_000 + i, {
        rule: 'critical',
        reason: 'critical: 1 record(s) from 1 sensor(s) within 1h',
        records: 1,
        sensors: ['fw1'],
        who: null,
      }),
    );
  }
  return changes;
}

/** The process's heap in use after a full collection, over the inspector it was started with. */
async function inspector(server: ServeProcess): Promise<{ heapUsed(): Promise<number>; close(): void }> {
  let url = '';
  await until(
    () => {
      url = /Debugger listening on (ws:\/\/\S+)/.exec(server.stderr())?.[1] ?? '';
      return url !== '';
    },
    GUARD_MS,
    'the inspector',
  );
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let next = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  ws.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
  };
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = ++next;
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  return {
    async heapUsed() {
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.collectGarbage');
      const reply = (await call('Runtime.evaluate', {
        expression: 'process.memoryUsage().heapUsed',
        returnByValue: true,
      })) as { result: { value: number } };
      return reply.result.value;
    },
    close: () => ws.close(),
  };
}

/** What one copy of the decisions weighs in a process: read into this test's own heap. */
async function weighOneCopy(decisions: DecisionsStore): Promise<number> {
  const before = usedHeapAfterGc();
  const copy = await decisions.read();
  const weight = usedHeapAfterGc() - before;
  assert.equal(copy.blocks.size, BLOCKS);
  return weight;
}

test('the Blocklist panel reads the feeds copy of the decisions: visiting it adds far less than a copy', {
  timeout: 180_000,
}, async (t) => {
  const dataDir = makeTempDir(t);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir },
  });
  const opened = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  const started = Date.now();
  await opened.decisions.apply([feedChange('edge', PASSWORD)]);
  await opened.decisions.apply(blocks(started));
  const oneCopy = await weighOneCopy(opened.decisions);
  await opened.close();
  t.diagnostic(`${BLOCKS} blocks written in ${Date.now() - started} ms; one copy weighs ${mb(oneCopy)}`);

  const server = await spawnServe(dataDir, [], {
    env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:0`.trim() },
  });
  t.after(() => server.stop('SIGKILL'));
  const heap = await inspector(server);
  t.after(() => heap.close());

  // The engine and the feeds read the decisions at start: in the baseline, one copy for both.
  const baseline = await heap.heapUsed();

  // The panel, visited as the dashboard does (and asked about the page's addresses).
  let panel: { total: number; complete: boolean; blocked?: Record<string, unknown> } | null = null;
  await until(
    async () => {
      const res = await request(
        `${server.adminUrl}/api/blocklist?check=198.18.0.7,2001:db8:22:2e1::1,192.0.2.1`,
      );
      panel = (await res.body.json()) as typeof panel;
      return res.statusCode === 200 && panel?.complete === true && panel.total === BLOCKS;
    },
    GUARD_MS,
    'the panel with every block',
    250,
  );
  assert.deepEqual(Object.keys((panel as unknown as { blocked: object }).blocked).sort(), [
    '198.18.0.7',
    '2001:db8:22:2e1::1',
  ]);
  const visited = await heap.heapUsed();
  const added = visited - baseline;
  t.diagnostic(
    `collector heap after GC: ${mb(baseline)} at start, ${mb(visited)} with the panel visited: ` +
      `+${mb(added)} (${((100 * added) / oneCopy).toFixed(1)}% of one copy); ${Date.now() - started} ms`,
  );
  // The feeds serve every block (they held them all along).
  const res = await request(`${server.url}/feeds/edge`, {
    headers: { authorization: feedAuthorization('edge', PASSWORD) },
    dispatcher: trustingAgent(dataDir),
  });
  await res.body.dump();
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['x-threatcol-entries'], String(BLOCKS));
  assert.ok(oneCopy > 32 * 1024 * 1024, `one copy weighs ${mb(oneCopy)}: too few blocks to tell`);
  assert.ok(added < oneCopy / 10, `the panel added ${mb(added)}, one copy weighs ${mb(oneCopy)}`);
  // The engine and the feeds do not hold a copy each either (the process's own heap is far below a copy).
  assert.ok(baseline < 2 * oneCopy, `${mb(baseline)} at start: two copies of ${mb(oneCopy)}?`);
});

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
