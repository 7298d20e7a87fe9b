// Reliability 3: below the free-space floor (and on a real ENOSPC) the collector answers 503, keeps what it
// acknowledged, leaves no torn line, and recovers by itself when space returns.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { nodeFileOps } from '../../src/store/file-ops.js';
import { addSensorCli, type ServeProcess } from '../helpers/cli.js';
import { errorCode, post, type Reply, trustingAgent } from '../helpers/client.js';
import { diskFullError, writeHalf } from '../helpers/file-faults.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { spawnServeWrapped, stopAfter } from './support.js';

const MiB = 1024 * 1024;
const LOW_SPACE =
  'free space on the data directory is below store.minFreeBytes; answering 503 until space returns';
const SPACE_BACK = 'free space is back above the floor; storing again';

function batch(prefix: string, n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) =>
    genericRecord({ threat: `${prefix}-${i}`, padding: 'x'.repeat(300) }),
  );
}

function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Posts until `until(reply)` or `deadlineMs`; returns the last reply. */
async function postUntil(
  send: () => Promise<Reply>,
  until: (r: Reply) => boolean,
  deadlineMs: number,
): Promise<Reply> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const r = await send();
    if (until(r) || Date.now() > end) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Mounts an 8 MiB tmpfs; null (with the reason) where this machine does not allow it. */
function mountSmallFs(t: { after(fn: () => unknown): void }): { dir: string } | { reason: string } {
  if (process.getuid?.() !== 0) return { reason: 'mounting a tmpfs needs root' };
  const dir = makeTempDir(undefined, 'threatcol-smallfs-');
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0700', 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: `mount -t tmpfs refused: ${(r.stderr || r.error?.message || '').trim()}` };
  }
  t.after(() => {
    spawnSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir };
}

test('disk full on a real 8 MiB filesystem: 503 below the floor and on ENOSPC, nothing acknowledged lost, recovery', async (t) => {
  const fs = mountSmallFs(t);
  if ('reason' in fs) {
    t.skip(`${fs.reason}; the injected-file-layer test below covers the same behaviour`);
    return;
  }
  const dataDir = join(fs.dir, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  const key = await addSensorCli(dataDir, 'disk');
  const acked: string[] = [];
  const ballast = join(fs.dir, 'ballast');
  const run = async (serve: ServeProcess, prefix: string) => {
    const agent = trustingAgent(dataDir);
    t.after(() => agent.destroy());
    let n = 0;
    const send = async () => {
      const records = batch(`${prefix}-${n++}`, 100);
      const r = await post(serve.url, '/generic', records, { agent, sensor: 'disk', key });
      if (r.status === 200) acked.push(...records.map((x) => String(x.threat)));
      return r;
    };
    return { agent, send };
  };

  // Floor 2 MiB, 3 MiB left: the collector stops writing while 2 MiB are still free.
  const serve = await spawnServeWrapped(dataDir, {
    env: { THREATCOL_STORE_MIN_FREE_BYTES: String(2 * MiB) },
  });
  stopAfter(t, serve);
  writeFileSync(ballast, Buffer.alloc(Math.max(0, freeBytes(fs.dir) - 3 * MiB)));
  const a = await run(serve, 'floor');
  const full = await postUntil(a.send, (r) => r.status !== 200, 30_000);
  assert.equal(full.status, 503, full.text);
  assert.equal(errorCode(full), 'UNAVAILABLE');
  assert.ok(Number(full.headers['retry-after']) > 0, 'Retry-After');
  assert.ok(freeBytes(fs.dir) >= 1.5 * MiB, 'the floor kept space free');
  for (let i = 0; i < 5; i++) assert.equal((await a.send()).status, 503);
  assert.equal(serve.logs.filter((l) => l.msg === LOW_SPACE).length, 1, 'logged once, not per request');
  rmSync(ballast);
  const back = await postUntil(a.send, (r) => r.status === 200, 5000);
  assert.equal(back.status, 200, 'recovers by itself when space returns');
  assert.ok(serve.logs.some((l) => l.msg === SPACE_BACK));
  await serve.stop();

  // No floor: the filesystem really fills up (ENOSPC mid-write); the partial batch is taken back.
  const raw = await spawnServeWrapped(dataDir, { env: { THREATCOL_STORE_MIN_FREE_BYTES: '0' } });
  stopAfter(t, raw);
  writeFileSync(ballast, Buffer.alloc(Math.max(0, freeBytes(fs.dir) - 256 * 1024)));
  const b = await run(raw, 'enospc');
  const enospc = await postUntil(b.send, (r) => r.status !== 200, 30_000);
  assert.equal(enospc.status, 503, enospc.text);
  assert.equal(errorCode(enospc), 'UNAVAILABLE');
  assert.ok(raw.logs.some((l) => l.msg === 'writing records failed; answered 503'));
  readStored(dataDir); // throws on a torn line
  rmSync(ballast);
  const again = await postUntil(b.send, (r) => r.status === 200, 5000);
  assert.equal(again.status, 200, 'stores again once space is back');
  await raw.stop();

  const stored = new Set(readStored(dataDir).map((r) => String(r.threat)));
  const lost = acked.filter((m) => !stored.has(m));
  t.diagnostic(`tmpfs: acknowledged=${acked.length} stored=${stored.size} lost=${lost.length}`);
  assert.deepEqual(lost, []);
});

test('disk full with an injected file layer: floor, byte accounting between statfs calls, ENOSPC mid-write', async (t) => {
  let free = 100 * MiB;
  let enospc = false;
  let halfWritten = false;
  const s = await startTestServer(t, {
    overrides: { 'store.minFreeBytes': 10 * MiB },
    fileOps: {
      ...nodeFileOps,
      freeBytes: async () => free,
      async writev(fd, buffers) {
        if (!enospc) return nodeFileOps.writev(fd, buffers);
        // Half of the batch reaches the file, then the disk is full: the log must take the half back.
        if (!halfWritten) {
          halfWritten = true;
          return writeHalf(fd, buffers);
        }
        halfWritten = false;
        throw diskFullError();
      },
    },
  });
  const key = await s.addSensor('disk');
  const acked: string[] = [];
  let n = 0;
  const send = async () => {
    const records = batch(`inj-${n++}`, 10);
    const r = await post(s.url, '/generic', records, { agent: s.agent, sensor: 'disk', key });
    if (r.status === 200) acked.push(...records.map((x) => String(x.threat)));
    return r;
  };
  assert.equal((await send()).status, 200);

  // Free space drops below the floor: within about a second (statfs is cached) requests get 503.
  free = 5 * MiB;
  const low = await postUntil(send, (r) => r.status !== 200, 3000);
  assert.equal(low.status, 503, low.text);
  assert.equal(errorCode(low), 'UNAVAILABLE');
  assert.equal(low.headers['retry-after'], '10');
  for (let i = 0; i < 3; i++) assert.equal((await send()).status, 503);
  assert.equal(s.logs.filter((l) => l.msg === LOW_SPACE).length, 1);

  // Space returns: it recovers by itself.
  free = 10 * MiB + 6000;
  assert.equal((await postUntil(send, (r) => r.status === 200, 3000)).status, 200);
  assert.ok(s.logs.some((l) => l.msg === SPACE_BACK));
  // 6000 bytes above the floor: one ~4 KB batch fits, the next does not, without waiting for statfs.
  const second = await send();
  assert.equal(second.status, 503, 'bytes written since the last statfs count against the floor');

  free = 100 * MiB;
  await postUntil(send, (r) => r.status === 200, 3000);
  enospc = true;
  const failed = await send();
  assert.equal(failed.status, 503);
  readStored(s.dataDir); // the half-written batch was cut back: no torn line
  enospc = false;
  assert.equal((await send()).status, 200);
  const stored = readStored(s.dataDir).map((r) => String(r.threat));
  assert.equal(new Set(stored).size, stored.length, 'no record stored twice');
  assert.deepEqual(
    acked.filter((m) => !stored.includes(m)),
    [],
  );
  assert.ok(!stored.some((m) => m.startsWith(`inj-${n - 2}-`)), 'the failed batch was not stored');
});

test('a segment that cannot be opened: 503 for each batch meanwhile, logged once for the burst, then stored again', async (t) => {
  // Segments of 8 KiB: a few batches in, the log opens its next segment, which fails until `refuse` is cleared.
  let refuse = false;
  const s = await startTestServer(t, {
    overrides: { 'store.segmentMaxBytes': 8192 },
    fileOps: {
      ...nodeFileOps,
      async open(path, flags, mode) {
        if (refuse && path.endsWith('.ndjson'))
          throw Object.assign(new Error(`EIO: i/o error, open '${path}'`), { code: 'EIO' });
        return nodeFileOps.open(path, flags, mode);
      },
    },
  });
  const key = await s.addSensor('disk');
  let n = 0;
  const send = () =>
    post(s.url, '/generic', batch(`seg-${n++}`, 10), { agent: s.agent, sensor: 'disk', key });
  assert.equal((await send()).status, 200);
  refuse = true;
  const failed = await postUntil(send, (r) => r.status !== 200, 5000);
  assert.equal(failed.status, 503, failed.text);
  assert.equal(errorCode(failed), 'UNAVAILABLE');
  for (let i = 0; i < 4; i++) assert.equal((await send()).status, 503);
  const lines = s.logs.filter((l) => l.msg === 'opening a segment failed; answered 503');
  assert.equal(lines.length, 1, 'one line for the burst, not one per batch');
  assert.match(
    String((lines[0] as { err?: { message?: string } }).err?.message),
    /EIO/,
    'the line names the cause',
  );
  refuse = false;
  assert.equal((await send()).status, 200, 'stores again once the segment opens');
});
