// Reference prose of `threatcol systemd-unit`: the units with this installation's paths.
import type { CommandManual } from '../command-manual.js';

export const systemdUnitManual: CommandManual = {
  description: `
Prints the shipped unit (\`systemd/threatcol.service\`) with the \`ExecStart=\` of this installation (this Node
binary and this package's \`bin/threatcol\`, absolute and symlinks resolved), so no path is edited by hand.
\`--socket\` gives the socket-activated pair instead: \`threatcol.socket\` and its \`threatcol.service\`.
\`--output-dir /etc/systemd/system\` writes the files there (mode 0644) and prints the \`systemctl\` commands
to run next (with \`--socket\`, first \`systemctl disable --now threatcol.service\` when the plain unit ran:
see "Switching to socket activation" in [Socket activation](operations.md#socket-activation)).
It warns when Node or threatcol lives under \`/home\` or \`/root\`, which the unit's \`ProtectHome=yes\` hides
from the service.
`,
};
