// One source, whole (`threatcol source show`, the dashboard's /api/source): what the records of an address or a
// network in a window add up to, read back from the newest within the look-up's bounds, and the block or allow
// entry that covers it.
import { type Network, overlaps, parseNetwork } from '../config/blocklist-schema.js';
import type { StoredRecord } from '../records/stored-record.js';
import { canonicalAddress } from './address-match.js';
import type { AllowEntry, Block, DecisionsState } from './decisions.js';
import { SEARCH_MAX_BYTES, SEARCH_MAX_RECORDS, searchQueryProblem } from './search-records.js';
import type { RecordReader } from './store.js';

/** Threats, destinations and ports listed at most (the most frequent first); the counts cover them all. */
export const SOURCE_TOP = 10;

export interface SourceQuery {
  /** An IPv4/IPv6 address or a CIDR network. */
  address: string;
  /** Epoch ms: the window's start (required) and end (default now). */
  since: number;
  until?: number;
}

export interface SourceSummary {
  address: string;
  /** ISO 8601 received times of the oldest and newest record read, null when none. */
  first_seen: string | null;
  last_seen: string | null;
  records: number;
  /** Records by criticality, 0 (informational) to 4 (critical). */
  criticality: [number, number, number, number, number];
  /** Every sensor that stored one of the records, sorted. */
  sensors: string[];
  /**
   * Distinct destination addresses (each in one spelling: address-match.ts canonicalAddress, so `::ffff:192.0.2.1`
   * is `192.0.2.1`) and destination ports.
   */
  targets: number;
  ports: number;
  top_targets: Array<{ address: string; count: number }>;
  top_ports: Array<{ port: number; count: number }>;
  threats: Array<{ threat: string; count: number }>;
  /**
   * From the newest record that carries them (enrichment), null otherwise; for a network, null too when its
   * records name more than one (an address keeps its newest: its database may have been replaced meanwhile).
   */
  country: string | null;
  asn: number | null;
  as_org: string | null;
  /** Distinct countries and AS numbers among the records. */
  countries: number;
  asns: number;
  /**
   * True when the distinct destinations or threats passed MAX_DISTINCT (100,000): `targets` counts the first of
   * them ("at least"), and the top lists are of those; a threat name is counted by its first 256 characters.
   */
  capped: boolean;
  /** Set when the look-up's bound stopped the read before the window's start: older records may exist. */
  bounded: { maxRecords: number; maxBytes: number } | null;
}

/** Why a query cannot run (a message for a usage error or a 400), or null: the look-up's own rules. */
export function sourceQueryProblem(query: SourceQuery, now: number): string | null {
  if (parseNetwork(queryAddress(query.address)) === null)
    return `"${query.address}" is neither an IPv4/IPv6 address nor a CIDR (192.0.2.0/24, 2001:db8::/32)`;
  return searchQueryProblem(
    { since: query.since, ...(query.until === undefined ? {} : { until: query.until }) },
    now,
  );
}

/**
 * Sums the records of `query.address` in the window, reading back from the newest record through the look-up's
 * bounds (search-records.ts): the reader's `match` sees each record of the filter once and keeps none, so the
 * memory is the distinct destinations, ports, sensors and threats, not the records.
 */
export async function summarizeSource(
  reader: RecordReader,
  query: SourceQuery,
  options: { signal?: AbortSignal; maxRecords?: number; maxBytes?: number } = {},
): Promise<SourceSummary> {
  const maxRecords = options.maxRecords ?? SEARCH_MAX_RECORDS;
  const maxBytes = options.maxBytes ?? SEARCH_MAX_BYTES;
  const address = queryAddress(query.address);
  const network = parseNetwork(address);
  const sum = createSums(network);
  // What a backend reads as one window is summed apart and joined only when the window completed (NATS); the
  // files backend calls no window: its records are joined at the end.
  let part = createSums(network);
  const { bounded } = await reader.readRecent({
    // Never reached: the match keeps nothing, so the read goes on to the window's start or the bound.
    limit: 1,
    filter: {
      src: address,
      since: query.since,
      ...(query.until === undefined ? {} : { until: query.until }),
    },
    match: (record) => {
      part.add(record);
      return false;
    },
    window: (complete) => {
      if (complete) sum.join(part);
      part = createSums(network);
    },
    ...(options.signal ? { signal: options.signal } : {}),
    maxRecords,
    maxBytes,
  });
  sum.join(part);
  return sum.result(address, bounded === true ? { maxRecords, maxBytes } : null);
}

interface Sums {
  records: number;
  first: number;
  last: number;
  enrichedAt: number;
  country: string | null;
  asn: number | null;
  asOrg: string | null;
  criticality: [number, number, number, number, number];
  sensors: Set<string>;
  targets: Map<string, number>;
  ports: Map<number, number>;
  threats: Map<string, number>;
  countries: Set<string>;
  asns: Set<number>;
  capped: boolean;
}

/**
 * Distinct destinations and threats a summary counts: past it new ones are left out (and said: `capped`), so a
 * look-up over a million records of as many threats holds tens of megabytes, not the half gigabyte it read.
 */
export const MAX_DISTINCT = 100_000;
const THREAT_CHARS = 256;

/** Counts `key` in `counts`; false when it is new and `counts` is full (not counted). */
function countIn<K>(counts: Map<K, number>, key: K, n = 1): boolean {
  const had = counts.get(key);
  if (had !== undefined) counts.set(key, had + n);
  else if (counts.size < MAX_DISTINCT) counts.set(key, n);
  else return false;
  return true;
}

function addCounts<K>(into: Map<K, number>, from: Map<K, number>): boolean {
  let all = true;
  for (const [k, n] of from) all = countIn(into, k, n) && all;
  return all;
}

function createSums(query: Network | null) {
  const network = query !== null && query.prefix < query.bytes.length * 8;
  const s: Sums = {
    records: 0,
    first: Number.POSITIVE_INFINITY,
    last: Number.NEGATIVE_INFINITY,
    enrichedAt: Number.NEGATIVE_INFINITY,
    country: null,
    asn: null,
    asOrg: null,
    criticality: [0, 0, 0, 0, 0],
    sensors: new Set(),
    targets: new Map(),
    ports: new Map(),
    threats: new Map(),
    countries: new Set(),
    asns: new Set(),
    capped: false,
  };
  /** Each destination's one spelling, worked out once (1-2 µs an IPv6 address): as many as the targets held. */
  const spellings = new Map<string, string>();
  const spelled = (address: string): string => {
    let text = spellings.get(address);
    if (text === undefined) {
      text = canonicalAddress(address);
      if (spellings.size < MAX_DISTINCT) spellings.set(address, text);
    }
    return text;
  };
  return {
    sums: s,
    add(record: StoredRecord): void {
      const at = Date.parse(record.received_at);
      s.records++;
      s.first = Math.min(s.first, at);
      s.last = Math.max(s.last, at);
      s.criticality[record.criticality as 0 | 1 | 2 | 3 | 4]++;
      s.sensors.add(record.sensor);
      if (!countIn(s.targets, spelled(record.dst_ip))) s.capped = true;
      s.ports.set(record.dst_port, (s.ports.get(record.dst_port) ?? 0) + 1);
      // A copy, not a slice: V8 keeps the whole threat alive behind a slice of it (4 KiB a key, not 256 bytes).
      const threat =
        record.threat.length > THREAT_CHARS
          ? Buffer.from(record.threat.slice(0, THREAT_CHARS), 'utf8').toString('utf8')
          : record.threat;
      if (!countIn(s.threats, threat)) s.capped = true;
      // Enrichment's fields, where the record has them: the newest record's say what the source is now.
      const r = record as StoredRecord & { src_country?: unknown; src_asn?: unknown; src_as_org?: unknown };
      if (typeof r.src_country === 'string') s.countries.add(r.src_country);
      if (typeof r.src_asn === 'number') s.asns.add(r.src_asn);
      if (at >= s.enrichedAt && (typeof r.src_country === 'string' || typeof r.src_asn === 'number')) {
        s.enrichedAt = at;
        s.country = typeof r.src_country === 'string' ? r.src_country : null;
        s.asn = typeof r.src_asn === 'number' ? r.src_asn : null;
        s.asOrg = typeof r.src_as_org === 'string' ? r.src_as_org : null;
      }
    },
    /** Adds the sums of `other` (records read apart: a window of the NATS reader). */
    join(other: { sums: Sums }): void {
      const o = other.sums;
      s.records += o.records;
      s.first = Math.min(s.first, o.first);
      s.last = Math.max(s.last, o.last);
      for (let i = 0; i < 5; i++) s.criticality[i as 0] += o.criticality[i as 0];
      for (const name of o.sensors) s.sensors.add(name);
      if (!addCounts(s.targets, o.targets) || o.capped) s.capped = true;
      addCounts(s.ports, o.ports);
      if (!addCounts(s.threats, o.threats)) s.capped = true;
      for (const c of o.countries) s.countries.add(c);
      for (const a of o.asns) s.asns.add(a);
      // The newer's, as add() keeps it (an equal time: the one read later, as add() would take it).
      if (o.enrichedAt >= s.enrichedAt && o.enrichedAt !== Number.NEGATIVE_INFINITY) {
        s.enrichedAt = o.enrichedAt;
        s.country = o.country;
        s.asn = o.asn;
        s.asOrg = o.asOrg;
      }
    },
    result(address: string, bounded: SourceSummary['bounded']): SourceSummary {
      const { records, first, last, criticality, sensors, targets, ports, threats, countries, asns } = s;
      return {
        address,
        first_seen: records === 0 ? null : new Date(first).toISOString(),
        last_seen: records === 0 ? null : new Date(last).toISOString(),
        records,
        criticality,
        sensors: [...sensors].sort(),
        targets: targets.size,
        ports: ports.size,
        top_targets: top(targets).map(([a, count]) => ({ address: a, count })),
        top_ports: top(ports).map(([port, count]) => ({ port, count })),
        threats: top(threats).map(([threat, count]) => ({ threat, count })),
        country: network && countries.size > 1 ? null : s.country,
        asn: network && asns.size > 1 ? null : s.asn,
        as_org: network && asns.size > 1 ? null : s.asOrg,
        countries: countries.size,
        asns: asns.size,
        capped: s.capped,
        bounded,
      };
    },
  };
}

/** The SOURCE_TOP most frequent, ties in key order. */
function top<K extends string | number>(counts: Map<K, number>): Array<[K, number]> {
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, SOURCE_TOP);
}

/** An allow entry as `source show` reports it: `threatcol allow add`'s, or blocklist.allow's (no times). */
export type SourceAllow = Omit<AllowEntry, 'since'> & {
  since: string | null;
  source: 'command' | 'configuration';
};

/** blocklist.allow's networks as allow entries of their own (in force since the configuration was read). */
export function configuredAllowEntries(networks: readonly string[]): SourceAllow[] {
  return networks.map((network) => ({
    network,
    reason: 'blocklist.allow',
    since: null,
    until: null,
    who: null,
    source: 'configuration',
  }));
}

/**
 * What `source show` and the dashboard's /api/source say of `address`: the block and the allow entry covering it
 * in a state of the decisions (the store's, read by the CLI, or the daemon's one watched copy) and
 * blocklist.allow as configured. One answer for both, whoever holds the state.
 */
export function decisionsOfSource(
  address: string,
  state: Pick<DecisionsState, 'blocks' | 'allow'>,
  configuredAllow: readonly string[],
  now: number,
): SourceDecisions<Block, SourceAllow> {
  const allow: SourceAllow[] = configuredAllowEntries(configuredAllow);
  for (const entry of state.allow.values()) allow.push({ ...entry, source: 'command' });
  return sourceDecisions(address, { blocks: state.blocks.values(), allow }, now);
}

/** What the decisions say of a source: the block and allow entry covering it, and the blocks inside it. */
export interface SourceDecisions<B, A> {
  blocked: B | null;
  allowed: A | null;
  /** Blocks in force whose network lies inside the source's (a network partly blocked is not `blocked`). */
  blocks_within: number;
  /** The first few of them (their networks), for the text. */
  blocks_within_first: string[];
}

/** How many of the blocks within a source's network are named (the count says the rest). */
const WITHIN_NAMED = 3;

/**
 * The block and the allow entry in force at `now` whose network covers the whole of `address` (an address, or
 * every address of a CIDR), the narrowest when several do; null each when none does. And the blocks in force
 * inside it (for an address, the block of exactly it).
 */
export function sourceDecisions<
  B extends Pick<Block, 'address' | 'until'>,
  A extends Pick<AllowEntry, 'network' | 'until'>,
>(
  address: string,
  decisions: { blocks: Iterable<B>; allow: Iterable<A> },
  now: number,
): SourceDecisions<B, A> {
  const query = parseNetwork(queryAddress(address));
  if (query === null) return { blocked: null, allowed: null, blocks_within: 0, blocks_within_first: [] };
  // One pass over the blocks, each parsed once: the one covering the query, and those inside it.
  let blocked: B | null = null;
  let longest = -1;
  const within: string[] = [];
  for (const block of decisions.blocks) {
    if (!(Date.parse(block.until) > now)) continue;
    const network = parseNetwork(block.address);
    if (network === null) continue;
    const prefix = coverPrefix(network, query);
    if (prefix > longest) [blocked, longest] = [block, prefix];
    if (coverPrefix(query, network) >= 0) within.push(block.address);
  }
  return {
    blocked,
    allowed: narrowest(decisions.allow, (a) => a.network, query, now),
    blocks_within: within.length,
    blocks_within_first: within.sort().slice(0, WITHIN_NAMED),
  };
}

function narrowest<E extends { until: string | null }>(
  entries: Iterable<E>,
  networkOf: (entry: E) => string,
  query: Network,
  now: number,
): E | null {
  let found: E | null = null;
  let longest = -1;
  for (const entry of entries) {
    if (entry.until !== null && !(Date.parse(entry.until) > now)) continue;
    const prefix = coverPrefix(networkOf(entry), query);
    if (prefix > longest) [found, longest] = [entry, prefix];
  }
  return found;
}

/** The prefix length of `network` (parsed, or its text) when it contains all of `query`, else -1. */
function coverPrefix(network: string | Network, query: Network): number {
  const n = typeof network === 'string' ? parseNetwork(network) : network;
  return n !== null && n.prefix <= query.prefix && overlaps(n, query) ? n.prefix : -1;
}

/** The address or CIDR asked, without a zone id (fe80::1%eth0, as `threats tail` prints a link-local source). */
function queryAddress(text: string): string {
  return text.trim().replace(/%[^/]*/, '');
}
