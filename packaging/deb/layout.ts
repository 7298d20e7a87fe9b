// Where the Debian package puts things (DESIGN 12, Debian policy and the FHS): one table the build, the maintainer
// scripts' checks and the package test share.

/** The package's private tree: the bundled Node runtime, the compiled code, production modules, the dashboard. */
export const LIB_DIR = '/usr/lib/threatcol';
/** The bundled runtime, beside the CLI's own entry point. */
export const NODE_BIN = `${LIB_DIR}/bin/node`;
export const APP_BIN = `${LIB_DIR}/bin/threatcol`;
/** The command on PATH: a two-line script that runs APP_BIN on NODE_BIN. */
export const USR_BIN = '/usr/bin/threatcol';
/** Under /usr since the /usr merge (DEP-17): Debian 13 warns about /lib on purge, and Debian 12's systemd reads it too. */
export const UNIT_DIR = '/usr/lib/systemd/system';
export const SYSUSERS_FILE = '/usr/lib/sysusers.d/threatcol.conf';
/** The conffile: the daemon's default configuration path (src/config/load-config.ts). */
export const CONFFILE = '/etc/threatcol/config.json';
export const DATA_DIR = '/var/lib/threatcol';
export const DOC_DIR = '/usr/share/doc/threatcol';
export const MAN_DIR = '/usr/share/man/man8';
export const COMPLETIONS = {
  bash: '/usr/share/bash-completion/completions/threatcol',
  zsh: '/usr/share/zsh/vendor-completions/_threatcol',
  fish: '/usr/share/fish/vendor_completions.d/threatcol.fish',
} as const;
export const LINTIAN_OVERRIDES = '/usr/share/lintian/overrides/threatcol';

/** The plain unit (enabled on install) and the socket-activated pair (shipped, not enabled). */
export const UNITS = {
  service: 'threatcol.service',
  socket: 'threatcol.socket',
  socketService: 'threatcol-socket.service',
} as const;

export const PACKAGE = 'threatcol';
export const MAINTAINER = 'threatcol developers <threatcol@users.noreply.github.com>';
