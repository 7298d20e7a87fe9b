// The outputs part of the store contract (DESIGN 13): every backend's OutputCursors hands an output the records
// after its durable position, moves the position only on ack, and survives a reopen. Called by
// test/store/files-contract.test.ts; a backend's contract test calls runOutputContract with its factory.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OutputFeed, RecordLog, Store } from '../../src/store/store.js';
import { record, type StoreFactory } from './contract.js';

const LIMITS = { maxRecords: 1000, maxBytes: 1_048_576, waitMs: 50 };

async function setUp(t: { after(fn: () => unknown): void }, factory: StoreFactory) {
  const sut = await factory(t);
  const opened: Store[] = [];
  const feeds: OutputFeed[] = [];
  const log: RecordLog = await sut.store.openRecordLog();
  t.after(async () => {
    for (const f of feeds) await f.close();
    await log.close();
    for (const s of opened) await s.close();
    await sut.cleanup();
  });
  const open = async () => {
    const s = await sut.open();
    opened.push(s);
    return s;
  };
  const feed = async (
    store: Store,
    name: string,
    options: Partial<Parameters<Store['outputs']['openFeed']>[0]> = {},
  ) => {
    const f = await store.outputs.openFeed({ name, ...options });
    feeds.push(f);
    return f;
  };
  return { sut, log, open, feed };
}

/** The next batch's threats, aborting after `ms` (an empty list then). */
async function nextThreats(feed: OutputFeed, limits = LIMITS, ms = 10_000) {
  const signal = AbortSignal.timeout(ms);
  const batch = await feed.next({ ...limits, signal });
  return { threats: batch.records.map((r) => r.record.threat), ack: () => batch.ack(), batch };
}

export function runOutputContract(backend: string, factory: StoreFactory): void {
  test(`${backend}: outputs: a new output starts now; the position moves only on ack and survives a reopen`, async (t) => {
    const { sut, log, open, feed } = await setUp(t, factory);
    await log.append([record({ threat: 'before' })]);
    const first = await feed(sut.store, 'hook');
    await log.append([record({ threat: 'a' }), record({ threat: 'b' })]);
    const one = await nextThreats(first);
    assert.deepEqual(one.threats, ['a', 'b']);
    // Not acked: handed over again, to this feed and to a feed of another process.
    assert.deepEqual((await nextThreats(first)).threats, ['a', 'b']);
    await first.close();
    const other = await open();
    const again = await feed(other, 'hook');
    const two = await nextThreats(again);
    assert.deepEqual(two.threats, ['a', 'b']);
    await two.ack();
    await log.append([record({ threat: 'c' })]);
    assert.deepEqual((await nextThreats(again)).threats, ['c']);
    await again.close();
    const third = await feed(await open(), 'hook');
    assert.deepEqual((await nextThreats(third)).threats, ['c'], 'resumes after the acked batch');
  });

  test(`${backend}: outputs: batches respect maxRecords; records the filter refuses are passed, not handed over`, async (t) => {
    const { sut, log, feed } = await setUp(t, factory);
    const f = await feed(sut.store, 'alerts', { match: (r) => r.criticality >= 4 });
    const batch = [];
    for (let i = 0; i < 10; i++) batch.push(record({ threat: `t${i}`, criticality: i % 2 === 0 ? 4 : 1 }));
    await log.append(batch);
    const small = { ...LIMITS, maxRecords: 2 };
    const one = await nextThreats(f, small);
    assert.deepEqual(one.threats, ['t0', 't2']);
    await one.ack();
    const two = await nextThreats(f, small);
    assert.deepEqual(two.threats, ['t4', 't6']);
    await two.ack();
    const three = await nextThreats(f, small);
    assert.deepEqual(three.threats, ['t8']);
    await three.ack();
    const [position] = await sut.store.outputs.list();
    assert.equal(position?.name, 'alerts');
    assert.equal(position?.lagRecords, 0, 'the refused records after t8 are passed too once acked');
    assert.equal(position?.lastId, batch[8]?.id);
  });

  test(`${backend}: outputs: list shows the lag; replay moves back; forget deletes; startAt picks the oldest`, async (t) => {
    const { sut, log, feed } = await setUp(t, factory);
    const old = new Date(Date.now() - 3_600_000).toISOString();
    await log.append([record({ threat: 'old', received_at: old })]);
    const f = await feed(sut.store, 'siem');
    const since = Date.now();
    await log.append([record({ threat: 'x' }), record({ threat: 'y' })]);
    await new Promise((r) => setTimeout(r, 20));
    let [position] = await sut.store.outputs.list();
    assert.equal(position?.lagRecords, 2);
    assert.ok((position?.lagSeconds ?? -1) >= 0);
    const one = await nextThreats(f);
    assert.deepEqual(one.threats, ['x', 'y']);
    await one.ack();
    [position] = await sut.store.outputs.list();
    assert.equal(position?.lagRecords, 0);
    assert.equal(position?.lagSeconds, 0);
    await sut.store.outputs.replay('siem', since);
    assert.deepEqual(
      (await nextThreats(f)).threats,
      ['x', 'y'],
      'a running feed takes the replayed position',
    );
    const oldest = await feed(sut.store, 'archive', { startAt: 0 });
    assert.deepEqual((await nextThreats(oldest)).threats, ['old', 'x', 'y']);
    assert.equal(await sut.store.outputs.forget('archive'), true);
    assert.equal(await sut.store.outputs.forget('archive'), false);
    assert.deepEqual(
      (await sut.store.outputs.list()).map((p) => p.name),
      ['siem'],
    );
  });
}
