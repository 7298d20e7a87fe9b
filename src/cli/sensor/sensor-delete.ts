// `threatcol sensor delete NAME --yes`: removes a sensor from the registry; its stored records stay.
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { existingDataDir, storeLocationLine } from '../data-dir-check.js';
import { type CliIo, write, writeJson } from '../io.js';

interface DeleteOptions extends CommonOptions {
  yes?: boolean;
  json?: boolean;
}

export function registerSensorDelete(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('delete <name>')
      .description(
        'remove a sensor from the registry (its stored records stay; the name can be issued again)',
      )
      .option('--yes', 'confirm: the sensor and its keys are removed at once')
      .option('--json', 'print the removed sensor as JSON'),
  ).action((name: string, options: DeleteOptions) => run(() => deleteSensor(name, options, io)));
}

export async function deleteSensor(name: string, options: DeleteOptions, io: CliIo): Promise<number> {
  if (!options.yes) {
    throw new ThreatcolError(
      'USAGE',
      `sensor delete removes "${name}" and its keys at once (a running collector refuses it within a second); repeat with --yes`,
    );
  }
  const loaded = await loadFromOptions(options, io);
  existingDataDir(loaded, options, io);
  const sensor = await withStore(loaded, io, (store) => store.registry.delete(name));
  if (options.json) {
    writeJson(io.stdout, {
      name: sensor.name,
      status: 'deleted',
      was: sensor.status,
      data_dir: loaded.dataDir,
      store_backend: loaded.config.store.backend,
    });
    return 0;
  }
  write(
    io.stdout,
    [
      `Sensor "${sensor.name}" (${sensor.status}) deleted; a running collector refuses its key within a second.`,
      `Its stored records stay. The name can be issued again: threatcol sensor add ${sensor.name}`,
      storeLocationLine(loaded),
    ].join('\n'),
  );
  return 0;
}
