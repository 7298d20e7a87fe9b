// `send`'s default target is https://localhost:<server.port>: it must reach the local collector where
// /etc/hosts is missing or empty (a minimal container, a chroot), as 127.0.0.1 does. The real binary runs in
// a mount namespace whose /etc/hosts is empty and whose resolver points at an unused loopback port, so no
// query leaves the box.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { namespaceUnavailable } from '../helpers/needs.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('send reaches https://localhost without /etc/hosts', {
  // A mount namespace hides /etc/hosts.
  skip: namespaceUnavailable('mount'),
}, async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'fw1');
  const serve = await spawnServe(dataDir);
  t.after(() => serve.stop('SIGKILL'));
  const etc = makeTempDir(t);
  writeFileSync(join(etc, 'hosts'), '');
  writeFileSync(join(etc, 'resolv.conf'), 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
  const config = join(etc, 'config.json');
  writeFileSync(config, JSON.stringify({ server: { port: serve.port } }));
  const prefix = [
    'unshare',
    '--mount',
    'sh',
    '-c',
    `mount --bind ${etc}/hosts /etc/hosts && mount --bind ${etc}/resolv.conf /etc/resolv.conf && exec "$@"`,
    'sh',
  ];
  // No --url: the default, https://localhost:<server.port>, trusting the local collector's own certificate.
  const args = ['send', 'generic', '--sample', '--config', config, '--data-dir', dataDir, '--sensor', 'fw1'];
  const r = await runCli([...args, '--key', key, '--json'], { prefix });
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { status: number }).status, 200);
  // The namespace did hide the file: the system resolver cannot name localhost there.
  const probe = spawnSync(prefix[0] as string, [...prefix.slice(1), 'getent', 'hosts', 'localhost']);
  assert.notEqual(probe.status, 0, 'getent still resolves localhost: /etc/hosts was not hidden');
});
