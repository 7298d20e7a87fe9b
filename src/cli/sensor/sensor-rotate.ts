// `threatcol sensor rotate NAME`: a new key; the old one keeps working for a grace period, then is refused.
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { existingDataDir, storeLocationLine } from '../data-dir-check.js';
import { formatDuration, parseDuration } from '../duration.js';
import { type CliIo, write, writeJson } from '../io.js';
import { newKeyText } from './firewall-setup.js';

interface RotateOptions extends CommonOptions {
  grace: string;
  json?: boolean;
}

export function registerSensorRotate(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('rotate <name>')
      .description('issue a new key; the old key keeps working for the grace period (shown once)')
      .option(
        '--grace <duration>',
        'how long the old key stays valid: 24h, 90m, 30s, or 0 to end it now',
        '24h',
      )
      .option('--json', 'print {"name", "key", "old_keys_expire_at", ...} as JSON'),
  ).action((name: string, options: RotateOptions) => run(() => rotateSensor(name, options, io)));
}

export async function rotateSensor(name: string, options: RotateOptions, io: CliIo): Promise<number> {
  const graceMs = parseDuration(options.grace);
  if (graceMs === null) {
    throw new ThreatcolError('USAGE', `--grace "${options.grace}" is not a duration (24h, 90m, 30s, 0)`);
  }
  const loaded = await loadFromOptions(options, io);
  existingDataDir(loaded, options, io);
  const { sensor, key, oldKeysExpireAt } = await withStore(loaded, io, (store) =>
    store.registry.rotate(name, graceMs),
  );
  if (options.json) {
    writeJson(io.stdout, {
      name: sensor.name,
      key,
      grace_ms: graceMs,
      old_keys_expire_at: oldKeysExpireAt,
      created_at: sensor.keys.at(-1)?.created_at,
      data_dir: loaded.dataDir,
      store_backend: loaded.config.store.backend,
    });
    return 0;
  }
  const until =
    graceMs === 0
      ? 'The old key is refused from now on.'
      : `The old key keeps working until ${oldKeysExpireAt} (${formatDuration(graceMs)}), then it is refused.`;
  write(
    io.stdout,
    [
      `Sensor "${sensor.name}" has a new key.`,
      storeLocationLine(loaded),
      newKeyText(sensor.name, key, loaded.config.server.port, until),
    ].join('\n'),
  );
  return 0;
}
