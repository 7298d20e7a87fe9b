// `threatcol sensor set NAME`: changes a sensor's time zone or description; a running daemon uses it within 1 s.
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import type { SensorChanges } from '../../store/registry.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { existingDataDir, storeLocationLine } from '../data-dir-check.js';
import { type CliIo, write, writeJson } from '../io.js';
import { expectEveryLines, expectEveryOption, expectEveryView } from './expect-every-option.js';
import { overlapWarnings } from './overlapping-networks.js';
import { addSyslogOptions, type SyslogOptions, syslogIdentity } from './syslog-identity.js';
import { syslogIdentityLines, warnNoSyslogListener } from './syslog-summary.js';

interface SetOptions extends CommonOptions, SyslogOptions {
  description?: string;
  timezone?: string;
  expectEvery?: string;
  json?: boolean;
}

export function registerSensorSet(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  const command = addCommonOptions(
    parent
      .command('set <name>')
      .description("change a sensor's time zone or description (a running collector uses it within 1 s)")
      .option(
        '--timezone <iana>',
        'time zone of the firewall clock, e.g. Europe/Berlin; "default" for firewall.defaultTimezone',
      )
      .option('--description <text>', 'free text shown in "sensor list" and "sensor show"')
      .option(
        '--expect-every <duration>',
        'silent when nothing is accepted for this long, e.g. 1h; "off": never; "default": sensors.expectEvery',
      )
      .option('--json', 'print the changed sensor as JSON'),
  );
  addSyslogOptions(command)
    .option('--no-syslog', 'the sensor no longer sends syslog: its syslog connections are closed')
    .action((name: string, options: SetOptions) => run(() => setSensor(name, options, io)));
}

export async function setSensor(name: string, options: SetOptions, io: CliIo): Promise<number> {
  // Imported here: the definition above is loaded for every command line.
  const { isValidTimezone } = await import('../../config/load-config.js');
  // --syslog replaces the whole identity (format, networks, certificates); --no-syslog removes it.
  // --format, --from or --client-cert beside --no-syslog is a usage error (syslogIdentity without --syslog).
  const syslog =
    options.syslog === false
      ? (syslogIdentity({ ...options, syslog: undefined }) ?? null)
      : syslogIdentity(options);
  const expectEvery = expectEveryOption(options.expectEvery, true);
  if (
    options.timezone === undefined &&
    options.description === undefined &&
    syslog === undefined &&
    expectEvery === undefined
  ) {
    throw new ThreatcolError(
      'USAGE',
      'nothing to change: give --timezone, --description, --expect-every, --syslog or --no-syslog',
    );
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
  const changes: SensorChanges = {};
  if (syslog !== undefined) changes.syslog = syslog;
  if (timezone !== undefined) changes.timezone = timezone;
  if (options.description !== undefined) changes.description = options.description;
  if (expectEvery !== undefined) changes.expect_every = expectEvery;
  const { sensor, overlaps } = await withStore(loaded, io, async (store) => {
    const changed = await store.registry.set(name, changes);
    const overlaps = syslog ? overlapWarnings(changed, await store.registry.list()) : [];
    return { sensor: changed, overlaps };
  });
  for (const line of overlaps) write(io.stderr, line);
  if (syslog && sensor.syslog) await warnNoSyslogListener(config, sensor.name, io);
  if (options.json) {
    writeJson(io.stdout, {
      name: sensor.name,
      status: sensor.status,
      description: sensor.description,
      timezone: sensor.timezone,
      effective_timezone: sensor.timezone ?? config.firewall.defaultTimezone,
      ...(sensor.syslog ? { syslog: sensor.syslog } : {}),
      expect_every: expectEveryView(sensor, config),
      data_dir: loaded.dataDir,
      store_backend: config.store.backend,
    });
    return 0;
  }
  write(
    io.stdout,
    [
      `Sensor "${sensor.name}" changed: time zone ${sensor.timezone ?? `${config.firewall.defaultTimezone} (the default)`}, description ${sensor.description ? `"${sensor.description}"` : 'none'}.`,
      ...(options.syslog === undefined
        ? []
        : sensor.syslog
          ? syslogIdentityLines(sensor.name, sensor.syslog)
          : ['Syslog: off.']),
      ...(expectEvery === undefined ? [] : expectEveryLines(sensor, config)),
      ...(expectEvery === undefined || expectEveryView(sensor, config) !== null
        ? []
        : ['Silence watch: off.']),
      'A running collector uses the change within a second.',
      storeLocationLine(loaded),
    ].join('\n'),
  );
  return 0;
}
