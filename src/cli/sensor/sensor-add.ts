// `threatcol sensor add NAME`: issues a sensor and its key; the key is printed once and only its hash stored.
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { storeLocationLine } from '../data-dir-check.js';
import { type CliIo, write, writeJson } from '../io.js';
import { expectEveryLines, expectEveryOption, expectEveryView } from './expect-every-option.js';
import { newKeyText } from './firewall-setup.js';
import { overlapWarnings } from './overlapping-networks.js';
import { foreignRegistryWarning } from './registry-location.js';
import { addSyslogOptions, type SyslogOptions, syslogIdentity } from './syslog-identity.js';
import { syslogIdentityLines, warnNoSyslogListener } from './syslog-summary.js';

interface AddOptions extends CommonOptions, SyslogOptions {
  description?: string;
  timezone?: string;
  expectEvery?: string;
  json?: boolean;
}

export function registerSensorAdd(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  const command = addCommonOptions(
    parent
      .command('add <name>')
      .description('issue a new sensor and print its key (shown once)')
      .option('--description <text>', 'free text shown in "sensor list"')
      .option(
        '--timezone <iana>',
        'time zone of the firewall clock, for time_received (default: firewall.defaultTimezone)',
      )
      .option(
        '--expect-every <duration>',
        'silent when nothing is accepted for this long, e.g. 1h; "off": never (default: sensors.expectEvery)',
      )
      .option('--json', 'print {"name", "key", ...} as JSON'),
  );
  addSyslogOptions(command).action((name: string, options: AddOptions) =>
    run(() => addSensor(name, options, io)),
  );
}

export async function addSensor(name: string, options: AddOptions, io: CliIo): Promise<number> {
  // Imported here: the definition above is loaded for every command line.
  const { isValidTimezone } = await import('../../config/load-config.js');
  const loaded = await loadFromOptions(options, io);
  const { config } = loaded;
  const syslog = syslogIdentity(options);
  if (options.timezone !== undefined && !isValidTimezone(options.timezone)) {
    throw new ThreatcolError(
      'USAGE',
      `--timezone "${options.timezone}" is not an IANA time zone (e.g. Europe/Berlin)`,
    );
  }
  const expectEvery = expectEveryOption(options.expectEvery, false);
  const warning =
    config.store.backend === 'files'
      ? foreignRegistryWarning(loaded.dataDir, process.getuid?.() ?? -1)
      : null;
  const { sensor, key, overlaps } = await withStore(loaded, io, async (store) => {
    const added = await store.registry.add({
      name,
      description: options.description ?? '',
      timezone: options.timezone ?? null,
      ...(syslog ? { syslog } : {}),
      ...(expectEvery ? { expect_every: expectEvery } : {}),
    });
    const overlaps = syslog ? overlapWarnings(added.sensor, await store.registry.list()) : [];
    return { ...added, overlaps };
  });
  for (const line of overlaps) write(io.stderr, line);
  if (sensor.syslog) await warnNoSyslogListener(config, sensor.name, io);
  if (options.json) {
    const out: Record<string, unknown> = { name: sensor.name, key };
    if (sensor.description) out.description = sensor.description;
    if (sensor.timezone) out.timezone = sensor.timezone;
    if (sensor.syslog) out.syslog = sensor.syslog;
    const watched = expectEveryView(sensor, config);
    if (watched) out.expect_every = watched;
    out.created_at = sensor.created_at;
    out.data_dir = loaded.dataDir;
    out.store_backend = config.store.backend;
    if (warning) write(io.stderr, warning);
    writeJson(io.stdout, out);
    return 0;
  }
  if (warning) write(io.stderr, warning);
  write(
    io.stdout,
    [
      `Sensor "${sensor.name}" added (time zone ${sensor.timezone ?? `${config.firewall.defaultTimezone}, the default`}).`,
      ...(sensor.syslog ? syslogIdentityLines(sensor.name, sensor.syslog) : []),
      ...expectEveryLines(sensor, config),
      storeLocationLine(loaded),
      newKeyText(sensor.name, key, config.server.port),
    ].join('\n'),
  );
  return 0;
}
