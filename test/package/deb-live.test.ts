// The package on a fresh Debian with no Node, under a real systemd (debootstrap + systemd-nspawn --boot, as the
// systemd-boot test): apt install -> service active and serving; sensor add, send --sample and threats tail as
// root with no --data-dir; an upgrade keeps sensors and records and restarts; remove keeps config and data; purge
// removes config but keeps the records and the user; reinstall after purge serves the old records; policy-rc.d is
// obeyed; reload without /bin/kill, journal priorities and a clean `check` on a fresh install; and the install
// succeeds in a container without systemd. Debian 12, and 13 where debootstrap can fetch
// it. Expensive (a Debian root per release, cached; a package build): only with PACKAGE_BOOT=1, as root.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildDeb } from '../../packaging/deb/build.js';
import { type BootContainer, bootContainer, bootUnavailable } from '../service/boot-container.js';
import { debianRoot, runWithoutSystemd } from './debootstrap.js';

const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const reason =
  process.env.PACKAGE_BOOT !== '1'
    ? 'set PACKAGE_BOOT=1 to install the package on a fresh Debian under systemd (several minutes, root only)'
    : await bootUnavailable();
if (reason) console.log(`# deb-live: skipped: ${reason}`);

const SUITES = (process.env.PACKAGE_BOOT_SUITES ?? 'bookworm,trixie').split(',');

test('the .deb on a fresh Debian without Node: install, serve, upgrade, remove, purge, reinstall', {
  skip: reason ?? false,
  timeout: 3_600_000,
}, async (t) => {
  const debs = join(CHECKOUT, 'test/output/debs');
  mkdirSync(debs, { recursive: true });
  const first = buildDeb({ checkout: CHECKOUT, outDir: debs });
  const version = first.control.Version as string;
  // The upgrade: the same code as a later Debian revision (gzip: xz of 100 MB takes minutes, the size is known).
  const bumped = buildDeb({
    checkout: CHECKOUT,
    outDir: debs,
    version: `${version.replace(/-\d+$/, '')}-99`,
    compression: 'gzip',
  });
  const figures: Record<string, unknown> = {
    packageBytes: first.bytes,
    installedKiB: first.control['Installed-Size'],
  };
  t.diagnostic(`package: ${first.path} ${(first.bytes / 1_048_576).toFixed(1)} MiB`);
  const name = (path: string) => `/debs/${path.slice(debs.length + 1)}`;

  for (const suite of SUITES) {
    let root: string;
    try {
      root = await debianRoot(suite);
    } catch (error) {
      if (suite === 'bookworm') throw error;
      t.diagnostic(
        `${suite}: debootstrap could not make it here, not tested: ${(error as Error).message.slice(0, 300)}`,
      );
      continue;
    }
    await t.test(`${suite}: under systemd`, async () => {
      figures[suite] = await liveCycle(root, debs, name(first.path), name(bumped.path), version);
    });
    await t.test(`${suite}: in a container without systemd`, async () => {
      const r = await runWithoutSystemd(
        root,
        { [debs]: '/debs' },
        `set -e; DEBIAN_FRONTEND=noninteractive apt-get install -y -q ${name(first.path)}
         getent passwd threatcol; stat -c '%U:%G %a' /var/lib/threatcol /etc/threatcol/config.json
         threatcol --version`,
      );
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, /^threatcol:[^\n]*\/var\/lib\/threatcol/m);
      assert.match(r.output, /^threatcol:threatcol 700$/m);
      assert.match(r.output, /^root:threatcol 640$/m);
    });
  }
  mkdirSync(join(CHECKOUT, 'test/output'), { recursive: true });
  writeFileSync(join(CHECKOUT, 'test/output/deb-live.json'), `${JSON.stringify(figures, null, 2)}\n`);
  t.diagnostic(JSON.stringify(figures));
});

async function liveCycle(
  root: string,
  debs: string,
  deb: string,
  upgradeDeb: string,
  version: string,
): Promise<Record<string, number>> {
  const c = await bootContainer({ lower: root, binds: { [debs]: '/debs' } });
  try {
    const ok = async (script: string, timeoutMs = 300_000) => {
      const r = await c.sh(script, timeoutMs);
      assert.equal(r.code, 0, `${script}\n${r.stdout}${r.stderr}${await journal(c)}`);
      return r.stdout;
    };
    const prop = async (name: string) => (await ok(`systemctl show -p ${name} --value threatcol`)).trim();
    const install = (file: string, extra = '') =>
      ok(`DEBIAN_FRONTEND=noninteractive apt-get install -y -q ${extra} ${file} 2>&1`);
    assert.notEqual((await c.sh('command -v node nodejs')).code, 0, 'the root has no Node');

    // Install: one command, the service active and answering.
    const t0 = Date.now();
    const installOutput = await install(deb);
    const installMs = Date.now() - t0;
    assert.match(installOutput, /self-signed certificate for \S+: \/var\/lib\/threatcol\/tls\/cert\.pem/);
    assert.equal(await prop('ActiveState'), 'active');
    const startedUs = Number(await prop('ExecMainStartTimestampMonotonic'));
    const activeUs = Number(await prop('ActiveEnterTimestampMonotonic'));
    assert.equal((await ok('systemctl is-enabled threatcol.service')).trim(), 'enabled');
    assert.notEqual((await c.sh('systemctl is-enabled threatcol.socket')).stdout.trim(), 'enabled');
    assert.equal(await ok("stat -c '%U:%G %a' /var/lib/threatcol"), 'threatcol:threatcol 700\n');
    assert.equal(await ok("stat -c '%U:%G %a' /etc/threatcol/config.json"), 'root:threatcol 640\n');
    assert.match(await ok('threatcol --version'), new RegExp(version.replace(/-\d+$/, '')));
    // A fresh install passes its own check: no WARN or FAIL (the data directory's mode agrees with the unit's).
    const checked = await ok('threatcol check 2>&1');
    assert.doesNotMatch(checked, /^(WARN|FAIL)/m, checked);
    await reloadAndJournal(c, ok, prop);

    // As root with no --data-dir: the service's data directory.
    const { key } = JSON.parse(await ok('threatcol sensor add lab --json')) as { key: string };
    // The daemon reads a new sensor within a second of `sensor add`: a 401 before that is tried again.
    const send = async () => {
      for (let attempt = 0; ; attempt++) {
        const r = await c.sh(`threatcol send firewall --sample --sensor lab --key '${key}' --json`);
        const out = JSON.parse(r.stdout || '{}') as { status?: number; body?: { ids: string[] } };
        if (out.status === 200) return out.body?.ids[0] as string;
        if (attempt >= 20) assert.fail(`send: ${r.stdout}${r.stderr}${await journal(c)}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };
    const firstId = await send();
    const lastId = async () =>
      (JSON.parse(await ok('threatcol threats tail -n 1 --no-follow --json')) as { id: string }).id;
    assert.equal(await lastId(), firstId);
    const pidBefore = await prop('MainPID');

    // Upgrade: same sensors and records, the service restarted on the new files.
    await install(upgradeDeb);
    assert.match(await ok('dpkg-query -W threatcol'), /\t[^\n]*-99\n$/);
    assert.equal(await prop('ActiveState'), 'active');
    assert.notEqual(await prop('MainPID'), pidBefore, 'restarted');
    assert.match(await ok('threatcol sensor list'), /\blab\b/);
    assert.equal(await lastId(), firstId);
    const secondId = await send();

    // policy-rc.d says no: a reinstall neither stops nor restarts the service.
    const pidRunning = await prop('MainPID');
    await ok("printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d");
    await install(upgradeDeb, '--reinstall');
    assert.equal(await prop('MainPID'), pidRunning, 'policy-rc.d obeyed');
    await ok('rm /usr/sbin/policy-rc.d');

    // Remove: stopped, config and data kept.
    await ok('DEBIAN_FRONTEND=noninteractive apt-get remove -y -q threatcol');
    assert.notEqual((await c.sh('systemctl is-active threatcol')).stdout.trim(), 'active');
    await ok('test -f /etc/threatcol/config.json && test -f /var/lib/threatcol/sensors.json');
    await ok('! test -e /usr/bin/threatcol');

    // Purge: config gone; records, the user and the group kept (and said so), so no later system user gets
    // the uid that owns them; nothing left under /lib (DEP-17).
    const uid = await ok('id -u threatcol');
    const purged = await ok('DEBIAN_FRONTEND=noninteractive apt-get purge -y -q threatcol 2>&1');
    assert.match(purged, /records and sensors kept in \/var\/lib\/threatcol/);
    assert.doesNotMatch(purged, /not empty so not removed/);
    await ok('! test -e /etc/threatcol && getent group threatcol');
    assert.equal(await ok('id -u threatcol'), uid);
    await ok('test -d /var/lib/threatcol/threats');

    // Reinstall after purge: the same user still owns the old records, the service starts and serves them.
    await install(deb);
    assert.equal(await prop('ActiveState'), 'active');
    assert.equal(await ok("stat -c '%U' /var/lib/threatcol/sensors.json"), 'threatcol\n');
    assert.equal(await lastId(), secondId);
    await send();
    return { installMs, timeToActiveMs: Math.round((activeUs - startedUs) / 1000) };
  } finally {
    await c.close();
  }
}

/**
 * `systemctl reload` with no /bin/kill (procps is not in minbase): the same process reloads; a broken file fails
 * the reload with the reason while the service keeps running; the journal has each line's priority, so
 * `journalctl -p warning` finds the warnings and `-p err` the refusal.
 */
async function reloadAndJournal(
  c: BootContainer,
  ok: (script: string) => Promise<string>,
  prop: (name: string) => Promise<string>,
): Promise<void> {
  await ok('rm -f /bin/kill /usr/bin/kill');
  const pid = await prop('MainPID');
  await ok('systemctl reload threatcol');
  assert.equal(await prop('MainPID'), pid);
  await ok('cp -p /etc/threatcol/config.json /root/config.json');
  await ok(`printf '{ "log": ' > /etc/threatcol/config.json`);
  const refused = await c.sh('systemctl reload threatcol');
  assert.notEqual(refused.code, 0, 'a reload with a broken file fails');
  assert.equal(await prop('ActiveState'), 'active');
  assert.equal(await prop('MainPID'), pid);
  // The daemon's own status and log line follow the signal the reload command sent; it does not wait for them.
  await eventually('the status says the file was refused', async () =>
    /configuration NOT reloaded/.test(await prop('StatusText')),
  );
  await eventually('the refusal is in the journal at priority err', async () =>
    /configuration not reloaded/.test(await ok('journalctl -u threatcol -p err -o cat --no-pager')),
  );
  await ok('cp -p /root/config.json /etc/threatcol/config.json && systemctl reload threatcol');
  // A rejected request is a warning; an info line is not one.
  await c.sh("threatcol send generic --sample --sensor nosuch --key 'tck_wrong'");
  const warnings = () => ok('journalctl -u threatcol -p warning -o cat --no-pager');
  await eventually('a warning in the journal', async () => /AUTH_INVALID/.test(await warnings()));
  assert.doesNotMatch(await warnings(), /threatcol is listening/);
  assert.doesNotMatch(await warnings(), /^\{/m, 'readable text, not JSON');
}

async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; !(await check()); attempt++) {
    if (attempt >= 40) assert.fail(`${what}: not within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function journal(c: BootContainer): Promise<string> {
  const r = await c.sh('journalctl -u threatcol -o cat --no-pager | tail -30');
  return `\njournal:\n${r.stdout}`;
}
