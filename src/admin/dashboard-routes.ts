// The dashboard's data: the live event stream of records (SSE), the rolling summary and the sensor table.
// Only what an owner needs to see leaves here: never a key, a key hash or a record's raw `original`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorBody } from '../errors.js';
import { parseIsoTime } from '../records/iso-time.js';
import { isRecordEndpoint, type StoredRecord } from '../records/stored-record.js';
import { parseAddressMatch } from '../store/address-match.js';
import { recordMatcher } from '../store/record-filter.js';
import { NETWORK_FILTER_KEYS, networkFilters } from '../store/search-records.js';
import type { RecordFilter, Store } from '../store/store.js';
import type { LiveFeed } from './live-feed.js';
import { ReadSlots } from './read-slots.js';

export type DashboardStore = Pick<Store, 'reader' | 'stats' | 'registry'>;

/** Records sent when a stream opens; the page keeps at most this many rows. */
const INITIAL_RECORDS = 200;
/** A stream whose client reads slower than records arrive is closed past this much unsent data. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const HEARTBEAT_MS = 15_000;

export interface FeedRecord extends Pick<StoredRecord, (typeof ENRICHED)[number]> {
  id: string;
  received_at: string;
  sensor: string;
  endpoint: string;
  criticality: number;
  severity: string;
  threat: string;
  src_ip: string;
  src_port: number | null;
  dst_ip: string;
  dst_port: number;
  protocol: string;
  remote_addr: string;
}

/** The enrichment's fields, which a record has where the databases knew its addresses. */
const ENRICHED = ['src_country', 'src_asn', 'src_as_org', 'dst_country', 'dst_asn', 'dst_as_org'] as const;

export function feedRecord(r: StoredRecord): FeedRecord {
  const record: FeedRecord = {
    id: r.id,
    received_at: r.received_at,
    sensor: r.sensor,
    endpoint: r.endpoint,
    criticality: r.criticality,
    severity: r.severity,
    threat: r.threat,
    src_ip: r.src_ip,
    src_port: r.src_port ?? null,
    dst_ip: r.dst_ip,
    dst_port: r.dst_port,
    protocol: r.protocol,
    remote_addr: r.remote_addr,
  };
  for (const key of ENRICHED) if (r[key] !== undefined) Object.assign(record, { [key]: r[key] });
  return record;
}

/**
 * `?sensor=&endpoint=&min=&threat=&src=&dst=&src_country=&src_asn=&dst_country=&dst_asn=&from=&to=` (from/to: ISO
 * times, a histogram bar's interval) to a store filter; unknown, empty or unparsable values mean "any".
 */
export function feedFilter(query: URLSearchParams): RecordFilter {
  const filter: RecordFilter = {};
  const sensor = query.get('sensor');
  if (sensor) filter.sensor = sensor;
  const threat = query.get('threat');
  if (threat) filter.threat = threat.slice(0, 200);
  for (const key of ['src', 'dst'] as const) {
    const value = query.get(key)?.trim();
    if (value && parseAddressMatch(value) !== null) filter[key] = value;
  }
  for (const key of NETWORK_FILTER_KEYS) {
    const value = query.get(key)?.trim();
    const parsed = value ? networkFilters({ [key]: value }) : null;
    if (parsed !== null && typeof parsed !== 'string') Object.assign(filter, parsed);
  }
  const from = parseIsoTime(query.get('from') ?? '');
  if (from !== null) filter.since = from;
  const to = parseIsoTime(query.get('to') ?? '');
  if (to !== null) filter.until = to;
  const endpoint = query.get('endpoint');
  if (isRecordEndpoint(endpoint)) filter.endpoint = endpoint;
  const min = Number(query.get('min'));
  if (Number.isInteger(min) && min >= 1 && min <= 4) filter.minCriticality = min;
  return filter;
}

/** Open event streams per admin listener (its live feed). */
const openStreams = new WeakMap<LiveFeed, number>();
const MAX_STREAMS = 16;
const MAX_PENDING = 1000;
/** A feed's first read looks back 24 h at most, and through 64 MiB of records at most (docs/operations.md). */
const FEED_LOOKBACK_MS = 86_400_000;
export const FEED_LOOKBACK_BYTES = 64 * 1024 * 1024;
/** First reads at once per admin listener, and how many may wait for one; past that a feed gets 503. */
export const FEED_READS_AT_ONCE = 2;
export const FEED_READS_WAITING = 8;
const readSlots = new WeakMap<LiveFeed, ReadSlots>();

/** The read slots of one admin listener, shared by its feeds' first reads and its look-ups (search-route.ts). */
export function storeReadSlots(feed: LiveFeed): ReadSlots {
  let slots = readSlots.get(feed);
  if (!slots) {
    slots = new ReadSlots(FEED_READS_AT_ONCE, FEED_READS_WAITING);
    readSlots.set(feed, slots);
  }
  return slots;
}

/** A histogram bar of the week may be clicked: a feed with an interval looks back that far at most. */
const FEED_INTERVAL_LOOKBACK_MS = 7 * FEED_LOOKBACK_MS;

/**
 * GET /api/feed: subscribes to the live feed first, then reads the recent records, so nothing stored in
 * between is missed; a record both read and followed is sent once (by id).
 */
export async function serveFeed(
  req: IncomingMessage,
  res: ServerResponse,
  query: URLSearchParams,
  store: DashboardStore,
  feed: LiveFeed,
): Promise<void> {
  const filter = feedFilter(query);
  const matches = recordMatcher(filter);
  // Event streams hold a socket each: a bounded number, so dashboards cannot use up the descriptors the
  // sensors' port needs.
  const streams = openStreams.get(feed) ?? 0;
  if (streams >= MAX_STREAMS) {
    busy(res, `too many open dashboard feeds (${MAX_STREAMS}); close a tab`);
    return;
  }
  const slots = storeReadSlots(feed);
  // A client that hangs up stops its read (a filter matching nothing would otherwise read on for seconds).
  const hangUp = new AbortController();
  const slot = slots.reserve(hangUp.signal);
  if (!slot) {
    busy(
      res,
      `too many dashboard feeds reading back records (${FEED_READS_AT_ONCE}, ${FEED_READS_WAITING} waiting)`,
    );
    return;
  }
  openStreams.set(feed, streams + 1);
  let pending: StoredRecord[] | null = [];
  let open = true;
  const send = (records: StoredRecord[]) => {
    if (!open || records.length === 0) return;
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      res.destroy();
      return;
    }
    res.write(`event: records\ndata: ${JSON.stringify(records.map(feedRecord))}\n\n`);
  };
  const unsubscribe = feed.subscribe((records) => {
    const kept = records.filter(matches);
    if (pending) {
      pending.push(...kept);
      // Arriving while the first read runs: bounded, the oldest go (the client still gets the newest).
      if (pending.length > MAX_PENDING) pending.splice(0, pending.length - MAX_PENDING);
    } else send(kept);
  });
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  const close = () => {
    if (open) openStreams.set(feed, (openStreams.get(feed) ?? 1) - 1);
    open = false;
    clearInterval(heartbeat);
    unsubscribe();
    hangUp.abort();
  };
  req.on('close', close);
  res.on('close', close);
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Accel-Buffering': 'no',
  });
  res.write('retry: 2000\n\n');
  if (slot.queued) res.write(': queued behind other feeds\n\n');
  try {
    await slot.granted;
    // Back 24 h (an interval: 7 days) and 64 MiB at most: a filter that matches rarely must not read the whole
    // store for each tab.
    const now = Date.now();
    const since =
      filter.since === undefined
        ? now - FEED_LOOKBACK_MS
        : Math.max(filter.since, now - FEED_INTERVAL_LOOKBACK_MS);
    const { records } = await store.reader.readRecent({
      limit: INITIAL_RECORDS,
      filter: { ...filter, since },
      signal: hangUp.signal,
      maxBytes: FEED_LOOKBACK_BYTES,
    });
    const initial = records.map((l) => l.record);
    const seen = new Set(initial.map((r) => r.id));
    const later = (pending ?? []).filter((r) => !seen.has(r.id));
    pending = null;
    send(initial);
    send(later);
    if (open) res.write('event: ready\ndata: {}\n\n');
  } catch {
    pending = null;
    if (open) res.write('event: failure\ndata: {"message":"cannot read the records"}\n\n');
  } finally {
    slot.release();
  }
}

export function busy(res: ServerResponse, message: string): void {
  res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Retry-After': '5' });
  res.end(`${errorBody('DASHBOARD_BUSY', message)}\n`);
}

export interface SensorRow {
  name: string;
  status: string;
  timezone: string;
  timezone_default: boolean;
  last_seen: string | null;
  /** When the collector reported it silent (docs/operations.md, "Silent sensors"); null: it is not. */
  silent_since: string | null;
  last_address: string | null;
  accepted: number;
  rejected: number;
  last_rejection_code: string | null;
  last_rejected_at: string | null;
}

/** The sensor table: the registry's sensors (without their keys) with their activity. */
export async function sensorRows(store: DashboardStore, defaultTimezone: string): Promise<SensorRow[]> {
  const [sensors, activity, silences] = await Promise.all([
    store.registry.list(),
    store.stats.read(),
    store.stats.readSilences(),
  ]);
  return sensors.map((s) => {
    const a = Object.hasOwn(activity, s.name) ? activity[s.name] : undefined;
    // The watcher keeps a silence only while the sensor is watched, and forgets it when it is revoked.
    const silence = s.status === 'active' && Object.hasOwn(silences, s.name) ? silences[s.name] : undefined;
    return {
      name: s.name,
      status: s.status,
      timezone: s.timezone ?? defaultTimezone,
      timezone_default: s.timezone === null,
      last_seen: a?.last_seen ?? null,
      silent_since: silence?.silent_since ?? null,
      last_address: a?.last_address ?? null,
      accepted: a?.records_received ?? 0,
      rejected: a?.requests_rejected ?? 0,
      last_rejection_code: a?.last_rejection_code ?? null,
      last_rejected_at: a?.last_rejected_at ?? null,
    };
  });
}
