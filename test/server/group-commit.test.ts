// Black-box: how group commit syncs: one fdatasync in flight for single records, a second only for a large group.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FileOps, nodeFileOps } from '../../src/store/file-ops.js';
import { post } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/in-process-server.js';
import { genericRecord, readStored } from '../helpers/records.js';

/** The real file layer, with every fdatasync held until `release()` and the syncs in flight counted. */
function heldSyncs() {
  const state = { writes: 0, syncs: 0, inFlight: 0, maxInFlight: 0, held: [] as (() => void)[] };
  let holding = true;
  const ops: FileOps = {
    ...nodeFileOps,
    writev: (...args) => {
      state.writes++;
      return nodeFileOps.writev(...args);
    },
    fdatasync: async (fd) => {
      state.syncs++;
      state.inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      try {
        if (holding) await new Promise<void>((resolve) => state.held.push(resolve));
        return await nodeFileOps.fdatasync(fd);
      } finally {
        state.inFlight--;
      }
    },
  };
  const release = () => {
    holding = false;
    for (const resolve of state.held.splice(0)) resolve();
  };
  return { ops, state, release };
}

/** Polls (bounded) until `check` holds: what is awaited here has no event of its own outside the daemon. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`never happened: ${what}`);
}

async function queuedRecords(s: TestServer): Promise<number> {
  const text = await (await fetch(`${s.adminUrl}/metrics`)).text();
  return Number(/^threatcol_store_queue_records (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

function sender(s: TestServer, sensor: string, key: string) {
  return (body: unknown) => post(s.url, '/generic', body, { agent: s.agent, sensor, key });
}

test('single records: one sync in flight; the records arriving meanwhile are written together after it', async (t) => {
  const { ops, state, release } = heldSyncs();
  t.after(release); // before the server's own stop, which waits for the held syncs
  const s = await startTestServer(t, { fileOps: ops });
  const send = sender(s, 'one', await s.addSensor('one'));
  const first = send(genericRecord({ threat: 'm0' }));
  await until('the first batch is syncing', () => state.held.length === 1);
  const behind = Array.from({ length: 10 }, (_, i) => send(genericRecord({ threat: `m${i + 1}` })));
  await until('the ten are queued', async () => (await queuedRecords(s)) === 11);
  assert.equal(state.writes, 1, 'nothing is written while the first sync runs');
  assert.equal(state.syncs, 1);
  release();
  const replies = await Promise.all([first, ...behind]);
  assert.deepEqual(new Set(replies.map((r) => r.status)), new Set([200]));
  const stored = readStored(s.dataDir).map((r) => r.threat);
  assert.deepEqual(stored.slice().sort(), Array.from({ length: 11 }, (_, i) => `m${i}`).sort());
  assert.equal(state.writes, 2, 'the ten gathered into one batch');
  assert.equal(state.syncs, 2);
  assert.equal(state.maxInFlight, 1);
});

test('a large group does not wait: its write and sync overlap the sync in flight', async (t) => {
  const { ops, state, release } = heldSyncs();
  t.after(release); // before the server's own stop, which waits for the held syncs
  const s = await startTestServer(t, { fileOps: ops });
  const send = sender(s, 'big', await s.addSensor('big'));
  const first = send(genericRecord({ threat: 'small' }));
  await until('the first batch is syncing', () => state.held.length === 1);
  // 100 records of about 1 KB each: one request past the 64 KB that earns a second sync.
  const pad = 'x'.repeat(900);
  const large = send(Array.from({ length: 100 }, (_, i) => genericRecord({ threat: `big-${i} ${pad}` })));
  await until('the large batch is syncing beside the first', () => state.held.length === 2);
  assert.equal(state.writes, 2);
  release();
  assert.equal((await first).status, 200);
  assert.equal((await large).status, 200);
  assert.equal(readStored(s.dataDir).length, 101);
  assert.equal(state.maxInFlight, 2);
});
