// The command line: answers `--version`, `completion SHELL` and (at most widths) `--help` at once, else runs argv
// through the part of the command tree it names (program.ts) and returns the exit code. Kept small: every command
// line loads this module.
import { EXIT } from '../errors.js';
import { isProgramHelp, preRenderedHelp } from './help-text.js';
import { type CliIo, processIo, write, writeJson } from './io.js';
import { isVersionRequest, readVersions, versionText } from './version.js';

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const version = isVersionRequest(argv);
  if (version) {
    const versions = readVersions();
    if (version.json) writeJson(io.stdout, versions);
    else write(io.stdout, versionText(versions));
    return EXIT.OK;
  }
  // Pre-rendered at build time (npm run docs): a shell that sources it waits for no command tree.
  if (argv.length === 2 && argv[0] === 'completion' && ['bash', 'zsh', 'fish'].includes(argv[1] as string)) {
    const { COMPLETION_SCRIPTS } = await import('../generated/completion-scripts.js');
    io.stdout.write(COMPLETION_SCRIPTS[argv[1] as 'bash' | 'zsh' | 'fish']);
    return EXIT.OK;
  }
  // Pre-rendered at build time too, at the widths where it is what commander prints (help-text.ts).
  if (isProgramHelp(argv)) {
    const text = await preRenderedHelp();
    if (text !== null) {
      // A bare `threatcol` is a usage error: the command list on stderr, exit 64.
      (argv.length === 0 ? io.stderr : io.stdout).write(text);
      return argv.length === 0 ? EXIT.USAGE : EXIT.OK;
    }
  }
  const { runProgram } = await import('./program.js');
  return runProgram(argv, io);
}
