// `threatcol systemd-unit [--socket]`: prints (or writes) the shipped systemd units with the ExecStart of this
// installation, so the admin never edits paths by hand.
import { mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { writeFileAtomic } from '../data-dir/file-owner.js';
import { ThreatcolError } from '../errors.js';
import { type CliIo, write } from './io.js';

interface UnitOptions {
  socket?: boolean;
  outputDir?: string;
}

export interface UnitFile {
  name: string;
  text: string;
}

/** The package's own `systemd/` folder (beside `dist/` and `src/`). */
const UNITS_DIR = fileURLToPath(new URL('../../systemd/', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/threatcol', import.meta.url));

export function registerSystemdUnit(
  program: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  program
    .command('systemd-unit')
    .description('print the systemd unit(s) with the ExecStart of this installation')
    .option('--socket', 'the socket-activated variant: threatcol.socket and its service (no capability)')
    .option('--output-dir <dir>', 'write the unit files there (e.g. /etc/systemd/system) instead of printing')
    .action((options: UnitOptions) => run(() => printUnits(options, io)));
}

/** `node /real/path/bin/threatcol serve`, quoted for systemd (the log format is auto: readable in the journal). */
export function execStartFor(nodePath: string = process.execPath, binPath: string = BIN): string {
  return `ExecStart=${[nodePath, realpathSync(binPath), 'serve'].map(quoteArg).join(' ')}`;
}

/** The same program as ExecStart, running `reload` (which signals $MAINPID: no /bin/kill needed). */
export function execReloadFor(execStart: string): string {
  const m = /^ExecStart=(.*) serve(?: .*)?$/.exec(execStart);
  if (!m) throw new ThreatcolError('INTERNAL', `cannot derive ExecReload= from ${execStart}`);
  return `ExecReload=${m[1]} reload`;
}

export function renderUnits(socket: boolean, execStart: string = execStartFor()): UnitFile[] {
  const read = (file: string) => {
    const text = readFileSync(join(UNITS_DIR, file), 'utf8');
    if (!/^ExecStart=/m.test(text) && file.endsWith('.service')) {
      throw new ThreatcolError('INTERNAL', `${file} has no ExecStart line`);
    }
    return text
      .replace(/^ExecStart=.*$/m, () => execStart)
      .replace(/^ExecReload=.*$/m, () => execReloadFor(execStart));
  };
  if (!socket) return [{ name: 'threatcol.service', text: read('threatcol.service') }];
  return [
    { name: 'threatcol.socket', text: read('threatcol.socket') },
    { name: 'threatcol.service', text: read('socket-activated/threatcol.service') },
  ];
}

async function printUnits(options: UnitOptions, io: CliIo): Promise<number> {
  const units = renderUnits(options.socket === true);
  const hidden = [process.execPath, realpathSync(BIN)].filter((p) => /^\/(home|root|run\/user)\//.test(p));
  if (hidden.length > 0) {
    write(
      io.stderr,
      `threatcol: warning: ${hidden.join(' and ')} ${hidden.length === 1 ? 'is' : 'are'} under a home directory, which the unit's ProtectHome=yes hides from the service: install Node and threatcol system-wide (e.g. npm install -g) first`,
    );
  }
  const inTmp = [process.execPath, realpathSync(BIN)].filter((p) => /^\/(var\/)?tmp\//.test(p));
  if (inTmp.length > 0) {
    write(
      io.stderr,
      `threatcol: warning: ${inTmp.join(' and ')} ${inTmp.length === 1 ? 'is' : 'are'} under /tmp, which the unit's PrivateTmp=yes replaces with an empty directory for the service (and which is cleaned at boot): install Node and threatcol outside /tmp (e.g. npm install -g) first`,
    );
  }
  const enable = options.socket ? 'threatcol.socket' : 'threatcol.service';
  if (options.outputDir === undefined) {
    write(io.stdout, units.map((u) => `# ${u.name}\n${u.text}`).join('\n'));
    return 0;
  }
  try {
    mkdirSync(options.outputDir, { recursive: true });
    for (const unit of units) writeFileAtomic(join(options.outputDir, unit.name), unit.text, 0o644, null);
  } catch (error) {
    throw new ThreatcolError(
      'INVALID_ARGUMENT',
      `cannot write to ${options.outputDir}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  write(
    io.stdout,
    [
      ...units.map((u) => `wrote ${join(options.outputDir as string, u.name)}`),
      '',
      'next:',
      // enable --now of the socket refuses while the plain service runs, and leaves its boot link behind.
      ...(options.socket
        ? ['  systemctl disable --now threatcol.service   # if the plain unit ran before']
        : []),
      '  systemctl daemon-reload',
      `  systemctl enable --now ${enable}`,
    ].join('\n'),
  );
  return 0;
}

/** systemd command-line quoting: "…" around words with spaces or quotes; `%` and `$` doubled. */
function quoteArg(arg: string): string {
  const escaped = arg.replaceAll('%', '%%').replaceAll('$', '$$$$');
  if (!/[\s"'\\]/.test(escaped)) return escaped;
  return `"${escaped.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}
