// The bash completion script, generated from the completion model: a walk over the words typed so far finds
// the command path, then case tables say which subcommands, options and values fit there.
import type { CompletionNode, ValueSource } from './completion-model.js';
import { caseLabel, indent, SENSOR_NAMES_SED, safeWord, valueCaseTables } from './completion-words.js';

export function renderBashCompletion(nodes: CompletionNode[]): string {
  const words = (list: string[]) => `echo '${list.map(safeWord).join(' ')}'`;
  const subcommands = nodes
    .filter((node) => node.subcommands.length > 0)
    .map((node) => `${caseLabel(node.path)}) ${words(node.subcommands.map((s) => s.name))} ;;`);
  const options = nodes.map(
    (node) => `${caseLabel(node.path)}) ${words(node.options.flatMap((o) => o.names))} ;;`,
  );
  const { valueOptions, values, argumentValues } = valueCaseTables(nodes, reply);
  return `# bash completion for threatcol: generated from its command definitions (threatcol completion bash).

# Existing sensors' names, from the registry that the --config and --data-dir on the line point at, waiting
# at most $threatcol_completion_timeout seconds (default 5); nothing when it cannot be read. Names are
# letters, digits, '.', '_' and '-', so sed can read them from the JSON.
_threatcol_sensors() {
  local -a args=()
  local i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case \${COMP_WORDS[i]} in
      --config | --data-dir) args+=("\${COMP_WORDS[i]}" "\${COMP_WORDS[i + 1]}") ;;
    esac
  done
  timeout "\${threatcol_completion_timeout:-5}" "\${COMP_WORDS[0]}" sensor list --json "\${args[@]}" 2>/dev/null </dev/null |
    sed -n '${SENSOR_NAMES_SED}'
}

_threatcol_subcommands() {
  case $1 in
${indent(subcommands, 4)}
  esac
}

_threatcol_options() {
  case $1 in
${indent(options, 4)}
  esac
}

# Does option $2 of command $1 take a value?
_threatcol_takes_value() {
  case $1:$2 in
${indent([`${valueOptions.join(' | ')}) return 0 ;;`], 4)}
  esac
  return 1
}

# Fills COMPREPLY with the values of option $2 of command $1 that start with $cur.
_threatcol_values() {
  case $1:$2 in
${indent(values, 4)}
  esac
}

# Fills COMPREPLY with the values of command $1's argument that start with $cur.
_threatcol_argument() {
  case $1 in
${indent(argumentValues, 4)}
  esac
}

_threatcol_words() {
  mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
}

_threatcol() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD - 1]}
  local cmdpath= word opt= i positionals=0
  COMPREPLY=()
  # The command path: subcommand names, skipping option values; other words are positional arguments.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    if [[ $word == -?* ]]; then
      _threatcol_takes_value "$cmdpath" "$word" && ((i++))
    elif [[ $word == = ]]; then
      : # bash splits --opt=value at '=': the option has already skipped its value
    elif [[ $positionals -eq 0 && " $(_threatcol_subcommands "$cmdpath") " == *" $word "* ]]; then
      cmdpath=\${cmdpath:+$cmdpath }$word
    else
      ((positionals++))
    fi
  done
  # A value being typed: --opt VALUE, --opt=VALUE, or --opt= (bash makes '=' a word of its own).
  if [[ $cur == = ]]; then
    cur= opt=$prev
  elif [[ $prev == = && $COMP_CWORD -ge 2 ]]; then
    opt=\${COMP_WORDS[COMP_CWORD - 2]}
  elif [[ $prev == -?* ]]; then
    opt=$prev
  fi
  if [[ -n $opt ]] && _threatcol_takes_value "$cmdpath" "$opt"; then
    _threatcol_values "$cmdpath" "$opt"
  elif [[ $cur == -* ]]; then
    _threatcol_words "$(_threatcol_options "$cmdpath")"
  elif [[ -n $(_threatcol_subcommands "$cmdpath") ]]; then
    _threatcol_words "$(_threatcol_subcommands "$cmdpath")"
  elif [[ $positionals -eq 0 ]]; then
    _threatcol_argument "$cmdpath"
  fi
  return 0
}

complete -F _threatcol threatcol
`;
}

function reply(values: ValueSource): string {
  switch (values.kind) {
    case 'words':
      return `_threatcol_words '${values.words.map(safeWord).join(' ')}'`;
    case 'files':
      return 'compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur")';
    case 'dirs':
      return 'compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur")';
    case 'sensors':
      return '_threatcol_words "$(_threatcol_sensors)"';
    case 'none':
      return ':';
  }
}
