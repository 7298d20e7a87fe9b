// The Debian package (test/helpers/package-build.ts: built once per tree as `npm run package` builds it, gzip) read
// with dpkg-deb: its file list, owners and modes, control fields, conffiles and maintainer scripts; man pages that
// render; a completion that loads; and the extracted tree runs on its own bundled runtime (a sensor, serve, a
// record accepted and stored). Two builds agreeing: deb-reproducible.test.ts; lintian: deb-lintian.test.ts.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import * as layout from '../../packaging/deb/layout.js';
import { pinnedRuntime } from '../../packaging/runtime.js';
import { runCli, spawnServe } from '../helpers/cli.js';
import { CHECKOUT, packageUnavailable, sharedDeb } from '../helpers/package-build.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);
const manifest = JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

const reason = packageUnavailable();
if (reason) console.log(`# deb-contents: skipped: ${reason}`);

interface Entry {
  mode: string;
  owner: string;
  size: number;
  path: string;
}

/** `dpkg-deb -c`: `-rwxr-xr-x root/root 176 2026-11-23 17:53 ./usr/bin/threatcol` per line. */
function contents(deb: string): Entry[] {
  return execFileSync('dpkg-deb', ['-c', deb], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .trim()
    .split('\n')
    .map((line) => {
      const [mode, owner, size, , , path] = line.split(/\s+/);
      return {
        mode: mode as string,
        owner: owner as string,
        size: Number(size),
        path: (path as string).slice(1),
      };
    });
}

test('the Debian package: layout, control, scripts, man pages, completion, and it runs', {
  skip: reason ?? false,
  // A hang guard: the package build (when no other file has made it yet) and the checks take about a minute here.
  timeout: 900_000,
}, async (t) => {
  const dir = makeTempDir(t, 'deb');
  const deb = await sharedDeb();
  const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
  assert.equal(basename(deb), `threatcol_${manifest.version}-1_${arch}.deb`);

  // Control fields: Depends from what the runtime links against, never a system nodejs.
  const field = (name: string) => execFileSync('dpkg-deb', ['-f', deb, name], { encoding: 'utf8' }).trim();
  assert.equal(field('Package'), 'threatcol');
  assert.equal(field('Version'), `${manifest.version}-1`);
  assert.equal(field('Architecture'), arch);
  assert.match(field('Depends'), /(^|, )libc6 \(>= [\d.]+\)(,|$)/);
  assert.doesNotMatch(field('Depends'), /node/);
  assert.match(field('Installed-Size'), /^\d+$/);
  assert.match(field('Description'), /^threat-report collector/);

  // Files: every one root-owned; only the runtime and the command are executable; the conffile is 0640.
  const entries = contents(deb);
  const files = entries.filter((e) => !e.mode.startsWith('d'));
  for (const e of entries) assert.equal(e.owner, 'root/root', e.path);
  const executables = files.filter((e) => e.mode.includes('x')).map((e) => e.path);
  assert.deepEqual(executables.sort(), [layout.USR_BIN, layout.NODE_BIN].sort());
  const byPath = new Map(files.map((e) => [e.path, e]));
  assert.equal(byPath.get(layout.CONFFILE)?.mode, '-rw-r-----');
  for (const path of [
    layout.APP_BIN,
    `${layout.LIB_DIR}/package.json`,
    `${layout.LIB_DIR}/dist/cli/main.js`,
    `${layout.LIB_DIR}/web/index.html`,
    `${layout.LIB_DIR}/systemd/threatcol.service`,
    `${layout.UNIT_DIR}/threatcol.service`,
    `${layout.UNIT_DIR}/threatcol.socket`,
    `${layout.UNIT_DIR}/threatcol-socket.service`,
    layout.SYSUSERS_FILE,
    layout.COMPLETIONS.bash,
    layout.COMPLETIONS.zsh,
    layout.COMPLETIONS.fish,
    `${layout.MAN_DIR}/threatcol.8.gz`,
    `${layout.DOC_DIR}/copyright`,
    `${layout.DOC_DIR}/changelog.Debian.gz`,
    layout.LINTIAN_OVERRIDES,
  ]) {
    assert.ok(byPath.has(path), `${path} is in the package`);
  }
  assert.equal(byPath.get(layout.NODE_BIN)?.mode, '-rwxr-xr-x');
  // Only the FHS places the layout names; nothing from the checkout's development side.
  // Nothing under /lib: since the /usr merge (DEP-17) packages ship there no more.
  const allowed = ['/etc/threatcol/', '/usr/bin/', '/usr/lib/', '/usr/share/'];
  for (const f of files)
    assert.ok(
      allowed.some((p) => f.path.startsWith(p)),
      f.path,
    );
  const paths = files.map((f) => f.path);
  // The compiled code only: no sources, tests or source maps of ours; no module's development files.
  const lib = layout.LIB_DIR;
  assert.deepEqual(
    paths.filter((p) => p.startsWith(`${lib}/src/`) || p.startsWith(`${lib}/test/`)),
    [],
  );
  assert.deepEqual(
    // .cjs: the configuration's checks per key, which load-config requires synchronously (generated/config-validator.ts).
    paths.filter((p) => p.startsWith(`${lib}/dist/`) && !/\.c?js$/.test(p)),
    // The shipped enrichment databases, where src/enrich/databases.ts finds them.
    [`${lib}/dist/enrich/asn.table`, `${lib}/dist/enrich/country.table`],
  );
  assert.deepEqual(
    paths.filter((p) => /\/(\.bin|\.npmignore|\.eslintrc[^/]*|\.gitattributes)(\/|$)/.test(p)),
    [],
  );
  // Production modules only: every runtime dependency, no development one.
  for (const name of Object.keys(manifest.dependencies)) {
    assert.ok(byPath.has(`${layout.LIB_DIR}/node_modules/${name}/package.json`), name);
  }
  // A development dependency that a runtime one also needs (secure-json-parse, for pino-pretty) is not dev in
  // the lockfile, and ships.
  const lock = JSON.parse(readFileSync(join(CHECKOUT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  for (const name of Object.keys(manifest.devDependencies)) {
    if (lock.packages[`node_modules/${name}`]?.dev !== true) continue;
    assert.ok(!paths.some((p) => p.startsWith(`${layout.LIB_DIR}/node_modules/${name}/`)), `no ${name}`);
  }
  // The runtime packages are bundled as bin/node alone, never as modules (one is 200 MB with its headers).
  assert.deepEqual(
    paths.filter((p) => /\/node_modules\/node-linux-/.test(p)),
    [],
  );
  // One man page per top-level command, beside threatcol(8).
  const pages = paths
    .filter((p) => p.startsWith(`${layout.MAN_DIR}/`))
    .map((p) => p.slice(layout.MAN_DIR.length + 1));
  for (const command of [
    'serve',
    'sensor',
    'threats',
    'send',
    'check',
    'reload',
    'systemd-unit',
    'store',
    'outputs',
    'completion',
  ]) {
    assert.ok(pages.includes(`threatcol-${command}.8.gz`), `threatcol-${command}(8)`);
  }

  // Control archive: conffiles, md5sums of every file but the conffile, scripts that parse and are executable.
  const ctl = join(dir, 'control');
  execFileSync('dpkg-deb', ['-e', deb, ctl]);
  assert.equal(readFileSync(join(ctl, 'conffiles'), 'utf8'), `${layout.CONFFILE}\n`);
  const sums = readFileSync(join(ctl, 'md5sums'), 'utf8').trim().split('\n');
  assert.equal(sums.length, files.length - 1);
  for (const script of ['postinst', 'prerm', 'postrm']) {
    execFileSync('sh', ['-n', join(ctl, script)]);
    assert.match(readFileSync(join(ctl, script), 'utf8'), /^#!\/bin\/sh\n(#.*\n)*set -e\n/, script);
  }

  // The extracted tree: man pages render without warnings, the completion loads, the CLI runs on its runtime.
  const tree = join(dir, 'tree');
  execFileSync('dpkg-deb', ['-x', deb, tree]);
  for (const page of pages) {
    const text = execFileSync(
      'sh',
      ['-c', `gzip -dc "$1" | groff -man -Tutf8 -ww -z 2>&1`, 'sh', join(tree, layout.MAN_DIR, page)],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(text, '', `${page} renders without warnings`);
  }
  const man = await run('man', ['-l', join(tree, layout.MAN_DIR, 'threatcol.8.gz')], {
    env: { ...process.env, MANWIDTH: '80', MANPAGER: 'cat', PAGER: 'cat' },
  });
  assert.match(man.stdout, /threatcol/);
  const completion = await run('bash', [
    '-c',
    `source "$1" && complete -p threatcol`,
    'bash',
    join(tree, layout.COMPLETIONS.bash),
  ]);
  assert.match(completion.stdout, /complete .* threatcol$/m);

  const installed = { node: join(tree, layout.NODE_BIN), bin: join(tree, layout.APP_BIN) };
  const versionRun = await runCli(['--version', '--json'], installed);
  assert.equal(versionRun.code, 0, versionRun.stderr);
  const version = JSON.parse(versionRun.stdout) as Record<string, unknown>;
  assert.equal(version.threatcol, manifest.version);
  // The runtime package.json pins, bundled from node_modules/node-linux-<arch>/, whatever node built it.
  assert.equal(version.node, `v${pinnedRuntime(CHECKOUT).version}`);
  // serve, sensor add and send from the extracted tree alone: nothing the package left out is needed.
  const data = join(dir, 'data');
  mkdirSync(data, { mode: 0o700 });
  const add = await runCli(['sensor', 'add', 'lab', '--data-dir', data, '--json'], installed);
  assert.equal(add.code, 0, add.stderr);
  const { key } = JSON.parse(add.stdout) as { key: string };
  const server = await spawnServe(data, [], installed);
  t.after(() => server.stop());
  const sent = await runCli(
    [
      'send',
      'firewall',
      '--sample',
      '--url',
      server.url,
      '--sensor',
      'lab',
      '--key',
      key,
      '--data-dir',
      data,
      '--json',
    ],
    installed,
  );
  assert.equal(sent.code, 0, sent.stderr);
  const answer = JSON.parse(sent.stdout) as { status: number; body: { accepted: number } };
  assert.equal(answer.body.accepted, 1, sent.stdout);
  const tail = await runCli(
    ['threats', 'tail', '-n', '1', '--no-follow', '--json', '--data-dir', data],
    installed,
  );
  assert.equal(tail.code, 0, tail.stderr);
  assert.equal((JSON.parse(tail.stdout) as { sensor: string }).sensor, 'lab');
  await server.stop();
});
