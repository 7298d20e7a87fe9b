// Figure 7: CLI start-up, each command paired with a bare `node -e 0` on the same box (A B, then B A, many
// pairs) and reported as the median of the per-pair ratios, so the box's load cancels out of the figure.
import { spawn } from 'node:child_process';
import { cleanEnv } from '../helpers/cli.js';
import { BIN, type Pinning, pinned, ROOT } from './processes.js';
import { fmt, median, type Row } from './report.js';

export interface StartupCase {
  /** Key of the case in the results' `cliMs`. */
  key: string;
  label: string;
  /** Arguments after bin/threatcol. */
  args: string[];
  /** The highest median ratio to `node -e 0` that passes. */
  target: number;
}

export interface StartupResult {
  key: string;
  pairs: number;
  ratio: number;
  ms: number;
  bareMs: number;
}

/** The cases: what prints without a store at ≤ 1.5x, what reads one at ≤ 2x. */
export function startupCases(
  dataDir: string,
  bigStore: { dataDir: string; bytes: number } | null,
): StartupCase[] {
  const cases: StartupCase[] = [
    { key: 'version', label: '`--version`', args: ['--version'], target: 1.5 },
    { key: 'help', label: '`--help`', args: ['--help'], target: 1.5 },
    { key: 'completion', label: '`completion bash`', args: ['completion', 'bash'], target: 1.5 },
    { key: 'sensorList', label: '`sensor list`', args: ['sensor', 'list', '--data-dir', dataDir], target: 2 },
    {
      // What the completion script runs for a sensor name (completion-bash.ts, completion-fish.ts).
      key: 'completionSensors',
      label: "completion's sensor names (`sensor list --json`)",
      args: ['sensor', 'list', '--json', '--data-dir', dataDir],
      target: 2,
    },
  ];
  if (bigStore)
    cases.push({
      key: 'threatsTail',
      label: `\`threats tail -n 10 --no-follow\`, ${fmt.mb(bigStore.bytes)} store`,
      args: ['threats', 'tail', '-n', '10', '--no-follow', '--data-dir', bigStore.dataDir],
      target: 2,
    });
  return cases;
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

/** `pairs` runs of the command and of `node -e 0`, alternating which goes first. */
export async function pairedStartup(
  c: StartupCase,
  options: { pairs: number; cpu: string; bin?: string },
): Promise<StartupResult> {
  const argv = [options.bin ?? BIN, ...c.args];
  const ratios: number[] = [];
  const cmd: number[] = [];
  const bare: number[] = [];
  // One unmeasured run of each: the first spawn pays for cold page cache.
  await timeRun(argv, options.cpu);
  await timeRun(['-e', '0'], options.cpu);
  for (let i = 0; i < options.pairs; i++) {
    let a: number;
    let b: number;
    if (i % 2 === 0) {
      a = await timeRun(argv, options.cpu);
      b = await timeRun(['-e', '0'], options.cpu);
    } else {
      b = await timeRun(['-e', '0'], options.cpu);
      a = await timeRun(argv, options.cpu);
    }
    cmd.push(a);
    bare.push(b);
    ratios.push(a / b);
  }
  return { key: c.key, pairs: options.pairs, ratio: median(ratios), ms: median(cmd), bareMs: median(bare) };
}

export function startupRow(c: StartupCase, r: StartupResult, name = 'CLI'): Row {
  return {
    figure: `7 ${name} ${c.label}, start-up to exit`,
    generator: `${r.pairs} pairs`,
    threatcol: fmt.ms(r.ms),
    reference: `${fmt.ms(r.bareMs)} (node -e 0)`,
    ratio: fmt.x(r.ratio),
    target: `<= ${c.target}x (median of pair ratios)`,
    pass: r.ratio <= c.target,
  };
}

/** Figure 7 in `npm run bench`. */
export async function cliStartup(
  ctx: { quick: boolean; pin: Pinning },
  dataDir: string,
  bigStore: { dataDir: string; bytes: number },
  tailAvailable: boolean,
): Promise<{ rows: Row[]; ms: Record<string, number> }> {
  const pairs = ctx.quick ? 9 : 21;
  const cpu = ctx.pin.pinned ? ctx.pin.loadCpu : '';
  const rows: Row[] = [];
  const ms: Record<string, number> = {};
  for (const c of startupCases(dataDir, tailAvailable ? bigStore : null)) {
    const r = await pairedStartup(c, { pairs, cpu });
    rows.push(startupRow(c, r));
    ms[c.key] = r.ms;
    ms[`${c.key}Ratio`] = r.ratio;
    ms.nodeBare = r.bareMs;
  }
  return { rows, ms };
}
