// `node --import tsx test/bench/profile-summary.ts FILE.cpuprofile [N] [FROM_S]`: self time by function (top
// N) and by source file, as shares of the busy (non-idle) time; samples before FROM_S seconds (start-up) skipped.
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const [file, top = '40', from = '0'] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file as string, 'utf8')) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(p.nodes.map((n) => [n.id, n]));
// Drop the samples taken before `from` seconds (module loading, start-up GC).
{
  let at = 0;
  let first = 0;
  while (first < p.samples.length && at < Number(from) * 1e6) at += p.timeDeltas[first++] ?? 0;
  p.samples = p.samples.slice(first);
  p.timeDeltas = p.timeDeltas.slice(first);
}
const self = new Map<number, number>();
p.samples.forEach((id, i) => {
  self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
});
const idle = new Set(['(idle)', '(program)']);
let busy = 0;
const fn = new Map<string, number>();
const files = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id) as Node;
  const name = n.callFrame.functionName || '(anonymous)';
  if (idle.has(name)) continue;
  busy += t;
  const url = n.callFrame.url.replace(/^.*\/(node_modules\/[^/]+|dist|node:)/, '$1') || '(native)';
  const key = `${name} ${url}:${n.callFrame.lineNumber + 1}`;
  fn.set(key, (fn.get(key) ?? 0) + t);
  files.set(url, (files.get(url) ?? 0) + t);
}
const total = p.timeDeltas.reduce((a, b) => a + b, 0);
const pct = (t: number) => `${((t / busy) * 100).toFixed(1).padStart(5)}%`;
process.stdout.write(
  `busy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s sampled\n\nby function (self):\n`,
);
for (const [k, t] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, Number(top)))
  process.stdout.write(`${pct(t)}  ${k}\n`);
process.stdout.write('\nby file (self):\n');
for (const [k, t] of [...files].sort((a, b) => b[1] - a[1]).slice(0, 30))
  process.stdout.write(`${pct(t)}  ${k}\n`);

// Inclusive (self + callees) time by function, counted once per sample even when a function recurses.
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map<string, number>();
p.samples.forEach((id, i) => {
  const leaf = byId.get(id) as Node;
  if (idle.has(leaf.callFrame.functionName)) return;
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const n = byId.get(at) as Node;
    const key = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(node_modules\/[^/]+|dist|node:)/, '$1')}:${n.callFrame.lineNumber + 1}`;
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
});
process.stdout.write('\nby function (inclusive):\n');
for (const [k, t] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, Number(top)))
  process.stdout.write(`${pct(t)}  ${k}\n`);
