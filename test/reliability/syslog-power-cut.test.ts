// Power cuts (LazyFS drops every byte not fsynced) under a syslog sender, 3 times: no message the daemon had
// made durable before the cut is lost, none is stored twice, and the store restarts clean.
import { strict as assert } from 'node:assert';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, spawnServe } from '../helpers/cli.js';
import { findLazyfs, mountLazyfs } from '../helpers/lazyfs.js';
import { until } from '../helpers/until.js';
import { LAZYFS_ENV, storedThreats } from './power-cut-support.js';
import { soak, stopAfter } from './support.js';

const CYCLES = 3;
const LOAD_MS = soak(1000, 10_000);

const lazyfs = await findLazyfs();

const message = (cycle: number, n: number) =>
  `<134>1 2026-11-26T12:00:00Z ids - - - - CEF:0|t|ids|1|${n}|Power cut ${cycle}-${n}|5|src=10.0.${(n >> 8) & 255}.${n & 255} dst=192.0.2.1 spt=${1024 + (n % 60_000)} dpt=80 proto=TCP`;

test(`syslog power cut: ${CYCLES} cuts under an octet-counted sender lose no message made durable before the cut`, {
  skip: 'skip' in lazyfs ? lazyfs.skip : false,
}, async (t) => {
  if (!('bin' in lazyfs)) return;
  // Room for a cycle's messages at full speed (~350 bytes each on disk): a full cache would fail writes.
  const mount = await mountLazyfs(t, lazyfs.bin, { cacheMiB: soak(256, 1024) });
  const dataDir = join(mount.dir, 'data');
  const added = await runCli(
    ['sensor', 'add', 'ids', '--data-dir', dataDir, '--syslog', '--format', 'cef', '--from', '127.0.0.1/32'],
    { env: LAZYFS_ENV },
  );
  assert.equal(added.code, 0, added.stderr);
  const durable: string[] = [];
  const summary: string[] = [];

  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    const serve = await spawnServe(dataDir, [], {
      env: { ...LAZYFS_ENV, THREATCOL_SYSLOG_TCP_LISTEN: '127.0.0.1:0' },
    });
    stopAfter(t, serve);
    const port = serve.logs.find((l) => l.msg === 'syslog listening')?.tcpPort as number;
    // One connection: its messages are appended in the order read, so "stored: S" means its first S are durable.
    const socket: Socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    let sent = 0;
    let stop = false;
    const writer = (async () => {
      await new Promise((resolve) => socket.once('connect', resolve));
      while (!stop && !socket.destroyed) {
        const text = message(cycle, sent);
        sent++;
        if (!socket.write(`${Buffer.byteLength(text)} ${text}`)) {
          await new Promise((resolve) => {
            socket.once('drain', resolve);
            socket.once('close', resolve);
          });
        }
      }
    })();
    const stored = async (): Promise<number> => {
      const answer = await fetch(`${serve.adminUrl}/api/syslog-errors?sensor=ids`);
      const report = (await answer.json()) as { counts: { stored: number }[] };
      return report.counts[0]?.stored ?? 0;
    };
    await new Promise((resolve) => setTimeout(resolve, LOAD_MS));
    await until(async () => (await stored()) > 0, 30_000, `cycle ${cycle}: messages made durable`, 20);
    // Durable at this moment: the cut comes after, so each of these must survive it.
    const before = await stored();
    serve.child.kill('SIGKILL');
    stop = true;
    await serve.exited;
    socket.destroy();
    await writer;
    const { droppedBytes } = await mount.cut();
    for (let n = 0; n < before; n++) durable.push(`Power cut ${cycle}-${n}`);
    const onDisk = storedThreats(join(mount.disk, 'data'), 'ids');
    const held = new Set(onDisk);
    const lost = durable.filter((name) => !held.has(name));
    assert.deepEqual(
      lost.slice(0, 5),
      [],
      `cut ${cycle}: ${lost.length} of ${durable.length} durable messages lost`,
    );
    assert.equal(held.size, onDisk.length, `cut ${cycle}: a message stored twice`);
    summary.push(
      `cut${cycle}: sent=${sent} durableBeforeCut=${before} onDisk=${onDisk.length} dropped=${droppedBytes}B`,
    );
    await mount.mount();
  }

  // A last start cuts off what the last cut tore and stops cleanly: every durable message is still there.
  // (Whether a clean stop leaves un-fsynced data is power-cut.test.ts's check; a cut of the mount after it
  // did not return here within a minute, not investigated.)
  const serve = await spawnServe(dataDir, [], { env: LAZYFS_ENV });
  assert.equal((await serve.stop()).code, 0, serve.stderr());
  const onDisk = storedThreats(join(mount.disk, 'data'), 'ids');
  const held = new Set(onDisk);
  assert.deepEqual(
    durable.filter((name) => !held.has(name)).slice(0, 5),
    [],
    'a durable message lost after the restart',
  );
  t.diagnostic(summary.join(' '));
});
