// Figure 6 and the capacity figures: serve's memory under sustained load, bytes on disk (7 is figures-startup.ts).
import { createReadStream, statSync } from 'node:fs';
import { listSegments, threatsDir } from '../../src/store/files/segments.js';
import type { BenchContext } from './figures-load.js';
import type { Measured, Workload } from './load.js';
import { memory, type ServerUnderTest, type ThreatcolServer } from './processes.js';
import { fmt, type Row } from './report.js';

export interface MemorySeries {
  windowSeconds: number;
  samples: { t: number; rss: number }[];
  peak: number;
  /** Mean RSS of the last quarter of the window minus that of the second quarter. */
  growth: number;
  load: Measured;
}

/** Samples the server's RSS every 500 ms while `seconds` of keep-alive load run. */
export async function memoryUnderLoad(
  ctx: BenchContext,
  server: ServerUnderTest,
  auth: ThreatcolServer,
  w: Workload,
  seconds: number,
): Promise<MemorySeries> {
  const samples: { t: number; rss: number }[] = [];
  const t0 = performance.now();
  const sample = () => samples.push({ t: (performance.now() - t0) / 1000, rss: memory(server.pid).rss });
  sample();
  const timer = setInterval(sample, 500);
  const load = await ctx.worker.measure('autocannon', server, auth, { ...w, seconds });
  clearInterval(timer);
  sample();
  const quarter = (q: number) => {
    const inQ = samples.filter((s) => s.t >= (q * seconds) / 4 && s.t < ((q + 1) * seconds) / 4);
    return inQ.reduce((n, s) => n + s.rss, 0) / Math.max(1, inQ.length);
  };
  return {
    windowSeconds: seconds,
    samples,
    peak: memory(server.pid).peak,
    growth: quarter(3) - quarter(1),
    load,
  };
}

export function memoryRows(tc: MemorySeries, ref: MemorySeries, quick: boolean): Row[] {
  const window = `${tc.windowSeconds} s${quick ? ' (--quick: short window)' : ''}`;
  return [
    {
      figure: `6 peak RSS of serve, ${window} of load`,
      generator: 'autocannon',
      threatcol: fmt.mb(tc.peak),
      reference: fmt.mb(ref.peak),
      ratio: fmt.x(tc.peak / ref.peak),
      target: '< 150 MB',
      pass: tc.peak < 150 * 1024 * 1024,
    },
    {
      figure: '6 RSS growth, last vs second quarter',
      generator: 'autocannon',
      threatcol: fmt.mb(tc.growth),
      reference: fmt.mb(ref.growth),
      ratio: '',
      // A few seconds hold the heap's warm-up, not a trend: judged only in the full run.
      target: quick ? '(not judged in --quick)' : '< 10 MB (no upward trend)',
      pass: quick ? null : tc.growth < 10 * 1024 * 1024,
    },
  ];
}

/** Bytes and records (lines) in a data directory's record log. */
export async function storeFootprint(dataDir: string): Promise<{ bytes: number; records: number }> {
  let bytes = 0;
  let records = 0;
  for (const seg of listSegments(threatsDir(dataDir))) {
    bytes += statSync(seg.path).size;
    for await (const chunk of createReadStream(seg.path, { highWaterMark: 1 << 20 })) {
      const buf = chunk as Buffer;
      for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) records += 1;
    }
  }
  return { bytes, records };
}
