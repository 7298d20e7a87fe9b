// `threatcol completion bash|zsh|fish`: prints the shell completion script, for installations from source
// (the Debian package installs the bash one).
import { Argument, type Command } from 'commander';
import type { CliIo } from './io.js';
import type { Shell } from './manual/render-completion.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const satisfies readonly Shell[];

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
        // Loaded here: every other command starts without the renderers and the reference prose.
        const { renderCompletion } = await import('./manual/render-completion.js');
        // The program's whole tree, which this command belongs to.
        io.stdout.write(renderCompletion(program, shell));
        return 0;
      }),
    );
}
