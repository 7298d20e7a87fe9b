// The look-up (`threats search`, the dashboard's /api/search): one page of the newest records matching a filter
// in a window, read back from the store within a bound of records and bytes, newest first.
import { parseAddressMatch } from './address-match.js';
import { SEARCH_MAX_LIMIT } from './search-limits.js';
import type { RecordFilter, RecordLine, RecordReader } from './store.js';

/** The widest window a look-up may cover (docs/operations.md, "Look-up"). */
export const SEARCH_MAX_WINDOW_MS = 30 * 86_400_000;
/** A look-up reads back through at most this many records and bytes, then says it stopped there. */
export const SEARCH_MAX_RECORDS = 1_000_000;
export const SEARCH_MAX_BYTES = 512 * 1024 * 1024;

/** A look-up: a filter whose `since` is required (the window's start), `until` optional (default now). */
export type SearchQuery = RecordFilter & { since: number };

export interface SearchOptions {
  /** Records per page (1 … SEARCH_MAX_LIMIT). */
  limit: number;
  /** Extra predicate (e.g. several sensors). */
  match?: (record: RecordLine['record']) => boolean;
  signal?: AbortSignal;
  /** Lower bounds than the defaults (tests). */
  maxRecords?: number;
  maxBytes?: number;
}

export interface SearchPage {
  /** Newest first. */
  records: RecordLine[];
  /** The `before` of the next page back, or null when this page ends the window. */
  next: string | null;
  /** Set when the bound stopped the read before the window's start: how much it read at most. */
  bounded: { maxRecords: number; maxBytes: number } | null;
}

/** The country and AS filters by their names in a query string (`--src-country` and so on on the command line). */
export const NETWORK_FILTER_KEYS = ['src_country', 'dst_country', 'src_asn', 'dst_asn'] as const;
export type NetworkFilterKey = (typeof NETWORK_FILTER_KEYS)[number];
type NetworkFilter = Pick<RecordFilter, 'srcCountry' | 'dstCountry' | 'srcAsn' | 'dstAsn'>;

/**
 * The country and AS filters from their text: a country is an ISO 3166-1 alpha-2 code in any case (`us`: US), an
 * AS a number from 0 to 4294967295, bare or as `AS15169`; an absent value means none. The filter's fields, or a
 * message naming the first value that is neither.
 */
export function networkFilters(given: Partial<Record<NetworkFilterKey, string>>): NetworkFilter | string {
  const filter: NetworkFilter = {};
  for (const key of NETWORK_FILTER_KEYS) {
    const text = given[key]?.trim();
    if (text === undefined) continue;
    const [side, kind] = key.split('_') as ['src' | 'dst', 'country' | 'asn'];
    if (kind === 'country') {
      if (!/^[a-z]{2}$/i.test(text))
        return `${key} "${text}" is not a country code (two letters, ISO 3166-1 alpha-2: US, DE)`;
      filter[`${side}Country`] = text.toUpperCase();
    } else {
      const digits = /^(?:as)?(\d{1,10})$/i.exec(text)?.[1];
      const asn = digits === undefined ? Number.NaN : Number(digits);
      if (!(asn <= 0xffffffff))
        return `${key} "${text}" is not an AS number (0 to 4294967295, as 15169 or AS15169)`;
      filter[`${side}Asn`] = asn;
    }
  }
  return filter;
}

/** Why a query cannot run (a message for a usage error or a 400), or null. */
export function searchQueryProblem(query: SearchQuery, now: number): string | null {
  const until = query.until ?? now;
  if (!Number.isFinite(query.since) || !Number.isFinite(until))
    return 'the window must have a valid start and end';
  if (until <= query.since) return 'the window must end after it starts';
  if (until - query.since > SEARCH_MAX_WINDOW_MS) return 'the window may span at most 30 days';
  for (const [name, value] of [
    ['src', query.src],
    ['dst', query.dst],
  ] as const) {
    if (value !== undefined && parseAddressMatch(value) === null) {
      return `${name} "${value}" is neither an IPv4/IPv6 address nor a CIDR (192.0.2.0/24, 2001:db8::/32)`;
    }
  }
  if (
    query.before !== undefined &&
    !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(query.before)
  ) {
    return `before "${query.before}" is not a record id`;
  }
  if (query.threat !== undefined && query.threat.length > 200)
    return 'the threat text may be 200 characters at most';
  return null;
}

/** One page of the look-up. The caller checked the query with searchQueryProblem. */
export async function searchRecords(
  reader: RecordReader,
  query: SearchQuery,
  options: SearchOptions,
): Promise<SearchPage> {
  const maxRecords = options.maxRecords ?? SEARCH_MAX_RECORDS;
  const maxBytes = options.maxBytes ?? SEARCH_MAX_BYTES;
  // One more than a page: whether it was found says whether an older page exists.
  const { records, bounded } = await reader.readRecent({
    limit: options.limit + 1,
    filter: query,
    ...(options.match ? { match: options.match } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    maxRecords,
    maxBytes,
  });
  const more = records.length > options.limit;
  const page = (more ? records.slice(1) : records).reverse();
  const oldest = page.at(-1);
  return {
    records: page,
    next: (more || bounded === true) && oldest ? oldest.record.id : null,
    bounded: bounded === true ? { maxRecords, maxBytes } : null,
  };
}

export { SEARCH_MAX_LIMIT };
