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
