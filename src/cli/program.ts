// Running one command line through the part of the command tree it reaches (command-table.ts), or its help
// through the outline; the tree's assembly, which whole-program.ts makes whole for the manuals.
import { Command, CommanderError } from 'commander';
import { CATALOGUE, EXIT, isPermissionError, permissionDenied, ThreatcolError } from '../errors.js';
import { type CommandEntry, commandsFor, GROUPS, type Register, type Runner } from './command-table.js';
import { isProgramHelp } from './help-text.js';
import { type CliIo, write } from './io.js';
import { readVersions, versionText } from './version.js';

/** A command's entry with its module loaded. */
export type LoadedCommand = readonly [CommandEntry, Register];

/**
 * The program with the given commands, `run` receiving the chosen command's action and `hint` naming that
 * command's help. All of them make the whole tree (whole-program.ts); a command line, the part it reaches.
 */
export function assembleProgram(
  io: CliIo,
  run: Runner,
  commands: readonly LoadedCommand[],
): { program: Command; hint: () => string } {
  const { program, hint, track } = createRoot(io);
  const groups = new Map<string, Command>();
  for (const [entry, register] of commands) {
    let parent = program;
    if (entry.group) {
      const name = entry.group;
      parent = groups.get(name) ?? program.command(name).description(GROUPS[name]);
      groups.set(name, parent);
    }
    register(parent, io, run);
  }
  // Every top-level command, groups among them, names its subcommand for the hint line.
  for (const cmd of program.commands) cmd.hook('preSubcommand', track);
  return { program, hint };
}

/** The program without its commands: the name, description, version flag and the house's usage errors. */
function createRoot(io: CliIo): {
  program: Command;
  hint: () => string;
  track: (p: Command, s: Command) => void;
} {
  /** The command being parsed, for the hint line of a usage error. */
  let current: Command | null = null;
  const hint = () => `see ${commandPath(current ?? program)} --help`;
  const track = (_parent: Command, sub: Command) => {
    current = sub;
  };
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
    .hook('preSubcommand', track);
  return { program, hint, track };
}

/**
 * The program as its own help shows it, from the outline rendered at build time (generated/help-outline.ts):
 * each top-level command a name, term and description, commander formatting them as for the whole tree.
 * Imported here, not above: the build renders the outline from the tree this module assembles.
 */
export async function outlineProgram(io: CliIo): Promise<{ program: Command; hint: () => string }> {
  const { HELP_OUTLINE } = await import('../generated/help-outline.js');
  const { program, hint } = createRoot(io);
  const terms = new Map(HELP_OUTLINE.map((c) => [c.name, c.term]));
  for (const c of HELP_OUTLINE) program.command(c.name).description(c.description);
  // The stand-ins have no options nor arguments: their terms come from the outline (`help`'s from commander).
  const plain = program.createHelp();
  program.configureHelp({ subcommandTerm: (cmd) => terms.get(cmd.name()) ?? plain.subcommandTerm(cmd) });
  return { program, hint };
}

async function loadCommand(entry: CommandEntry): Promise<LoadedCommand> {
  return [entry, await entry.load()];
}

/** A command line other than `--version` (main.ts answers that without loading this module). */
export async function runProgram(argv: string[], io: CliIo): Promise<number> {
  let pending: Promise<number> | null = null;
  const run: Runner = (action) => {
    pending = action();
  };
  // `threatcol help sensor add` shows `sensor add`'s flags (commander's help command stops at one level).
  const args = argv[0] === 'help' && argv.length > 1 ? [...argv.slice(1), '--help'] : argv;
  // The program's help at a width main.ts has no text for: `threatcol`, `--help`, `-h`, `help`.
  const { program, hint } = isProgramHelp(args)
    ? await outlineProgram(io)
    : assembleProgram(io, run, await Promise.all(commandsFor(args).map(loadCommand)));
  // A bare `threatcol` is a usage error: the command list on stderr, exit 64.
  if (argv.length === 0) {
    io.stderr.write(program.helpInformation());
    return EXIT.USAGE;
  }
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
