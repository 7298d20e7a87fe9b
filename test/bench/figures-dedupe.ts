// Figure 15 (issue 30): the shipped setting, dedupe on, against the same collector with dedupe off (what dedupe
// costs a keep-alive request) and against the contract bound (what threatcol's machinery costs beyond what the
// contract demands). Three servers measured in turn in every pair, the order rotated, CPU per request.
import type { BenchContext } from './figures-load.js';
import { cpuMicrosPerRequest, type Measured, type Workload } from './load.js';
import type { ServerUnderTest, ThreatcolServer } from './processes.js';
import { fmt, median, type Row } from './report.js';

/**
 * `on` and `off`: the same build with dedupe on (as shipped) and off, each with a sensor in the same zone;
 * `contract`: the contract bound with that sensor. Each pair measures all three, the first of them rotating.
 */
export async function dedupeRows(
  ctx: BenchContext,
  contract: ServerUnderTest,
  on: ThreatcolServer,
  off: ThreatcolServer,
  w: Workload,
  what: string,
): Promise<Row[]> {
  const servers = [contract, off, on];
  const runs = new Map<ServerUnderTest, Measured[]>(servers.map((s) => [s, []]));
  const onOff: number[] = [];
  const onContract: number[] = [];
  for (let i = 0; i < ctx.pairs; i++) {
    const order = [...servers.slice(i % 3), ...servers.slice(0, i % 3)];
    const got = new Map<ServerUnderTest, Measured>();
    for (const s of order) {
      // The contract bound takes the key of the sensor it was given: the one of the collector with dedupe off.
      const m = await ctx.worker.measure('autocannon', s, s === contract ? off : (s as ThreatcolServer), w);
      got.set(s, m);
      runs.get(s)?.push(m);
    }
    const cpu = (s: ServerUnderTest) => cpuMicrosPerRequest(got.get(s) as Measured);
    onOff.push(cpu(on) / cpu(off));
    onContract.push(cpu(on) / cpu(contract));
  }
  const show = (s: ServerUnderTest) =>
    (runs.get(s) ?? [])
      .map((m) => `${fmt.n(m.recordsPerSecond)}/${fmt.n(cpuMicrosPerRequest(m))}us`)
      .join(' ');
  ctx.log(
    `  15 ${what}: contract ${show(contract)} | off ${show(off)} | on ${show(on)} (req/s / CPU per request)`,
  );
  for (const m of [...runs.values()].flat()) {
    if (m.non2xx > 0 || m.errors > 0) ctx.log(`    ${m.server}: ${m.non2xx} non-2xx, ${m.errors} errors`);
  }
  // Both comparisons in the JSON: on against off, and on against the contract bound.
  ctx.runs[`15 ${what}, dedupe on against off`] = {
    reference: runs.get(off) ?? [],
    threatcol: runs.get(on) ?? [],
    ratios: onOff,
  };
  ctx.runs[`15 ${what}, dedupe on against the contract bound`] = {
    reference: runs.get(contract) ?? [],
    threatcol: runs.get(on) ?? [],
    ratios: onContract,
  };
  const us = (s: ServerUnderTest) => `${fmt.n(median((runs.get(s) ?? []).map(cpuMicrosPerRequest)))} us`;
  const share = median(onOff);
  const bound = median(onContract);
  return [
    {
      figure: `15 ${what}, server CPU per request, dedupe on against off (dedupe's share: ${((1 - 1 / share) * 100).toFixed(1)} %)`,
      generator: 'autocannon',
      threatcol: us(on),
      reference: `${us(off)} (off)`,
      ratio: fmt.x(share),
      target: '<= 1.05x (5 %)',
      pass: share <= 1.05,
    },
    {
      figure: `15 ${what}, server CPU per request, dedupe on against the contract bound`,
      generator: 'autocannon',
      threatcol: us(on),
      reference: `${us(contract)} (contract bound)`,
      ratio: fmt.x(bound),
      target: '<= 1.10x',
      pass: bound <= 1.1,
    },
  ];
}
