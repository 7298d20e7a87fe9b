// Quoting for the generated completion scripts: command, option and value words are checked to need no
// quoting at all; descriptions are single-quoted.
import type { CompletionNode, ValueSource } from './completion-model.js';

/** A word the scripts use unquoted or inside single quotes: a name commander or the schema declared. */
export function safeWord(word: string): string {
  if (!/^[A-Za-z0-9._@+-]+$/.test(word)) throw new Error(`not a plain word for a completion script: ${word}`);
  return word;
}

/** A case pattern for a command path (`'sensor add'`, `''` for the program), or for one of its options. */
export function caseLabel(path: string, option?: string): string {
  const words = path === '' ? [] : path.split(' ');
  words.forEach(safeWord);
  return option === undefined ? `'${path}'` : `'${path}:${safeWord(option)}'`;
}

/** Any text as one single-quoted shell word (bash, zsh and fish alike: `'` as `'\''`, fish: `\'`). */
export function singleQuoted(text: string, shell: 'posix' | 'fish' = 'posix'): string {
  return shell === 'fish' ? `'${text.replace(/[\\']/g, '\\$&')}'` : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The case tables bash and zsh share: which `path:option` words take a value, and the value completions of
 * options and arguments, each rendered by the shell's own `complete` (bash: COMPREPLY, zsh: compadd).
 */
export function valueCaseTables(
  nodes: CompletionNode[],
  complete: (values: ValueSource) => string,
): { valueOptions: string[]; values: string[]; argumentValues: string[] } {
  const valueOptions = nodes.flatMap((node) =>
    node.options
      .filter((o) => o.takesValue)
      .flatMap((o) => o.names.map((name) => caseLabel(node.path, name))),
  );
  const values = nodes.flatMap((node) =>
    node.options
      .filter((o) => o.takesValue && o.values.kind !== 'none')
      .map(
        (o) => `${o.names.map((name) => caseLabel(node.path, name)).join(' | ')}) ${complete(o.values)} ;;`,
      ),
  );
  const argumentValues = nodes
    .filter((node) => node.argument && node.argument.kind !== 'none')
    .map((node) => `${caseLabel(node.path)}) ${complete(node.argument as ValueSource)} ;;`);
  return { valueOptions, values, argumentValues };
}

export function indent(lines: string[], spaces: number): string {
  return lines.map((line) => `${' '.repeat(spaces)}${line}`).join('\n');
}

/**
 * Reads the names from `threatcol sensor list --json` (an array indented by two spaces, so each sensor's
 * fields by four): sensor names are letters, digits, `.`, `_` and `-`, so no JSON parser is needed.
 */
export const SENSOR_NAMES_SED = String.raw`s/^    "name": "\([A-Za-z0-9._-]*\)",\{0,1\}$/\1/p`;
