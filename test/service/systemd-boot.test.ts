// The shipped units under a real systemd as PID 1 (systemd-nspawn --boot; see boot-container.ts): start and
// reload at once, reload during start, LISTEN_FAILED does not restart-loop, a bad configuration under socket
// activation keeps the socket listening and recovers by itself, switching variants as docs/operations.md says, and the
// live exposure scores. Expensive (a container boot, a dozen daemon starts): only with SYSTEMD_BOOT=1.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type BootContainer, bootContainer, bootUnavailable } from './boot-container.js';

const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const reason =
  process.env.SYSTEMD_BOOT !== '1'
    ? 'set SYSTEMD_BOOT=1 to boot the units under systemd in a container (about a minute, root only)'
    : await bootUnavailable();
if (reason) console.log(`# systemd-boot: skipped: ${reason}`);

const show = async (c: BootContainer, unit: string, props: string): Promise<Record<string, string>> => {
  const r = await c.sh(`systemctl show -p ${props} ${unit}`);
  return Object.fromEntries(
    r.stdout
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
};
const exposure = async (c: BootContainer, unit: string): Promise<number> => {
  const r = await c.sh(`systemd-analyze security --no-pager ${unit}`);
  const m = /Overall exposure level for \S+: (\d+(?:\.\d+)?)/.exec(r.stdout);
  assert.ok(m, r.stdout + r.stderr);
  return Number(m[1]);
};
let container: BootContainer | null = null;
const waitUntil = async (what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) {
      const journal = await container?.sh(
        'journalctl -u threatcol.service -u threatcol.socket -o cat --no-pager | tail -30',
      );
      assert.fail(`timed out waiting for ${what}; the journal ends:\n${journal?.stdout}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
};

test('the units under a live systemd: readiness, reload, start limits, socket activation, exposure', {
  skip: reason ?? false,
  timeout: 600_000,
}, async (t) => {
  const c = await bootContainer(CHECKOUT);
  container = c;
  t.after(() => c.close());
  const version = (await c.sh('systemctl --version')).stdout.split('\n')[0];
  t.diagnostic(`container: ${version}`);
  const ok = async (script: string) => {
    const r = await c.sh(script);
    assert.equal(r.code, 0, `${script}: ${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  await ok(
    'useradd --system --user-group --no-create-home --home-dir /var/lib/threatcol --shell /usr/sbin/nologin threatcol',
  );
  await ok('ln -sf /usr/lib/node_modules/threatcol/bin/threatcol /usr/local/bin/threatcol');

  // Plain unit: start returns once serving; a reload right after it never kills the daemon.
  await ok('threatcol systemd-unit --output-dir /etc/systemd/system && systemctl daemon-reload');
  await ok('systemctl enable --now threatcol');
  const started = await show(c, 'threatcol', 'ActiveState,SubState,MainPID');
  assert.equal(started.ActiveState, 'active');
  for (let i = 0; i < 5; i++) await ok('systemctl restart threatcol && systemctl reload threatcol');
  // RELOADING=1 ... READY=1: "reloading" until READY=1 has been read, then active.
  await waitUntil(
    'active after the reloads',
    async () => (await show(c, 'threatcol', 'ActiveState')).ActiveState === 'active',
  );
  const afterReloads = await show(c, 'threatcol', 'ActiveState,NRestarts,MainPID');
  assert.equal(afterReloads.NRestarts, '0');
  const journal = (await c.sh('journalctl -u threatcol -o cat --no-pager')).stdout;
  assert.equal(journal.match(/reason=SIGHUP/g)?.length, 5, journal);
  assert.doesNotMatch(journal, /status=1\/HUP/);

  // A reload while it starts (--no-block: start has not finished): never fatal; what systemctl says is reported.
  const cursor = (await c.sh('journalctl -u threatcol -o cat --no-pager | wc -l')).stdout.trim();
  const during = await c.sh(
    'systemctl restart --no-block threatcol; a=$(date +%s%N); systemctl reload threatcol; r=$?; b=$(date +%s%N); ' +
      'echo "reload exit $r after $(( (b - a) / 1000000 )) ms, then $(systemctl show -p ActiveState --value threatcol)"',
  );
  await waitUntil(
    'active after a reload during start',
    async () => (await show(c, 'threatcol', 'ActiveState')).ActiveState === 'active',
  );
  const afterDuring = (
    await c.sh(`journalctl -u threatcol -o cat --no-pager | tail -n +${Number(cursor) + 1}`)
  ).stdout;
  t.diagnostic(
    `reload during start: ${(during.stdout + during.stderr).trim().replaceAll('\n', ' | ')}; ` +
      `SIGHUP reloads logged: ${afterDuring.match(/reason=SIGHUP/g)?.length ?? 0}, ` +
      `held during start-up: ${afterDuring.includes('SIGHUP received during start-up')}`,
  );
  assert.doesNotMatch(afterDuring, /status=1\/HUP/);
  assert.equal((await show(c, 'threatcol', 'NRestarts')).NRestarts, '0');
  t.diagnostic(`exposure live, plain: ${await exposure(c, 'threatcol.service')}`);

  // An output under the shipped sandbox: its thread runs 15 nice levels below the service (the system call
  // filter lets setpriority through), and the journal has no "outputs run at the priority of ingest".
  await ok(
    `mkdir -p /etc/threatcol && echo '{"outputs":{"hook":{"type":"webhook","url":"http://127.0.0.1:9/"}}}' > /etc/threatcol/config.json`,
  );
  await ok('systemctl restart threatcol');
  const nices = await ok(
    'for t in /proc/$(systemctl show -p MainPID --value threatcol)/task/*; do cut -d" " -f19 $t/stat; done | sort -n | uniq -c',
  );
  assert.match(nices, /^\s*1 15$/m, `one thread at nice 15:\n${nices}`);
  assert.doesNotMatch((await c.sh('journalctl -u threatcol -o cat --no-pager')).stdout, /priority of ingest/);
  await ok('rm /etc/threatcol/config.json && systemctl restart threatcol');

  // LISTEN_FAILED (69): fails once, no restart every 2 s.
  await ok(`mkdir -p /etc/threatcol && echo '{"server":{"host":"192.0.2.1"}}' > /etc/threatcol/config.json`);
  const failed = await c.sh('systemctl restart threatcol');
  assert.notEqual(failed.code, 0, 'systemctl restart succeeded with a listen address that does not exist');
  await new Promise((r) => setTimeout(r, 6000));
  const listenFailed = await show(c, 'threatcol', 'ActiveState,Result,ExecMainStatus,NRestarts');
  assert.deepEqual(listenFailed, {
    ActiveState: 'failed',
    Result: 'exit-code',
    ExecMainStatus: '69',
    NRestarts: '0',
  });
  await ok('rm /etc/threatcol/config.json && systemctl reset-failed threatcol');

  // Switch to socket activation as docs/operations.md says.
  await ok('systemctl disable --now threatcol');
  await ok('threatcol systemd-unit --socket --output-dir /etc/systemd/system && systemctl daemon-reload');
  await ok('systemctl enable --now threatcol.socket');
  assert.equal((await c.sh('ls /etc/systemd/system/multi-user.target.wants/threatcol.service')).code, 2);
  // A connection starts the service; restart + reload at once survives here too.
  await ok('threatcol check --port 443 >/dev/null || true');
  await waitUntil(
    'socket-activated service active',
    async () => (await show(c, 'threatcol', 'ActiveState')).ActiveState === 'active',
  );
  for (let i = 0; i < 3; i++) await ok('systemctl restart threatcol && systemctl reload threatcol');
  await waitUntil(
    'socket-activated service active after the reloads',
    async () => (await show(c, 'threatcol', 'ActiveState')).ActiveState === 'active',
  );
  assert.equal((await show(c, 'threatcol', 'NRestarts')).NRestarts, '0');
  t.diagnostic(`exposure live, socket-activated: ${await exposure(c, 'threatcol.service')}`);

  // A bad configuration with a connection waiting: the socket keeps listening, the service retries slowly.
  await ok('systemctl stop threatcol.service');
  await ok(`echo '{"nope":1}' > /etc/threatcol/config.json`);
  await ok(
    `nohup node -e "require('net').connect(443,'127.0.0.1').on('error',()=>{});setTimeout(()=>{},60000)" >/dev/null 2>&1 &`,
  );
  const since = Date.now();
  await new Promise((r) => setTimeout(r, 20_000));
  const socket = await show(c, 'threatcol.socket', 'ActiveState,Result');
  const attempts = (
    await c.sh('journalctl -u threatcol.service -o cat --no-pager | grep -c CONFIG_INVALID')
  ).stdout.trim();
  t.diagnostic(
    `bad config, 20 s with a connection waiting: socket ${socket.ActiveState} (${socket.Result}), ${attempts} failed starts`,
  );
  const tried = (await c.sh('journalctl -u threatcol.service -o short-monotonic --no-pager | tail -40'))
    .stdout;
  assert.equal(socket.ActiveState, 'active', `the socket closed:\n${tried}`);
  // Fixed: the next retry serves, no command needed.
  await ok('rm /etc/threatcol/config.json');
  await waitUntil(
    'recovery after the fix',
    async () => (await show(c, 'threatcol', 'ActiveState')).ActiveState === 'active',
    20_000,
  );
  t.diagnostic(
    `recovered ${((Date.now() - since) / 1000).toFixed(1)} s after the bad config was written (20 s of it waiting)`,
  );

  // disable of the service disables the socket too (Also=), as docs/operations.md warns.
  await ok('systemctl disable threatcol.service');
  assert.equal((await c.sh('systemctl is-enabled threatcol.socket')).stdout.trim(), 'disabled');
});
