// A command loads only what it runs: which modules the real CLI loads, recorded by a loader hook from outside.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { addSensorCli, BIN, cleanEnv, spawnServe } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const RECORDER = fileURLToPath(new URL('../helpers/record-loads.mjs', import.meta.url));

/** What no command that only prints from its own definitions may load (store-format.js, search-limits.js and syslog-formats.js are one constant each). */
const HEAVY =
  /node_modules\/(pino|pino-pretty|ajv|undici|@nats-io\/[^/]+|lowdb|proper-lockfile|prom-client|@peculiar\/x509|nodemailer)\/|\/dist\/(store\/(?!store-format\.js|search-limits\.js|sensor-syslog\.js|syslog-formats\.js)|server|daemon\/(?!startup-signals)|admin|cluster|client|check|tls|config\/load-config|log\.js)/;

async function loadedBy(t: Parameters<typeof makeTempDir>[0], args: string[]) {
  const file = join(makeTempDir(t), 'loaded');
  const child = spawn(process.execPath, ['--import', RECORDER, BIN, ...args], {
    env: cleanEnv({ LOADED_MODULES_FILE: file }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stdout.resume();
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, `${args.join(' ')}: ${stderr}`);
  return readFileSync(file, 'utf8').trim().split('\n');
}

const heavy = (urls: string[]) => urls.filter((u) => HEAVY.test(u));

test('--version loads neither commander nor a command definition, let alone the heavy modules', async (t) => {
  for (const args of [['--version'], ['--version', '--json'], ['-V']]) {
    const urls = await loadedBy(t, args);
    assert.deepEqual(heavy(urls), [], args.join(' '));
    assert.deepEqual(
      urls.filter((u) =>
        /node_modules\/commander\/|\/dist\/cli\/(program|sensor|threats|send|serve)/.test(u),
      ),
      [],
      args.join(' '),
    );
  }
});

test('completion SHELL prints its pre-rendered script without commander or the command tree', async (t) => {
  for (const shell of ['bash', 'zsh', 'fish']) {
    const urls = await loadedBy(t, ['completion', shell]);
    assert.deepEqual(
      urls.filter((u) => HEAVY.test(u) || /node_modules\/commander\/|\/dist\/cli\/(program|manual)/.test(u)),
      [],
      shell,
    );
  }
});

test('help, a command group, completion and send --help load the definitions only', async (t) => {
  for (const args of [
    ['--help'],
    ['help', 'sensor', 'add'],
    ['sensor', '--help'],
    ['send', '--help'],
    ['completion', 'bash'],
    ['completion', 'zsh'],
  ]) {
    const urls = await loadedBy(t, args);
    assert.deepEqual(heavy(urls), [], args.join(' '));
    // The reference prose is for the man pages and docs/cli.md: the help and the completion do without it.
    assert.deepEqual(
      urls.filter((u) => u.includes('/dist/cli/manual/text/')),
      [],
      args.join(' '),
    );
  }
});

/** The modules that define commands (one per command), and whole-program.ts, which loads them all. */
const DEFINITION =
  /\/dist\/cli\/(serve|check|reload|systemd-unit|send|store-migrate|completion|whole-program|sensor\/sensor-[a-z]+|threats\/threats-[a-z]+|outputs\/outputs-[a-z-]+)\.js$/;
const definitions = (urls: string[]) =>
  urls.filter((u) => DEFINITION.test(u)).map((u) => u.replace(/^.*\/dist\/cli\//, ''));

test('the program’s help loads no command definition, and on a pipe not commander: its text answers', async (t) => {
  for (const args of [['--help'], ['-h'], ['help']]) {
    const urls = await loadedBy(t, args);
    assert.ok(
      urls.some((u) => u.endsWith('/dist/generated/help-outline.js')),
      args.join(' '),
    );
    assert.deepEqual(definitions(urls), [], args.join(' '));
    assert.deepEqual(
      urls.filter((u) => /node_modules\/commander\/|\/dist\/cli\/program\.js/.test(u)),
      [],
      args.join(' '),
    );
  }
});

test('a command loads its own definition, not the other commands’', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensorCli(dataDir, 'fw');
  const cases: [string[], string[]][] = [
    [['sensor', 'list', '--json', '--data-dir', dataDir], ['sensor/sensor-list.js']],
    [['threats', 'tail', '-n', '10', '--no-follow', '--data-dir', dataDir], ['threats/threats-tail.js']],
    [['serve', '--help'], ['serve.js']],
    [['help', 'outputs', 'list'], ['outputs/outputs-list.js']],
  ];
  for (const [args, own] of cases) {
    const urls = await loadedBy(t, args);
    assert.deepEqual(definitions(urls), own, args.join(' '));
  }
});

test('sensor list loads the config loader and the store, not the logger, the lock or lowdb; sensor add does', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensorCli(dataDir, 'fw');
  const list = await loadedBy(t, ['sensor', 'list', '--data-dir', dataDir]);
  // What it does load: the recorder sees it (ES modules here).
  for (const part of [
    '/dist/config/load-config.js',
    '/dist/store/files/registry-file.js',
    '/dist/store/open-store.js',
  ])
    assert.ok(
      list.some((u) => u.includes(part)),
      `${part} not among ${list.length} modules`,
    );
  // pino is made at the first log line, the lock and lowdb only by a change: a listing has none of them.
  assert.deepEqual(
    list.filter((u) => /node_modules\/(pino|pino-pretty|proper-lockfile|graceful-fs|lowdb)\//.test(u)),
    [],
  );
  // The configuration's checks: only those of the keys given (here --data-dir's), not the outputs' 186 KB.
  assert.deepEqual(
    list.filter((u) => u.includes('/dist/generated/config-validator-')).map((u) => u.replace(/^.*\//, '')),
    ['config-validator-data-dir.cjs'],
  );
  // The segment readers are the records' (threats tail reads them), not the sensors'.
  const readers = /\/dist\/store\/files\/(read-records|scan-records|segment-lines)\.js$/;
  assert.deepEqual(
    list.filter((u) => readers.test(u)),
    [],
  );
  const tail = await loadedBy(t, ['threats', 'tail', '-n', '1', '--no-follow', '--data-dir', dataDir]);
  assert.ok(tail.some((u) => readers.test(u)));
  // The recorder sees CommonJS modules too: a change loads proper-lockfile and graceful-fs under it.
  const add = await loadedBy(t, ['sensor', 'add', 'fw2', '--data-dir', dataDir]);
  for (const part of ['node_modules/proper-lockfile/', 'node_modules/graceful-fs/', 'node_modules/lowdb/'])
    assert.ok(
      add.some((u) => u.includes(part)),
      `${part} not among ${add.length} modules`,
    );
});

test('serve with no output forwarding loads no HTTP client (undici, nodemailer, Node’s own undici), nor ajv', async (t) => {
  // Every start pays for what it loads (the suite starts serve hundreds of times). The outputs' clients load with
  // the first output that forwards; Node's bundled undici (fetch, WebSocket) comes with any ES-module import of
  // node:http, whose facade reads every export, its lazy getters included. ajv compiles the record schemas for
  // the first body the plain checkers refuse (the configuration's validator is compiled at build time).
  const file = join(makeTempDir(t), 'loaded');
  const serve = await spawnServe(makeTempDir(t), [], {
    env: { NODE_OPTIONS: `--import=${RECORDER}`, LOADED_MODULES_FILE: file },
  });
  t.after(() => serve.stop());
  assert.deepEqual(await serve.stop(), { code: 0, signal: null });
  const urls = readFileSync(file, 'utf8').trim().split('\n');
  assert.ok(
    urls.some((u) => u.endsWith('/dist/admin/admin-server.js')),
    `${urls.length} modules`,
  );
  assert.deepEqual(
    urls.filter((u) =>
      /node_modules\/(undici|nodemailer)\/|node_modules\/ajv\/dist\/(ajv|core)\.js$|^node:internal\/deps\/undici\//.test(
        u,
      ),
    ),
    [],
  );
});

test('serve on a fresh data directory makes its certificate without an X.509 library; the certificate is a server’s', async (t) => {
  // The self-signed certificate is encoded by threatcol itself: @peculiar/x509 (with tsyringe, reflect-metadata
  // and the asn1 schemas, ~180 modules) took ~170 ms of CPU of every first start, and the suite's starts are first.
  for (const keyType of ['ecdsa', 'rsa']) {
    const file = join(makeTempDir(t), 'loaded');
    const dataDir = makeTempDir(t);
    const serve = await spawnServe(dataDir, [], {
      env: {
        NODE_OPTIONS: `--import=${RECORDER}`,
        LOADED_MODULES_FILE: file,
        THREATCOL_TLS_SELF_SIGNED_KEY_TYPE: keyType,
      },
    });
    t.after(() => serve.stop());
    assert.deepEqual(await serve.stop(), { code: 0, signal: null });
    const urls = readFileSync(file, 'utf8').trim().split('\n');
    assert.deepEqual(
      urls.filter((u) =>
        /node_modules\/(@peculiar\/[^/]+|tsyringe|reflect-metadata|asn1js|pvtsutils)\//.test(u),
      ),
      [],
      keyType,
    );
    const cert = new X509Certificate(readFileSync(join(dataDir, 'tls', 'cert.pem')));
    assert.ok(cert.verify(cert.publicKey), keyType);
    assert.equal(cert.publicKey.asymmetricKeyType, keyType === 'rsa' ? 'rsa' : 'ec');
    assert.equal(cert.ca, false);
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.equal(cert.checkHost('localhost'), 'localhost');
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(cert.checkIP('::1'), '::1');
    assert.equal(cert.subject, cert.issuer);
    const years = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / (365 * 86_400_000);
    assert.ok(years > 4.9 && years < 5.1, `${years} years`);
  }
});
