// `threatcol threats stats`: counts of stored records over a window, grouped by sensor, criticality,
// endpoint, threat or source address; a table, or JSON for scripts. Reads through the store's scan.
import { type Command, Option } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { SEVERITY_LABELS } from '../../records/criticality.js';
import { isThreatRecord, type StoredRecord } from '../../records/stored-record.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions, threatsCommand } from '../common-options.js';
import { existingDataDir } from '../data-dir-check.js';
import { type CliIo, write, writeJson } from '../io.js';
import { formatTable } from '../table.js';
import { clean } from '../terminal-text.js';
import { parseSince } from './threats-tail.js';

export const GROUPINGS = [
  'sensor',
  'criticality',
  'endpoint',
  'threat',
  'src_ip',
  'src_country',
  'src_asn',
] as const;
export type Grouping = (typeof GROUPINGS)[number];

interface StatsOptions extends CommonOptions {
  since: string;
  sensor?: string;
  by: Grouping;
  top: string;
  json?: boolean;
}

export interface ThreatStats {
  since: string;
  until: string;
  sensor: string | null;
  by: Grouping;
  total: number;
  /** Distinct values seen (before --top). */
  distinct: number;
  rows: { key: string; count: number }[];
  /** Records in groups cut by --top. */
  other: number;
}

export function registerThreatsStats(
  program: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  const threats = threatsCommand(program);
  addCommonOptions(
    threats
      .command('stats')
      .description('count the stored records of a time window, grouped (what hit us in the last day?)')
      .option('--since <when>', 'window start: a duration ago (24h, 7d, 90m) or an ISO time', '24h')
      .option('--sensor <name>', 'only records from this sensor')
      .addOption(new Option('--by <field>', 'group by this field').choices(GROUPINGS).default('threat'))
      .option('--top <n>', 'show the N largest groups (0: all)', '20')
      .option('--json', 'print {since, until, total, distinct, rows: [{key, count}], other} as JSON'),
  ).action((options: StatsOptions) => run(() => threatsStats(options, io)));
}

export async function threatsStats(options: StatsOptions, io: CliIo): Promise<number> {
  const top = /^\d{1,9}$/.test(options.top.trim()) ? Number(options.top.trim()) : Number.NaN;
  if (!Number.isSafeInteger(top)) {
    throw new ThreatcolError('USAGE', `--top must be a whole number (0: all), not "${options.top}"`);
  }
  const until = Date.now();
  const since = parseSince(options.since, until);
  const loaded = await loadFromOptions(options, io);
  existingDataDir(loaded, options, io);
  const stats = await withStore(loaded, io, (store) =>
    countRecords((from, visit) => store.reader.scan(from, visit), {
      since,
      until,
      by: options.by,
      sensor: options.sensor ?? null,
      top,
    }),
  );
  if (options.json) {
    writeJson(io.stdout, stats);
    return 0;
  }
  write(io.stdout, formatStats(stats));
  return 0;
}

export async function countRecords(
  scan: (since: number, visit: (record: StoredRecord) => void) => Promise<void>,
  o: { since: number; until: number; by: Grouping; sensor: string | null; top: number },
): Promise<ThreatStats> {
  let counts = new Map<string, number>();
  let total = 0;
  const keyOf = keyFunction(o.by);
  // An AS is counted by its number and named as its newest record names it: a database replaced meanwhile may
  // have renamed it, or a record carry no name. ISO times of one form compare as text.
  const asNames = new Map<string, { at: string; name: string }>();
  // The scan reads on to the newest record: one received after `until` (while the command read, or stamped by a
  // clock ahead) is outside the window the output states.
  const untilIso = new Date(o.until).toISOString();
  await scan(o.since, (record) => {
    if (record.received_at >= untilIso) return;
    if ((o.sensor !== null && record.sensor !== o.sensor) || !isThreatRecord(record)) return;
    total += 1;
    const key = keyOf(record);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (o.by === 'src_asn' && record.src_as_org && !((asNames.get(key)?.at ?? '') > record.received_at))
      asNames.set(key, { at: record.received_at, name: record.src_as_org });
  });
  if (asNames.size > 0)
    counts = new Map(
      [...counts].map(([key, n]) => [asNames.has(key) ? `${key} ${asNames.get(key)?.name}` : key, n]),
    );
  const sorted = [...counts].sort(
    o.by === 'criticality'
      ? (a, b) => Number(b[0]) - Number(a[0])
      : (a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0),
  );
  const shown = o.top === 0 ? sorted : sorted.slice(0, o.top);
  let other = 0;
  for (const [, n] of sorted.slice(shown.length)) other += n;
  return {
    since: new Date(o.since).toISOString(),
    until: new Date(o.until).toISOString(),
    sensor: o.sensor,
    by: o.by,
    total,
    distinct: counts.size,
    rows: shown.map(([key, count]) => ({ key, count })),
    other,
  };
}

/** The group of records without the field. */
const NONE = '(none)';

function keyFunction(by: Grouping): (r: StoredRecord) => string {
  switch (by) {
    case 'criticality':
      return (r) => String(r.criticality);
    case 'sensor':
      return (r) => String(r.sensor);
    case 'endpoint':
      return (r) => String(r.endpoint);
    case 'threat':
      return (r) => String(r.threat);
    case 'src_ip':
      return (r) => String(r.src_ip);
    // The enrichment's fields (docs/operations.md): a private, documentation or unknown source has none.
    case 'src_country':
      return (r) => r.src_country ?? NONE;
    case 'src_asn':
      return (r) => (r.src_asn === undefined ? NONE : `AS${r.src_asn}`);
  }
}

export function formatStats(s: ThreatStats): string {
  const window = `${s.since.slice(0, 19).replace('T', ' ')}Z to ${s.until.slice(0, 19).replace('T', ' ')}Z`;
  const scope = s.sensor === null ? '' : ` from sensor ${clean(s.sensor)}`;
  const head = `${s.total} record${s.total === 1 ? '' : 's'}${scope}, ${window}`;
  if (s.total === 0) return head;
  const label = (key: string) =>
    s.by === 'criticality' ? `${key} ${SEVERITY_LABELS[Number(key)] ?? ''}`.trim() : clean(key);
  const share = (n: number) => `${((100 * n) / s.total).toFixed(1)}%`;
  const rows = s.rows.map((r) => [label(r.key), String(r.count), share(r.count)]);
  if (s.other > 0) {
    rows.push([`(${s.distinct - s.rows.length} more)`, String(s.other), share(s.other)]);
  }
  return `${head}\n\n${formatTable([s.by.toUpperCase(), 'RECORDS', 'SHARE'], rows)}`;
}
