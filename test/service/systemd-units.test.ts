// The shipped systemd units: exposure scores within target, `systemd-analyze verify` silent, and
// `threatcol systemd-unit` writing them with the ExecStart of this installation.
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { packagedUnits } from '../../packaging/deb/system-files.js';
import { BIN, runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const UNITS = fileURLToPath(new URL('../../systemd/', import.meta.url));
const SERVICE = join(UNITS, 'threatcol.service');
const SOCKET = join(UNITS, 'threatcol.socket');
const SOCKET_SERVICE = join(UNITS, 'socket-activated', 'threatcol.service');

const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
});
const skip = ANALYZE ? false : 'systemd-analyze is not installed on this machine (apt-get install systemd)';

async function analyze(args: string[], cwd?: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(ANALYZE as string, args, {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SYSTEMD_LOG_COLOR: '0', LANG: 'C.UTF-8' },
      timeout: 20_000,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

async function exposure(unit: string): Promise<number> {
  const { output } = await analyze(['security', '--offline=true', '--no-pager', unit]);
  const m = /Overall exposure level for \S+: (\d+(?:\.\d+)?)/.exec(output);
  assert.ok(m, output);
  return Number(m[1]);
}

// 1.4 before Type=notify; NotifyAccess=all (systemd-notify is a child of the main process) costs 0.2, and
// setpriority allowed (the outputs' thread lowers its own priority; without CAP_SYS_NICE nothing is raised) 0.1.
test('systemd/threatcol.service has an exposure of at most 1.7', { skip }, async () => {
  const score = await exposure(SERVICE);
  assert.ok(score <= 1.7, `exposure ${score}`);
});

test('the socket-activated service has an exposure of at most 0.5', { skip }, async () => {
  const score = await exposure(SOCKET_SERVICE);
  assert.ok(score <= 0.5, `exposure ${score}`);
});

test('the units carry what the service needs: user, capability, readiness, reload, no restart loop', () => {
  const service = readFileSync(SERVICE, 'utf8');
  for (const line of [
    'User=threatcol',
    'StateDirectory=threatcol',
    'StateDirectoryMode=0700',
    'ConfigurationDirectory=threatcol',
    'UMask=0077',
    'AmbientCapabilities=CAP_NET_BIND_SERVICE',
    'CapabilityBoundingSet=CAP_NET_BIND_SERVICE',
    'Type=notify',
    'NotifyAccess=all',
    'ExecReload=/usr/bin/node /usr/lib/node_modules/threatcol/bin/threatcol reload',
    'Restart=on-failure',
    'RestartPreventExitStatus=69 78',
    'StartLimitIntervalSec=1min',
    'StartLimitBurst=10',
    'ProtectSystem=strict',
    'SystemCallFilter=@system-service',
    'ProtectProc=invisible',
  ]) {
    assert.ok(service.split('\n').includes(line), `threatcol.service lacks ${line}`);
  }
  const socketService = readFileSync(SOCKET_SERVICE, 'utf8').split('\n');
  for (const line of [
    'PrivateNetwork=yes',
    'PrivateUsers=yes',
    'RestrictAddressFamilies=AF_UNIX',
    'CapabilityBoundingSet=',
    'Type=notify',
    'NotifyAccess=all',
    'RestartPreventExitStatus=69 78',
    'Environment=THREATCOL_ADMIN_LISTEN=',
    // A failed start holds the socket for 5 s, so a waiting connection retries under the start limit.
    'StartLimitIntervalSec=10s',
    'StartLimitBurst=10',
    `ExecStopPost=/bin/sh -c '[ "$$SERVICE_RESULT" = success ] || exec sleep 5'`,
  ]) {
    assert.ok(socketService.includes(line), `socket-activated/threatcol.service lacks ${line}`);
  }
  assert.ok(!socketService.some((l) => l.startsWith('AmbientCapabilities=')));
  assert.ok(readFileSync(SOCKET, 'utf8').split('\n').includes('ListenStream=443'));
  // The outputs' thread lowers its own priority: setpriority(2), denied with the rest of @resources, allowed after.
  for (const file of [SERVICE, SOCKET_SERVICE]) {
    const lines = readFileSync(file, 'utf8').split('\n');
    assert.ok(
      lines.indexOf('SystemCallFilter=setpriority') >
        lines.indexOf('SystemCallFilter=~@privileged @resources'),
      `${file} allows setpriority after denying @resources`,
    );
  }
  // V8's JIT needs writable+executable memory.
  for (const file of [SERVICE, SOCKET_SERVICE])
    assert.doesNotMatch(readFileSync(file, 'utf8'), /MemoryDenyWriteExecute/);
});

test('systemd-unit writes the units with the ExecStart and ExecReload of this installation, the rest unchanged', async (t) => {
  const expected = `ExecStart=${process.execPath} ${realpathSync(BIN)} serve`;
  // Reload needs no /bin/kill (procps, absent from a minimal Debian): the same program signals $MAINPID.
  const reload = `ExecReload=${process.execPath} ${realpathSync(BIN)} reload`;
  const execLines = /^Exec(Start|Reload)=.*$/gm;
  const plain = makeTempDir(t);
  const r = await runCli(['systemd-unit', '--output-dir', plain]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /systemctl enable --now threatcol\.service/);
  const written = readFileSync(join(plain, 'threatcol.service'), 'utf8');
  assert.ok(written.split('\n').includes(expected), written);
  assert.ok(written.split('\n').includes(reload), written);
  assert.equal(written.replace(execLines, ''), readFileSync(SERVICE, 'utf8').replace(execLines, ''));

  const socket = makeTempDir(t);
  const s = await runCli(['systemd-unit', '--socket', '--output-dir', socket]);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /systemctl enable --now threatcol\.socket/);
  const disable = s.stdout.indexOf('systemctl disable --now threatcol.service');
  assert.ok(disable !== -1 && disable < s.stdout.indexOf('enable --now threatcol.socket'), s.stdout);
  assert.doesNotMatch(r.stdout, /disable/);
  const activated = readFileSync(join(socket, 'threatcol.service'), 'utf8');
  assert.ok(activated.split('\n').includes(expected));
  assert.ok(activated.split('\n').includes(reload));
  assert.equal(activated.replace(execLines, ''), readFileSync(SOCKET_SERVICE, 'utf8').replace(execLines, ''));
  assert.equal(readFileSync(join(socket, 'threatcol.socket'), 'utf8'), readFileSync(SOCKET, 'utf8'));

  const printed = await runCli(['systemd-unit']);
  assert.equal(printed.code, 0);
  assert.ok(printed.stdout.startsWith('# threatcol.service\n'));
  assert.ok(printed.stdout.split('\n').includes(expected));
});

// verify checks that ExecStart's program exists, so it runs on the units as `systemd-unit` writes them for this
// machine (the shipped files name /usr/bin/node, which need not exist here); the rest is byte for byte the same,
// as the test above shows.
test('systemd-analyze verify prints nothing for the units, and does print for a misspelled key', {
  skip,
}, async (t) => {
  const plain = makeTempDir(t);
  assert.equal((await runCli(['systemd-unit', '--output-dir', plain])).code, 0);
  const one = await analyze(['verify', 'threatcol.service'], plain);
  assert.equal(one.output, '');
  assert.equal(one.code, 0);

  const socket = makeTempDir(t);
  assert.equal((await runCli(['systemd-unit', '--socket', '--output-dir', socket])).code, 0);
  const both = await analyze(['verify', 'threatcol.socket', 'threatcol.service'], socket);
  assert.equal(both.output, '');

  // The check can fail: verify exits 0 on an unknown key, but says so.
  const broken = readFileSync(join(plain, 'threatcol.service'), 'utf8').replace('UMask=0077', 'Umask=0077');
  writeFileSync(join(plain, 'threatcol.service'), broken);
  const bad = await analyze(['verify', 'threatcol.service'], plain);
  assert.match(bad.output, /Unknown key 'Umask'/);
});

test('the packaged units start and reload through /usr/bin/threatcol: no /bin/kill, which minbase lacks', () => {
  const units = packagedUnits().filter((u) => u.name.endsWith('.service'));
  assert.equal(units.length, 2);
  for (const unit of units) {
    const lines = unit.text.split('\n');
    assert.ok(lines.includes('ExecReload=/usr/bin/threatcol reload'), `${unit.name}: ${unit.text}`);
    assert.ok(
      lines.some((l) => l.startsWith('ExecStart=/usr/bin/threatcol serve')),
      unit.name,
    );
    assert.ok(!lines.some((l) => !l.startsWith('#') && l.includes('/bin/kill')), unit.name);
  }
});
