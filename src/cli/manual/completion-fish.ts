// The fish completion script, generated from the completion model: one `complete` line per subcommand,
// option and value set, each guarded by the command path the line typed so far has reached.
import type { CompletionNode, CompletionOption, ValueSource } from './completion-model.js';
import { indent, SENSOR_NAMES_SED, safeWord, singleQuoted } from './completion-words.js';

export function renderFishCompletion(nodes: CompletionNode[]): string {
  const q = (text: string) => singleQuoted(text, 'fish');
  const at = (path: string) => `-n ${q(`__threatcol_at ${q(path)}`)}`;
  const lines: string[] = [];
  for (const node of nodes) {
    for (const sub of node.subcommands) {
      lines.push(`complete -c threatcol ${at(node.path)} -a ${safeWord(sub.name)} -d ${q(sub.summary)}`);
    }
    for (const option of node.options)
      lines.push(`complete -c threatcol ${at(node.path)} ${optionSpec(option)}`);
    if (node.argument && node.argument.kind !== 'none' && node.subcommands.length === 0) {
      lines.push(
        `complete -c threatcol -n ${q(`__threatcol_at ${q(node.path)}; and __threatcol_no_argument`)} ${values(node.argument)}`,
      );
    }
  }
  const valueOptions = nodes.flatMap((node) =>
    node.options
      .filter((o) => o.takesValue)
      .flatMap((o) => o.names.map((name) => q(`${node.path}:${safeWord(name)}`))),
  );
  const subcommandPairs = nodes.flatMap((node) =>
    node.subcommands.map((sub) => q(`${node.path}:${sub.name}`)),
  );
  return `# fish completion for threatcol: generated from its command definitions (threatcol completion fish).

# The command path the words typed so far reach (subcommand names, option values skipped), and the count of
# positional arguments after it.
function __threatcol_walk
    set -l cmdpath ''
    set -l positionals 0
    set -l skip 0
    for word in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
        else if string match -qr -- '^-.' $word
            if not string match -q -- '*=*' $word; and contains -- "$cmdpath:$word" $__threatcol_value_options
                set skip 1
            end
        else if test $positionals = 0; and contains -- "$cmdpath:$word" $__threatcol_subcommands
            set cmdpath (string trim -- "$cmdpath $word")
        else
            set positionals (math $positionals + 1)
        end
    end
    echo $cmdpath
    echo $positionals
end

function __threatcol_at
    test (__threatcol_walk)[1] = "$argv[1]"
end

function __threatcol_no_argument
    test (__threatcol_walk)[2] = 0
end

# Existing sensors' names, from the registry that the --config and --data-dir on the line point at, waiting
# at most $threatcol_completion_timeout seconds (default 5); nothing when it cannot be read. Names are
# letters, digits, '.', '_' and '-', so sed can read them from the JSON.
function __threatcol_sensors
    set -l words (commandline -opc)
    set -l args
    for i in (seq 2 (count $words))
        if contains -- $words[$i] --config --data-dir; and test $i -lt (count $words)
            set -a args $words[$i] $words[(math $i + 1)]
        end
    end
    set -l limit 5
    set -q threatcol_completion_timeout; and set limit $threatcol_completion_timeout
    timeout $limit $words[1] sensor list --json $args 2>/dev/null </dev/null | sed -n ${q(SENSOR_NAMES_SED)}
end

set -g __threatcol_value_options \\
${indent([valueOptions.join(' \\\n    ')], 4)}
set -g __threatcol_subcommands \\
${indent([subcommandPairs.join(' \\\n    ')], 4)}

complete -c threatcol -f
${lines.join('\n')}
`;
}

function optionSpec(option: CompletionOption): string {
  const names = option.names
    .map((name) =>
      name.startsWith('--') ? `-l ${safeWord(name.slice(2))}` : `-s ${safeWord(name.slice(1))}`,
    )
    .join(' ');
  const value = option.takesValue ? ` ${values(option.values)}` : '';
  return `${names} -d ${singleQuoted(option.summary, 'fish')}${value}`;
}

function values(source: ValueSource): string {
  switch (source.kind) {
    case 'words':
      return `-x -a ${singleQuoted(source.words.map(safeWord).join(' '), 'fish')}`;
    case 'files':
      return '-r -F';
    case 'dirs':
      return `-x -a '(__fish_complete_directories)'`;
    case 'sensors':
      return `-x -a '(__threatcol_sensors)'`;
    case 'none':
      return '-x';
  }
}
