// What the shell completions offer at each command path: subcommands, options, and where a value has a fixed
// set (choices, the configuration's enums), is a file or directory, or names an existing sensor.
import type { Command } from 'commander';
import { listConfigKeys } from '../../config/config-keys.js';
import { type CommandDoc, describeProgram, type OptionDoc } from './command-model.js';

export type ValueSource =
  | { kind: 'words'; words: readonly string[] }
  | { kind: 'files' }
  | { kind: 'dirs' }
  | { kind: 'sensors' }
  | { kind: 'none' };

export interface CompletionOption {
  /** `-n` and `--lines`. */
  names: string[];
  summary: string;
  /** A value follows the option (as the next word, or after `=`). */
  takesValue: boolean;
  values: ValueSource;
}

export interface CompletionNode {
  /** `sensor add`; '' for the program. */
  path: string;
  subcommands: { name: string; summary: string }[];
  options: CompletionOption[];
  /** What the first positional argument takes, when the command has one. */
  argument: ValueSource | null;
}

/** Commands whose argument is an existing sensor's name (`sensor add` takes a new one). */
export const SENSOR_NAME_ARGUMENTS = [
  'sensor revoke',
  'sensor rotate',
  'sensor show',
  'sensor set',
  'sensor delete',
];
/** Options that take an existing sensor's name: `send --sensor` is one on the remote collector, not here. */
export const SENSOR_NAME_OPTIONS = [
  'threats tail --sensor',
  'threats stats --sensor',
  'threats search --sensor',
];

/**
 * Fixed value sets that commander does not enforce: `serve --log-level` is checked with the rest of the
 * configuration (a bad value exits 78, which systemd does not restart-loop on), so the set comes from the
 * configuration schema instead of a commander `.choices()`.
 */
export function valueHints(): Record<string, readonly string[]> {
  return {
    'serve --log-level': enumOf('log.level'),
    'serve --log-format': enumOf('log.format'),
    'serve --workers': ['auto'],
  };
}

function enumOf(key: string): readonly string[] {
  const leaf = listConfigKeys().find((l) => l.path.join('.') === key);
  if (!leaf?.schema.enum) throw new Error(`configuration key ${key} has no enum`);
  return leaf.schema.enum;
}

export function completionNodes(program: Command): CompletionNode[] {
  const nodes: CompletionNode[] = [];
  const hints = valueHints();
  const visit = (doc: CommandDoc) => {
    const path = doc.path.join(' ');
    const subcommands = doc.subcommands.map((sub) => ({
      name: sub.path.at(-1) as string,
      summary: sub.summary,
    }));
    // `threatcol help COMMAND`, which commander adds to the program.
    if (path === '') subcommands.push({ name: 'help', summary: 'show the help of a command' });
    const first = doc.arguments[0];
    nodes.push({
      path,
      subcommands,
      options: doc.options.map((option) => completionOption(path, option, hints)),
      argument: !first
        ? null
        : first.choices
          ? { kind: 'words', words: first.choices }
          : SENSOR_NAME_ARGUMENTS.includes(path)
            ? { kind: 'sensors' }
            : { kind: 'none' },
    });
    doc.subcommands.forEach(visit);
  };
  visit(describeProgram(program, {}));
  // `threatcol help <TAB>` offers the commands.
  const root = nodes[0] as CompletionNode;
  nodes.push({
    path: 'help',
    subcommands: root.subcommands.filter((s) => s.name !== 'help'),
    options: [],
    argument: null,
  });
  return nodes;
}

function completionOption(
  path: string,
  option: OptionDoc,
  hints: Record<string, readonly string[]>,
): CompletionOption {
  const names = [option.short, option.long].filter((n): n is string => n !== undefined);
  const key = `${path} ${option.long}`;
  const hint = hints[key];
  let values: ValueSource = { kind: 'none' };
  if (option.choices) values = { kind: 'words', words: option.choices };
  else if (hint) values = { kind: 'words', words: hint };
  else if (SENSOR_NAME_OPTIONS.includes(key)) values = { kind: 'sensors' };
  else if (option.value === 'file') values = { kind: 'files' };
  else if (option.value === 'dir') values = { kind: 'dirs' };
  return { names, summary: option.summary, takesValue: option.value !== undefined, values };
}
