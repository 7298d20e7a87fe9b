// Reads the commander tree into plain data (commands, arguments, options, defaults, choices) joined with each
// command's reference prose: what the man pages, docs/cli.md and the shell completions are rendered from.
import type { Argument, Command, Option } from 'commander';
import type { CommandManual } from './command-manual.js';

/** Each command's reference prose by command path (text/index.ts MANUALS). */
export type Manuals = Readonly<Record<string, CommandManual>>;

export interface OptionDoc {
  /** As declared: `-n, --lines <n>`. */
  flags: string;
  long: string | undefined;
  short: string | undefined;
  /** The value's placeholder without brackets (`n`, `file`), or undefined for a switch. */
  value: string | undefined;
  /** The one line of `--help`. */
  summary: string;
  /** The reference text: the manual's fuller text for this option, else the summary. */
  text: string;
  /** Commander's default, when the option has one (stated in the text otherwise). */
  defaultValue: string | undefined;
  choices: readonly string[] | undefined;
  mandatory: boolean;
}

export interface ArgumentDoc {
  name: string;
  required: boolean;
  description: string;
  choices: readonly string[] | undefined;
}

export interface CommandDoc {
  /** `['sensor', 'add']`; empty for the program itself. */
  path: string[];
  summary: string;
  /** `threatcol sensor add [options] <name>`. */
  usage: string;
  arguments: ArgumentDoc[];
  options: OptionDoc[];
  subcommands: CommandDoc[];
  manual: CommandManual | undefined;
}

/**
 * `manuals`: the prose (MANUALS) for the man pages and docs/cli.md; the completion passes none, so that
 * `threatcol completion` does not load the reference text.
 */
export function describeProgram(program: Command, manuals: Manuals): CommandDoc {
  return describeCommand(program, [], manuals);
}

function describeCommand(cmd: Command, path: string[], manuals: Manuals): CommandDoc {
  const help = cmd.createHelp();
  const manual = manuals[path.join(' ')];
  return {
    path,
    summary: cmd.description(),
    usage: help.commandUsage(cmd),
    arguments: cmd.registeredArguments.map(describeArgument),
    // visibleOptions: declared order, plus the help (and for the program, version) option commander adds.
    options: help.visibleOptions(cmd).map((option) => describeOption(option, manual)),
    subcommands: cmd.commands.map((sub) => describeCommand(sub, [...path, sub.name()], manuals)),
    manual,
  };
}

function describeArgument(argument: Argument): ArgumentDoc {
  return {
    name: argument.name(),
    required: argument.required,
    description: argument.description,
    choices: argument.argChoices,
  };
}

function describeOption(option: Option, manual: CommandManual | undefined): OptionDoc {
  const value = /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1];
  const long = option.long ?? undefined;
  const def = option.defaultValue as unknown;
  return {
    flags: option.flags,
    long,
    short: option.short ?? undefined,
    value,
    summary: option.description,
    text: (long && manual?.options?.[long]) || option.description,
    defaultValue: def === undefined ? undefined : String(def),
    choices: option.argChoices,
    mandatory: option.mandatory,
  };
}

/** Every command of the tree, parents before their subcommands. */
export function allCommands(doc: CommandDoc): CommandDoc[] {
  return [doc, ...doc.subcommands.flatMap(allCommands)];
}

/** `threatcol sensor add`. */
export function commandName(doc: CommandDoc): string {
  return ['threatcol', ...doc.path].join(' ');
}

/** The commands that have an action: every command without subcommands. */
export function leafCommands(doc: CommandDoc): CommandDoc[] {
  return allCommands(doc).filter((c) => c.subcommands.length === 0);
}

/** The option's reference text, with its choices and commander default when the text does not give them. */
export function optionText(option: OptionDoc): string {
  const trimmed = option.text.trim();
  let text = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  if (!/[.!?]$/.test(text)) text += '.';
  if (option.choices) text += ` One of: ${option.choices.map((c) => `\`${c}\``).join(', ')}.`;
  if (option.defaultValue !== undefined) text += ` Default: \`${option.defaultValue}\`.`;
  if (option.mandatory) text += ' Required.';
  return text;
}

/** The arguments worth a list of their own: those with a description or a fixed set of values. */
export function describedArguments(cmd: CommandDoc): ArgumentDoc[] {
  return cmd.arguments.filter((arg) => arg.description !== '' || arg.choices !== undefined);
}

export function argumentText(arg: ArgumentDoc): string {
  let text = arg.description.charAt(0).toUpperCase() + arg.description.slice(1);
  if (text !== '' && !/[.!?]$/.test(text)) text += '.';
  if (arg.choices) text += ` One of: ${arg.choices.map((c) => `\`${c}\``).join(', ')}.`;
  return text.trim();
}
