// The benchmark's output: rows of the summary table, medians and ratios, stdout table, markdown and JSON file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Measured } from './load.js';
import { ROOT } from './processes.js';

export interface Row {
  figure: string;
  generator: string;
  threatcol: string;
  reference: string;
  ratio: string;
  target: string;
  /** null: reported, no target. */
  pass: boolean | null;
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/**
 * Where the median of what `values` sample lies, without assuming how they spread: the interval between two of
 * them in sorted order (the k-th from each end), k the largest for which at least `confidence` of such intervals
 * hold the median (a binomial count of values below it); `confidence` says what that k gives (asking 0.9: 0.93
 * for 8 values, 0.96 for 12). Values that are not finite are left out. Null when too few values give any
 * (fewer than 5 asking 0.9, 6 asking 0.95), or more than 1,000 (past what this sums exactly enough). This
 * box's pairs spread 5-10 %: a target inside the interval is one the run does not tell apart from the ratio.
 */
export function medianInterval(
  values: number[],
  asked = 0.95,
): { low: number; high: number; confidence: number } | null {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  const n = s.length;
  // 2^-n is 0 past 1,074 values (a bench has tens): none given rather than a wrong one.
  if (n > 1000) return null;
  // P(at most j of n values below the median) for j = 0, 1, ...: C(n, i) / 2^n summed.
  let term = 2 ** -n;
  let below = term;
  let k = 0;
  for (let j = 0; j < n && below <= (1 - asked) / 2; j++) {
    k = j + 1;
    term = (term * (n - j)) / (j + 1);
    below += term;
  }
  if (k === 0) return null;
  const outside = below - term; // P(at most k - 1 below)
  return { low: s[k - 1] as number, high: s[n - k] as number, confidence: 1 - 2 * outside };
}

/** Runs of A (reference) and B (threatcol), alternated A B A B, and the per-pair ratios B/A. */
export interface Pairs {
  reference: Measured[];
  threatcol: Measured[];
  ratios: number[];
}

export function pairRatios(p: Pairs, pick: (m: Measured) => number): number[] {
  return p.threatcol.map((t, i) => pick(t) / pick(p.reference[i] as Measured));
}

export const fmt = {
  n: (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a'),
  ms: (v: number) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : 'n/a'),
  x: (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}x` : 'n/a'),
  mb: (v: number) => (Number.isFinite(v) ? `${(v / 1024 / 1024).toFixed(1)} MB` : 'n/a'),
};

const HEAD = ['figure', 'generator', 'threatcol', 'reference', 'ratio', 'target', 'pass/fail'];

function cells(r: Row): string[] {
  const verdict = r.pass === null ? '-' : r.pass ? 'PASS' : 'FAIL';
  return [r.figure, r.generator, r.threatcol, r.reference, r.ratio, r.target, verdict];
}

export function textTable(rows: Row[]): string {
  const all = [HEAD, ...rows.map(cells)];
  const widths = HEAD.map((_, i) => Math.max(...all.map((r) => (r[i] as string).length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [line(HEAD), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map((r) => line(cells(r)))].join(
    '\n',
  );
}

export function markdownTable(rows: Row[]): string {
  const line = (r: string[]) => `| ${r.join(' | ')} |`;
  return [line(HEAD), line(HEAD.map(() => '---')), ...rows.map((r) => line(cells(r)))].join('\n');
}

/** Writes `results/<stamp>.json` and `results/latest.json` / `latest.md`; returns the JSON path. */
export function writeResults(result: Record<string, unknown>, rows: Row[], markdown: string): string {
  const dir = join(ROOT, 'test/bench/results');
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const text = `${JSON.stringify({ ...result, rows }, null, 2)}\n`;
  const path = join(dir, `bench-${stamp}.json`);
  writeFileSync(path, text);
  writeFileSync(join(dir, 'latest.json'), text);
  writeFileSync(join(dir, 'latest.md'), `${markdown}\n`);
  return path;
}
