// `node test/bench/heap-summary.mjs FILE.json [N]`: a heap-sample.mjs profile as its top N allocation sites by
// bytes sampled, then the heaviest call paths (innermost frame first).
import { readFileSync } from 'node:fs';

const [file, top = '30'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const bySite = new Map();
const byPath = new Map();
let total = 0;
const nameOf = (f) =>
  `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|dist|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
const walk = (node, path) => {
  const here = [...path, nameOf(node.callFrame)];
  if (node.selfSize > 0) {
    total += node.selfSize;
    const site = here.at(-1);
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    const key = here.slice(-5).reverse().join('\n    < ');
    byPath.set(key, (byPath.get(key) ?? 0) + node.selfSize);
  }
  for (const child of node.children) walk(child, here);
};
walk(profile.head, []);
const mb = (n) => (n / 1e6).toFixed(2).padStart(8);
console.log(`${mb(total)} MB sampled`);
for (const [site, n] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, Number(top)))
  console.log(`${mb(n)} ${site}`);
console.log('\nheaviest paths:');
for (const [path, n] of [...byPath].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`${mb(n)} ${path}`);
