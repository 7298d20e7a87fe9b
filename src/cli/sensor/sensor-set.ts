// `threatcol sensor set NAME`: changes a sensor's time zone or description; a running daemon uses it within 1 s.
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { existingDataDir, storeLocationLine } from '../data-dir-check.js';
import { type CliIo, write, writeJson } from '../io.js';

interface SetOptions extends CommonOptions {
  description?: string;
  timezone?: string;
  json?: boolean;
}

export function registerSensorSet(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('set <name>')
      .description("change a sensor's time zone or description (a running collector uses it within 1 s)")
      .option(
        '--timezone <iana>',
        'time zone of the firewall clock, e.g. Europe/Berlin; "default" for firewall.defaultTimezone',
      )
      .option('--description <text>', 'free text shown in "sensor list" and "sensor show"')
      .option('--json', 'print the changed sensor as JSON'),
  ).action((name: string, options: SetOptions) => run(() => setSensor(name, options, io)));
}

export async function setSensor(name: string, options: SetOptions, io: CliIo): Promise<number> {
  // Imported here: the definition above is loaded for every command line.
  const { isValidTimezone } = await import('../../config/load-config.js');
  if (options.timezone === undefined && options.description === undefined) {
    throw new ThreatcolError('USAGE', 'nothing to change: give --timezone and/or --description');
  }
  let timezone: string | null | undefined;
  if (options.timezone !== undefined) {
    if (options.timezone === 'default') timezone = null;
    else if (isValidTimezone(options.timezone)) timezone = options.timezone;
    else {
      throw new ThreatcolError(
        'USAGE',
        `--timezone "${options.timezone}" is not an IANA time zone (e.g. Europe/Berlin), nor "default"`,
      );
    }
  }
  const loaded = await loadFromOptions(options, io);
  const { config } = loaded;
  existingDataDir(loaded, options, io);
  const changes: { timezone?: string | null; description?: string } = {};
  if (timezone !== undefined) changes.timezone = timezone;
  if (options.description !== undefined) changes.description = options.description;
  const sensor = await withStore(loaded, io, (store) => store.registry.set(name, changes));
  if (options.json) {
    writeJson(io.stdout, {
      name: sensor.name,
      status: sensor.status,
      description: sensor.description,
      timezone: sensor.timezone,
      effective_timezone: sensor.timezone ?? config.firewall.defaultTimezone,
      data_dir: loaded.dataDir,
      store_backend: config.store.backend,
    });
    return 0;
  }
  write(
    io.stdout,
    [
      `Sensor "${sensor.name}" changed: time zone ${sensor.timezone ?? `${config.firewall.defaultTimezone} (the default)`}, description ${sensor.description ? `"${sensor.description}"` : 'none'}.`,
      'A running collector uses the change within a second.',
      storeLocationLine(loaded),
    ].join('\n'),
  );
  return 0;
}
