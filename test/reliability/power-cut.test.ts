// Reliability 11: power cuts (LazyFS drops every byte not fsynced) under a load of distinct records with a
// `sensor add` in flight, 5 times: every acknowledged record and every issued sensor survives, no torn line stays.
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import type { Agent } from 'undici';
import { listSegments, threatsDir } from '../../src/store/files/segments.js';
import { addSensorCli, type ServeProcess, spawnServe, startCli } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { findLazyfs, type LazyfsMount, mountLazyfs } from '../helpers/lazyfs.js';
import { until } from '../helpers/until.js';
import { distinctBody, LAZYFS_ENV, lostAndDoubled, readDisk, tornBeforeAcked } from './power-cut-support.js';
import { soak, stopAfter } from './support.js';

const CYCLES = 5;
const CLIENTS = soak(6, 12);
/** Load before each cut; the cut then also waits for a `sensor add` of the cycle to have succeeded. */
const LOAD_MS = soak(1000, 10_000);
/**
 * LazyFS's cache fills with what a cycle writes, and a full one corrupts fsynced data (helpers/lazyfs.ts
 * cacheUsage). How long a cycle's load lasts is not bounded by LOAD_MS: it goes on until a `sensor add` has
 * succeeded, seconds on a busy machine (130,000 records a cycle were seen, 50 MB). So past PACE_AT % each client
 * sends one request every PACE_MS: the load goes on to the cut, the cache stays short of full.
 */
const PACE_AT = 40;
const PACE_MS = 250;

const lazyfs = await findLazyfs();

interface Totals {
  sent: number;
  /** Acknowledged records per cycle. */
  ackedPerCycle: number[];
  /** The highest cache usage each cycle's watch saw, in %. */
  cacheMax: number[];
  dropped: number[];
  cacheUsed: number[];
  tornLines: number;
  holeLines: number;
  tornCut: number;
  addsInFlight: number;
}

type Cli = ReturnType<typeof startCli>;

test(`power cut: ${CYCLES} cuts under ${CLIENTS} keep-alive clients and a sensor add lose no acknowledged record or sensor`, {
  skip: 'skip' in lazyfs ? lazyfs.skip : false,
}, async (t) => {
  if (!('bin' in lazyfs)) return;
  await powerCuts(t, lazyfs.bin, CYCLES, soak(64, 512));
});

// A cache that the load outgrows within the first second: the load must be paced before the cache is full, and
// every acknowledged record still survive (unpaced, the cut found it full, or a torn cycle lost records).
test('power cut: a LazyFS cache smaller than a cycle of load is paced, not filled', {
  skip: 'skip' in lazyfs ? lazyfs.skip : false,
}, async (t) => {
  if (!('bin' in lazyfs)) return;
  await powerCuts(t, lazyfs.bin, 2, 4);
});

async function powerCuts(t: TestContext, bin: string, cycles: number, cacheMiB: number): Promise<void> {
  const mount = await mountLazyfs(t, bin, { cacheMiB });
  const dataDir = join(mount.dir, 'data');
  const loadKey = await addSensorCli(dataDir, 'load');
  const acked = new Set<string>();
  const issued = new Map<string, string>([['load', loadKey]]);
  const totals: Totals = {
    sent: 0,
    ackedPerCycle: [],
    cacheMax: [],
    dropped: [],
    cacheUsed: [],
    tornLines: 0,
    holeLines: 0,
    tornCut: 0,
    addsInFlight: 0,
  };
  const ack = (reply: { json: unknown }) => {
    for (const id of (reply.json as { ids: string[] }).ids) acked.add(id);
  };

  /** Starts serve; every sensor issued before it must still authenticate (its record counts as acked). */
  const start = async (cycle: number) => {
    const sensors = [...issued];
    const serve = await spawnServe(dataDir, [], { env: LAZYFS_ENV });
    stopAfter(t, serve);
    totals.tornCut += serve.logs.filter((l) => String(l.msg).startsWith('cut off a torn last line')).length;
    const agent = trustingAgent(dataDir, { connections: CLIENTS });
    for (const [name, key] of sensors) {
      const reply = await post(serve.url, '/generic', distinctBody('generic', `${name}-${cycle}`, 0), {
        agent,
        sensor: name,
        key,
      });
      assert.equal(reply.status, 200, `cycle ${cycle}: sensor ${name}: ${reply.text}`);
      ack(reply);
    }
    return { serve, agent };
  };

  for (let cycle = 1; cycle <= cycles; cycle++) {
    const ackedBefore = acked.size;
    let stop = false;
    /** Set from the moment a torn write is armed: the collector's next write fails (LazyFS is gone). */
    let failing = false;
    // `sensor add` one after another from the start of the cycle (node's start-up overlaps serve's).
    const adding: { cli: Cli | null; added: number; paused: Promise<void> | null } = {
      cli: null,
      added: 0,
      paused: null,
    };
    const adder = async () => {
      for (let n = 0; !stop; n++) {
        // Held while a fault is armed (below): no new `sensor add` starts then.
        await adding.paused;
        const name = `cut${cycle}-s${n}`;
        const cli = startCli(['sensor', 'add', name, '--data-dir', dataDir, '--json'], { env: LAZYFS_ENV });
        adding.cli = cli;
        const r = await cli.result;
        adding.cli = null;
        if (r.code === 0) {
          issued.set(name, (JSON.parse(r.stdout) as { key: string }).key);
          adding.added++;
        } else if (!stop && !failing) {
          throw new Error(`cycle ${cycle}: sensor add ${name} failed (${r.code}): ${r.stderr}`);
        }
      }
    };
    // A failure anywhere in the cycle stops its clients and its adder: they would go on forever.
    try {
      const adderDone = adder();
      const { serve, agent } = await start(cycle);
      const cache = watchCache(mount);
      const client = async (c: number, agent: Agent) => {
        for (let n = 0; !stop; n++) {
          if (cache.usage >= PACE_AT) await new Promise((r) => setTimeout(r, PACE_MS));
          if (stop) break;
          const endpoint = n % 2 === 0 ? 'firewall' : 'generic';
          totals.sent++;
          try {
            const reply = await post(serve.url, `/${endpoint}`, distinctBody(endpoint, `${cycle}-${c}`, n), {
              agent,
              sensor: 'load',
              key: loadKey,
            });
            // A 200 that arrives even as the cut begins was fsynced before it was sent: it counts.
            if (reply.status === 200) ack(reply);
            else if (!stop && !failing)
              // What the collector said of it (its log's end): a store failure names its cause there.
              throw new Error(
                `cycle ${cycle}: ${reply.status} ${reply.text}\nserve's log:\n${serve.stderr().slice(-4000)}`,
              );
          } catch (error) {
            if (!stop && !failing) throw error;
          }
        }
      };
      const work = [...Array.from({ length: CLIENTS }, (_, c) => client(c, agent)), adderDone];
      // A failure of the load fails the test at once, not after the cut.
      const failed = Promise.race(work.map((w) => w.then(() => new Promise<never>(() => {}))));
      await Promise.race([failed, new Promise((r) => setTimeout(r, LOAD_MS))]);
      await Promise.race([
        failed,
        until(() => adding.added > 0, 60_000, `cycle ${cycle}: a sensor added`, 20),
      ]);
      const tearing = cycle % 2 === 0;
      // The watch asks LazyFS on its FIFO, as the cut does, and a torn write kills LazyFS: it stops first.
      totals.cacheMax.push(Math.round(await cache.stop()));
      assert.ok(
        cache.max < 90,
        `cycle ${cycle}: LazyFS's cache reached ${cache.max}% (a full one corrupts fsynced data)`,
      );
      if (tearing) {
        // A cut in mid-write: only the last third of the next write to the segment reaches the disk, after a
        // hole where the rest should be (as when a disk writes back pages out of order when the power goes).
        const newest = listSegments(threatsDir(dataDir)).at(-1);
        assert.ok(newest, 'a segment exists');
        failing = true;
        // LazyFS adds the fault to a table its file system threads read on every write with no lock between
        // (lazyfs.cpp: faults->insert beside faults->find): armed under load, the two can race (one run in eight
        // here once left the command unanswered). The processes writing to the mount are stopped while it is
        // armed, once their writes in flight have had time to end; their requests wait, nothing is lost.
        let resume = () => {};
        adding.paused = new Promise((r) => {
          resume = r;
        });
        const writers = [serve.child, adding.cli?.child];
        for (const child of writers) child?.kill('SIGSTOP');
        try {
          // Every thread stopped: one inside a write to the mount stops once LazyFS has answered it.
          for (const child of writers) if (child?.pid !== undefined) await stoppedWhole(child.pid);
          await mount.tearNextWrite(join(mount.disk, 'data', 'threats', newest.file), 3, [3]);
        } finally {
          for (const child of writers) child?.kill('SIGCONT');
          adding.paused = null;
          resume();
        }
        await Promise.race([failed, mount.fired(30_000, `cycle ${cycle}: a write to ${newest.file}`)]);
        stop = true;
        await kill(serve, adding.cli, totals);
        await mount.unmount();
      } else {
        // A random moment of a `sensor add` (its lock, write, fsync and rename take a few ms of its life).
        await new Promise((r) => setTimeout(r, Math.random() * 400));
        await until(() => adding.cli !== null, 10_000, 'a sensor add running', 1);
        stop = true;
        await kill(serve, adding.cli, totals);
        assert.equal((await serve.exited).signal, 'SIGKILL', `serve ended before the cut: ${serve.stderr()}`);
        await cut(mount, totals);
      }
      await Promise.all(work);
      await agent.destroy();
      totals.ackedPerCycle.push(acked.size - ackedBefore);
      const disk = await checkDisk(`cut ${cycle}`, mount, acked, issued, totals);
      // The torn write's first two thirds never reached the disk: zeros there, before its last third.
      if (tearing)
        assert.ok(
          disk.torn.some((line) => line.hole),
          `cut ${cycle}: the torn write left no hole`,
        );
    } finally {
      stop = true;
    }
    await mount.mount();
  }

  // A last start cuts what the last cut tore; a clean stop (SIGTERM) then leaves nothing un-synced.
  const { serve, agent } = await start(cycles + 1);
  await agent.close();
  assert.equal((await serve.stop()).code, 0, serve.stderr());
  assert.equal((await mount.cut()).droppedBytes, 0, 'a clean stop left un-fsynced data');
  const disk = await checkDisk('after a clean stop', mount, acked, issued, totals);
  assert.deepEqual(disk.torn, [], 'a torn line survived a restart');
  t.diagnostic(
    `cycles=${cycles} sent=${totals.sent} acknowledged=${acked.size} perCycle=${totals.ackedPerCycle.join('/')} stored=${disk.records.length} lost=0 ` +
      `doubled=0 sensorsIssued=${issued.size} sensorsLost=0 cutsDuringSensorAdd=${totals.addsInFlight} ` +
      `unsyncedBytesDropped=${totals.dropped.join('/')} tornLinesOnDisk=${totals.tornLines} ` +
      `holeLinesOnDisk=${totals.holeLines} tornCutAtRestart=${totals.tornCut} ` +
      `lazyfsCacheUsed%=${totals.cacheUsed.join('/')} lazyfsCacheMax%=${totals.cacheMax.join('/')}`,
  );
  assert.ok(acked.size >= cycles * 50, `only ${acked.size} records acknowledged`);
}

/** How full LazyFS's cache is, asked every 50 ms until `stop` (which resolves with the highest usage seen). */
function watchCache(mount: LazyfsMount) {
  const state = { usage: 0, max: 0, stop: async () => state.max };
  let stopped = false;
  let failed: Error | null = null;
  const loop = (async () => {
    while (!stopped) {
      state.usage = await mount.cacheUsage();
      state.max = Math.max(state.max, state.usage);
      await new Promise((r) => setTimeout(r, 50));
    }
  })().catch((error: Error) => {
    failed = error;
  });
  state.stop = async () => {
    stopped = true;
    await loop;
    if (failed) throw failed;
    return state.max;
  };
  return state;
}

/** Until every thread of `pid` is stopped (SIGSTOP) or the process is gone; a hang guard of 10 s. */
async function stoppedWhole(pid: number): Promise<void> {
  const states = (): string[] | null => {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return null; // gone
    }
    return tids.flatMap((tid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        return [stat.charAt(stat.lastIndexOf(')') + 2)];
      } catch {
        return []; // that thread ended
      }
    });
  };
  await until(
    () => states()?.every((s) => s === 'T' || s === 'Z' || s === 'X') ?? true,
    10_000,
    `${pid} stopped`,
    5,
  );
}

/** kill -9 of everything using the mount, at once. */
async function kill(serve: ServeProcess, adding: Cli | null, totals: Totals): Promise<void> {
  serve.child.kill('SIGKILL');
  adding?.child.kill('SIGKILL');
  if (adding) totals.addsInFlight++;
  await serve.exited;
  await adding?.result;
}

/** LazyFS drops what was not fsynced and is unmounted. */
async function cut(mount: LazyfsMount, totals: Totals): Promise<void> {
  const { droppedBytes, cacheUsedPercent } = await mount.cut();
  totals.dropped.push(droppedBytes);
  totals.cacheUsed.push(Math.round(cacheUsedPercent));
}

/**
 * What the disk holds after a cut: every acknowledged record once, every issued sensor, and torn lines only
 * after the last acknowledged record (what the cut tore; the restart must cut it off before appending).
 */
async function checkDisk(
  when: string,
  mount: LazyfsMount,
  acked: Set<string>,
  issued: Map<string, string>,
  totals: Totals,
) {
  const disk = await readDisk(join(mount.disk, 'data'));
  totals.tornLines += disk.torn.length;
  totals.holeLines += disk.torn.filter((l) => l.hole && l.complete).length;
  const { lost, doubled } = lostAndDoubled(acked, disk.ids);
  assert.deepEqual(
    lost.slice(0, 5),
    [],
    `${when}: ${lost.length} of ${acked.size} acknowledged records lost`,
  );
  assert.deepEqual(doubled.slice(0, 5), [], `${when}: ${doubled.length} records stored twice`);
  assert.deepEqual(tornBeforeAcked(acked, disk), [], `${when}: a torn line before acknowledged records`);
  const missing = [...issued.keys()].filter((name) => !disk.sensors.includes(name));
  assert.deepEqual(missing, [], `${when}: issued sensors lost`);
  return disk;
}
