// `threatcol reload`: what `systemctl reload threatcol` runs (ExecReload=). It checks the configuration the
// daemon is about to read and sends it SIGHUP itself, so reload needs no /bin/kill (procps is not in minbase).
import type { Command } from 'commander';
import { ThreatcolError } from '../errors.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from './common-options.js';
import { type CliIo, write } from './io.js';

interface ReloadOptions extends CommonOptions {
  pid?: string;
}

export function registerReload(
  program: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    program
      .command('reload')
      .description('make the running daemon re-read its configuration, sensors and certificate (SIGHUP)')
      .option(
        '--pid <pid>',
        "the daemon's process id (default: $MAINPID, which systemd sets for ExecReload=)",
      ),
  ).action((options: ReloadOptions) => run(() => reload(options, io)));
}

export async function reload(options: ReloadOptions, io: CliIo): Promise<number> {
  const pid = daemonPid(options.pid ?? io.env.MAINPID);
  // The daemon is signalled either way: it keeps its running configuration when the file is invalid, and
  // says so in its log and status; the exit status makes `systemctl reload` fail with the same reason.
  let invalid: ThreatcolError | null = null;
  try {
    await loadFromOptions(options, io);
  } catch (error) {
    if (!(error instanceof ThreatcolError)) throw error;
    invalid = error;
  }
  try {
    process.kill(pid, 'SIGHUP');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH')
      throw new ThreatcolError('CONNECTION_FAILED', `no process ${pid}: is threatcol running?`);
    if (code === 'EPERM') {
      throw new ThreatcolError(
        'PERMISSION_DENIED',
        `cannot signal process ${pid}: run as root or as the service user (sudo -u threatcol threatcol reload)`,
      );
    }
    throw error;
  }
  if (invalid) {
    write(io.stderr, `threatcol: the daemon keeps its running configuration: the file is not usable`);
    throw invalid;
  }
  return 0;
}

function daemonPid(value: string | undefined): number {
  if (value === undefined || value === '') {
    throw new ThreatcolError(
      'USAGE',
      'which daemon? under systemd run `systemctl reload threatcol`; otherwise give --pid',
    );
  }
  if (!/^[1-9]\d*$/.test(value))
    throw new ThreatcolError('USAGE', `--pid must be a process id, not "${value}"`);
  return Number(value);
}
