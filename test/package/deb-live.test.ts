// The package on a fresh Debian with no Node, under a real systemd (debootstrap + systemd-nspawn --boot, as the
// systemd-boot test): apt install -> service active and serving; sensor add, send --sample and threats tail as
// root with no --data-dir; an upgrade keeps sensors and records and restarts, refusing connections for at most
// 2 s (a client tries every 50 ms; the socket-activated variant too); remove keeps config and data; purge removes
// the package's config but keeps what the admin put in /etc/threatcol, the records and the user; reinstall after
// purge serves the old records; policy-rc.d is obeyed; reload without /bin/kill, journal priorities and a clean
// `check` on a fresh install; and install and purge succeed in a container without systemd (purge leaving no
// /etc/threatcol). Debian 12, and 13 where debootstrap can fetch
// it. Expensive (a Debian root per release, cached; a package build): only with PACKAGE_BOOT=1, as root.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildDeb } from '../../packaging/deb/build.js';
import { shippedDataStatus } from '../helpers/shipped-data.js';
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
         threatcol --version
         DEBIAN_FRONTEND=noninteractive apt-get purge -y -q threatcol
         ! test -e /etc/threatcol`,
      );
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, /^threatcol:[^\n]*\/var\/lib\/threatcol/m);
      assert.match(r.output, /^threatcol:threatcol 700$/m);
      assert.match(r.output, /^root:threatcol 640$/m);
      assert.doesNotMatch(r.output, /not empty so not removed|kept in \/etc\/threatcol/);
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
    // A fresh install passes its own check: no WARN or FAIL (the data directory's mode agrees with the unit's),
    // but the shipped enrichment data's age once it is older than enrich.maxAgeDays (the package's are this
    // checkout's: shipped-data.ts).
    const checked = await ok('threatcol check 2>&1');
    const expected = (['country', 'asn'] as const).filter((kind) => shippedDataStatus(kind) === 'warn');
    const others = checked
      .split('\n')
      .filter(
        (l) =>
          !expected.some((kind) =>
            new RegExp(`^WARN\\s+enrich ${kind}\\s.*older than enrich\\.maxAgeDays`).test(l),
          ),
      )
      .join('\n');
    assert.doesNotMatch(others, /^(WARN|FAIL)/m, checked);
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

    // Upgrade: same sensors and records, the service restarted on the new files, and connections refused for
    // at most 2 s while apt runs (a client tries the HTTPS port every 50 ms the whole time).
    await ok('cp /usr/lib/threatcol/bin/node /root/node');
    const upgrade = await whileProbed(c, ok, () => install(upgradeDeb));
    assert.match(await ok('dpkg-query -W threatcol'), /\t[^\n]*-99\n$/);
    assert.equal(await prop('ActiveState'), 'active');
    assert.notEqual(await prop('MainPID'), pidBefore, 'restarted');
    assert.match(await ok('threatcol sensor list'), /\blab\b/);
    assert.equal(await lastId(), firstId);
    await send();

    // policy-rc.d says no: a reinstall neither stops nor restarts the service.
    const pidRunning = await prop('MainPID');
    await ok("printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d");
    await install(upgradeDeb, '--reinstall');
    assert.equal(await prop('MainPID'), pidRunning, 'policy-rc.d obeyed');
    await ok('rm /usr/sbin/policy-rc.d');

    // The socket-activated variant: systemd's socket keeps listening through the upgrade, so no connection is
    // refused at all (they wait in its backlog while the service restarts).
    await ok('systemctl disable --now threatcol.service && systemctl enable --now threatcol.socket');
    const socketUpgrade = await whileProbed(c, ok, () => install(upgradeDeb, '--reinstall'));
    assert.equal((await ok('systemctl is-active threatcol.socket')).trim(), 'active');
    assert.equal((await ok('systemctl is-active threatcol-socket.service')).trim(), 'active');
    await ok(
      'systemctl disable --now threatcol.socket threatcol-socket.service && systemctl enable --now threatcol',
    );
    const newestId = await send();

    // Remove: stopped, config and data kept.
    await ok('DEBIAN_FRONTEND=noninteractive apt-get remove -y -q threatcol');
    assert.notEqual((await c.sh('systemctl is-active threatcol')).stdout.trim(), 'active');
    await ok('test -f /etc/threatcol/config.json && test -f /var/lib/threatcol/sensors.json');
    await ok('! test -e /usr/bin/threatcol');

    // Purge: the package's config gone, what the admin put in /etc/threatcol kept (and named); records, the
    // user and the group kept (and said so), so no later system user gets the uid that owns them; nothing left
    // under /lib (DEP-17). A purge with nothing of the admin's removes /etc/threatcol: the test without systemd.
    await ok(
      'echo relay > /etc/threatcol/relay.pem && mkdir /etc/threatcol/tls && echo cert > /etc/threatcol/tls/cert.pem',
    );
    await ok('cp /etc/threatcol/config.json /etc/threatcol/config.json.dpkg-old');
    const uid = await ok('id -u threatcol');
    const purged = await ok('DEBIAN_FRONTEND=noninteractive apt-get purge -y -q threatcol 2>&1');
    assert.match(purged, /records and sensors kept in \/var\/lib\/threatcol/);
    assert.match(
      purged,
      /^threatcol: kept in \/etc\/threatcol what the package did not install: relay\.pem tls\/ /m,
      purged,
    );
    // dpkg's own word after the scripts': about /etc/threatcol alone, the directory the admin's files keep.
    for (const warning of purged.match(/^.*not empty so not removed.*$/gm) ?? []) {
      assert.match(warning, /directory '\/etc\/threatcol' not empty/);
    }
    assert.equal(await ok('cd /etc/threatcol && find . | sort'), '.\n./relay.pem\n./tls\n./tls/cert.pem\n');
    await ok('getent group threatcol');
    assert.equal(await ok('id -u threatcol'), uid);
    await ok('test -d /var/lib/threatcol/threats');

    // Reinstall after purge: the same user still owns the old records, the service starts and serves them.
    await install(deb);
    assert.equal(await prop('ActiveState'), 'active');
    assert.equal(await ok("stat -c '%U' /var/lib/threatcol/sensors.json"), 'threatcol\n');
    assert.equal(await lastId(), newestId);
    await send();
    return {
      installMs,
      timeToActiveMs: Math.round((activeUs - startedUs) / 1000),
      upgradeMs: upgrade.ms,
      upgradeRefusedMs: upgrade.refusedMs,
      socketUpgradeMs: socketUpgrade.ms,
      socketUpgradeRefusedMs: socketUpgrade.refusedMs,
    };
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

/**
 * Runs `action` (an apt command) while a client in the container connects to the HTTPS port every 50 ms (TLS
 * handshake and an HTTP answer, any status: the collector served it), from a second before to a second after.
 * Returns how long `action` took and the longest run of failed attempts (refused, reset, no answer within 5 s),
 * from the first failure to the next answer; asserts it is at most 2 s.
 */
async function whileProbed(
  c: BootContainer,
  ok: (script: string) => Promise<string>,
  action: () => Promise<unknown>,
): Promise<{ ms: number; refusedMs: number }> {
  await ok(
    `rm -f /root/probe.stop /root/probe.json /root/probe.ok; cat > /root/probe.mjs <<'EOF'\n${PROBE}\nEOF`,
  );
  await ok('nohup /root/node /root/probe.mjs > /root/probe.log 2>&1 &');
  await eventually('the probe is answered', async () => (await c.sh('test -s /root/probe.ok')).code === 0);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const t0 = Date.now();
  await action();
  const ms = Date.now() - t0;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await ok('touch /root/probe.stop');
  await eventually(
    'the probe wrote its results',
    async () => (await c.sh('test -s /root/probe.json')).code === 0,
  );
  const attempts = JSON.parse(await ok('cat /root/probe.json')) as [number, number, string][];
  let refusedMs = 0;
  let worst = '';
  for (let i = 0; i < attempts.length; i++) {
    if (attempts[i]?.[2] === 'ok') continue;
    const first = attempts[i] as [number, number, string];
    let j = i;
    while (j < attempts.length && attempts[j]?.[2] !== 'ok') j++;
    const end = attempts[j]?.[0] ?? Date.now();
    if (end - first[0] > refusedMs) {
      refusedMs = end - first[0];
      worst = `${j - i} attempts failed (${[...new Set(attempts.slice(i, j).map((a) => a[2]))].join(', ')})`;
    }
    i = j;
  }
  const line = `apt took ${ms} ms; longest refusal ${refusedMs} ms${worst ? `: ${worst}` : ''}; ${attempts.length} attempts`;
  console.log(`# upgrade: ${line}`);
  assert.ok(attempts.length > ms / 200, `the probe ran: ${line}`);
  if (refusedMs > 2000) {
    const log = await c.sh('journalctl -o short-precise --no-pager -n 60 | grep -v probe');
    assert.fail(`connections refused for at most 2 s during the upgrade: ${line}\n${log.stdout}`);
  }
  return { ms, refusedMs };
}

/** The probe, run on a copy of the bundled Node (an upgrade replaces the package's own). */
const PROBE = `import { existsSync, writeFileSync } from 'node:fs';
import tls from 'node:tls';
const attempts = [];
const once = () => new Promise((resolve) => {
  const start = Date.now();
  let done = false;
  const end = (outcome) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    socket.destroy();
    resolve([start, Date.now() - start, outcome]);
  };
  const socket = tls.connect({ host: '127.0.0.1', port: 443, rejectUnauthorized: false, servername: 'localhost' });
  const timer = setTimeout(() => end('timeout'), 5000);
  socket.on('secureConnect', () => socket.write('GET / HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n'));
  socket.on('data', (d) => end(/^HTTP\\/1\\.1 \\d{3} /.test(d.toString('latin1')) ? 'ok' : 'garbled'));
  socket.on('error', (e) => end(e.code ?? e.message));
  socket.on('close', () => end('closed'));
});
while (!existsSync('/root/probe.stop')) {
  const a = await once();
  attempts.push(a);
  if (a[2] === 'ok' && !existsSync('/root/probe.ok')) writeFileSync('/root/probe.ok', 'ok');
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, 50 - a[1])));
}
writeFileSync('/root/probe.json', JSON.stringify(attempts));`;

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
