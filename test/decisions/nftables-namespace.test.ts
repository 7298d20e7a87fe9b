// The nftables feed enforced for real: fetched from the collector over TLS, applied with Debian's `nft -f` in a
// network namespace made for the test, and a packet from the blocked address dropped on a veth pair between two
// namespaces while one from its neighbour passes. Root only (namespaces); every address is the test's own.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { request } from 'undici';
import { hashKey } from '../../src/keys.js';
import { openStore } from '../../src/store/open-store.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { namespaceUnavailable, needs } from '../helpers/needs.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const unavailable = namespaceUnavailable('net') || needs('nftables');

function sh(args: string[]): string {
  return execFileSync(args[0] as string, args.slice(1), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A TCP connection from `from` in `ns` to the listener on `to` (answered within 2 s), as node makes one. */
function connects(ns: string, from: string, to: string): boolean {
  const script = `const s = require('node:net').connect({ host: '${to}', port: ${PORT}, localAddress: '${from}' });
s.setTimeout(2000, () => process.exit(1)); s.on('error', () => process.exit(1)); s.on('data', () => process.exit(0));`;
  return spawnSync('ip', ['netns', 'exec', ns, process.execPath, '-e', script]).status === 0;
}

const PORT = 8080;

test('an nftables feed applied with nft -f drops packets from a blocked address between two namespaces', {
  skip: unavailable,
}, async (t) => {
  const id = randomBytes(3).toString('hex');
  const [a, b] = [`tc-a-${id}`, `tc-b-${id}`];
  t.after(() => {
    spawnSync('ip', ['netns', 'del', a]);
    spawnSync('ip', ['netns', 'del', b]);
  });
  sh(['ip', 'netns', 'add', a]);
  sh(['ip', 'netns', 'add', b]);
  sh(['ip', 'link', 'add', `va${id}`, 'netns', a, 'type', 'veth', 'peer', 'name', `vb${id}`, 'netns', b]);
  for (const [ns, dev, addresses] of [
    [a, `va${id}`, ['198.51.100.1/24', '198.51.100.3/24']],
    [b, `vb${id}`, ['198.51.100.2/24']],
  ] as const) {
    for (const address of addresses) sh(['ip', '-n', ns, 'addr', 'add', address, 'dev', dev]);
    sh(['ip', '-n', ns, 'link', 'set', dev, 'up']);
    sh(['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
  }
  // A listener in b, on the address of b's own end of the pair.
  const listener = spawn('ip', [
    'netns',
    'exec',
    b,
    process.execPath,
    '-e',
    `require('node:net').createServer((s) => s.end('ok')).listen(${PORT}, '198.51.100.2', () => console.log('ready'))`,
  ]);
  t.after(() => listener.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    listener.stdout.once('data', () => resolve());
    listener.once('exit', (code) => reject(new Error(`the listener exited (${code})`)));
  });
  assert.ok(connects(a, '198.51.100.1', '198.51.100.2'), 'the pair passes packets before the feed');

  const server = await startTestServer(t);
  const store = await openStore(server.loaded.config, {
    dataDir: server.dataDir,
    logger: pino({ level: 'silent' }),
  });
  t.after(() => store.close());
  const now = Date.now();
  await store.decisions.apply([
    {
      kind: 'feed',
      key: 'linux',
      value: {
        name: 'linux',
        format: 'nftables',
        passwordHash: hashKey('secret-password-nft'),
        maxEntries: null,
        family: 'any',
        createdAt: new Date(now).toISOString(),
        rotatedAt: null,
      },
    },
    {
      kind: 'block',
      key: '198.51.100.1/32',
      value: {
        address: '198.51.100.1/32',
        rule: 'manual',
        reason: 'test',
        since: new Date(now).toISOString(),
        until: new Date(now + 3_600_000).toISOString(),
        criticality: 4,
        records: 0,
        sensors: [],
        who: 'test',
      },
    },
  ]);
  let script = '';
  const started = Date.now();
  while (!script.includes('198.51.100.1')) {
    if (Date.now() - started > 15_000) assert.fail(`the feed never held the block: ${script}`);
    const res = await request(`${server.url}/feeds/linux`, {
      headers: { authorization: `Basic ${Buffer.from('linux:secret-password-nft').toString('base64')}` },
      dispatcher: server.agent,
    });
    script = await res.body.text();
  }
  const file = join(makeTempDir(t), 'feed.nft');
  writeFileSync(file, script);
  sh(['ip', 'netns', 'exec', b, 'nft', '-f', file]);
  assert.equal(connects(a, '198.51.100.1', '198.51.100.2'), false, 'the blocked address is dropped');
  assert.equal(connects(a, '198.51.100.3', '198.51.100.2'), true, 'its neighbour passes');
  // Applied again (a timer runs it every minute): still one table, still dropping.
  sh(['ip', 'netns', 'exec', b, 'nft', '-f', file]);
  assert.equal(connects(a, '198.51.100.1', '198.51.100.2'), false);
  assert.match(sh(['ip', 'netns', 'exec', b, 'nft', 'list', 'tables']), /^table inet threatcol$/m);
});
