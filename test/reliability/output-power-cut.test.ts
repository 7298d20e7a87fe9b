// Power cuts while an output forwards (LazyFS drops every byte not fsynced): after each cut the output's cursor
// is no later than what its receiver acknowledged (it may point past what the cut left of a segment: the feed
// checks that at its start); after the last restart every acknowledged record has reached the receiver.
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { listSegments } from '../../src/store/files/segments.js';
import { addSensorCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { findLazyfs, mountLazyfs } from '../helpers/lazyfs.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { untilDrained } from '../helpers/until.js';
import { startReceiver } from '../outputs/webhook-receiver.js';
import { LAZYFS_ENV } from './power-cut-support.js';

const CYCLES = 3;
/** Records the load may be ahead of the receiver: forwarding is under way at each cut, with this much to do. */
const BACKLOG = 2000;
const lazyfs = await findLazyfs();

/** Ids of the records on disk before the cursor's position (one writer: one series). */
function idsBeforeCursor(dataDir: string): {
  ids: string[];
  cursor: { file: string; offset: number } | null;
} {
  const cursorFile = join(dataDir, 'outputs', 'hook.cursor.json');
  assert.ok(existsSync(cursorFile), 'the cursor file survives a cut (written at the first start, fsynced)');
  const cursor = (
    JSON.parse(readFileSync(cursorFile, 'utf8')) as {
      series: Record<string, { file: string; offset: number }>;
    }
  ).series[''];
  if (!cursor) return { ids: [], cursor: null };
  const ids: string[] = [];
  for (const segment of listSegments(join(dataDir, 'threats'))) {
    if (segment.file > cursor.file) break;
    const text = readFileSync(segment.path);
    const upTo = segment.file === cursor.file ? cursor.offset : text.length;
    for (const line of text.subarray(0, upTo).toString('utf8').split('\n')) {
      try {
        ids.push((JSON.parse(line) as { id: string }).id);
      } catch {} // an empty or torn last line (the cut's)
    }
  }
  return { ids, cursor };
}

test(`power cut while forwarding, ${CYCLES} times: the output resumes from no later than the receiver's acknowledgement`, {
  skip: 'skip' in lazyfs ? lazyfs.skip : false,
}, async (t) => {
  if (!('bin' in lazyfs)) return;
  // The serve of the moment ends with the test, also when it fails or times out; registered before the mount's
  // teardown (hooks run in order) so that serve is gone before LazyFS is unmounted under it.
  let running: ServeProcess | null = null;
  let stop = false;
  t.after(() => {
    stop = true; // a cycle's load, when the test ended in its middle
    return running?.stop('SIGKILL');
  });
  const mount = await mountLazyfs(t, lazyfs.bin, { cacheMiB: 64 });
  const dataDir = join(mount.dir, 'data');
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  receiver.delayMs = 5;
  const config = join(makeTempDir(t), 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      outputs: {
        hook: {
          type: 'webhook',
          url: receiver.url,
          startAt: 'oldest',
          batch: { maxRecords: 100, maxWaitMs: 20 },
          retryMaxMs: 1000,
        },
      },
    }),
  );
  const key = await addSensorCli(dataDir, 'fw', [], LAZYFS_ENV);
  const acked = new Set<string>();
  let resent = 0;

  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    const serve = await spawnServe(dataDir, ['--config', config], { env: LAZYFS_ENV });
    running = serve;
    const agent = trustingAgent(dataDir, { connections: 2 });
    const before = receiver.accepted.size;
    stop = false;
    const load = (async () => {
      for (let n = 0; !stop; n++) {
        // Ahead of forwarding by at most BACKLOG records: ingest outruns an output at nice +15 on a busy box, and
        // an unbounded backlog (39,000 records in a loaded run) would make the last drain the machine's business.
        if (acked.size - receiver.accepted.size > BACKLOG) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        const body = Array.from({ length: 50 }, (_, j) => genericRecord({ threat: `c${cycle}-${n}-${j}` }));
        try {
          const reply = await post(serve.url, '/generic', body, { agent, sensor: 'fw', key });
          if (reply.status === 200) for (const id of (reply.json as { ids: string[] }).ids) acked.add(id);
        } catch {}
      }
    })();
    // Forwarding runs at nice +15 beside this load: on a saturated box it is slow but moves.
    await untilDrained(() => before + 500 - receiver.accepted.size, 60_000, `cycle ${cycle}: forwarding`);
    stop = true;
    serve.child.kill('SIGKILL');
    await serve.exited;
    await load;
    await agent.destroy();
    const accepted = new Set(receiver.accepted.keys());
    await mount.cut();

    const { ids, cursor } = idsBeforeCursor(join(mount.disk, 'data'));
    const ahead = ids.filter((id) => !accepted.has(id));
    assert.deepEqual(
      ahead,
      [],
      `cycle ${cycle}: the cursor (${JSON.stringify(cursor)}) passed records the receiver never took`,
    );
    resent += [...accepted].filter((id) => !ids.includes(id)).length;
    await mount.mount();
  }

  const serve = await spawnServe(dataDir, ['--config', config], { env: LAZYFS_ENV });
  running = serve;
  // Paced by the machine, not by a clock: fails only when forwarding stops making progress.
  await untilDrained(
    () => [...acked].filter((id) => !receiver.accepted.has(id)).length,
    60_000,
    'every acknowledged record forwarded',
  );
  await serve.stop();
  t.diagnostic(
    `cycles=${CYCLES} acknowledged=${acked.size} delivered=${receiver.accepted.size} ` +
      `deliveredAheadOfCursorAtCuts=${resent} duplicates=${[...receiver.accepted.values()].reduce((s, n) => s + n - 1, 0)}`,
  );
});
