// `threatcol sensor list`: sensors with status and activity; never a key or its hash.
import type { Command } from 'commander';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { existingDataDir, storeLocationLine } from '../data-dir-check.js';
import type { CliIo } from '../io.js';
import { printList } from '../table.js';
import { expectEveryView } from './expect-every-option.js';

interface ListOptions extends CommonOptions {
  json?: boolean;
}

export function registerSensorList(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('list')
      .description('list sensors: status, created, last seen, last address, records, description')
      .option('--json', 'print a JSON array'),
  ).action((options: ListOptions) => run(() => listSensors(options, io)));
}

export async function listSensors(options: ListOptions, io: CliIo): Promise<number> {
  // Imported here: the definition above is loaded for every command line.
  const { sensorState } = await import('../../store/sensor-state.js');
  const loaded = await loadFromOptions(options, io);
  existingDataDir(loaded, options, io);
  // Asked together: on NATS the counts and the silences come from one replay of their bucket.
  const [sensors, stats, silences] = await withStore(loaded, io, (store) =>
    Promise.all([store.registry.list(), store.stats.read(), store.stats.readSilences()]),
  );
  const now = Date.now();
  const rows = sensors.map((s) => {
    const activity = Object.hasOwn(stats, s.name) ? stats[s.name] : undefined;
    const pending = s.keys.filter((k) => k.expires_at !== null && Date.parse(k.expires_at) > now);
    const { state, silent_since } = sensorState(s, silences, loaded.config.sensors.expectEvery);
    return {
      name: s.name,
      status: s.status,
      state,
      description: s.description,
      timezone: s.timezone,
      created_at: s.created_at,
      revoked_at: s.revoked_at,
      last_seen: activity?.last_seen ?? null,
      expect_every: expectEveryView(s, loaded.config),
      silent_since,
      last_address: activity?.last_address ?? null,
      records_received: activity?.records_received ?? 0,
      rotation_grace_until:
        pending.length > 0
          ? (pending
              .map((k) => k.expires_at)
              .sort()
              .at(-1) ?? null)
          : null,
    };
  });
  return printList(io, rows, {
    json: options.json,
    none: `No sensors yet (${storeLocationLine(loaded)}). Add one with: threatcol sensor add NAME`,
    header: ['NAME', 'STATUS', 'CREATED', 'LAST SEEN', 'LAST ADDRESS', 'RECORDS', 'DESCRIPTION'],
    cells: (r) => [
      r.name,
      (r.silent_since ? `silent since ${shortTime(r.silent_since)}` : r.status) +
        (r.rotation_grace_until ? ` (old key until ${shortTime(r.rotation_grace_until)})` : ''),
      shortTime(r.created_at),
      r.last_seen ? shortTime(r.last_seen) : 'never',
      r.last_address ?? '-',
      String(r.records_received),
      r.description || '-',
    ],
  });
}

function shortTime(iso: string): string {
  return `${iso.slice(0, 19).replace('T', ' ')}Z`;
}
