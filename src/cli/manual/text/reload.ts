// Reference prose of `threatcol reload`: what `systemctl reload threatcol` runs.
import type { CommandManual } from '../command-manual.js';

export const reloadManual: CommandManual = {
  description: `
Makes the running daemon re-read its configuration, its sensor registry and its certificate: it sends it SIGHUP,
so no \`kill\` binary is needed. The units run it as \`ExecReload=\`, with the daemon's process id in \`$MAINPID\`;
use \`systemctl reload threatcol\` rather than running it by hand.

It first loads the configuration the way the daemon will. When the file is invalid the daemon is still signalled
(it logs why and keeps its running configuration, and \`systemctl status threatcol\` shows it), and \`reload\`
prints the problems and exits 78, so \`systemctl reload\` fails with the reason. Which settings apply without a
restart: [Reload](operations.md#reload).
`,
  exitStatus:
    '0 when the daemon was signalled and the configuration loads; 78 when the file is invalid (the daemon was signalled and keeps its running configuration).',
  environment: {
    MAINPID: 'the process to signal when `--pid` is not given (systemd sets it for `ExecReload=`).',
  },
};
