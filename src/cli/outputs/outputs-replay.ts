// `threatcol outputs replay NAME --since 24h`: moves an output's position back, so what it delivered since then
// is sent again (a running daemon takes the new position at its next batch).
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { parseIsoTime } from '../../records/iso-time.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { existingDataDir } from '../data-dir-check.js';
import { parseDuration } from '../duration.js';
import { type CliIo, write } from '../io.js';
import { knownOutput } from './known-output.js';

interface ReplayOptions extends CommonOptions {
  since: string;
}

export function registerOutputsReplay(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('replay')
      .description("move an output's position back: records received since then are sent again")
      .argument('<name>', 'output name')
      .requiredOption('--since <duration|time>', 'a duration ago (24h, 7d) or an ISO time'),
  ).action((name: string, options: ReplayOptions) => run(() => replayOutput(name, options, io)));
}

export async function replayOutput(name: string, options: ReplayOptions, io: CliIo): Promise<number> {
  const loaded = await loadFromOptions(options, io);
  existingDataDir(loaded, options, io);
  const since = sinceOf(options.since, Date.now());
  await withStore(loaded, io, async (store) => {
    await knownOutput(loaded, store, name);
    await store.outputs.replay(name, since);
  });
  write(
    io.stdout,
    `Output ${name} moved back to the records received since ${new Date(since).toISOString()}.`,
  );
  return 0;
}

function sinceOf(text: string, now: number): number {
  const ms = parseDuration(text);
  if (ms !== null) return now - ms;
  const at = parseIsoTime(text);
  if (at === null)
    throw new ThreatcolError('USAGE', `--since takes a duration (24h) or an ISO time, not "${text}"`);
  return at;
}
