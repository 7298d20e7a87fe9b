// `threatcol outputs forget NAME`: deletes the position of an output removed from the configuration (a
// configured output would start again at 'now' at the next start or reload).
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { existingDataDir } from '../data-dir-check.js';
import { type CliIo, write } from '../io.js';

export function registerOutputsForget(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('forget')
      .description("delete an output's position (its cursor); dead letters stay")
      .argument('<name>', 'output name'),
  ).action((name: string, options: CommonOptions) => run(() => forgetOutput(name, options, io)));
}

export async function forgetOutput(name: string, options: CommonOptions, io: CliIo): Promise<number> {
  const loaded = await loadFromOptions(options, io);
  existingDataDir(loaded, options, io);
  const forgotten = await withStore(loaded, io, (store) => store.outputs.forget(name));
  if (!forgotten) throw new ThreatcolError('OUTPUT_NOT_FOUND', `output "${name}" has no position to forget`);
  const still = Object.hasOwn(loaded.config.outputs, name);
  write(
    io.stdout,
    still
      ? `Forgot the position of ${name}; it is still configured and starts again at 'now' (startAt) when next started.`
      : `Forgot the position of ${name}.`,
  );
  return 0;
}
