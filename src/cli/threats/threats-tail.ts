// `threatcol threats tail`: the last N stored records, then new ones as they arrive; filters; NDJSON with --json.
import { type Command, Option } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { parseIsoTime } from '../../records/iso-time.js';
import type { RecordFilter, RecordLine, RecordReader } from '../../store/store.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions, threatsCommand } from '../common-options.js';
import { existingDataDir } from '../data-dir-check.js';
import { parseDuration } from '../duration.js';
import { formatRecordLine, useColour } from '../format-record.js';
import type { CliIo } from '../io.js';
import { safeJsonLine } from '../terminal-text.js';

interface TailOptions extends CommonOptions {
  lines: string;
  follow: boolean;
  sensor?: string[];
  minCriticality?: string;
  endpoint?: 'firewall' | 'generic' | 'syslog' | 'collector';
  since?: string;
  json?: boolean;
}

export function registerThreatsTail(
  program: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  const threats = threatsCommand(program);
  addCommonOptions(
    threats
      .command('tail')
      .description('print the last records, then follow new ones as they are stored (like tail -f)')
      .option('-n, --lines <n>', 'how many of the last records to print first', '10')
      .option('--no-follow', 'exit after the last records instead of waiting for new ones')
      .option('--sensor <name>', 'only records from this sensor (repeatable)', collect)
      .option('--min-criticality <0-4>', 'only records at or above this criticality')
      .addOption(
        new Option(
          '--endpoint <endpoint>',
          "only records from this endpoint (collector: the collector's own, a sensor silent or back)",
        ).choices(['firewall', 'generic', 'syslog', 'collector']),
      )
      .option('--since <when>', 'only records received since a duration ago (24h, 90m) or an ISO time')
      .option('--json', 'print the stored records as NDJSON (one JSON object per line)'),
  ).action((options: TailOptions) => run(() => tailThreats(options, io)));
}

export async function tailThreats(options: TailOptions, io: CliIo): Promise<number> {
  const limit = toInteger(options.lines, '--lines', 0, 1_000_000);
  const minCriticality =
    options.minCriticality === undefined ? 0 : toInteger(options.minCriticality, '--min-criticality', 0, 4);
  const filter: RecordFilter = {};
  if (options.since !== undefined) filter.since = parseSince(options.since, Date.now());
  if (minCriticality > 0) filter.minCriticality = minCriticality;
  if (options.endpoint !== undefined) filter.endpoint = options.endpoint;
  // One sensor is a filter a backend can index; several are an extra predicate.
  const sensors = options.sensor ? new Set(options.sensor) : null;
  if (sensors?.size === 1) filter.sensor = [...sensors][0] as string;
  const match =
    sensors !== null && sensors.size > 1 ? { match: (r: { sensor: string }) => sensors.has(r.sensor) } : {};
  const loaded = await loadFromOptions(options, io);
  existingDataDir(loaded, options, io);
  return withStore(loaded, io, ({ reader }) =>
    tail(reader, { limit, filter, ...match, follow: options.follow, json: options.json === true }, io),
  );
}

interface TailPlan {
  limit: number;
  filter: RecordFilter;
  match?: (record: { sensor: string }) => boolean;
  follow: boolean;
  json: boolean;
}

async function tail(reader: RecordReader, plan: TailPlan, io: CliIo): Promise<number> {
  const colour = !plan.json && useColour(io.stdout, io.env);
  const stop = new AbortController();
  // A closed pipe (`| head -1`) is the reader saying "enough": stop quietly with 0, like SIGINT.
  io.stdout.on('error', () => stop.abort());
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  try {
    const print = async (batch: RecordLine[]) => {
      let text = '';
      for (const { line, record } of batch) {
        text += plan.json ? `${safeJsonLine(line)}\n` : `${formatRecordLine(record, colour)}\n`;
      }
      if (text === '' || stop.signal.aborted) return;
      if (!io.stdout.write(text)) await drained(io.stdout, stop.signal);
    };
    const select = { filter: plan.filter, ...(plan.match ? { match: plan.match } : {}) };
    const { records, cursor } = await reader.readRecent({ limit: plan.limit, ...select });
    await print(records);
    if (plan.follow && !stop.signal.aborted) {
      await reader.follow(cursor, { ...select, onRecords: print, signal: stop.signal, pollIntervalMs: 250 });
    }
    return 0;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** `--since 24h` (that long ago) or `--since 2026-11-21T10:00:00Z` (an ISO time; no zone means UTC). */
export function parseSince(text: string, now: number): number {
  const ms = parseDuration(text);
  if (ms !== null) return now - ms;
  const at = parseIsoTime(text);
  if (at !== null) return at;
  throw new ThreatcolError(
    'USAGE',
    `--since "${text}" is neither a duration (30s, 90m, 24h, 7d) nor an ISO time (2026-11-21T10:00:00Z)`,
  );
}

export function toInteger(text: string, flag: string, min: number, max: number): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ThreatcolError('USAGE', `${flag} must be an integer from ${min} to ${max}, not "${text}"`);
  }
  return n;
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function drained(stream: NodeJS.WritableStream, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('error', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    stream.once('drain', done);
    stream.once('error', done);
    signal.addEventListener('abort', done);
  });
}
