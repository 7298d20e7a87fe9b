// Figure 18 in `npm run bench`: keep-alive ingest with country and AS enrichment on (as shipped) against off,
// distinct records from distinct public sources, alternated pairs; the look-ups per second and the tables'
// memory. It runs test/bench/enrich-ab.ts in a process of its own (the same measure, by hand: see its header)
// and reads the JSON it prints.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { BenchContext } from './figures-load.js';
import { ROOT } from './processes.js';
import { fmt, median, type medianInterval, type Row } from './report.js';

const TARGET = 0.97;

const x3 = (v: number) => (Number.isFinite(v) ? `${v.toFixed(3)}x` : 'n/a');

interface EnrichAb {
  enrichOn: { rps: number; cpuUsPerRequest: number };
  enrichOff: { rps: number; cpuUsPerRequest: number };
  pairRpsRatios: number[];
  pairCpuRatios: number[];
  pairRpsMedianInterval: ReturnType<typeof medianInterval>;
  memoryMB: { afterRuns: { on: { rss: number }; off: { rss: number } } };
  lookUps: { perSecond: number; heapMB: number; loadMs: number };
}

export function enrichRows(ctx: BenchContext): Row[] {
  const out = execFileSync(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      join(ROOT, 'test/bench/enrich-ab.ts'),
      ...(ctx.quick ? ['--quick'] : []),
    ],
    {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 1 << 24,
      // Enough pairs to see a few per cent through the box's noise (8 unless the bench asks for more).
      env: { ...process.env, ...(ctx.quick ? {} : { AB_PAIRS: String(Math.max(8, ctx.pairs)) }) },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const r = JSON.parse(out.slice(out.indexOf('{'))) as EnrichAb;
  const ratio = median(r.pairRpsRatios);
  const within = r.pairRpsMedianInterval;
  ctx.log(
    `  enrichment on/off by pairs ${r.pairRpsRatios.map((x) => x.toFixed(2)).join(' ')}; CPU ${r.pairCpuRatios.map((x) => x.toFixed(2)).join(' ')}`,
  );
  return [
    {
      figure: '18 keep-alive /firewall, distinct public sources, enrichment on against off, rec/s',
      generator: 'undici',
      threatcol: fmt.n(r.enrichOn.rps),
      reference: `${fmt.n(r.enrichOff.rps)} (off)`,
      // The median's interval from the pairs (the box's noise, beside the ratio it blurs), three decimals: two
      // would print 0.97x beside a FAIL.
      ratio:
        within === null
          ? x3(ratio)
          : `${x3(ratio)} (${x3(within.low)}-${x3(within.high)}, ${Math.round(within.confidence * 100)} %)`,
      target: `>= ${TARGET}x`,
      pass: Number.isFinite(ratio) ? ratio >= TARGET : null,
    },
    {
      figure: '18 the same, CPU per request, on against off',
      generator: 'undici',
      threatcol: `${fmt.n(r.enrichOn.cpuUsPerRequest)} µs`,
      reference: `${fmt.n(r.enrichOff.cpuUsPerRequest)} µs (off)`,
      ratio: fmt.x(median(r.pairCpuRatios)),
      target: '',
      pass: null,
    },
    {
      figure: `18 look-ups per second (both tables, one process); the tables' heap and load time; RSS after the runs, on against off`,
      generator: 'in process',
      threatcol: `${fmt.n(r.lookUps.perSecond)}; ${r.lookUps.heapMB} MB, ${fmt.n(r.lookUps.loadMs)} ms; ${r.memoryMB.afterRuns.on.rss} MB`,
      reference: `${r.memoryMB.afterRuns.off.rss} MB (off)`,
      ratio: '',
      target: '',
      pass: null,
    },
  ];
}
