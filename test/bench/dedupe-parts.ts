// Dedupe's parts in isolation, this build against another build's compiled window (`--base DIST`, e.g. an
// older checkout's dist/): a claim and its release on a window already holding `--keys` keys (200,000 by
// default, spread over its slices as a steady load would), the same for a miss-only lookup, alternated A B
// A B in one process, CPU time per call, median of the per-pair ratios. Run: npm run build && node --import tsx test/bench/dedupe-parts.ts
// [--base ../old/dist] [--keys 200000] [--pairs 15]
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { pino } from 'pino';
import { argValue } from './argv.js';
import { median } from './report.js';

interface WindowModule {
  DedupeWindow: new (windowMs: number) => { remember(key: string, id: string, at: number): void };
}
interface IndexModule {
  localDedupeIndex(
    window: unknown,
    now: () => number,
    logger: unknown,
  ): {
    claim(keys: string[], ids: string[]): { settle(error: Error | null): void } | Promise<unknown>;
  };
}

const WINDOW_MS = 120_000;
const KEYS = Number(argValue('--keys') ?? 200_000);
const PAIRS = Number(argValue('--pairs') ?? 15);
const CALLS = 50_000;
const logger = pino({ level: 'silent' });
const ID = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

/** A key as the server makes them: 22 base64url characters of 16 random bytes. */
const randomKey = () => randomBytes(16).toString('base64url');

async function load(dist: string) {
  const window = (await import(resolve(dist, 'store/files/dedupe/dedupe-window.js'))) as WindowModule;
  const index = (await import(resolve(dist, 'store/files/dedupe/dedupe-index.js'))) as IndexModule;
  // A steady load: KEYS keys over the window (the last slice still filling), so lookups visit every slice.
  const w = new window.DedupeWindow(WINDOW_MS);
  for (let i = 0; i < KEYS; i++) w.remember(randomKey(), ID, Math.floor((i / KEYS) * WINDOW_MS));
  let now = WINDOW_MS;
  const idx = index.localDedupeIndex(w, () => now, logger);
  const fresh = Array.from({ length: CALLS }, randomKey);
  return {
    /** CPU µs per claim + release of a key not in the window (every distinct record's path). */
    claim(): number {
      const keys = fresh.splice(0, CALLS);
      for (let i = 0; i < CALLS; i++) fresh.push(randomKey());
      const started = process.cpuUsage();
      for (const key of keys) {
        const claim = idx.claim([key], [ID]);
        if (!(claim instanceof Promise)) claim.settle(null);
      }
      // The window moves on slowly: nothing expires during the run (the claimed keys add to the newest slice).
      now += 1;
      return cpuMicros(started) / CALLS;
    },
  };
}

function cpuMicros(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return d.user + d.system;
}

const base = argValue('--base');
const a = await load(resolve(import.meta.dirname, '../../dist'));
const b = base ? await load(base) : null;
a.claim();
b?.claim();
const ratios: number[] = [];
const thisBuild: number[] = [];
const baseBuild: number[] = [];
for (let p = 0; p < PAIRS; p++) {
  // The order flips every pair, so a build is not always measured on a warmer (or colder) cache.
  const first = p % 2 === 0 ? a : (b ?? a);
  const second = first === a ? b : a;
  const x = first.claim();
  const y = second?.claim() ?? x;
  const [mine, theirs] = first === a ? [x, y] : [y, x];
  thisBuild.push(mine);
  baseBuild.push(theirs);
  ratios.push(mine / theirs);
}
const us = (n: number) => `${n.toFixed(2)} µs`;
process.stdout.write(
  `window of ${KEYS} keys, ${PAIRS} pairs of ${CALLS} calls; medians\n` +
    `claim + release, this build: ${us(median(thisBuild))}\n` +
    (b ? `claim + release, base: ${us(median(baseBuild))}; this / base ${median(ratios).toFixed(2)}x\n` : ''),
);
