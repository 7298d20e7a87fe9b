// Reference prose of `threatcol completion`: the shell completion scripts.
import type { CommandManual } from '../command-manual.js';

export const completionManual: CommandManual = {
  description: `
\`\`\`sh
source <(threatcol completion bash)                                    # this bash session
threatcol completion bash > /etc/bash_completion.d/threatcol          # every bash session (as root)
threatcol completion zsh > "\${fpath[1]}/_threatcol"                    # zsh, a directory on $fpath
threatcol completion fish > ~/.config/fish/completions/threatcol.fish  # fish
\`\`\`

Prints the completion script for the shell: commands, subcommands, options, the values of options that have
a fixed set (\`--endpoint\`, \`--by\`, \`--log-level\`, \`--log-format\`, …), file and directory names where an
option takes one, and sensor names where a command takes an existing sensor (\`sensor revoke\`, \`rotate\`,
\`set\`, \`show\`, \`delete\` and \`--sensor\` of \`threats\`). The Debian package installs the scripts as
\`/usr/share/bash-completion/completions/threatcol\`, \`/usr/share/zsh/vendor-completions/_threatcol\` and
\`/usr/share/fish/vendor_completions.d/threatcol.fish\`; this command is for installations from source.

Sensor names come from running \`threatcol sensor list --json\` with the \`--config\` and \`--data-dir\` already on
the command line, at most once per completion and for at most 5 seconds (the shell variable
\`threatcol_completion_timeout\` sets another limit, for a slow box); a registry this user cannot read
(an ordinary user's completion against the service's \`/var/lib/threatcol\`) completes no names, silently.
The scripts are generated from the same command definitions as the man pages.
`,
};
