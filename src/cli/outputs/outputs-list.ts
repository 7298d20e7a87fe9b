// `threatcol outputs list`: every output's state, position, lag, last success and error, dead letters; from
// the running daemon when it answers (since it started), else from the cursor files (state "stopped" when no
// daemon is there, "unknown" when one did not answer in time).
import type { Command } from 'commander';
import type { OutputReport } from '../../outputs/start-outputs.js';
import { tokenRefused } from '../admin-get.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write, writeJson } from '../io.js';
import { formatTable } from '../table.js';
import { fetchDaemonOutputs } from './daemon-outputs.js';

interface ListOptions extends CommonOptions {
  json?: boolean;
  adminListen?: string;
}

export function registerOutputsList(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('list')
      .description('list outputs: state, lag, last success, last error, dead letters')
      .option('--json', 'print {"source", "daemon", "outputs": [...]}')
      .option('--admin-listen <host:port>', 'admin listener of the running daemon (default: admin.listen)'),
  ).action((options: ListOptions) => run(() => listOutputs(options, io)));
}

export async function listOutputs(options: ListOptions, io: CliIo): Promise<number> {
  const loaded = await loadFromOptions(options, io, { 'admin.listen': options.adminListen });
  // Imported here: the definition above is loaded for every command line.
  const { countDeadLetters } = await import('../../outputs/dead-letter.js');
  const daemon = await fetchDaemonOutputs(loaded);
  // A running daemon that refused the token: its outputs' states are its own, not the files' "stopped".
  if (daemon.kind === 'refused') throw tokenRefused(loaded);
  const fromDaemon = daemon.kind === 'answered';
  let reports: OutputReport[];
  if (daemon.kind === 'answered') {
    reports = daemon.outputs;
  } else {
    // A daemon that did not answer in time may well be running its outputs: what they do is not known.
    const idle = daemon.kind === 'no-answer' ? 'unknown' : 'stopped';
    const positions = await withStore(loaded, io, (store) => store.outputs.list().catch(() => []));
    const names = new Set([...Object.keys(loaded.config.outputs), ...positions.map((p) => p.name)]);
    reports = [...names].sort().map((name) => {
      const output = loaded.config.outputs[name];
      return {
        name,
        type: output?.type ?? '-',
        state: output?.enabled === false ? 'disabled' : idle,
        lastSuccessAt: null,
        lastError: null,
        lastErrorAt: null,
        failingSince: null,
        recordsSent: 0,
        batches: 0,
        retries: 0,
        deadLetters: 0,
        position: positions.find((p) => p.name === name) ?? null,
        warning: null,
      } as unknown as OutputReport;
    });
  }
  const rows = reports.map((r) => ({
    ...r,
    configured: Object.hasOwn(loaded.config.outputs, r.name),
    deadLetterFile: countDeadLetters(loaded.dataDir, r.name),
  }));
  if (options.json) {
    writeJson(io.stdout, {
      source: fromDaemon ? 'daemon' : 'files',
      daemon: daemon.kind === 'no-answer' ? `no answer in ${daemon.seconds} s` : daemon.kind,
      outputs: rows,
    });
    return 0;
  }
  if (rows.length === 0) {
    write(
      io.stdout,
      'No outputs configured (outputs in the configuration; see docs/operations.md "Outputs").',
    );
    return 0;
  }
  write(
    io.stdout,
    formatTable(
      ['NAME', 'TYPE', 'STATE', 'LAG', 'LAG AGE', 'LAST SUCCESS', 'DEAD', 'SKIPPED', 'LAST ERROR'],
      rows.map((r) => [
        r.name,
        r.type,
        !r.configured
          ? 'removed (position kept)'
          : daemon.kind === 'no-answer' && r.state !== 'disabled'
            ? `unknown (${daemon.text})`
            : r.state,
        String(r.position?.lagRecords ?? '-'),
        r.position ? `${r.position.lagSeconds}s` : '-',
        r.lastSuccessAt ?? (fromDaemon ? 'none since start' : '-'),
        String(r.deadLetterFile),
        String(r.position?.skippedRecords ?? 0),
        lastErrorText(r),
      ]),
    ),
  );
  if (daemon.kind === 'none')
    write(io.stdout, '(no daemon answered on the admin listener: positions from the cursor files)');
  if (daemon.kind === 'no-answer') {
    write(
      io.stdout,
      `(the collector did not answer on its admin listener in ${daemon.seconds} s: positions from the cursor files, states unknown)`,
    );
  }
  return 0;
}

/**
 * The last error with its time; once a batch was delivered after it, marked "since recovered" (it stays shown:
 * an output that fails now and then is worth seeing). The daemon keeps both since it started.
 */
function lastErrorText(r: Pick<OutputReport, 'lastError' | 'lastErrorAt' | 'lastSuccessAt'>): string {
  if (r.lastError === null) return '-';
  const at = r.lastErrorAt === null ? '' : `${r.lastErrorAt}: `;
  const recovered =
    r.lastErrorAt !== null &&
    r.lastSuccessAt !== null &&
    Date.parse(r.lastSuccessAt) > Date.parse(r.lastErrorAt);
  return `${at}${r.lastError}${recovered ? ' (since recovered)' : ''}`;
}
