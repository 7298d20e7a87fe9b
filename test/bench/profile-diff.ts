// `node --import tsx test/bench/profile-diff.ts A.cpuprofile REQUESTS_A B.cpuprofile REQUESTS_B [N]`: two CPU
// profiles of the same load (enrich-ab.ts --cpu-prof prints the files and the requests each answered) compared
// function by function in µs per request, self and inclusive, the N largest differences (B - A) first.
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

const IDLE = new Set(['(idle)', '(program)']);

/** Self and inclusive µs by function, and the busy total, of one profile. */
function timesOf(file: string): { self: Map<string, number>; inclusive: Map<string, number>; busy: number } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: Node[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (n: Node) =>
    `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(node_modules\/[^/]+|dist|node:)/, '$1') || '(native)'}:${n.callFrame.lineNumber + 1}`;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  p.samples.forEach((id, i) => {
    const t = p.timeDeltas[i] ?? 0;
    const leaf = byId.get(id) as Node;
    if (IDLE.has(leaf.callFrame.functionName)) return;
    busy += t;
    const k = keyOf(leaf);
    self.set(k, (self.get(k) ?? 0) + t);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const key = keyOf(byId.get(at) as Node);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + t);
    }
  });
  return { self, inclusive, busy };
}

const [fileA, requestsA, fileB, requestsB, top = '30'] = process.argv.slice(2);
const a = timesOf(fileA as string);
const b = timesOf(fileB as string);
const perA = 1 / Number(requestsA);
const perB = 1 / Number(requestsB);
const f = (us: number) => us.toFixed(2).padStart(8);
process.stdout.write(`busy µs per request: A ${f(a.busy * perA)}  B ${f(b.busy * perB)}\n`);
for (const kind of ['self', 'inclusive'] as const) {
  const keys = new Set([...a[kind].keys(), ...b[kind].keys()]);
  const rows = [...keys].map((k) => {
    const x = (a[kind].get(k) ?? 0) * perA;
    const y = (b[kind].get(k) ?? 0) * perB;
    return { k, x, y, d: y - x };
  });
  rows.sort((r, s) => Math.abs(s.d) - Math.abs(r.d));
  process.stdout.write(`\nby function (${kind}), µs per request:      A        B      B-A\n`);
  for (const r of rows.slice(0, Number(top))) process.stdout.write(`${f(r.x)} ${f(r.y)} ${f(r.d)}  ${r.k}\n`);
}
