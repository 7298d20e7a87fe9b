// The store contract: the behaviours every backend (files, NATS) must show through the `Store` interface.
//
// Usage, one test file per backend:
//   runStoreContract('files', async (t, overrides) => ({ config, store, open, cleanup, ... }));
// The factory gets the test context and config overrides (dotted keys, as for loadConfig), and returns:
//   config       the configuration the store was opened with
//   store        an open Store; the suite opens its writer (one writer per factory call)
//   open()       another Store on the same data, as another process sees it (the CLI, a second collector)
//   failWrites?  optional: makes the writer's appends fail until the returned function is called (either may
//                be async: a backend may need to stop and start a server, and wait until it is back); without
//                it the all-or-nothing case is skipped with a reason (a backend may have no fault hook)
//   cleanup()    stops everything the factory started (also registered with t.after by the suite)
//   putRegistryEntry(name, value)  writes one registry entry as an outside hand would, bypassing every check
//                (files: appended to sensors.json's list; NATS: the sensor's key in the bucket, value as JSON)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Config } from '../../src/config/schema.js';
import { newRecordId } from '../../src/records/record-id.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import type { Sensor } from '../../src/store/registry.js';
import { type SearchQuery, searchRecords } from '../../src/store/search-records.js';
import type { RecordLine, Store } from '../../src/store/store.js';
import { until as waitFor } from '../helpers/until.js';

export interface StoreUnderTest {
  config: Config;
  store: Store;
  open(): Promise<Store>;
  failWrites?: () => (() => void | Promise<void>) | Promise<() => void | Promise<void>>;
  cleanup(): Promise<void>;
  putRegistryEntry(name: string, value: unknown): Promise<void>;
}

export type StoreFactory = (
  t: { after(fn: () => unknown): void },
  overrides?: Record<string, unknown>,
) => Promise<StoreUnderTest>;

/** How long the watcher may take to see a change: a hang guard; the time (goal: 1 s) is reported, not judged. */
const WATCH_GUARD_MS = 10_000;

export function record(fields: Partial<StoredRecord> = {}): StoredRecord {
  const at = fields.received_at ?? new Date().toISOString();
  return {
    id: newRecordId(),
    received_at: at,
    sensor: 'fw1',
    endpoint: 'generic',
    criticality: 2,
    severity: 'medium',
    criticality_source: 'sender',
    src_ip: '192.0.2.1',
    dst_ip: '198.51.100.2',
    dst_port: 443,
    protocol: 'tcp',
    threat: 'contract',
    remote_addr: '127.0.0.1',
    original: { threat: fields.threat ?? 'contract' },
    ...fields,
  };
}

const threats = (lines: RecordLine[]) => lines.map((l) => l.record.threat);

async function setUp(t: { after(fn: () => unknown): void }, factory: StoreFactory, overrides = {}) {
  const sut = await factory(t, overrides);
  const opened: Store[] = [];
  t.after(async () => {
    for (const s of opened) await s.close();
    await sut.cleanup();
  });
  const open = async () => {
    const s = await sut.open();
    opened.push(s);
    return s;
  };
  return { sut, open };
}

export function runStoreContract(backend: string, factory: StoreFactory): void {
  test(`${backend}: durable ack: once append resolves, a fresh reader sees every record exactly as given`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    const log = await sut.store.openRecordLog();
    t.after(() => log.close());
    const batch = [record({ threat: 'a' }), record({ threat: 'b', endpoint: 'firewall', src_port: 1 })];
    const result = await log.append(batch);
    assert.deepEqual(result, { ids: batch.map((r) => r.id), duplicates: 0 });
    const reader = (await open()).reader;
    const { records } = await reader.readRecent({ limit: 10 });
    assert.deepEqual(
      records.map((r) => r.record),
      batch,
    );
    assert.deepEqual(
      records.map((r) => JSON.parse(r.line)),
      batch,
      'the line is the record as stored',
    );
  });

  test(`${backend}: a batch that fails leaves nothing; the next one is stored`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    if (!sut.failWrites) {
      t.skip(`${backend} has no write-fault hook in this suite; its own failure tests cover the 503 path`);
      return;
    }
    const log = await sut.store.openRecordLog();
    t.after(() => log.close());
    await log.append([record({ threat: 'before' })]);
    const heal = await sut.failWrites();
    await assert.rejects(
      log.append([record({ threat: 'lost-1' }), record({ threat: 'lost-2' })]),
      (e: unknown) => (e as { code?: string }).code === 'UNAVAILABLE',
    );
    await heal();
    await log.append([record({ threat: 'after' })]);
    // Two identical deliveries in flight while the first one fails: neither is stored, neither gets a 200,
    // and the retry after that stores the record once.
    const healAgain = await sut.failWrites();
    const unavailable = (e: unknown) => (e as { code?: string }).code === 'UNAVAILABLE';
    const first = log.append([record({ threat: 'retried' })], { dedupeKeys: ['key-retried-aaaaaaaaaa'] });
    const second = log.append([record({ threat: 'retried' })], { dedupeKeys: ['key-retried-aaaaaaaaaa'] });
    // Both handlers attached at once: the second may fail while the first is awaited.
    await Promise.all([assert.rejects(first, unavailable), assert.rejects(second, unavailable)]);
    await healAgain();
    const retry = record({ threat: 'retried' });
    assert.deepEqual(await log.append([retry], { dedupeKeys: ['key-retried-aaaaaaaaaa'] }), {
      ids: [retry.id],
      duplicates: 0,
    });
    const { records } = await (await open()).reader.readRecent({ limit: 10 });
    assert.deepEqual(threats(records), ['before', 'after', 'retried']);
  });

  test(`${backend}: readRecent returns the newest N oldest first, with filters; scan visits since an instant`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    const log = await sut.store.openRecordLog();
    t.after(() => log.close());
    const now = Date.now();
    const iso = (agoMs: number) => new Date(now - agoMs).toISOString();
    await log.append([
      record({ threat: 'r1', sensor: 'a', criticality: 1, received_at: iso(3 * 3_600_000) }),
      record({ threat: 'r2', sensor: 'b', criticality: 4, received_at: iso(2 * 3_600_000) }),
    ]);
    await log.append([
      record({ threat: 'r3', sensor: 'a', criticality: 3, endpoint: 'firewall', received_at: iso(60_000) }),
      record({ threat: 'r4', sensor: 'b', criticality: 0, received_at: iso(30_000) }),
      record({ threat: 'r5', sensor: 'a', criticality: 4, received_at: iso(0) }),
    ]);
    const reader = (await open()).reader;
    const recent = async (limit: number, filter = {}, match?: (r: StoredRecord) => boolean) =>
      threats((await reader.readRecent({ limit, filter, ...(match ? { match } : {}) })).records);
    assert.deepEqual(await recent(3), ['r3', 'r4', 'r5']);
    assert.deepEqual(await recent(100), ['r1', 'r2', 'r3', 'r4', 'r5']);
    assert.deepEqual(await recent(0), []);
    assert.deepEqual(await recent(10, { sensor: 'a' }), ['r1', 'r3', 'r5']);
    assert.deepEqual(await recent(2, { sensor: 'a' }), ['r3', 'r5']);
    assert.deepEqual(await recent(10, { minCriticality: 3 }), ['r2', 'r3', 'r5']);
    assert.deepEqual(await recent(10, { endpoint: 'firewall' }), ['r3']);
    assert.deepEqual(await recent(10, { since: now - 90_000 }), ['r3', 'r4', 'r5']);
    assert.deepEqual(await recent(10, { sensor: 'b', minCriticality: 1 }), ['r2']);
    assert.deepEqual(await recent(10, {}, (r) => r.threat !== 'r4'), ['r1', 'r2', 'r3', 'r5']);
    const scanned: string[] = [];
    await reader.scan(now - 2.5 * 3_600_000, (r) => scanned.push(r.threat));
    assert.deepEqual(scanned.sort(), ['r2', 'r3', 'r4', 'r5']);
    // A visit's promise is awaited before the next record (backpressure for `store migrate`), from 0: all.
    let busy = false;
    const awaited: string[] = [];
    await reader.scan(0, async (r) => {
      assert.ok(!busy, 'two visits at once');
      busy = true;
      await new Promise((resolve) => setImmediate(resolve));
      awaited.push(r.threat);
      busy = false;
    });
    assert.deepEqual(awaited.sort(), ['r1', 'r2', 'r3', 'r4', 'r5']);
  });

  test(`${backend}: readRecent stops within a record of an abort, and looks back no further than maxBytes`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    const log = await sut.store.openRecordLog();
    t.after(() => log.close());
    await log.append(
      Array.from({ length: 40 }, (_, i) => record({ threat: `t${String(i).padStart(2, '0')}` })),
    );
    const reader = (await open()).reader;
    const all = (await reader.readRecent({ limit: 100 })).records;
    assert.equal(all.length, 40);
    let calls = 0;
    const before = new AbortController();
    before.abort();
    await assert.rejects(reader.readRecent({ limit: 100, signal: before.signal, match: () => ++calls > 0 }), {
      name: 'AbortError',
    });
    assert.equal(calls, 0, 'read after an abort before the start');
    // The dashboard's reader aborts when its client hangs up: not one record more is read after it.
    const during = new AbortController();
    await assert.rejects(
      reader.readRecent({
        limit: 100,
        signal: during.signal,
        match: () => {
          calls++;
          during.abort();
          return false;
        },
      }),
      { name: 'AbortError' },
    );
    assert.equal(calls, 1, 'records read after the abort');
    // A byte budget of five records: at most one record more is read, and only the newest are returned.
    const lineBytes = Math.max(...all.map((l) => Buffer.byteLength(l.line) + 1));
    let visited = 0;
    const { records } = await reader.readRecent({
      limit: 100,
      maxBytes: 5 * lineBytes,
      match: () => ++visited > 0,
    });
    assert.ok(visited <= 6, `${visited} records read for a budget of 5`);
    const newest = threats(all.slice(-6));
    assert.ok(
      threats(records).every((name) => newest.includes(name)),
      threats(records).join(),
    );
  });

  test(`${backend}: the look-up matches addresses by CIDR, pages with before, and says when its record bound stopped it`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    const log = await sut.store.openRecordLog();
    t.after(() => log.close());
    const sources = ['192.0.2.1', '2001:db8::7', '198.51.100.9', '::ffff:192.0.2.200'];
    await log.append(
      Array.from({ length: 20 }, (_, i) =>
        record({ threat: `t${String(i).padStart(2, '0')}`, src_ip: sources[i % 4] as string }),
      ),
    );
    const reader = (await open()).reader;
    const since = Date.now() - 3_600_000;
    const page = (query: Omit<SearchQuery, 'since'>, limit: number, bounds = {}) =>
      searchRecords(reader, { since, ...query }, { limit, ...bounds });
    const v4 = await page({ src: '192.0.2.0/24' }, 100);
    assert.deepEqual(threats(v4.records), [
      't19',
      't16',
      't15',
      't12',
      't11',
      't08',
      't07',
      't04',
      't03',
      't00',
    ]);
    assert.equal(v4.next, null);
    assert.equal(v4.bounded, null);
    const first = await page({ src: '192.0.2.0/24' }, 4);
    assert.deepEqual(threats(first.records), ['t19', 't16', 't15', 't12']);
    assert.equal(first.next, first.records[3]?.record.id);
    const second = await page({ src: '192.0.2.0/24', before: first.next as string }, 4);
    assert.deepEqual(threats(second.records), ['t11', 't08', 't07', 't04']);
    const v6 = await page({ src: '2001:db8::/32', threat: 'T1' }, 100);
    assert.deepEqual(threats(v6.records), ['t13', 't17'].reverse());
    // A bound of 6 records read back: it stops there, says so, and returns the newest matches it saw.
    const bounded = await page({ src: '2001:db8::/32' }, 100, { maxRecords: 6 });
    assert.ok(bounded.bounded !== null, 'the bound is reported');
    assert.ok(
      threats(bounded.records).every((name) => ['t17', 't13'].includes(name)),
      threats(bounded.records).join(),
    );
    assert.equal((await page({ src: '2001:db8::/32' }, 100, { maxRecords: 100 })).bounded, null);
  });

  test(`${backend}: the look-up reads back from its window's end: newer records never count against its bound`, async (t) => {
    // Small segments (files): a segment whose first record is past the window's end is passed over unread.
    const { sut, open } = await setUp(t, factory, { 'store.segmentMaxBytes': 4096 });
    const log = await sut.store.openRecordLog();
    t.after(() => log.close());
    const now = Date.now();
    // 160 records a minute apart, oldest first, each id made at its own minute (a UUIDv7's time), then 150 of the
    // last minute; 10 more from 90 minutes ago came first.
    const at = (ms: number, n: number) => {
      const hex = ms.toString(16).padStart(12, '0');
      return {
        id: `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${n.toString(16).padStart(12, '0')}`,
        received_at: new Date(ms).toISOString(),
      };
    };
    const old = Array.from({ length: 10 }, (_, i) =>
      record({ ...at(now - 5_400_000 + i, i), threat: `old${i}` }),
    );
    const spread = Array.from({ length: 160 }, (_, i) =>
      record({ ...at(now - 3_300_000 + i * 20_000, 100 + i), threat: `m${i}` }),
    );
    const recent = Array.from({ length: 150 }, (_, i) =>
      record({ ...at(now - 60_000 + i, 1000 + i), threat: 'new' }),
    );
    for (const batch of [old, spread, recent])
      for (let i = 0; i < batch.length; i += 10) await log.append(batch.slice(i, i + 10));
    const reader = (await open()).reader;
    // A window before the last 65 minutes, read with a bound of 100 records: the 10 old ones, not the bound.
    const window = await searchRecords(
      reader,
      { since: now - 7_200_000, until: now - 3_900_000 },
      { limit: 50, maxRecords: 100 },
    );
    assert.deepEqual(threats(window.records), old.map((r) => r.threat).reverse());
    assert.equal(window.bounded, null);
    // Pages of 50 with a bound of 40 records read (each cut short by it): each page goes on from the last, to
    // the window's start. A page reads again the records within ORDER_SLACK_MS after its `before` (15 here).
    const seen: string[] = [];
    let before: string | undefined;
    for (let pages = 0; pages < 40; pages++) {
      const page = await searchRecords(
        reader,
        { since: now - 3_600_000, until: now - 600_000, ...(before ? { before } : {}) },
        { limit: 50, maxRecords: 40 },
      );
      seen.push(...threats(page.records));
      if (page.next === null) break;
      before = page.next;
    }
    const expected = spread
      .filter((r) => Date.parse(r.received_at) < now - 600_000)
      .map((r) => r.threat)
      .reverse();
    assert.equal(seen.length, expected.length, `${seen.length} of ${expected.length} records paged`);
    assert.deepEqual(seen, expected);
  });

  test(`${backend}: follow delivers new records in store order, filtered, from the cursor on`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    const log = await sut.store.openRecordLog();
    t.after(() => log.close());
    await log.append([record({ threat: 'old' })]);
    const reader = (await open()).reader;
    const { records, cursor } = await reader.readRecent({ limit: 0 });
    assert.deepEqual(records, []);
    const seen: string[] = [];
    const stop = new AbortController();
    let wake: () => void = () => {};
    const following = reader.follow(cursor, {
      signal: stop.signal,
      pollIntervalMs: 50,
      filter: { sensor: 'fw1' },
      onRecords: (batch) => {
        seen.push(...threats(batch));
        wake();
      },
    });
    const expected = Array.from({ length: 30 }, (_, i) => `n${i}`);
    for (let i = 0; i < expected.length; i += 3) {
      await log.append([
        record({ threat: `n${i}` }),
        record({ threat: 'other sensor', sensor: 'fw2' }),
        record({ threat: `n${i + 1}` }),
        record({ threat: `n${i + 2}` }),
      ]);
    }
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`follow saw only ${seen.join(',')}`)), 10_000);
      wake = () => {
        if (seen.length >= expected.length) {
          clearTimeout(timer);
          resolve();
        }
      };
      wake();
    });
    stop.abort();
    await following;
    assert.deepEqual(seen, expected);
  });

  test(`${backend}: registry add, rotate, revoke through one store; a watcher on another sees each change`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    const cli = await open();
    let latest: Sensor[] = [];
    let changed: () => void = () => {};
    const errors: Error[] = [];
    const watch = sut.store.registry.watch(
      (sensors) => {
        latest = sensors;
        changed();
      },
      (error) => errors.push(error),
    );
    t.after(() => watch.stop());
    /** Waits until the watcher's view holds; the time counts from `started`, before the change was made. */
    const noticed = async (what: string, started: number, holds: (sensors: Sensor[]) => boolean) => {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${what}: not seen by the watcher`)), WATCH_GUARD_MS);
        changed = () => {
          if (holds(latest)) {
            clearTimeout(timer);
            resolve();
          }
        };
        changed();
      });
      const ms = Math.round(performance.now() - started);
      t.diagnostic(`${backend}: watcher saw ${what} after ${ms} ms`);
    };
    const find = (sensors: Sensor[]) => sensors.find((s) => s.name === 'fw1');

    let started = performance.now();
    const added = await cli.registry.add({ name: 'fw1', description: 'hq', timezone: 'Europe/Berlin' });
    assert.equal(added.sensor.status, 'active');
    assert.equal(added.sensor.keys.length, 1);
    assert.ok(!JSON.stringify(added.sensor).includes(added.key), 'only the hash is stored');
    await noticed('add', started, (s) => find(s)?.status === 'active');
    await assert.rejects(
      cli.registry.add({ name: 'fw1' }),
      (e: unknown) => (e as { code?: string }).code === 'SENSOR_EXISTS',
    );

    started = performance.now();
    const rotated = await cli.registry.rotate('fw1', 60_000);
    assert.notEqual(rotated.key, added.key);
    await noticed('rotate', started, (s) => find(s)?.keys.length === 2);
    const keys = find(latest)?.keys ?? [];
    assert.equal(keys[0]?.expires_at, rotated.oldKeysExpireAt);
    assert.equal(keys[1]?.expires_at, null);

    started = performance.now();
    const revoked = await cli.registry.revoke('fw1');
    assert.equal(revoked.status, 'revoked');
    await noticed('revoke', started, (s) => find(s)?.status === 'revoked');
    await assert.rejects(
      cli.registry.revoke('nope'),
      (e: unknown) => (e as { code?: string }).code === 'SENSOR_NOT_FOUND',
    );
    await assert.rejects(
      cli.registry.rotate('fw1', 0),
      (e: unknown) => (e as { code?: string }).code === 'SENSOR_REVOKED',
    );
    assert.deepEqual(
      (await cli.registry.list()).map((s) => [s.name, s.status]),
      [['fw1', 'revoked']],
    );
    assert.deepEqual(errors, []);
  });

  test(`${backend}: registry entries that are not sensors are skipped and named; the others keep working`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    const cli = await open();
    const first = await cli.registry.add({ name: 'good1' });
    let latest: Sensor[] = [];
    let changed: () => void = () => {};
    const errors: Error[] = [];
    const watch = sut.store.registry.watch(
      (sensors) => {
        latest = sensors;
        changed();
      },
      (error) => errors.push(error),
    );
    t.after(() => watch.stop());
    const until = (what: string, holds: (names: string[]) => boolean) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${what}: not seen by the watcher`)), 10_000);
        changed = () => {
          if (holds(latest.map((s) => s.name).sort())) {
            clearTimeout(timer);
            resolve();
          }
        };
        changed();
      });
    await until('good1', (names) => names.includes('good1'));

    const valid = first.sensor;
    await sut.putRegistryEntry('nokeys', { ...valid, name: 'nokeys', keys: undefined });
    await sut.putRegistryEntry('nulled', null);
    await sut.putRegistryEntry('badkeys', { ...valid, name: 'badkeys', keys: [{ hash: 5 }] });
    await sut.putRegistryEntry('badzone', { ...valid, name: 'badzone', timezone: 'Mars/Olympus' });
    await sut.putRegistryEntry('badname', { ...valid, name: 'bad name\u001b[2J' });
    await sut.putRegistryEntry('badsyslog', {
      ...valid,
      name: 'badsyslog',
      syslog: { format: 'cef', from: 5, client_cert_sha256: [] },
    });
    const second = await cli.registry.add({ name: 'good2' });
    await until('good2 beside the bad entries', (names) => names.includes('good2'));
    assert.deepEqual(latest.map((s) => s.name).sort(), ['good1', 'good2']);
    assert.deepEqual(
      (await cli.registry.list()).map((s) => s.name),
      ['good1', 'good2'],
    );
    const rejected = await cli.registry.rejectedEntries();
    assert.equal(rejected.length, 6, JSON.stringify(rejected));
    const reasons = rejected.map((r) => r.reason).join('; ');
    assert.match(reasons, /keys is not a list/);
    assert.match(reasons, /not a JSON object/);
    assert.match(reasons, /a key lacks its hash/);
    assert.match(reasons, /timezone/);
    assert.match(reasons, /name is not a valid sensor name/);
    assert.match(reasons, /syslog\.from is not a list of addresses or CIDRs/);
    // Entries are named by a valid name, a bucket key or a position: never by text that could hold escapes.
    for (const r of rejected) assert.match(r.entry, /^[A-Za-z0-9 ._=-]+$/);
    // Changes to the valid ones still work, and the watcher still follows them.
    await cli.registry.revoke('good2');
    await until('good2 revoked', () => latest.find((s) => s.name === 'good2')?.status === 'revoked');
    assert.notEqual(second.key, first.key);
    assert.deepEqual(errors, []);
    // Re-issuing a name whose entry is broken replaces it with a valid sensor (with a new key).
    const reissued = await cli.registry.add({ name: 'badkeys' });
    assert.equal(reissued.sensor.keys.length, 1);
    assert.equal((await cli.registry.rejectedEntries()).length, 5);
    await assert.rejects(
      cli.registry.add({ name: 'badkeys' }),
      (e: unknown) => (e as { code?: string }).code === 'SENSOR_EXISTS',
    );
    const fixed = await cli.registry.importSensor({ ...valid, name: 'nokeys' }, { overwrite: true });
    assert.ok(fixed === 'created' || fixed === 'overwritten', fixed);
    assert.deepEqual((await cli.registry.list()).map((s) => s.name).sort(), [
      'badkeys',
      'good1',
      'good2',
      'nokeys',
    ]);
    assert.equal((await cli.registry.rejectedEntries()).length, 4);
  });

  test(`${backend}: a registry reader that throws is reported through onError; the watch goes on`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    const cli = await open();
    await cli.registry.add({ name: 'first' });
    let seen: string[] = [];
    const errors: Error[] = [];
    const watch = sut.store.registry.watch(
      (sensors) => {
        seen = sensors.map((s) => s.name).sort();
        if (seen.includes('second')) throw new TypeError('a reader that cannot use this registry');
      },
      (error) => errors.push(error),
    );
    t.after(() => watch.stop());
    await waitFor(() => seen.includes('first'), 10_000, 'first');
    await cli.registry.add({ name: 'second' });
    await waitFor(() => errors.length > 0, 10_000, "the reader's error reported");
    assert.match(errors[0]?.message ?? '', /a reader that cannot use this registry/);
    await cli.registry.add({ name: 'third' });
    await waitFor(() => seen.includes('third'), 10_000, 'third, after the reader threw');
  });

  test(`${backend}: importSensor stores a sensor as given; the same is unchanged, a different one a conflict unless overwritten`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    const registry = sut.store.registry;
    const sensor: Sensor = {
      name: 'fw.paris',
      description: 'edge',
      timezone: 'Europe/Paris',
      status: 'revoked',
      created_at: '2026-01-02T03:04:05.000Z',
      revoked_at: '2026-02-03T04:05:06.000Z',
      keys: [
        {
          hash: `sha256:${'a'.repeat(64)}`,
          created_at: '2026-01-02T03:04:05.000Z',
          expires_at: '2026-01-09T00:00:00.000Z',
        },
        { hash: `sha256:${'b'.repeat(64)}`, created_at: '2026-01-08T00:00:00.000Z', expires_at: null },
      ],
    };
    assert.equal(await registry.importSensor(sensor, { overwrite: false }), 'created');
    const reader = (await open()).registry;
    assert.deepEqual(await reader.list(), [sensor]);
    // The same content in another key order is the same sensor.
    const { keys, ...rest } = sensor;
    const reordered = JSON.parse(JSON.stringify({ keys, ...rest })) as Sensor;
    assert.equal(await registry.importSensor(reordered, { overwrite: false }), 'unchanged');
    const other = { ...sensor, description: 'changed' };
    assert.equal(await registry.importSensor(other, { overwrite: false }), 'conflict');
    assert.deepEqual(await reader.list(), [sensor]);
    assert.equal(await registry.importSensor(other, { overwrite: true }), 'overwritten');
    assert.deepEqual(await reader.list(), [other]);
    // A deleted name is free again.
    await registry.delete('fw.paris');
    assert.equal(await registry.importSensor(sensor, { overwrite: false }), 'created');
    assert.deepEqual(await reader.list(), [sensor]);
  });

  test(`${backend}: stats: the writer's counts, totals and last rejection reach a reader once stopped`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    const stats = sut.store.stats;
    stats.start(60_000, (error) => assert.fail(error));
    stats.recordAccepted('fw1', '192.0.2.1', 10, '2026-11-23T10:00:00.000Z');
    stats.recordAccepted('fw1', '192.0.2.2', 5, '2026-11-23T10:00:01.000Z');
    stats.recordRejected('fw1', '192.0.2.3', 'VALIDATION_FAILED', '2026-11-23T10:00:02.000Z');
    stats.recordAccepted('fw2', '192.0.2.9', 1, '2026-11-23T10:00:03.000Z');
    await stats.stop();
    const read = await (await open()).stats.read();
    assert.deepEqual(
      { ...read.fw1 },
      {
        last_seen: '2026-11-23T10:00:02.000Z',
        last_accepted: '2026-11-23T10:00:01.000Z',
        last_address: '192.0.2.3',
        records_received: 15,
        requests_rejected: 1,
        last_rejection_code: 'VALIDATION_FAILED',
        last_rejected_at: '2026-11-23T10:00:02.000Z',
      },
    );
    assert.equal(read.fw2?.records_received, 1);
    assert.equal(read.fw2?.requests_rejected, 0);
  });

  test(`${backend}: silences: written durably, read back by another opening, cleared`, async (t) => {
    const { sut, open } = await setUp(t, factory);
    const since = '2026-11-23T10:00:00.000Z';
    await sut.store.stats.writeSilence('fw.paris', { silent_since: since });
    await sut.store.stats.writeSilence('fw-2', { silent_since: since });
    await sut.store.stats.writeSilence('fw-2', null);
    await sut.store.stats.writeSilence('never-silent', null);
    const reader = await open();
    assert.deepEqual({ ...(await reader.stats.readSilences()) }, { 'fw.paris': { silent_since: since } });
    // Silences are not counters: the activity of the sensors is untouched.
    assert.deepEqual({ ...(await reader.stats.read()) }, {});
  });

  test(`${backend}: dedupe: a key stored within the window returns the first id and is not stored again`, async (t) => {
    const { sut, open } = await setUp(t, factory, { 'dedupe.windowSeconds': 120 });
    const log = await sut.store.openRecordLog();
    t.after(() => log.close());
    const first = [record({ threat: 'd1' }), record({ threat: 'd2' }), record({ threat: 'plain' })];
    const r1 = await log.append(first, {
      dedupeKeys: ['key-d1-aaaaaaaaaaaaaaaa', 'key-d2-aaaaaaaaaaaaaaaa', null],
    });
    assert.deepEqual(r1, { ids: first.map((r) => r.id), duplicates: 0 });
    const again = [record({ threat: 'd1' }), record({ threat: 'd3' }), record({ threat: 'plain' })];
    // Concurrent with a second identical delivery: both get the first ids.
    const [r2, r3] = await Promise.all([
      log.append(again, { dedupeKeys: ['key-d1-aaaaaaaaaaaaaaaa', 'key-d3-aaaaaaaaaaaaaaaa', null] }),
      log.append([record({ threat: 'd3' })], { dedupeKeys: ['key-d3-aaaaaaaaaaaaaaaa'] }),
    ]);
    assert.equal(r2.duplicates, 1);
    assert.deepEqual(r2.ids, [first[0]?.id, again[1]?.id, again[2]?.id]);
    assert.deepEqual(r3, { ids: [again[1]?.id], duplicates: 1 });
    const { records } = await (await open()).reader.readRecent({ limit: 100 });
    assert.deepEqual(threats(records), ['d1', 'd2', 'plain', 'd3', 'plain']);

    // A restarted writer (another process on the same data) still knows the keys of the window.
    await log.close();
    const restarted = await (await open()).openRecordLog();
    t.after(() => restarted.close());
    const r4 = await restarted.append([record({ threat: 'd2' }), record({ threat: 'd4' })], {
      dedupeKeys: ['key-d2-aaaaaaaaaaaaaaaa', 'key-d4-"quoted\\-key'],
    });
    assert.equal(r4.duplicates, 1);
    assert.equal(r4.ids[0], first[1]?.id);
    await restarted.close();
    const again2 = await (await open()).openRecordLog();
    t.after(() => again2.close());
    const r5 = await again2.append([record({ threat: 'd4' })], { dedupeKeys: ['key-d4-"quoted\\-key'] });
    assert.deepEqual(r5, { ids: [r4.ids[1]], duplicates: 1 }, 'any key text survives a restart');
  });
}
