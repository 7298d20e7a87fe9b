// Power cuts (LazyFS drops every byte not fsynced) under a RELP sender with a window of unanswered messages:
// every message the daemon answered `200 OK` before the cut is on the disk after it (RELP's promise, DESIGN 14).
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, spawnServe } from '../helpers/cli.js';
import { findLazyfs, mountLazyfs } from '../helpers/lazyfs.js';
import { connectRelp } from '../helpers/relp-client.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { LAZYFS_ENV, storedThreats } from './power-cut-support.js';
import { soak, stopAfter } from './support.js';

const CYCLES = 2;
const LOAD_MS = soak(1000, 10_000);
/** Messages the sender keeps unanswered at most (omrelp's default window is 128). */
const WINDOW = 64;

const lazyfs = await findLazyfs();

const message = (cycle: number, n: number) =>
  `<134>1 2026-11-26T12:00:00Z relay ids - - - CEF:0|t|ids|1|${n}|Relp cut ${cycle}-${n}|5|src=10.0.${(n >> 8) & 255}.${n & 255} dst=192.0.2.1 dpt=80 proto=TCP`;

test(`RELP power cut: ${CYCLES} cuts lose no message answered 200 OK before the cut`, {
  skip: 'skip' in lazyfs ? lazyfs.skip : false,
}, async (t) => {
  if (!('bin' in lazyfs)) return;
  const mount = await mountLazyfs(t, lazyfs.bin, { cacheMiB: soak(64, 512) });
  const dataDir = join(mount.dir, 'data');
  // The client's certificate lives outside the mount: the cut must not take it.
  const certPath = join(mount.disk, '..', 'relay.pem');
  const keyPath = join(mount.disk, '..', 'relay.key');
  writeSelfSigned(certPath, keyPath, { cn: 'relay' });
  const added = await runCli(
    [
      'sensor',
      'add',
      'relay',
      '--data-dir',
      dataDir,
      '--syslog',
      '--format',
      'cef',
      '--client-cert',
      certPath,
    ],
    { env: LAZYFS_ENV },
  );
  assert.equal(added.code, 0, added.stderr);
  const identity = { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
  const acked: string[] = [];
  const summary: string[] = [];

  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    const serve = await spawnServe(dataDir, [], {
      env: { ...LAZYFS_ENV, THREATCOL_SYSLOG_RELP_LISTEN: '127.0.0.1:0' },
    });
    stopAfter(t, serve);
    const port = serve.logs.find((l) => l.msg === 'syslog listening')?.relpPort as number;
    const client = await connectRelp(port, identity);
    client.send(1, 'open', 'relp_version=0\ncommands=syslog');
    assert.match(await client.answer(1), /^200 OK/);
    // txnr 2 + n carries message n; the answers' txnrs say which were acknowledged.
    let sent = 0;
    let stop = false;
    const writer = (async () => {
      while (!stop && !client.socket.destroyed) {
        if (sent - (client.answers.length - 1) < WINDOW) {
          client.send(2 + sent, 'syslog', message(cycle, sent));
          sent++;
        } else {
          await client.nextRead();
        }
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, LOAD_MS));
    const before = client.answers.slice(1);
    serve.child.kill('SIGKILL');
    stop = true;
    await serve.exited;
    client.socket.destroy();
    await writer;
    for (const answer of before) {
      assert.equal(answer.data.toString('utf8'), '200 OK', `txnr ${answer.txnr}`);
      acked.push(`Relp cut ${cycle}-${answer.txnr - 2}`);
    }
    assert.ok(before.length > 0, `cycle ${cycle}: some messages acknowledged`);
    const { droppedBytes } = await mount.cut();
    const onDisk = storedThreats(join(mount.disk, 'data'), 'relay');
    const held = new Set(onDisk);
    const lost = acked.filter((name) => !held.has(name));
    assert.deepEqual(
      lost.slice(0, 5),
      [],
      `cut ${cycle}: ${lost.length} of ${acked.length} acknowledged messages lost`,
    );
    summary.push(
      `cut${cycle}: sent=${sent} acked=${before.length} onDisk=${onDisk.length} dropped=${droppedBytes}B`,
    );
    await mount.mount();
  }
  t.diagnostic(summary.join(' '));
});
