// Figures 6-7 and the capacity figures: serve's memory under sustained load, CLI start-up, bytes on disk.
import { spawn } from 'node:child_process';
import { createReadStream, statSync } from 'node:fs';
import { listSegments, threatsDir } from '../../src/store/files/segments.js';
import { cleanEnv } from '../helpers/cli.js';
import type { BenchContext } from './figures-load.js';
import type { Measured, Workload } from './load.js';
import { BIN, memory, pinned, ROOT, type ServerUnderTest, type ThreatcolServer } from './processes.js';
import { fmt, median, type Row } from './report.js';

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

/** Wall time of `node ARGS` from spawn to exit, in ms; throws on a non-zero exit. */
function timeRun(args: string[], cpu: string): Promise<number> {
  const { cmd, args: argv } = pinned(cpu, args);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, argv, { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('close', (code) => {
      if (code === 0) resolve(performance.now() - t0);
      else reject(new Error(`${args.join(' ')} exited ${code}: ${err.slice(0, 500)}`));
    });
  });
}

async function medianRun(args: string[], cpu: string, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) times.push(await timeRun(args, cpu));
  return median(times);
}

/** Figure 7: CLI start-up, against a bare `node -e 0`. */
export async function cliStartup(
  ctx: BenchContext,
  dataDir: string,
  bigStore: { dataDir: string; bytes: number },
  tailAvailable: boolean,
): Promise<{ rows: Row[]; ms: Record<string, number> }> {
  const n = ctx.quick ? 5 : 11;
  const cpu = ctx.pin.pinned ? ctx.pin.loadCpu : '';
  const bare = await medianRun(['-e', '0'], cpu, n);
  const list = await medianRun([BIN, 'sensor', 'list', '--data-dir', dataDir], cpu, n);
  const rows: Row[] = [
    {
      figure: '7 CLI `sensor list`, median start-up',
      generator: `${n} runs`,
      threatcol: fmt.ms(list),
      reference: `${fmt.ms(bare)} (node -e 0)`,
      ratio: fmt.x(list / bare),
      target: '<= 300 ms',
      pass: list <= 300,
    },
  ];
  const ms: Record<string, number> = { nodeBare: bare, sensorList: list };
  const label = `7 CLI \`threats tail -n 10 --no-follow\`, ${fmt.mb(bigStore.bytes)} store`;
  if (tailAvailable) {
    const args = [BIN, 'threats', 'tail', '-n', '10', '--no-follow', '--data-dir', bigStore.dataDir];
    const tail = await medianRun(args, cpu, n);
    ms.threatsTail = tail;
    rows.push({
      figure: label,
      generator: `${n} runs`,
      threatcol: fmt.ms(tail),
      reference: `${fmt.ms(bare)} (node -e 0)`,
      ratio: fmt.x(tail / bare),
      target: '<= 500 ms',
      pass: tail <= 500,
    });
  } else {
    rows.push({
      figure: label,
      generator: '-',
      threatcol: 'not built yet',
      reference: '',
      ratio: '',
      target: '<= 500 ms',
      pass: null,
    });
  }
  return { rows, ms };
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
