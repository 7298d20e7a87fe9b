// `threatcol threats search`: the look-up: stored records matching addresses, a threat, sensors, countries and ASes
// in a window, paged.
import { type Command, Option } from 'commander';
import { ThreatcolError } from '../../errors.js';
import type { StoredRecord } from '../../records/stored-record.js';
import { SEARCH_MAX_LIMIT } from '../../store/search-limits.js';
import type { SearchQuery } from '../../store/search-records.js';
import { boundedNote, readStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions, threatsCommand } from '../common-options.js';
import { existingDataDir } from '../data-dir-check.js';
import { formatRecordLine, useColour } from '../format-record.js';
import type { CliIo } from '../io.js';
import { safeJsonLine } from '../terminal-text.js';
import { collect, parseSince, toInteger } from './threats-tail.js';

interface SearchOptions extends CommonOptions {
  src?: string;
  dst?: string;
  threat?: string;
  srcCountry?: string;
  srcAsn?: string;
  dstCountry?: string;
  dstAsn?: string;
  sensor?: string[];
  minCriticality?: string;
  endpoint?: 'firewall' | 'generic' | 'syslog' | 'collector';
  since: string;
  until?: string;
  before?: string;
  limit: string;
  json?: boolean;
}

export function registerThreatsSearch(
  program: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  const threats = threatsCommand(program);
  addCommonOptions(
    threats
      .command('search')
      .description(
        'look up stored records by address or CIDR, threat, sensor, country or AS, in a window; newest first, paged',
      )
      .option('--src <address|cidr>', 'only records from this source address or network')
      .option('--dst <address|cidr>', 'only records to this destination address or network')
      .option('--threat <text>', 'only records whose threat name contains this (ignoring case)')
      .option('--src-country <cc>', 'only records from this country (ISO 3166-1 alpha-2: US, DE)')
      .option('--src-asn <asn>', 'only records from this AS (15169 or AS15169)')
      .option('--dst-country <cc>', 'only records to this country')
      .option('--dst-asn <asn>', 'only records to this AS')
      .option('--sensor <name>', 'only records from this sensor (repeatable)', collect)
      .option('--min-criticality <0-4>', 'only records at or above this criticality')
      .addOption(
        new Option(
          '--endpoint <endpoint>',
          "only records from this endpoint (collector: the collector's own, a sensor silent or back)",
        ).choices(['firewall', 'generic', 'syslog', 'collector']),
      )
      .option('--since <when>', 'start of the window: a duration ago (24h, 7d) or an ISO time', '24h')
      .option('--until <when>', 'end of the window: a duration ago or an ISO time (default: now)')
      .option('--before <id>', 'the next page: only records stored before this record id')
      .option('--limit <n>', `records per page (1-${SEARCH_MAX_LIMIT})`, '50')
      .option('--json', 'print the stored records as NDJSON (one JSON object per line)'),
  ).action((options: SearchOptions) => run(() => searchThreats(options, io)));
}

export async function searchThreats(options: SearchOptions, io: CliIo): Promise<number> {
  const now = Date.now();
  const limit = toInteger(options.limit, '--limit', 1, SEARCH_MAX_LIMIT);
  const query: SearchQuery = { since: parseWhen(options.since, '--since', now) };
  if (options.until !== undefined) query.until = parseWhen(options.until, '--until', now);
  if (options.src !== undefined) query.src = options.src.trim();
  if (options.dst !== undefined) query.dst = options.dst.trim();
  if (options.threat !== undefined && options.threat !== '') query.threat = options.threat;
  if (options.before !== undefined) query.before = options.before.trim().toLowerCase();
  if (options.endpoint !== undefined) query.endpoint = options.endpoint;
  if (options.minCriticality !== undefined) {
    const min = toInteger(options.minCriticality, '--min-criticality', 0, 4);
    if (min > 0) query.minCriticality = min;
  }
  const sensors = options.sensor ? new Set(options.sensor) : null;
  if (sensors?.size === 1) query.sensor = [...sensors][0] as string;
  const match =
    sensors !== null && sensors.size > 1 ? { match: (r: StoredRecord) => sensors.has(r.sensor) } : {};
  // Imported here: the definition above is loaded for every command line.
  const { networkFilters, searchQueryProblem, searchRecords } = await import('../../store/search-records.js');
  const network = networkFilters({
    src_country: options.srcCountry,
    src_asn: options.srcAsn,
    dst_country: options.dstCountry,
    dst_asn: options.dstAsn,
  });
  const problem = typeof network === 'string' ? network : searchQueryProblem(query, now);
  if (problem !== null) {
    // The search's messages name the API's fields; here they are flags.
    const named = problem
      .replace(/^(src|dst)_(country|asn) /, '--$1-$2 ')
      .replace(/^(src|dst|before|threat) /, '--$1 ')
      .replace(/^the window/, '--since/--until: the window');
    throw new ThreatcolError('USAGE', named);
  }
  Object.assign(query, network);
  const loaded = await loadFromOptions(options, io);
  existingDataDir(loaded, options, io);
  return readStore(loaded, io, async ({ reader }, signal) => {
    const page = await searchRecords(reader, query, { limit, ...match, signal });
    const colour = options.json !== true && useColour(io.stdout, io.env);
    let text = '';
    for (const { line, record } of page.records) {
      text += options.json === true ? `${safeJsonLine(line)}\n` : `${formatRecordLine(record, colour)}\n`;
    }
    io.stdout.write(text);
    // Notes go to stderr, so `--json` output stays NDJSON only.
    if (page.bounded !== null)
      io.stderr.write(
        boundedNote(
          page.bounded,
          'older matches may exist; narrow the window with --until/--since or add --sensor',
        ),
      );
    if (page.next !== null) io.stderr.write(`more: add --before ${page.next} for the next page\n`);
    return 0;
  });
}

/** `--since`/`--until`: a duration ago or an ISO time (parseSince), its error naming the flag given. */
function parseWhen(text: string, flag: string, now: number): number {
  try {
    return parseSince(text, now);
  } catch (error) {
    if (error instanceof ThreatcolError)
      throw new ThreatcolError('USAGE', error.message.replace('--since', flag));
    throw error;
  }
}
