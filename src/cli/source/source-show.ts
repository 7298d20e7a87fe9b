// `threatcol source show ADDRESS|CIDR`: one source, whole: when it was seen, how bad, by which sensors, what it
// hit, its country and network, and whether it is blocked or allowed (store/source-summary.ts sums it).
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { SEVERITY_LABELS } from '../../records/criticality.js';
import type { SourceAllow, SourceSummary } from '../../store/source-summary.js';
import { boundedNote, readStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions, parentCommand } from '../common-options.js';
import { existingDataDir } from '../data-dir-check.js';
import { type CliIo, write, writeJson } from '../io.js';
import { parseSince } from '../threats/threats-tail.js';

interface ShowOptions extends CommonOptions {
  since: string;
  json?: boolean;
}

export function registerSourceShow(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parentCommand(parent, 'source', 'one source address or network: what it did, and whether it is blocked')
      .command('show <address>')
      .description(
        'one source address or CIDR, whole: first and last seen, criticality, sensors, targets, threats',
      )
      .option(
        '--since <when>',
        'start of the window: a duration ago (24h, 7d) or an ISO time; 30 days at most',
        '30d',
      )
      .option('--json', 'print the summary as one JSON object'),
  ).action((address: string, options: ShowOptions) => run(() => showSource(address, options, io)));
}

async function showSource(address: string, options: ShowOptions, io: CliIo): Promise<number> {
  const now = Date.now();
  const query = { address: address.trim(), since: parseSince(options.since, now) };
  // Imported here: the definition above is loaded for every command line.
  const { decisionsOfSource, sourceQueryProblem, summarizeSource } = await import(
    '../../store/source-summary.js'
  );
  const problem = sourceQueryProblem(query, now);
  if (problem !== null)
    throw new ThreatcolError('USAGE', problem.replace(/^the window/, '--since: the window'));
  const loaded = await loadFromOptions(options, io);
  existingDataDir(loaded, options, io);
  return readStore(loaded, io, async (store, signal) => {
    const summary = await summarizeSource(store.reader, query, { signal });
    const decisions = decisionsOfSource(
      query.address,
      await store.decisions.read(),
      loaded.config.blocklist.allow,
      Date.now(),
    );
    const shown = { ...summary, ...decisions, since: new Date(query.since).toISOString() };
    if (options.json === true) writeJson(io.stdout, shown);
    else write(io.stdout, describe(shown));
    // Notes go to stderr, so `--json` output stays one object.
    if (summary.bounded !== null)
      io.stderr.write(
        boundedNote(
          summary.bounded,
          'older records of this source may exist; first seen and the counts cover what was read',
        ),
      );
    return 0;
  });
}

function describe(
  s: SourceSummary & {
    blocked: { address: string; rule: string; until: string } | null;
    allowed: SourceAllow | null;
    blocks_within: number;
    blocks_within_first: string[];
    since: string;
  },
): string[] {
  const lines = [`Source ${s.address}`];
  if (s.records === 0) lines.push(`  No records since ${s.since}.`);
  else {
    lines.push(
      `  Seen:        ${s.first_seen} .. ${s.last_seen} (window from ${s.since})`,
      `  Records:     ${s.records} (${SEVERITY_LABELS.map((name, i) => `${name} ${s.criticality[i]}`).join(', ')})`,
      `  Sensors:     ${s.sensors.join(', ')}`,
      `  Targets:     ${s.targets} address${s.targets === 1 ? '' : 'es'}${list(s.top_targets.map((t) => `${t.address} ×${t.count}`))}`,
      `  Ports:       ${s.ports}${list(s.top_ports.map((p) => `${p.port} ×${p.count}`))}`,
      `  Threats:     ${s.threats.map((t) => `${t.threat} ×${t.count}`).join('; ')}`,
    );
    if (s.capped) lines.push('  (counted up to 100,000 distinct destinations and threats: there are more)');
  }
  // A network whose records name several countries or ASes says so, not one of them.
  const country = s.country ?? (s.countries > 1 ? `${s.countries} countries` : null);
  const as =
    s.asn === null
      ? s.asns > 1
        ? `${s.asns} ASes`
        : null
      : `AS${s.asn}${s.as_org === null ? '' : ` ${s.as_org}`}`;
  if (country !== null || as !== null)
    lines.push(`  Network:     ${[country, as].filter((v) => v !== null).join(s.asn === null ? ', ' : ' ')}`);
  lines.push(
    `  Blocked:     ${s.blocked === null ? `no${within(s)}` : `yes, ${s.blocked.address} by ${s.blocked.rule} until ${s.blocked.until}${keptOut(s.allowed)}`}`,
    `  Allowed:     ${s.allowed === null ? 'no' : `yes, ${s.allowed.network} (${s.allowed.source === 'configuration' ? 'blocklist.allow' : s.allowed.reason})`}`,
  );
  return lines;
}

/** A network not blocked whole: the blocks inside it, the first few named ('; 2 blocks within (a, b)'). */
function within(s: { blocks_within: number; blocks_within_first: string[] }): string {
  if (s.blocks_within === 0) return '';
  const more = s.blocks_within > s.blocks_within_first.length ? ', ...' : '';
  return `; ${s.blocks_within} block${s.blocks_within === 1 ? '' : 's'} within (${s.blocks_within_first.join(', ')}${more})`;
}

/** An allow entry over a block keeps it out of every feed: the firewalls do not block it (as the dashboard says). */
function keptOut(allowed: SourceAllow | null): string {
  return allowed === null ? '' : ` (not in the feeds: the allow entry ${allowed.network} keeps it out)`;
}

function list(items: string[]): string {
  return items.length === 0 ? '' : `: ${items.join(', ')}`;
}
