// The shape of a command's reference prose: what commander does not know (behaviour, examples, output,
// exit statuses, fuller option texts). Markdown; rendered into docs/cli.md and the man pages.

export interface CommandManual {
  /** What the command does and how it behaves: the DESCRIPTION of the man page, the body of the section. */
  description: string;
  /** Fuller text per option, by its long flag, where the one line of `--help` is not the whole story. */
  options?: Record<string, string>;
  /** Further topics after the options, each under its own heading (e.g. "Load mode"). */
  sections?: { title: string; body: string }[];
  /** Exit statuses particular to this command; the table of all codes comes from the error catalogue. */
  exitStatus?: string;
  /** Environment variables this command reads beyond THREATCOL_CONFIG and the configuration's. */
  environment?: Record<string, string>;
}
