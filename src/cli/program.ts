// The command tree (buildProgram, which the manual, completion and man pages are rendered from) and running one
// command line through it. Each command's definition is light; what a command runs, it imports when it runs.
import { Command, CommanderError } from 'commander';
import { CATALOGUE, EXIT, isPermissionError, permissionDenied, ThreatcolError } from '../errors.js';
import { registerCheck } from './check.js';
import { registerCompletion } from './completion.js';
import { type CliIo, processIo, write } from './io.js';
import { registerOutputsDeadLetter } from './outputs/outputs-dead-letter.js';
import { registerOutputsForget } from './outputs/outputs-forget.js';
import { registerOutputsList } from './outputs/outputs-list.js';
import { registerOutputsReplay } from './outputs/outputs-replay.js';
import { registerOutputsTest } from './outputs/outputs-test.js';
import { registerReload } from './reload.js';
import { registerSend } from './send.js';
import { registerSensorAdd } from './sensor/sensor-add.js';
import { registerSensorDelete } from './sensor/sensor-delete.js';
import { registerSensorList } from './sensor/sensor-list.js';
import { registerSensorRevoke } from './sensor/sensor-revoke.js';
import { registerSensorRotate } from './sensor/sensor-rotate.js';
import { registerSensorSet } from './sensor/sensor-set.js';
import { registerSensorShow } from './sensor/sensor-show.js';
import { registerServe } from './serve.js';
import { registerStoreMigrate } from './store-migrate.js';
import { registerSystemdUnit } from './systemd-unit.js';
import { registerThreatsSearch } from './threats/threats-search.js';
import { registerThreatsStats } from './threats/threats-stats.js';
import { registerThreatsTail } from './threats/threats-tail.js';
import { readVersions, versionText } from './version.js';

type Runner = (action: () => Promise<number>) => void;

/**
 * The whole command tree, as `main` parses it, without parsing or running anything: for the man pages,
 * docs/cli.md and the shell completion, which are generated from it.
 */
export function buildProgram(io: CliIo = processIo()): Command {
  return assembleProgram(io, () => {}).program;
}

/** The tree, with `run` receiving the chosen command's action and `hint` naming that command's help. */
function assembleProgram(io: CliIo, run: Runner): { program: Command; hint: () => string } {
  /** The command being parsed, for the hint line of a usage error. */
  let current: Command | null = null;
  const hint = () => `see ${commandPath(current ?? program)} --help`;
  const program = new Command('threatcol')
    .description('Threat-report collector: firewalls and sensors POST detections over HTTPS.')
    .version(
      versionText(readVersions()),
      '-V, --version',
      'print the versions (also -v or `threatcol version`; with --json: as JSON)',
    )
    .exitOverride()
    // Subcommands created below inherit this output (and exitOverride): one place for every command.
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // `error: missing required argument 'name'` -> the house format and one hint line, no help dump.
      outputError: (s, writeErr) =>
        writeErr(`threatcol: USAGE: ${s.replace(/^error: /, '').trim()}\n${hint()}\n`),
    })
    .hook('preSubcommand', (_parent, sub) => {
      current = sub;
    });
  registerServe(program, io, run);
  registerCheck(program, io, run);
  registerReload(program, io, run);
  registerSystemdUnit(program, io, run);
  // Groups: the loop at the end hooks every top-level command, these two among them.
  const sensor = program.command('sensor').description('issue, list, change, revoke and delete sensor keys');
  registerSensorAdd(sensor, io, run);
  registerSensorList(sensor, io, run);
  registerSensorRevoke(sensor, io, run);
  registerSensorRotate(sensor, io, run);
  registerSensorShow(sensor, io, run);
  registerSensorSet(sensor, io, run);
  registerSensorDelete(sensor, io, run);
  registerThreatsTail(program, io, run);
  registerThreatsStats(program, io, run);
  registerThreatsSearch(program, io, run);
  registerSend(program, io, run);
  const outputs = program
    .command('outputs')
    .description('where records are forwarded: list, test, replay, forget, dead letters');
  registerOutputsList(outputs, io, run);
  registerOutputsTest(outputs, io, run);
  registerOutputsReplay(outputs, io, run);
  registerOutputsForget(outputs, io, run);
  registerOutputsDeadLetter(outputs, io, run);
  registerStoreMigrate(program, io, run);
  registerCompletion(program, io, run);
  for (const cmd of program.commands) {
    cmd.hook('preSubcommand', (_parent, sub) => {
      current = sub;
    });
  }
  return { program, hint };
}

/** A command line other than `--version` (main.ts answers that without loading this module). */
export async function runProgram(argv: string[], io: CliIo): Promise<number> {
  let pending: Promise<number> | null = null;
  const { program, hint } = assembleProgram(io, (action) => {
    pending = action();
  });
  // A bare `threatcol` is a usage error: the command list on stderr, exit 64.
  if (argv.length === 0) {
    io.stderr.write(program.helpInformation());
    return EXIT.USAGE;
  }
  // `threatcol help sensor add` shows `sensor add`'s flags (commander's help command stops at one level).
  const args = argv[0] === 'help' && argv.length > 1 ? [...argv.slice(1), '--help'] : argv;
  try {
    await program.parseAsync(args, { from: 'user' });
    if (pending === null) return EXIT.OK;
    return await pending;
  } catch (error) {
    const code = reportError(error, io);
    if (error instanceof ThreatcolError && error.code === 'USAGE') write(io.stderr, hint());
    return code;
  }
}

/** `threatcol sensor add` for the `add` command. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

export function reportError(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.OK;
    // `threatcol sensor` without a subcommand: commander shows the list as an error (exit code 1).
    if (error.code === 'commander.help') return error.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    return EXIT.USAGE;
  }
  if (error instanceof ThreatcolError) {
    write(io.stderr, `threatcol: ${error.code}: ${error.message}`);
    return CATALOGUE[error.code].exit;
  }
  // A permission problem is the operator's to fix, never an internal error with a stack.
  if (isPermissionError(error)) return reportError(permissionDenied(error), io);
  write(io.stderr, `threatcol: INTERNAL: ${(error as Error)?.stack ?? String(error)}`);
  return EXIT.SOFTWARE;
}
