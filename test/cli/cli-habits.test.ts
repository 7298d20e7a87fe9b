// One CLI, one set of habits: usage errors in one format and code, one JSON document per --json, send's trust
// and URL handling, systemd-unit's /tmp warning, check's own-port and environment lines, config hints.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { addSensorCli, type CliResult, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let serve: ServeProcess;
let dataDir: string;
let key: string;

before(async () => {
  dataDir = makeTempDir();
  serve = await spawnServe(dataDir);
  key = await addSensorCli(dataDir, 'fw');
});
after(() => serve.stop());

/** A usage error: exit 64, `threatcol: USAGE: ...` and one hint line naming the command's help, nothing else. */
function assertUsage(r: CliResult, command: string, label: string): void {
  assert.equal(r.code, 64, `${label}: ${r.stderr}`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 2, `${label}: ${r.stderr}`);
  assert.match(lines[0] as string, /^threatcol: USAGE: \S/, label);
  assert.equal(lines[1], `see threatcol ${command} --help`.replace(/ +--help$/, ' --help'), label);
  assert.doesNotMatch(r.stderr, /Usage:|Options:/, label);
}

test('argument mistakes are USAGE 64 with one hint line, the same in every command', async () => {
  const cases: [string[], string][] = [
    [['sensor', 'add'], 'sensor add'],
    [['sensor', 'add', 'a', 'b'], 'sensor add'],
    [['serve', '--bogus'], 'serve'],
    [['nonsense'], ''],
    [['sensor', 'add', 'tz', '--timezone', 'Mars/Olympus', '--data-dir', dataDir], 'sensor add'],
    [['sensor', 'set', 'fw', '--timezone', 'Mars/Olympus', '--data-dir', dataDir], 'sensor set'],
    [['sensor', 'rotate', 'fw', '--grace', '1 fortnight', '--data-dir', dataDir], 'sensor rotate'],
    [['threats', 'tail', '-n', 'ten', '--no-follow', '--data-dir', dataDir], 'threats tail'],
    [['send', 'generic', '--sample', '--count', 'many'], 'send'],
    [['serve', '--port', 'https', '--data-dir', dataDir], 'serve'],
    [['check', '--port', '99999', '--data-dir', dataDir], 'check'],
  ];
  for (const [args, command] of cases) {
    const r = await runCli(args);
    assertUsage(r, command === '' ? '' : command, args.join(' '));
    if (command === '') assert.match(r.stderr, /\nsee threatcol --help\n$/);
  }
});

test('a bare threatcol lists the commands and exits 64; help COMMAND SUB shows that command', async () => {
  const bare = await runCli([]);
  assert.equal(bare.code, 64);
  assert.match(bare.stderr, /Commands:\n[\s\S]*sensor[\s\S]*send/);
  const help = await runCli(['help', 'sensor', 'add']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: threatcol sensor add \[options\] <name>/m);
  assert.match(help.stdout, /--timezone <iana>/);
});

test('--json prints one JSON document, indented the same way, in every command', async () => {
  const work = makeTempDir();
  const dir = join(work, 'd');
  const runs: [string, string[]][] = [
    ['sensor add', ['sensor', 'add', 'j1', '--data-dir', dir, '--json']],
    ['sensor rotate', ['sensor', 'rotate', 'j1', '--data-dir', dir, '--json']],
    ['sensor set', ['sensor', 'set', 'j1', '--description', 'x', '--data-dir', dir, '--json']],
    ['sensor list', ['sensor', 'list', '--data-dir', dir, '--json']],
    ['sensor show', ['sensor', 'show', 'j1', '--data-dir', dir, '--json']],
    ['sensor show --firewall', ['sensor', 'show', 'j1', '--firewall', '--data-dir', dir, '--json']],
    ['sensor delete', ['sensor', 'delete', 'j1', '--yes', '--data-dir', dir, '--json']],
    ['threats stats', ['threats', 'stats', '--data-dir', dataDir, '--json']],
    ['check', ['check', '--no-daemon', '--data-dir', dataDir, '--port', '0', '--json']],
    [
      'send',
      [
        'send',
        'generic',
        '--sample',
        '--url',
        serve.url,
        '--sensor',
        'fw',
        '--key',
        key,
        '--data-dir',
        dataDir,
        '--json',
      ],
    ],
  ];
  for (const [label, args] of runs) {
    const r = await runCli(args);
    assert.equal(r.code, 0, `${label}: ${r.stderr}`);
    const doc = JSON.parse(r.stdout) as unknown;
    assert.equal(r.stdout, `${JSON.stringify(doc, null, 2)}\n`, label);
  }
  const firewall = JSON.parse(
    (await runCli(['sensor', 'show', 'fw', '--firewall', '--data-dir', dataDir, '--json'])).stdout,
  );
  assert.equal(firewall.uri, '/firewall');
  assert.equal(firewall.headers['X-SENSOR_NAME'], 'fw');
  assert.match(firewall.payload, /"sport":"\$sport"/);
});

test('send: trusts the local collector by --data-dir, honest hints, URL paths, shared key files', async () => {
  const work = makeTempDir();
  const base = ['send', 'generic', '--sample', '--sensor', 'fw'];
  // No --ca, --fingerprint or --insecure: the local collector's own certificate from its data directory.
  const trusted = await runCli([...base, '--url', serve.url, '--key', key, '--data-dir', dataDir]);
  assert.equal(trusted.code, 0, trusted.stderr);
  assert.match(trusted.stdout, /^200 OK/);
  // Without it, the system CAs, which do not know a self-signed certificate.
  const other = join(work, 'empty');
  mkdirSync(other);
  const untrusted = await runCli([...base, '--url', serve.url, '--key', key, '--data-dir', other]);
  assert.equal(untrusted.code, 69);
  assert.match(untrusted.stderr, /self-signed: pin it with --fingerprint .* or trust it with --ca/);
  // With --ca given (another certificate), the hint does not suggest --ca again.
  const wrongCa = join(work, 'wrong.pem');
  writeSelfSigned(wrongCa, join(work, 'wrong.key'), { cn: 'localhost', days: 1 });
  const withCa = await runCli([...base, '--url', serve.url, '--key', key, '--ca', wrongCa]);
  assert.equal(withCa.code, 69, withCa.stderr);
  assert.doesNotMatch(withCa.stderr, /trust it with --ca|pass (the|that) CA with --ca/);
  assert.match(withCa.stderr, /not the one in --ca .*wrong\.pem/);
  // A URL ending in the endpoint is used as given; one ending in the other endpoint is refused, shown.
  const given = await runCli([...base, '--url', `${serve.url}/generic`, '--key', key, '--data-dir', dataDir]);
  assert.equal(given.code, 0, given.stderr);
  const crossed = await runCli([
    ...base,
    '--url',
    `${serve.url}/firewall`,
    '--key',
    key,
    '--data-dir',
    dataDir,
  ]);
  assertUsage(crossed, 'send', 'crossed endpoint');
  assert.ok(crossed.stderr.includes(`${serve.url}/firewall`), crossed.stderr);
  // A key file other users can read: a warning, and it still works.
  const shared = join(work, 'shared.key');
  writeFileSync(shared, `${key}\n`, { mode: 0o644 });
  const warned = await runCli([...base, '--url', serve.url, '--key-file', shared, '--data-dir', dataDir]);
  assert.equal(warned.code, 0, warned.stderr);
  assert.match(
    warned.stderr,
    /warning: the key file .*shared\.key is readable by other users \(mode 0644\): chmod 600/,
  );
});

test('systemd-unit warns when the installation lives under /tmp (hidden by PrivateTmp=yes)', async (t) => {
  const copy = makeTempDir(t, 'threatcol-install-');
  for (const dir of ['bin', 'dist', 'systemd']) cpSync(join(ROOT, dir), join(copy, dir), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  const r = await runCli(['systemd-unit'], { bin: join(copy, 'bin', 'threatcol') });
  assert.equal(r.code, 0, r.stderr);
  // "are under" when the runtime (node_modules/node-linux-*, in a checkout under /tmp) is there too.
  assert.match(
    r.stderr,
    /warning: .*threatcol-install-.* (is|are) under \/tmp, which the unit's PrivateTmp=yes/,
  );
  // The checkout itself gets the warning only if it lives under /tmp (a CI clone might).
  const here = await runCli(['systemd-unit']);
  if (ROOT.startsWith('/tmp/')) assert.match(here.stderr, /under \/tmp/);
  else assert.doesNotMatch(here.stderr, /under \/tmp/);
});

test('check --no-daemon knows threatcol holds the port, says which THREATCOL_* it used; check leaves no journal lines', async () => {
  const logged = serve.logs.length;
  const r = await runCli(
    ['check', '--no-daemon', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', String(serve.port)],
    { env: { THREATCOL_LOG_LEVEL: 'info' } },
  );
  assert.match(r.stdout, /^OK +port +port \d+ is (in use by|held by) the answering daemon/m);
  assert.match(r.stdout, /^OK +config +no configuration file; defaults and THREATCOL_LOG_LEVEL, valid$/m);
  assert.doesNotMatch(r.stdout, /no configuration file: defaults/);
  // With the daemon check too: a TLS handshake, no request (readiness is the admin listener's /readyz).
  const full = await runCli([
    'check',
    '--data-dir',
    dataDir,
    '--host',
    '127.0.0.1',
    '--port',
    String(serve.port),
  ]);
  assert.match(
    full.stdout,
    /^OK +daemon +answering on https:\/\/127\.0\.0\.1:\d+\/ \(TLS\), certificate sha256 /m,
  );
  // Neither left a line in the daemon's journal at warn or above (a request to / used to: NOT_FOUND).
  await new Promise((res) => setTimeout(res, 300));
  const after = serve.logs.slice(logged).filter((l) => Number(l.level) >= 40);
  assert.deepEqual(after, []);
});

test('config mistakes suggest the nearest key; a JSON variable says it takes JSON', async (t) => {
  const work = makeTempDir(t);
  const file = join(work, 'config.json');
  writeFileSync(file, '{"server": {"prot": 8443}, "port": 1}');
  const r = await runCli(['sensor', 'list', '--config', file, '--data-dir', dataDir]);
  assert.equal(r.code, 78);
  assert.match(r.stderr, /server\.prot: unknown key \(did you mean server\.port\?\)/);
  assert.match(r.stderr, /port: unknown key \(did you mean server\.port\?\)/);
  const env = await runCli(['sensor', 'list', '--data-dir', dataDir], {
    env: { THREATCOL_SERVER_PROT: '1' },
  });
  assert.match(
    env.stderr,
    /THREATCOL_SERVER_PROT: unknown environment variable \(did you mean THREATCOL_SERVER_PORT\?\)/,
  );
  const json = await runCli(['sensor', 'list', '--data-dir', dataDir], {
    env: { THREATCOL_FIREWALL_CRITICALITY_BY_CATEGORY: '{virus: 4}' },
  });
  assert.equal(json.code, 78);
  assert.match(json.stderr, /THREATCOL_FIREWALL_CRITICALITY_BY_CATEGORY: takes a JSON object, e\.g\./);
});
