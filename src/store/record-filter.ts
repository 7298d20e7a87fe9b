// One predicate from a reader's RecordFilter (sensor, endpoint, criticality, time, addresses, threat, country and
// AS, page) and an extra match: the feed, `threats tail` and the look-up (search-records.ts) all match records here.
import type { StoredRecord } from '../records/stored-record.js';
import { type AddressTest, parseAddressMatch } from './address-match.js';
import type { RecordFilter } from './store.js';

export function recordMatcher(
  filter: RecordFilter | undefined,
  match?: (record: StoredRecord) => boolean,
): (record: StoredRecord) => boolean {
  const { sensor, endpoint, minCriticality, since, until, before } = filter ?? {};
  const src = addressTest(filter?.src);
  const dst = addressTest(filter?.dst);
  const threat = filter?.threat?.toLowerCase();
  const { srcCountry, dstCountry, srcAsn, dstAsn } = filter ?? {};
  // Total over any object, not only what the shape check (record-shape.ts) passes: a field of another type
  // never matches a test on it, and never throws.
  return (record) =>
    (sensor === undefined || record.sensor === sensor) &&
    (endpoint === undefined || record.endpoint === endpoint) &&
    (minCriticality === undefined || record.criticality >= minCriticality) &&
    (before === undefined || record.id < before) &&
    (since === undefined || timeOf(record.received_at) >= since) &&
    (until === undefined || timeOf(record.received_at) < until) &&
    (src === undefined || (typeof record.src_ip === 'string' && src(record.src_ip))) &&
    (dst === undefined || (typeof record.dst_ip === 'string' && dst(record.dst_ip))) &&
    (threat === undefined ||
      (typeof record.threat === 'string' && record.threat.toLowerCase().includes(threat))) &&
    (srcCountry === undefined || sameCountry(record.src_country, srcCountry)) &&
    (dstCountry === undefined || sameCountry(record.dst_country, dstCountry)) &&
    (srcAsn === undefined || record.src_asn === srcAsn) &&
    (dstAsn === undefined || record.dst_asn === dstAsn) &&
    (match === undefined || match(record));
}

/**
 * Records are appended in commit order, not strictly in `received_at` order (a slow request is stamped when
 * it arrives and written when its body is complete; collectors sharing a stream have their own clocks), so a
 * read by time goes this far past the window's edges.
 */
export const ORDER_SLACK_MS = 5 * 60_000;

/**
 * The time past which no record of the filter's window was stored, slack included (+Infinity when it has no end):
 * its `until`, or the time of its `before` (a record id is a UUIDv7, whose first 48 bits are the millisecond it
 * was made, never before its record's received_at). A reader starts reading back from there instead of the
 * newest record, so records after the window never count against a read's bound (a page past a busy hour reaches
 * the records before it).
 */
export function filterEndsAt(filter: RecordFilter | undefined): number {
  let end = filter?.until ?? Number.POSITIVE_INFINITY;
  const before = filter?.before;
  if (before !== undefined && /^[0-9a-f]{8}-[0-9a-f]{4}-/.test(before)) {
    end = Math.min(end, Number.parseInt(before.slice(0, 8) + before.slice(9, 13), 16));
  }
  return end + ORDER_SLACK_MS;
}

/** A stored country against a filter's (upper case): a database of any case matches. */
function sameCountry(value: unknown, country: string): boolean {
  return typeof value === 'string' && (value === country || value.toUpperCase() === country);
}

/** An instant, NaN (which no comparison passes) for anything but a time's text. */
function timeOf(value: unknown): number {
  return typeof value === 'string' ? Date.parse(value) : Number.NaN;
}

/** A filter's address pattern; one that does not parse matches nothing (callers validate it first). */
function addressTest(text: string | undefined): AddressTest | undefined {
  if (text === undefined) return undefined;
  return parseAddressMatch(text) ?? (() => false);
}
