// `threatcol completion bash|zsh|fish`: prints the shell completion script, for installations from source
// (the Debian package installs the bash one).
import { Argument, type Command } from 'commander';
import type { CliIo } from './io.js';
import { renderCompletion, SHELLS, type Shell } from './manual/render-completion.js';

export function registerCompletion(
  program: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  program
    .command('completion')
    .description('print the shell completion script (source <(threatcol completion bash))')
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(SHELLS))
    .action((shell: Shell) =>
      run(async () => {
        // The program's whole tree, which this command belongs to.
        io.stdout.write(renderCompletion(program, shell));
        return 0;
      }),
    );
}
