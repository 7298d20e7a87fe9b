// The man pages the Debian package installs: one per top-level command plus threatcol(8), each formatted by
// man(1) without a warning, and each naming every subcommand, option, exit status, code and variable it must.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as layout from '../../packaging/deb/layout.js';
import { allCommands, describeProgram } from '../../src/cli/manual/command-model.js';
import { renderManPages } from '../../src/cli/manual/index.js';
import { MANUALS } from '../../src/cli/manual/text/index.js';
import { buildProgram } from '../../src/cli/whole-program.js';
import { envNameFor, listConfigKeys } from '../../src/config/load-config.js';
import { CATALOGUE, EXIT } from '../../src/errors.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const meta = { version: '0.1.0', date: '2026-01-01' };
const tree = describeProgram(buildProgram(), MANUALS);

/** The page as a reader sees it at 80 columns, and what man and groff warned about. */
function format(file: string): { text: string; warnings: string } {
  const man = spawnSync('man', ['-l', '--warnings', file], {
    encoding: 'utf8',
    env: { ...process.env, MANWIDTH: '80', MAN_KEEP_FORMATTING: '', PAGER: 'cat', LANG: 'C.UTF-8' },
  });
  assert.equal(man.status, 0, man.stderr);
  const groff = spawnSync('groff', ['-man', '-Tutf8', '-ww', '-z', file], { encoding: 'utf8' });
  return { text: man.stdout, warnings: man.stderr + groff.stderr };
}

test('threatcol(8) and one page per top-level command, formatted by man without a warning', (t) => {
  const pages = renderManPages(buildProgram(), meta);
  assert.deepEqual(
    pages.map((p) => p.file).sort(),
    [
      'threatcol.8',
      'threatcol-allow.8',
      'threatcol-block.8',
      'threatcol-check.8',
      'threatcol-completion.8',
      'threatcol-feed.8',
      'threatcol-outputs.8',
      'threatcol-reload.8',
      'threatcol-send.8',
      'threatcol-sensor.8',
      'threatcol-serve.8',
      'threatcol-source.8',
      'threatcol-store.8',
      'threatcol-systemd-unit.8',
      'threatcol-threats.8',
    ].sort(),
  );
  const dir = makeTempDir(t);
  for (const page of pages) {
    const file = join(dir, page.file);
    writeFileSync(file, page.text);
    const { text, warnings } = format(file);
    assert.equal(warnings, '', page.file);
    const name = page.file.replace(/\.8$/, '');
    assert.match(text, new RegExp(`^${name.toUpperCase()}\\(8\\)`), page.file);
    for (const heading of [
      'NAME',
      'SYNOPSIS',
      'DESCRIPTION',
      'EXIT STATUS',
      'ENVIRONMENT',
      'FILES',
      'SEE ALSO',
    ]) {
      assert.match(text, new RegExp(`^${heading}$`, 'm'), `${page.file}: ${heading}`);
    }
    // Every exit status and every code of the catalogue, with its status.
    const exits = text.slice(text.indexOf('\nEXIT STATUS\n'), text.indexOf('\nENVIRONMENT\n'));
    for (const status of new Set(Object.values(EXIT)))
      assert.match(exits, new RegExp(`^ {7}${status}\\b`, 'm'));
    for (const code of Object.keys(CATALOGUE)) assert.ok(exits.includes(code), `${page.file}: ${code}`);
    assert.ok(text.includes('/etc/threatcol/config.json') && text.includes('/var/lib/threatcol'), page.file);
    assert.ok(text.includes('THREATCOL_CONFIG'), page.file);
    // FILES names where the package puts things: its layout table is the other side of this.
    const files = text.slice(text.indexOf('\nFILES\n'), text.indexOf('\nSEE ALSO\n')).replace(/\s+/g, ' ');
    for (const path of [layout.CONFFILE, layout.DATA_DIR, ...Object.values(layout.COMPLETIONS)]) {
      assert.ok(files.includes(path), `${page.file}: FILES lacks ${path}`);
    }
    for (const unit of Object.values(layout.UNITS))
      assert.ok(files.includes(unit), `${page.file}: FILES lacks ${unit}`);
    assert.ok(files.includes(layout.UNIT_DIR), page.file);
  }
});

test('every command, argument and option is on its page, as ASCII a reader can copy', () => {
  const pages = new Map(renderManPages(buildProgram(), meta).map((p) => [p.file, p.text]));
  const dir = makeTempDir();
  const formatted = new Map<string, string>();
  for (const [file, text] of pages) {
    writeFileSync(join(dir, file), text);
    formatted.set(file, format(join(dir, file)).text.replace(/\s+/g, ' '));
  }
  for (const cmd of allCommands(tree).filter((c) => c.path.length > 0)) {
    const text = formatted.get(`threatcol-${cmd.path[0]}.8`) as string;
    assert.ok(text.includes(['threatcol', ...cmd.path].join(' ')), cmd.path.join(' '));
    for (const option of cmd.options) {
      for (const flag of [option.long, option.short]) {
        if (flag) assert.ok(text.includes(` ${flag}`), `${cmd.path.join(' ')} ${flag}`);
      }
    }
    for (const arg of cmd.arguments) {
      assert.ok(
        text.includes(arg.choices ? arg.choices.join('|') : arg.name),
        `${cmd.path.join(' ')} ${arg.name}`,
      );
    }
  }
  const root = formatted.get('threatcol.8') as string;
  for (const leaf of allCommands(tree).filter((c) => c.subcommands.length === 0)) {
    assert.ok(
      root.includes(['threatcol', ...leaf.path].join(' ')),
      `threatcol(8) lists ${leaf.path.join(' ')}`,
    );
  }
  // threatcol(8) and threatcol-serve(8) list every configuration variable; the others point there.
  for (const file of ['threatcol.8', 'threatcol-serve.8']) {
    for (const leaf of listConfigKeys())
      assert.ok(formatted.get(file)?.includes(envNameFor(leaf.path)), `${file}: ${envNameFor(leaf.path)}`);
  }
  // A variable read by one command is on that command's page.
  assert.ok(formatted.get('threatcol-send.8')?.includes('THREATCOL_KEY'));
  assert.ok(formatted.get('threatcol-threats.8')?.includes('NO_COLOR'));
  assert.ok(formatted.get('threatcol-serve.8')?.includes('NOTIFY_SOCKET'));
});

test('the page says which version and date it documents, as given (builds of one commit give one text)', () => {
  const [first] = renderManPages(buildProgram(), { version: '9.8.7', date: '2031-02-03' });
  assert.match(first?.text ?? '', /^\.TH THREATCOL 8 "2031-02-03" "threatcol 9\.8\.7"/m);
  assert.deepEqual(renderManPages(buildProgram(), meta), renderManPages(buildProgram(), meta));
});
