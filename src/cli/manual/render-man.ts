// Renders the man pages, section 8, from the command tree: threatcol(8) and one page per top-level command
// (a parent such as `sensor` carries all its subcommands).
import type { Command } from 'commander';
import {
  argumentText,
  type CommandDoc,
  commandName,
  describedArguments,
  describeProgram,
  type OptionDoc,
  optionText,
} from './command-model.js';
import {
  baseEnvironmentEntries,
  CONFIG_ENVIRONMENT_NOTE,
  configEnvironmentEntries,
  type Entry,
  exitStatusEntries,
  fileEntries,
} from './common-sections.js';
import { escapeText, inlineToRoff, quoteArg } from './roff.js';
import { entriesToRoff, indentedProse, proseToRoff } from './roff-blocks.js';
import { MANUALS } from './text/index.js';

export interface ManPage {
  file: string;
  text: string;
}

export interface ManMeta {
  version: string;
  /** The page date, `YYYY-MM-DD` (the build's, so that two builds of one commit give the same pages). */
  date: string;
}

export function renderManPages(program: Command, meta: ManMeta): ManPage[] {
  const root = describeProgram(program, MANUALS);
  const pages = [
    renderRootPage(root, meta),
    ...root.subcommands.map((cmd) => renderCommandPage(cmd, root, meta)),
  ];
  return pages.map(({ file, lines }) => ({ file, text: `${lines.join('\n')}\n` }));
}

/** `threatcol-sensor` for `sensor`; `threatcol` for the program. */
export function pageName(doc: CommandDoc): string {
  return ['threatcol', ...doc.path].join('-');
}

function header(name: string, meta: ManMeta): string[] {
  return [
    `.\\" ${name}(8): generated from threatcol's command definitions (src/cli/manual); do not edit.`,
    `.TH ${escapeText(name.toUpperCase())} 8 ${quoteArg(meta.date)} ${quoteArg(`threatcol ${meta.version}`)} "System Administration"`,
    // No hyphenation, no justification: options and paths must stay whole and copyable.
    '.nh',
    '.ad l',
  ];
}

function renderRootPage(root: CommandDoc, meta: ManMeta): { file: string; lines: string[] } {
  const lines = [
    ...header('threatcol', meta),
    '.SH NAME',
    `threatcol \\- ${escapeText(asciiPunctuation(firstLower(root.summary)))}`,
    '.SH SYNOPSIS',
    '.PP',
    '\\fBthreatcol\\fR \\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]',
    '.br',
    '\\fBthreatcol \\-\\-version\\fR [\\fB\\-\\-json\\fR]',
    '.br',
    '\\fBthreatcol help\\fR \\fIcommand\\fR [\\fIsubcommand\\fR]',
    '.SH DESCRIPTION',
    ...proseToRoff(root.manual?.description ?? root.summary),
    '.SH COMMANDS',
    ...root.subcommands.flatMap((cmd) =>
      (cmd.subcommands.length > 0 ? cmd.subcommands : [cmd]).flatMap((leaf) => [
        '.TP',
        `\\fB${escapeText(commandName(leaf))}\\fR`,
        `${escapeText(leaf.summary)}; see \\fB${escapeText(pageName(cmd))}\\fR(8).`,
      ]),
    ),
    '.SH OPTIONS',
    ...optionsToRoff(root.options),
    ...commonTail(root, root, true),
  ];
  return { file: 'threatcol.8', lines };
}

function renderCommandPage(cmd: CommandDoc, root: CommandDoc, meta: ManMeta) {
  const name = pageName(cmd);
  const leaves = cmd.subcommands.length > 0 ? cmd.subcommands : [cmd];
  const lines = [
    ...header(name, meta),
    '.SH NAME',
    `${escapeText(name)} \\- ${escapeText(asciiPunctuation(cmd.summary))}`,
    '.SH SYNOPSIS',
    ...leaves.flatMap((leaf) => ['.PP', synopsis(leaf)]),
    '.SH DESCRIPTION',
    ...proseToRoff(cmd.manual?.description ?? `${firstUpper(cmd.summary)}.`),
  ];
  if (cmd.subcommands.length === 0) {
    if (describedArguments(cmd).length > 0) lines.push('.SH ARGUMENTS', ...argumentsToRoff(cmd));
    lines.push('.SH OPTIONS', ...optionsToRoff(cmd.options));
    for (const section of cmd.manual?.sections ?? []) {
      lines.push(
        `.SH ${quoteArg(inlineToRoff(upperOutsideCode(section.title)))}`,
        ...proseToRoff(section.body),
      );
    }
  } else {
    lines.push('.SH COMMANDS', ...cmd.subcommands.flatMap(subcommandToRoff));
  }
  lines.push(...commonTail(cmd, root, cmd.path[0] === 'serve'));
  return { file: `${name}.8`, lines };
}

/** One subcommand of a parent's page: its own subsection with description, options and further topics. */
function subcommandToRoff(sub: CommandDoc): string[] {
  const out = [
    `.SS ${quoteArg(synopsis(sub, false))}`,
    ...proseToRoff(sub.manual?.description ?? sub.summary),
  ];
  if (describedArguments(sub).length > 0)
    out.push('.PP', '\\fBArguments\\fR', '.RS 4', ...argumentsToRoff(sub), '.RE');
  out.push('.PP', '\\fBOptions\\fR', '.RS 4', ...optionsToRoff(sub.options), '.RE');
  for (const section of sub.manual?.sections ?? []) {
    out.push('.PP', `\\fB${inlineToRoff(section.title)}\\fR`, ...proseToRoff(section.body));
  }
  if (sub.manual?.exitStatus) out.push('.PP', '\\fBExit status.\\fR', ...proseToRoff(sub.manual.exitStatus));
  return out;
}

/** `\fBthreatcol sensor add\fR [\fB\-\-json\fR] ... \fIname\fR`; without options when `withOptions` is false. */
function synopsis(cmd: CommandDoc, withOptions = true): string {
  const parts = [`\\fB${escapeText(commandName(cmd))}\\fR`];
  if (withOptions) {
    for (const option of cmd.options) {
      const flag = `\\fB${escapeText(option.long ?? option.short ?? option.flags)}\\fR`;
      const value = option.value === undefined ? '' : ` \\fI${escapeText(option.value)}\\fR`;
      parts.push(option.mandatory ? `${flag}${value}` : `[${flag}${value}]`);
    }
  }
  for (const arg of cmd.arguments) {
    const name = `\\fI${escapeText(arg.choices ? arg.choices.join('|') : arg.name)}\\fR`;
    parts.push(arg.required ? name : `[${name}]`);
  }
  return parts.join(' ');
}

function argumentsToRoff(cmd: CommandDoc): string[] {
  return describedArguments(cmd).flatMap((arg) => [
    '.TP',
    `\\fI${escapeText(arg.name)}\\fR`,
    ...indentedProse(argumentText(arg)),
  ]);
}

function optionsToRoff(options: OptionDoc[]): string[] {
  return options.flatMap((option) => {
    const flags = option.flags
      .split(/,\s*/)
      .map((flag) => {
        const [name, ...value] = flag.split(' ');
        const shown = value.join(' ').replace(/^[<[]|[>\]]$/g, '');
        return `\\fB${escapeText(name ?? '')}\\fR${shown ? ` \\fI${escapeText(shown)}\\fR` : ''}`;
      })
      .join(', ');
    return ['.TP', flags, ...indentedProse(optionText(option))];
  });
}

/** EXIT STATUS, ENVIRONMENT, FILES and SEE ALSO. `allEnvironment`: list every configuration variable. */
function commonTail(cmd: CommandDoc, root: CommandDoc, allEnvironment: boolean): string[] {
  const leaves = cmd.subcommands.length > 0 ? cmd.subcommands : [cmd];
  const own =
    cmd.path.length === 0 ? [] : leaves.flatMap((leaf) => Object.entries(leaf.manual?.environment ?? {}));
  const environment: Entry[] = [
    ...baseEnvironmentEntries(),
    ...own.map(([term, text]) => ({ term, text })),
    ...(allEnvironment
      ? configEnvironmentEntries()
      : [{ term: 'THREATCOL_*', text: 'every configuration key; see threatcol(8).' }]),
  ];
  const seeAlso = root.subcommands
    .filter((other) => other !== cmd)
    .map((other) => `\\fB${escapeText(pageName(other))}\\fR(8)`);
  if (cmd.path.length > 0) seeAlso.unshift('\\fBthreatcol\\fR(8)');
  return [
    '.SH "EXIT STATUS"',
    ...(cmd.subcommands.length === 0 && cmd.manual?.exitStatus ? proseToRoff(cmd.manual.exitStatus) : []),
    '.PP',
    'A command exits with the status of its error code; the message on standard error is',
    '\\fBthreatcol: \\fICODE\\fB: \\fImessage\\fR.',
    ...entriesToRoff(exitStatusEntries()),
    '.SH ENVIRONMENT',
    ...proseToRoff(CONFIG_ENVIRONMENT_NOTE),
    ...entriesToRoff(dedupe(environment)),
    '.SH FILES',
    ...entriesToRoff(fileEntries()),
    '.SH "SEE ALSO"',
    `${seeAlso.join(',\n')},`,
    '\\fBsystemctl\\fR(1), \\fBjournalctl\\fR(1)',
  ];
}

function dedupe(entries: Entry[]): Entry[] {
  const seen = new Set<string>();
  return entries.filter((entry) => !seen.has(entry.term) && seen.add(entry.term));
}

/** A section title in capitals, as man(7) has them, but `code` as written: `--workers` is not `--WORKERS`. */
function upperOutsideCode(title: string): string {
  return title
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith('`') ? part : part.toUpperCase()))
    .join('');
}

/**
 * The NAME line in ASCII: mandb and whatis read it raw, so a `\[u2019]` would show as such in `apropos`.
 */
function asciiPunctuation(text: string): string {
  return text
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201C\u201D]/g, '"')
    .replace(/\u2026/g, '...');
}

function firstLower(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1).replace(/\.$/, '');
}

function firstUpper(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
