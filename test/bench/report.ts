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
