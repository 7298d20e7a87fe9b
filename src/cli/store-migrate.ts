// `threatcol store migrate --to nats`: copies the data directory's files store (sensors, the blocklist's
// decisions and records) into the configured NATS JetStream backend; idempotent, so a re-run or a run after an
// interruption stores nothing twice.
import { type Command, Option } from 'commander';
import type { LoadedConfig } from '../config/load-config.js';
import type { Config } from '../config/schema.js';
import { ThreatcolError } from '../errors.js';
import type { CopyProgress } from '../store/copy-store.js';
import type { Store } from '../store/store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions, parentCommand } from './common-options.js';
import { existingDataDir } from './data-dir-check.js';
import { type CliIo, logStream, write, writeJson } from './io.js';

interface MigrateOptions extends CommonOptions {
  to: 'nats';
  dryRun?: boolean;
  overwriteSensors?: boolean;
  json?: boolean;
}

/** A progress line at most this often: a small store prints none. */
const PROGRESS_EVERY_MS = 2000;

export function registerStoreMigrate(
  program: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  const store = parentCommand(program, 'store', 'move the data directory’s store to another backend');
  addCommonOptions(
    store
      .command('migrate')
      .description(
        'copy the files store (sensors, blocklist decisions, records) into NATS JetStream; safe to run again',
      )
      .addOption(
        new Option('--to <backend>', 'the backend to copy into (configured as for serve: nats.*)')
          .choices(['nats'])
          .makeOptionMandatory(),
      )
      .option('--dry-run', 'count what would be copied; store nothing')
      .option('--overwrite-sensors', 'replace a sensor that exists in NATS with different content')
      .option('--json', 'print the summary as JSON'),
  ).action((options: MigrateOptions) => run(() => migrateStore(options, io)));
}

export async function migrateStore(options: MigrateOptions, io: CliIo): Promise<number> {
  // Imported here: the definition above is loaded for every command line, this only when migrating.
  const [{ createLogger }, { copyDecisions, copyRecords, copySensors }, { openStore, redactServer }] =
    await Promise.all([
      import('../log.js'),
      import('../store/copy-store.js'),
      import('../store/open-store.js'),
    ]);
  const loaded = await loadFromOptions(options, io);
  const files = withBackend(loaded, 'files');
  existingDataDir(files, options, io);
  const nats = withBackend(loaded, 'nats').config;
  const logger = createLogger({
    level: 'warn',
    format: 'auto',
    stream: logStream(io.stderr),
    isTty: io.stderr.isTTY,
  });
  const started = performance.now();
  const dryRun = options.dryRun === true;
  const copyOptions = {
    dryRun,
    overwriteSensors: options.overwriteSensors === true,
    onProgress: progressPrinter(io, Date.now),
  };

  const source = await openStore(files.config, { dataDir: loaded.dataDir, logger });
  let target: Store | null = null;
  try {
    target = await openStore(nats, { dataDir: loaded.dataDir, logger });
    const sensors = await unavailableSays(copySensors(source, target, copyOptions));
    const decisions = await unavailableSays(copyDecisions(source, target, copyOptions));
    const records = await unavailableSays(copyRecords(source, target, copyOptions));
    const summary = {
      dry_run: dryRun,
      source: { backend: 'files', data_dir: loaded.dataDir },
      target: {
        backend: 'nats',
        servers: nats.nats.servers.map(redactServer),
        stream: nats.nats.stream,
        registry_bucket: nats.nats.registryBucket,
      },
      records: {
        read: records.read,
        copied: records.copied,
        already_present: records.alreadyPresent,
        not_records: records.notRecords,
      },
      sensors: {
        copied: sensors.copied,
        already_present: sensors.alreadyPresent,
        conflicting: sensors.conflicting,
        overwritten: sensors.overwritten,
        removed_in_target: sensors.removedInTarget,
      },
      decisions: {
        copied: decisions.copied,
        already_present: decisions.alreadyPresent,
        left_in_target: decisions.leftInTarget,
        only_in_target: decisions.onlyInTarget,
      },
      seconds: Math.round((performance.now() - started) / 10) / 100,
    };
    if (options.json) writeJson(io.stdout, summary);
    else write(io.stdout, summaryText(summary));
    if (sensors.conflicting.length > 0) {
      // Everything else is copied; the operator decides about these (a later change in NATS wins by default).
      throw new ThreatcolError(
        'SENSOR_EXISTS',
        `${sensors.conflicting.length} sensor(s) already in NATS with different content, left as they are: ` +
          `${sensors.conflicting.join(', ')}. Compare with "threatcol sensor show NAME", then re-run with ` +
          '--overwrite-sensors to replace them with the files store’s version',
      );
    }
    return 0;
  } finally {
    await target?.close();
    await source.close();
  }
}

/** The loaded configuration with `store.backend` set (the source and target ignore the configured one). */
function withBackend(loaded: LoadedConfig, backend: Config['store']['backend']): LoadedConfig {
  return { ...loaded, config: { ...loaded.config, store: { ...loaded.config.store, backend } } };
}

/** NATS unreachable: say what that means for the migration (UNAVAILABLE names the servers). */
async function unavailableSays<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof ThreatcolError && error.code === 'UNAVAILABLE') {
      throw new ThreatcolError(
        'UNAVAILABLE',
        `${error.message.replace(/^the collector cannot store records right now: /, '')}; ` +
          'the migration stopped (run it again when NATS is reachable: what was copied is skipped)',
      );
    }
    throw error;
  }
}

function progressPrinter(io: CliIo, now: () => number): (p: CopyProgress) => void {
  let last = now();
  return (p) => {
    const t = now();
    if (t - last < PROGRESS_EVERY_MS) return;
    last = t;
    write(
      io.stderr,
      p.phase === 'ids'
        ? `threatcol: store migrate: ${p.read} records already in NATS read (to skip them)`
        : `threatcol: store migrate: ${p.read} records read, ${p.copied} copied, ${p.alreadyPresent} already present`,
    );
  };
}

/** The summary `store migrate --json` prints (the part its text says too). */
export interface MigrateSummary {
  dry_run: boolean;
  target: { servers: string[]; stream: string };
  records: { copied: number; already_present: number; not_records: number };
  sensors: {
    copied: string[];
    already_present: string[];
    conflicting: string[];
    overwritten: string[];
    removed_in_target: string[];
  };
  decisions: {
    copied: number;
    already_present: number;
    left_in_target: string[];
    only_in_target: string[];
  };
  seconds: number;
}

/** The first ten names, and how many more. */
function firstTen(names: string[]): string {
  return `${names.slice(0, 10).join(', ')}${names.length > 10 ? ` and ${names.length - 10} more` : ''}`;
}

function summaryText(s: MigrateSummary): string[] {
  const verb = s.dry_run ? 'would copy' : 'copied';
  const lines = [
    `${s.dry_run ? 'Dry run, nothing stored: ' : ''}records ${s.records.copied} ${verb}, ` +
      `${s.records.already_present} already present` +
      `${s.records.not_records > 0 ? `, ${s.records.not_records} skipped (not records: the log names the first)` : ''}; sensors ${s.sensors.copied.length} ${verb}, ` +
      `${s.sensors.already_present.length} already present, ${s.sensors.conflicting.length} conflicting` +
      `${s.sensors.overwritten.length > 0 ? `, ${s.sensors.overwritten.length} overwritten` : ''}` +
      `${s.sensors.removed_in_target.length > 0 ? `, ${s.sensors.removed_in_target.length} left deleted in NATS` : ''}; ` +
      `decisions ${s.decisions.copied} ${verb}, ${s.decisions.already_present} already present` +
      `${s.decisions.left_in_target.length > 0 ? `, ${s.decisions.left_in_target.length} left as they are in NATS` : ''} ` +
      `(${s.seconds} s)`,
    `Target: NATS JetStream at ${s.target.servers.join(', ')}, stream ${s.target.stream}`,
  ];
  if (s.sensors.conflicting.length > 0)
    lines.push(`Conflicting sensors: ${s.sensors.conflicting.join(', ')}`);
  if (s.sensors.removed_in_target.length > 0)
    lines.push(
      `Sensors deleted in NATS since an earlier run, left deleted (the files store's copy is older than the deletion): ${firstTen(s.sensors.removed_in_target)}`,
    );
  if (s.decisions.left_in_target.length > 0)
    lines.push(
      `Decisions NATS holds with other content, left as they are: ${firstTen(s.decisions.left_in_target)}`,
    );
  if (s.decisions.only_in_target.length > 0)
    lines.push(
      `Allow entries and feeds in NATS and not in the files store, left as they are (removed here since an earlier run, or made in NATS): ${firstTen(s.decisions.only_in_target)}`,
    );
  return lines;
}
