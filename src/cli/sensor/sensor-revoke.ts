// `threatcol sensor revoke NAME`: marks the sensor revoked (kept for audit); a running daemon refuses it within 1 s.
import type { Command } from 'commander';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { existingDataDir, storeLocationLine } from '../data-dir-check.js';
import { type CliIo, write } from '../io.js';

export function registerSensorRevoke(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent.command('revoke <name>').description('revoke a sensor: its key is refused from now on (403)'),
  ).action((name: string, options: CommonOptions) => run(() => revokeSensor(name, options, io)));
}

export async function revokeSensor(name: string, options: CommonOptions, io: CliIo): Promise<number> {
  const loaded = await loadFromOptions(options, io);
  existingDataDir(loaded, options, io);
  const sensor = await withStore(loaded, io, (store) => store.registry.revoke(name));
  write(
    io.stdout,
    `Sensor "${sensor.name}" revoked at ${sensor.revoked_at}. A running collector refuses it within a second.\n${storeLocationLine(loaded)}`,
  );
  return 0;
}
