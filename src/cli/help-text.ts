// The program's own help (`threatcol`, `--help`, `-h`, `help`) as rendered at build time, at the terminal widths
// where it is what commander prints: a pipe (80 columns) and a terminal wide enough for no line to wrap.

/** A command line that asks for the program's help (a bare `threatcol` too, as a usage error). */
export function isProgramHelp(argv: readonly string[]): boolean {
  return argv.length === 0 || (argv.length === 1 && ['--help', '-h', 'help'].includes(argv[0] as string));
}

/**
 * The help at the width commander takes (stdout's columns on a terminal, else 80, also for the usage error on
 * stderr), or null where commander must wrap it itself (program.ts then prints it from the outline).
 */
export async function preRenderedHelp(
  stdout: { isTTY?: boolean; columns?: number } = process.stdout,
): Promise<string | null> {
  // Imported here: every command line loads this module (main.ts), only the help needs the text.
  const { HELP_TEXT } = await import('../generated/help-outline.js');
  const width = (stdout.isTTY ? stdout.columns : undefined) ?? 80;
  if (width === 80) return HELP_TEXT.at80;
  return width >= HELP_TEXT.wideFrom ? HELP_TEXT.wide : null;
}
