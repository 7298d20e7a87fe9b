// The zsh completion script (#compdef), generated from the completion model: the same walk as bash's, with
// the commands' and options' descriptions shown beside them.
import type { CompletionNode, ValueSource } from './completion-model.js';
import {
  caseLabel,
  indent,
  SENSOR_NAMES_SED,
  safeWord,
  singleQuoted,
  valueCaseTables,
} from './completion-words.js';

export function renderZshCompletion(nodes: CompletionNode[]): string {
  const described = (items: { name: string; summary: string }[]) =>
    items.map((item) => singleQuoted(`${item.name}:${item.summary.replaceAll(':', '\\:')}`)).join(' ');
  const subcommands = nodes
    .filter((node) => node.subcommands.length > 0)
    .map((node) => `${caseLabel(node.path)}) items=(${described(node.subcommands)}) ;;`);
  const options = nodes.map(
    (node) =>
      `${caseLabel(node.path)}) items=(${described(node.options.flatMap((o) => o.names.map((name) => ({ name, summary: o.summary }))))}) ;;`,
  );
  const { valueOptions, values, argumentValues } = valueCaseTables(nodes, add);
  return `#compdef threatcol
# zsh completion for threatcol: generated from its command definitions (threatcol completion zsh).

# Existing sensors' names, from the registry that the --config and --data-dir on the line point at, waiting
# at most $threatcol_completion_timeout seconds (default 5); nothing when it cannot be read. Names are
# letters, digits, '.', '_' and '-', so sed can read them from the JSON.
_threatcol_sensors() {
  local -a args names
  local i
  for ((i = 2; i < CURRENT; i++)); do
    case $words[i] in
      --config | --data-dir) args+=("$words[i]" "$words[i + 1]") ;;
    esac
  done
  names=(\${(f)"$(timeout "\${threatcol_completion_timeout:-5}" "$words[1]" sensor list --json "\${args[@]}" 2>/dev/null </dev/null |
    sed -n '${SENSOR_NAMES_SED}')"})
  compadd -a names
}

# Does option $2 of command $1 take a value?
_threatcol_takes_value() {
  case $1:$2 in
${indent([`${valueOptions.join(' | ')}) return 0 ;;`], 4)}
  esac
  return 1
}

_threatcol_subcommands() {
  local -a items
  case $1 in
${indent(subcommands, 4)}
  esac
  (( $#items )) && _describe -t commands command items
}

_threatcol_is_subcommand() {
  local -a items
  case $1 in
${indent(subcommands, 4)}
  esac
  (( \${items[(I)$2:*]} ))
}

_threatcol_options() {
  local -a items
  case $1 in
${indent(options, 4)}
  esac
  _describe -t options option items
}

_threatcol_values() {
  case $1:$2 in
${indent(values, 4)}
  esac
}

_threatcol_argument() {
  case $1 in
${indent(argumentValues, 4)}
  esac
}

_threatcol() {
  local cmdpath= word opt= i positionals=0 cur=$words[CURRENT] prev=$words[CURRENT-1]
  # The command path: subcommand names, skipping option values; other words are positional arguments.
  for ((i = 2; i < CURRENT; i++)); do
    word=$words[i]
    if [[ $word == -?* ]]; then
      [[ $word != *=* ]] && _threatcol_takes_value "$cmdpath" "$word" && ((i++))
    elif (( positionals == 0 )) && _threatcol_is_subcommand "$cmdpath" "$word"; then
      cmdpath=\${cmdpath:+$cmdpath }$word
    else
      ((positionals++))
    fi
  done
  if [[ $cur == --*=* ]]; then
    opt=\${cur%%=*}
    compset -P '*='
  elif [[ $prev == -?* ]]; then
    opt=$prev
  fi
  if [[ -n $opt ]] && _threatcol_takes_value "$cmdpath" "$opt"; then
    _threatcol_values "$cmdpath" "$opt"
  elif [[ $cur == -* ]]; then
    _threatcol_options "$cmdpath"
  elif ! _threatcol_subcommands "$cmdpath" && (( positionals == 0 )); then
    _threatcol_argument "$cmdpath"
  fi
}

# Autoloaded from $fpath, this file is the completion function's body; sourced, it registers it.
if [[ $funcstack[1] == _threatcol ]]; then
  _threatcol "$@"
else
  compdef _threatcol threatcol
fi
`;
}

function add(values: ValueSource): string {
  switch (values.kind) {
    case 'words':
      return `compadd -- ${values.words.map(safeWord).join(' ')}`;
    case 'files':
      return '_files';
    case 'dirs':
      return '_files -/';
    case 'sensors':
      return '_threatcol_sensors';
    case 'none':
      return ':';
  }
}
