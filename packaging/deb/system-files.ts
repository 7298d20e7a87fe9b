// The files that make threatcol a system daemon: units, the service user, the conffile, man pages, completions,
// and /usr/share/doc (copyright, changelog). Each is rendered from the code that already defines it, so the package
// cannot drift from the program: units from systemd/, the conffile from the config schema, man pages and
// completions from the commander definitions.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderCompletion, renderManPages } from '../../src/cli/manual/index.js';
import { renderUnits } from '../../src/cli/systemd-unit.js';
import { buildProgram } from '../../src/cli/whole-program.js';
import { renderConffile } from '../../src/config/describe-config.js';
import { renderCopyright } from './copyright.js';
import * as layout from './layout.js';
import { gzipDeterministic, put, type StageOptions } from './stage.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));

export function stageSystemFiles(options: StageOptions): void {
  const { root, version, epoch } = options;
  for (const unit of packagedUnits()) put(root, `${layout.UNIT_DIR}/${unit.name}`, unit.text);
  put(root, layout.SYSUSERS_FILE, readFileSync(join(HERE, 'sysusers.conf')));
  // 0640 here, root:threatcol from postinst (the group does not exist when the package is built).
  put(root, layout.CONFFILE, renderConffile(), 0o640);

  const program = buildProgram();
  const date = new Date(epoch * 1000).toISOString().slice(0, 10);
  for (const page of renderManPages(program, { version, date })) {
    put(root, `${layout.MAN_DIR}/${page.file}.gz`, gzipDeterministic(page.text));
  }
  for (const shell of ['bash', 'zsh', 'fish'] as const) {
    put(root, layout.COMPLETIONS[shell], renderCompletion(program, shell));
  }

  put(root, `${layout.DOC_DIR}/copyright`, renderCopyright(options));
  put(
    root,
    `${layout.DOC_DIR}/changelog.Debian.gz`,
    gzipDeterministic(renderChangelog(version, epoch, options.nodeVersion)),
  );
  put(root, layout.LINTIAN_OVERRIDES, readFileSync(join(HERE, 'lintian-overrides')));
}

/**
 * The units `threatcol systemd-unit` prints, with ExecStart on /usr/bin/threatcol. The socket-activated service is
 * shipped as threatcol-socket.service (two units cannot share a name in one unit directory): the socket names it,
 * and each variant conflicts with the other so switching is `disable --now` one, `enable --now` the other.
 */
export function packagedUnits(): { name: string; text: string }[] {
  const execStart = `ExecStart=${layout.USR_BIN} serve`;
  const [plain] = renderUnits(false, execStart);
  const [socket, socketService] = renderUnits(true, execStart);
  if (!plain || !socket || !socketService) throw new Error('systemd/ lacks a unit');
  const header = (text: string) =>
    text.replace(/^(# .*\n)+/, (comments) =>
      comments.includes('systemd-unit')
        ? '# Installed by the threatcol Debian package. Change it with `systemctl edit`, not here (an upgrade\n' +
          '# replaces this file); see threatcol(8) and /usr/share/doc/threatcol.\n'
        : comments,
    );
  return [
    {
      name: layout.UNITS.service,
      text: header(plain.text).replace(/^\[Unit\]\n/m, `[Unit]\nConflicts=${layout.UNITS.socketService}\n`),
    },
    {
      name: layout.UNITS.socket,
      text: header(socket.text).replace(/^Service=.*$/m, `Service=${layout.UNITS.socketService}`),
    },
    {
      name: layout.UNITS.socketService,
      text: header(socketService.text).replace(/^\[Unit\]\n/m, `[Unit]\nConflicts=${layout.UNITS.service}\n`),
    },
  ];
}

/** One entry for the version built: the project's history is its git log and docs, not a second changelog. */
export function renderChangelog(version: string, epoch: number, nodeVersion: string): string {
  const date = new Date(epoch * 1000).toUTCString().replace('GMT', '+0000');
  return [
    `${layout.PACKAGE} (${version}) unstable; urgency=medium`,
    '',
    `  * threatcol ${version}, with its own Node.js runtime (${nodeVersion}).`,
    '',
    ` -- ${layout.MAINTAINER}  ${date}`,
    '',
  ].join('\n');
}
