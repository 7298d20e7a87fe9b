// `threatcol sensor show NAME`: one sensor's details; with --firewall, the PAN-OS setup text (never the key).
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import type { SensorActivity, SensorSilence } from '../../store/store.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { existingDataDir } from '../data-dir-check.js';
import { type CliIo, write, writeJson } from '../io.js';
import { expectEveryLines, expectEveryView } from './expect-every-option.js';
import { firewallSetupJson, firewallSetupText } from './firewall-setup.js';
import { showSyslogErrors } from './syslog-errors.js';
import { syslogSetup, syslogSetupText } from './syslog-setup.js';
import { syslogSummary, warnNoSyslogListener } from './syslog-summary.js';

interface ShowOptions extends CommonOptions {
  firewall?: boolean;
  json?: boolean;
  syslog?: boolean;
  collector?: string;
  syslogErrors?: boolean;
  adminListen?: string;
}

export function registerSensorShow(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('show <name>')
      .description('show one sensor (a revoked one has no valid keys); --firewall prints the PAN-OS setup')
      .option('--firewall', 'print the PAN-OS server profile and payload format for this sensor')
      .option('--syslog', 'print the syslog sender configuration (PAN-OS, FortiGate, rsyslog, syslog-ng)')
      .option('--collector <host>', "with --syslog: the collector's name or address as the sender reaches it")
      .option(
        '--syslog-errors',
        "print the daemon's syslog counters and latest unreadable messages for this sensor",
      )
      .option('--admin-listen <host:port>', 'admin listener of the running daemon (default: admin.listen)')
      .option('--json', 'print the sensor as JSON'),
  ).action((name: string, options: ShowOptions) => run(() => showSensor(name, options, io)));
}

/** Nothing asked: an empty map of what a brief view leaves out. */
const none = <T>(): Promise<Record<string, T>> => Promise.resolve({});

export async function showSensor(name: string, options: ShowOptions, io: CliIo): Promise<number> {
  // Imported here: the definition above is loaded for every command line.
  const { sensorState } = await import('../../store/sensor-state.js');
  const loaded = await loadFromOptions(options, io, { 'admin.listen': options.adminListen });
  const { config } = loaded;
  existingDataDir(loaded, options, io);
  const brief = options.firewall || options.syslog || options.syslogErrors;
  // Asked together: on NATS the counts and the silences come from one replay of their bucket.
  const [sensor, stats, silences] = await withStore(loaded, io, (store) =>
    Promise.all([
      store.registry.list().then((all) => all.find((s) => s.name === name)),
      brief ? none<SensorActivity>() : store.stats.read(),
      brief ? none<SensorSilence>() : store.stats.readSilences(),
    ]),
  );
  if (!sensor) throw new ThreatcolError('SENSOR_NOT_FOUND', `no sensor named "${name}"`);
  if (options.syslogErrors) return showSyslogErrors(loaded, sensor.name, options.json === true, io);
  if (options.syslog) {
    // Loaded when asked: it reads certificates, which --help and the other views do not need.
    const { syslogTarget } = await import('./syslog-target.js');
    const target = syslogTarget(loaded, sensor, options.collector);
    const setup = syslogSetup(target);
    await warnNoSyslogListener(config, sensor.name, io);
    if (options.json) writeJson(io.stdout, { ...target, setup });
    else write(io.stdout, syslogSetupText(target, setup));
    return 0;
  }
  if (options.firewall) {
    if (options.json) writeJson(io.stdout, firewallSetupJson(sensor.name, config.server.port));
    else write(io.stdout, firewallSetupText(sensor.name, null, config.server.port));
    return 0;
  }
  const activity = Object.hasOwn(stats, name) ? stats[name] : undefined;
  const now = Date.now();
  // A revoked sensor's keys are all refused (403), whatever their expiry says.
  const keys = sensor.keys
    .filter((k) => sensor.status !== 'revoked' && (k.expires_at === null || Date.parse(k.expires_at) > now))
    .map((k) => ({ created_at: k.created_at, expires_at: k.expires_at }));
  const { state, silent_since } = sensorState(sensor, silences, config.sensors.expectEvery);
  const view = {
    name: sensor.name,
    status: sensor.status,
    state,
    description: sensor.description,
    timezone: sensor.timezone,
    effective_timezone: sensor.timezone ?? config.firewall.defaultTimezone,
    created_at: sensor.created_at,
    revoked_at: sensor.revoked_at,
    valid_keys: keys,
    last_seen: activity?.last_seen ?? null,
    expect_every: expectEveryView(sensor, config),
    silent_since,
    last_address: activity?.last_address ?? null,
    records_received: activity?.records_received ?? 0,
    requests_rejected: activity?.requests_rejected ?? 0,
    last_rejection_code: activity?.last_rejection_code ?? null,
    last_rejected_at: activity?.last_rejected_at ?? null,
    ...(sensor.syslog ? { syslog: sensor.syslog } : {}),
  };
  if (options.json) {
    writeJson(io.stdout, view);
    return 0;
  }
  const lines = [
    `Name:           ${view.name}`,
    view.silent_since
      ? `Status:         silent since ${view.silent_since}: nothing accepted for ${view.expect_every} (is it still forwarding?)`
      : `Status:         ${view.status}${view.revoked_at ? ` (since ${view.revoked_at}): every key is refused with 403` : ''}`,
    `Description:    ${view.description || '-'}`,
    `Time zone:      ${view.effective_timezone}${view.timezone ? '' : ' (the default)'}`,
    `Created:        ${view.created_at}`,
    `Valid keys:     ${keys.length}`,
    ...keys.map((k) => `  issued ${k.created_at}, ${k.expires_at ? `expires ${k.expires_at}` : 'no expiry'}`),
    `Last seen:      ${view.last_seen ?? 'never'}${view.last_address ? ` from ${view.last_address}` : ''}`,
    ...expectEveryLines(sensor, config),
    `Records:        ${view.records_received} received, ${view.requests_rejected} requests rejected`,
    ...(view.last_rejection_code
      ? [`Last rejected:  ${view.last_rejected_at} (${view.last_rejection_code})`]
      : []),
    ...(sensor.syslog ? [`Syslog:         ${syslogSummary(sensor.syslog)}`] : []),
    '',
    view.status === 'revoked'
      ? `To issue the name again: threatcol sensor delete ${view.name} --yes, then threatcol sensor add ${view.name}`
      : `Firewall setup: threatcol sensor show ${view.name} --firewall`,
  ];
  write(io.stdout, lines);
  return 0;
}
