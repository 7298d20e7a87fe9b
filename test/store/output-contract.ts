// The outputs part of the store contract (DESIGN 13), one suite every backend runs: an output is handed the
// records after its durable position in store order, in batches bounded by maxRecords and maxBytes; the
// position moves only on ack, past the records its filter refuses too, survives a reopen and another process;
// list shows the lag, replay moves back, forget deletes. Run by files-contract.test.ts and, against a real
// nats-server, nats-output-feed.test.ts:
//   runOutputContract('nats', async (t, overrides) => ({ store, open, cleanup }), { retention: 'counted' });
// The factory returns an open Store, `open()` for another Store on the same data (a restarted collector, the
// CLI), and `cleanup()`; the suite opens the writer and closes what it opened. What differs by backend on
// purpose is a capability (retention: files holds records for an output, NATS counts what its limits removed),
// as docs/operations.md "Outputs" and its NATS section state; what only one backend has (files' `maxLag`,
// collectors sharing a NATS consumer) is tested beside it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OutputFeed, RecordLine, Store } from '../../src/store/store.js';
import { record } from './contract.js';

export interface OutputStoreUnderTest {
  store: Store;
  open(): Promise<Store>;
  cleanup(): Promise<void>;
}

/** The factory gets config overrides (dotted keys, as for loadConfig) as the store contract's does. */
export type OutputStoreFactory = (
  t: { after(fn: () => unknown): void },
  overrides?: Record<string, unknown>,
) => Promise<OutputStoreUnderTest>;

/** What differs by backend on purpose (docs/operations.md, "Outputs" and the NATS section). */
export interface OutputCapabilities {
  /**
   * Records retention would remove before an output passed them: 'held' (files: kept until the output passes
   * them, unless its maxLag lets them go) or 'counted' (NATS: the stream's limits win; counted as skipped).
   */
  retention: 'held' | 'counted';
}

const threats = (lines: readonly RecordLine[]) => lines.map((l) => l.record.threat);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One batch, failing the test rather than hanging when none comes. */
export async function nextBatch(feed: OutputFeed, maxRecords = 100, maxBytes = 1 << 20, waitMs = 200) {
  const signal = AbortSignal.timeout(20_000);
  const batch = await feed.next({ maxRecords, maxBytes, waitMs, signal });
  assert.ok(!signal.aborted, 'no batch within 20 s');
  return batch;
}

const LIMITS = { maxRecords: 1000, maxBytes: 1_048_576, waitMs: 50 };

/** The next batch's threats, failing the test rather than hanging when none comes. */
async function nextThreats(feed: OutputFeed, limits = LIMITS) {
  const batch = await nextBatch(feed, limits.maxRecords, limits.maxBytes, limits.waitMs);
  return { threats: threats(batch.records), ack: () => batch.ack(), batch };
}

async function setUp(
  t: { after(fn: () => unknown): void },
  factory: OutputStoreFactory,
  overrides?: Record<string, unknown>,
) {
  const sut = await factory(t, overrides);
  const closers: (() => Promise<void>)[] = [];
  t.after(async () => {
    for (const close of closers.reverse()) await close();
    await sut.cleanup();
  });
  const log = await sut.store.openRecordLog();
  closers.push(() => log.close());
  const feedOf = async (
    store: Store,
    name: string,
    startAt: 'now' | number = 0,
    match?: Parameters<Store['outputs']['openFeed']>[0]['match'],
  ) => {
    const feed = await store.outputs.openFeed({ name, startAt, ...(match ? { match } : {}) });
    closers.push(() => feed.close());
    return feed;
  };
  /** A feed with the options as given: no startAt is the default a configured output gets. */
  const feed = async (
    store: Store,
    name: string,
    options: Partial<Parameters<Store['outputs']['openFeed']>[0]> = {},
  ) => {
    const opened = await store.outputs.openFeed({ name, ...options });
    closers.push(() => opened.close());
    return opened;
  };
  const open = async () => {
    const store = await sut.open();
    closers.push(() => store.close());
    return store;
  };
  const append = (names: string[], fields = {}) =>
    log.append(names.map((threat) => record({ threat, ...fields })));
  return { store: sut.store, log, feed, feedOf, open, append };
}

export function runOutputContract(
  backend: string,
  factory: OutputStoreFactory,
  capabilities: OutputCapabilities,
): void {
  const retained = capabilities.retention === 'held' ? 'kept for it' : 'counted as skipped, never silent';
  test(`${backend} outputs: retention past records an output has not passed: ${retained}`, async (t) => {
    // Small segments and the smallest size bound: retention has to remove most of 20 padded records.
    const { store, log, feedOf, append } = await setUp(t, factory, {
      'store.segmentMaxBytes': 4096,
      'store.retention.maxBytes': 4096,
      outputs: { siem: { type: 'webhook', url: 'http://127.0.0.1:9/unused' } },
    });
    await append(['r0']);
    const feed = await feedOf(store, 'siem');
    const started = await nextBatch(feed, 1);
    await started.ack(); // the output has a position now: retention knows it is behind
    const names = Array.from({ length: 19 }, (_, i) => `r${i + 1}`);
    // One append each: a segment rolls over between appends, never inside one.
    for (const name of names) await append([name], { original: { pad: 'x'.repeat(400) } });
    // Files apply retention when a writer opens (and hourly); NATS applies the stream's limits as it stores.
    await log.close();
    await (await store.openRecordLog()).close();
    const handed: string[] = [];
    let skipped = 0;
    while (handed.length + skipped < names.length) {
      const batch = await nextBatch(feed, 100);
      handed.push(...threats(batch.records));
      await batch.ack();
      skipped = (await store.outputs.list())[0]?.skippedRecords ?? 0;
    }
    if (capabilities.retention === 'held') {
      assert.equal(skipped, 0);
      assert.deepEqual(handed, names, 'every record handed over though the size bound was passed');
    } else {
      assert.ok(skipped >= 10, `retention removed ${skipped} of 19`);
      assert.deepEqual(handed, names.slice(skipped), 'the rest, in order, and nothing twice');
    }
  });

  test(`${backend} outputs: batches in store order; an ack moves the position durably (a reopened store resumes after it)`, async (t) => {
    const { store, feedOf, open, append } = await setUp(t, factory);
    await append(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8']);
    const feed = await feedOf(store, 'siem');
    const first = await nextBatch(feed, 4);
    assert.deepEqual(threats(first.records), ['a0', 'a1', 'a2', 'a3']);
    assert.equal(first.records[0]?.line, JSON.stringify(first.records[0]?.record), 'the line as stored');
    await first.ack();
    await feed.close();

    const again = await feedOf(await open(), 'siem');
    const second = await nextBatch(again, 4);
    assert.deepEqual(threats(second.records), ['a4', 'a5', 'a6', 'a7']);
    await second.ack();
    assert.deepEqual(threats((await nextBatch(again, 4)).records), ['a8']);
  });

  test(`${backend} outputs: a batch not acknowledged is handed over again (next feed, or the next call)`, async (t) => {
    const { store, feedOf, append } = await setUp(t, factory);
    await append(['b0', 'b1', 'b2', 'b3']);
    const feed = await feedOf(store, 'hook');
    assert.deepEqual(threats((await nextBatch(feed, 2)).records), ['b0', 'b1']);
    // The receiver failed: the forwarder asks again without acking.
    const retried = await nextBatch(feed, 2);
    assert.deepEqual(threats(retried.records), ['b0', 'b1']);
    await feed.close();
    const reopened = await feedOf(store, 'hook');
    const batch = await nextBatch(reopened, 10);
    assert.deepEqual(threats(batch.records), ['b0', 'b1', 'b2', 'b3']);
  });

  test(`${backend} outputs: a new output starting 'now' skips what was stored before`, async (t) => {
    const { store, feedOf, append } = await setUp(t, factory);
    await append(['old0', 'old1']);
    const feed = await feedOf(store, 'fresh', 'now');
    await append(['new0', 'new1']);
    assert.deepEqual(threats((await nextBatch(feed)).records), ['new0', 'new1']);
  });

  test(`${backend} outputs: non-matching records are passed (the position moves past them)`, async (t) => {
    const { store, feedOf, append } = await setUp(t, factory);
    await append(['low0', 'low1'], { criticality: 1 });
    await append(['high0'], { criticality: 4 });
    await append(['low2'], { criticality: 2 });
    await append(['high1'], { criticality: 4 });
    const feed = await feedOf(store, 'oncall', 0, (r) => r.criticality >= 4);
    const seen: string[] = [];
    while (seen.length < 2) {
      const batch = await nextBatch(feed);
      seen.push(...threats(batch.records));
      await batch.ack();
    }
    assert.deepEqual(seen, ['high0', 'high1']);
    const [position] = await store.outputs.list();
    assert.equal(position?.name, 'oncall');
    assert.equal(position?.lagRecords, 0, 'passed records are not lag');
  });

  test(`${backend} outputs: a feed checking only heads hands over what a whole check does, bytes as stored`, async (t) => {
    const { store, feed, append } = await setUp(t, factory);
    await append(['h0', 'h1'], { criticality: 1 });
    await append(['h2', 'h3'], { criticality: 4, sensor: 'fw-é' });
    await append(['h4'], {
      criticality: 4,
      endpoint: 'syslog',
      format: 'cef',
      original: 'a "quoted" \\ line',
    });
    const match = (r: { criticality: number }) => r.criticality >= 4;
    const whole = await feed(store, 'whole', { startAt: 0, match, check: 'record' });
    const heads = await feed(store, 'heads', { startAt: 0, match, check: 'head' });
    const a = (await nextBatch(whole)).records;
    const b = (await nextBatch(heads)).records;
    assert.deepEqual(threats(b), ['h2', 'h3', 'h4']);
    assert.deepEqual(
      b.map((r) => [r.id, r.line, r.bytes.toString('utf8'), r.record]),
      a.map((r) => [r.id, r.line, r.bytes.toString('utf8'), r.record]),
    );
    for (const r of b) {
      assert.equal(r.line, JSON.stringify(r.record), 'the line as stored');
      const { id, received_at, sensor, endpoint, criticality } = r.record;
      // The head's fields (the line may be its own head, read through getters).
      const h = r.head;
      assert.deepEqual(
        {
          id: h.id,
          received_at: h.received_at,
          sensor: h.sensor,
          endpoint: h.endpoint,
          criticality: h.criticality,
        },
        { id, received_at, sensor, endpoint, criticality },
      );
    }
  });

  test(`${backend} outputs: a batch holds at most maxRecords and maxBytes (one record always fits)`, async (t) => {
    const { store, feedOf, append } = await setUp(t, factory);
    await append(['c0', 'c1', 'c2', 'c3', 'c4'], { original: { pad: 'x'.repeat(300) } });
    const feed = await feedOf(store, 'small');
    const lineBytes = (await nextBatch(feed, 1)).records.map((l) => Buffer.byteLength(l.line));
    const one = lineBytes[0] as number;
    const batch = await nextBatch(feed, 100, one * 2 + 10);
    assert.equal(batch.records.length, 2, 'two lines fit, three do not');
    const tiny = await nextBatch(feed, 100, 10);
    assert.equal(tiny.records.length, 1, 'a record larger than maxBytes still goes, alone');
  });

  test(`${backend} outputs: list shows lag in records and seconds, then the last acknowledged id`, async (t) => {
    const { store, feedOf, append } = await setUp(t, factory);
    const feed = await feedOf(store, 'siem');
    const { ids } = await append(['d0', 'd1', 'd2']);
    await sleep(1100);
    const [before] = await store.outputs.list();
    assert.equal(before?.lagRecords, 3);
    assert.ok((before?.lagSeconds ?? 0) >= 1, `lag ${before?.lagSeconds} s`);
    assert.equal(before?.lastId, null);
    const batch = await nextBatch(feed);
    assert.equal(batch.records.length, 3);
    await batch.ack();
    const [after] = await store.outputs.list();
    assert.deepEqual(
      { lagRecords: after?.lagRecords, lagSeconds: after?.lagSeconds, lastId: after?.lastId },
      { lagRecords: 0, lagSeconds: 0, lastId: ids[2] },
    );
    assert.notEqual(after?.position, before?.position);
  });

  test(`${backend} outputs: replay moves the position back to a time; forget deletes it`, async (t) => {
    const { store, feedOf, append } = await setUp(t, factory);
    await append(['e0', 'e1']);
    await sleep(100);
    const since = Date.now();
    await sleep(100);
    await append(['e2', 'e3']);
    let feed = await feedOf(store, 'siem');
    const all = await nextBatch(feed);
    assert.deepEqual(threats(all.records), ['e0', 'e1', 'e2', 'e3']);
    await all.ack();
    await feed.close();

    await store.outputs.replay('siem', since);
    feed = await feedOf(store, 'siem');
    const replayed = await nextBatch(feed);
    assert.deepEqual(threats(replayed.records), ['e2', 'e3']);
    await replayed.ack();
    await feed.close();

    assert.equal(await store.outputs.forget('siem'), true);
    assert.deepEqual(await store.outputs.list(), []);
    assert.equal(await store.outputs.forget('siem'), false);
  });

  test(`${backend} outputs: next waits for a first record until its signal aborts (then an empty batch)`, async (t) => {
    const { store, feedOf, append } = await setUp(t, factory);
    const feed = await feedOf(store, 'idle', 'now');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const empty = await feed.next({
      maxRecords: 10,
      maxBytes: 1 << 20,
      waitMs: 100,
      signal: controller.signal,
    });
    assert.deepEqual(empty.records, []);
    const pending = nextBatch(feed);
    await append(['f0']);
    assert.deepEqual(threats((await pending).records), ['f0']);
  });
  test(`${backend} outputs: a new output starts now by default; an unacked batch goes to another process's feed`, async (t) => {
    const { store, log, open, feed } = await setUp(t, factory);
    await log.append([record({ threat: 'before' })]);
    const first = await feed(store, 'hook');
    await log.append([record({ threat: 'a' }), record({ threat: 'b' })]);
    assert.deepEqual((await nextThreats(first)).threats, ['a', 'b']);
    await first.close();
    const again = await feed(await open(), 'hook');
    const two = await nextThreats(again);
    assert.deepEqual(two.threats, ['a', 'b'], 'not acked: handed over again, to a feed of another process');
    await two.ack();
    await log.append([record({ threat: 'c' })]);
    assert.deepEqual((await nextThreats(again)).threats, ['c']);
    await again.close();
    const third = await feed(await open(), 'hook');
    assert.deepEqual((await nextThreats(third)).threats, ['c'], 'resumes after the acked batch');
  });

  test(`${backend} outputs: maxRecords with a filter: the last id is the last record handed over, then no lag`, async (t) => {
    const { store, log, feed } = await setUp(t, factory);
    const f = await feed(store, 'alerts', { startAt: 'now', match: (r) => r.criticality >= 4 });
    const batch = [];
    for (let i = 0; i < 10; i++) batch.push(record({ threat: `t${i}`, criticality: i % 2 === 0 ? 4 : 1 }));
    await log.append(batch);
    const small = { ...LIMITS, maxRecords: 2 };
    const seen: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const next = await nextThreats(f, small);
      seen.push(next.threats);
      await next.ack();
    }
    assert.deepEqual(seen, [['t0', 't2'], ['t4', 't6'], ['t8']]);
    const [position] = await store.outputs.list();
    assert.equal(position?.name, 'alerts');
    assert.equal(position?.lagRecords, 0, 'the refused record after t8 is passed too once acked');
    assert.equal(position?.lastId, batch[8]?.id);
  });

  test(`${backend} outputs: a running feed takes a replayed position; a second output starting at 0 has its own`, async (t) => {
    const { store, log, feed } = await setUp(t, factory);
    const old = new Date(Date.now() - 3_600_000).toISOString();
    await log.append([record({ threat: 'old', received_at: old })]);
    const f = await feed(store, 'siem', { startAt: 'now' });
    await sleep(100);
    const since = Date.now();
    await sleep(100);
    await log.append([record({ threat: 'x' }), record({ threat: 'y' })]);
    const one = await nextThreats(f);
    assert.deepEqual(one.threats, ['x', 'y']);
    await one.ack();
    await store.outputs.replay('siem', since);
    assert.deepEqual((await nextThreats(f)).threats, ['x', 'y'], 'the running feed, not a new one');
    const oldest = await feed(store, 'archive', { startAt: 0 });
    assert.deepEqual((await nextThreats(oldest)).threats, ['old', 'x', 'y']);
    assert.equal(await store.outputs.forget('archive'), true);
    assert.deepEqual(
      (await store.outputs.list()).map((p) => p.name),
      ['siem'],
    );
  });
}
