// Every relative link of the documentation resolves: the file exists, and a #fragment names a heading of that
// page (as GitHub makes its ids: lower case, punctuation dropped, spaces as hyphens, "-1" on a repeat) or an
// explicit id. Pages: README.md, ARCHITECTURE.md, docs/*.md and the bench's dated results.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function pages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(ROOT, 'docs', f));
  return [
    join(ROOT, 'README.md'),
    join(ROOT, 'ARCHITECTURE.md'),
    ...docs,
    join(ROOT, 'test/bench/RESULTS.md'),
  ].filter((p) => existsSync(p));
}

/** The text outside fenced code blocks (a `# comment` in a shell block is no heading, a `[x](y)` no link). */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** GitHub's id for a heading's text. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map<string, Set<string>>();

function anchors(file: string): Set<string> {
  let found = anchorCache.get(file);
  if (found) return found;
  found = new Set();
  const text = prose(readFileSync(file, 'utf8'));
  const seen = new Map<string, number>();
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(m[1] as string);
  anchorCache.set(file, found);
  return found;
}

test('slug: GitHub heading ids', () => {
  assert.equal(slug('Several cores: `serve --workers`'), 'several-cores-serve---workers');
  assert.equal(slug('Capacity, for planning'), 'capacity-for-planning');
  assert.equal(slug('`GET /api/histogram`'), 'get-apihistogram');
  assert.equal(slug('Node.js on Debian 12'), 'nodejs-on-debian-12');
});

test('docs: every relative link names a file that exists, and a heading of it', () => {
  const broken: string[] = [];
  for (const page of pages()) {
    const text = prose(readFileSync(page, 'utf8')).replace(/`[^`\n]*`/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1] as string;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('<')) continue;
      const [path, fragment] = target.split('#') as [string, string | undefined];
      const file = path === '' ? page : join(dirname(page), decodeURIComponent(path));
      const where = `${relative(ROOT, page)}: ${target}`;
      if (!existsSync(file)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (fragment === undefined || fragment === '' || !file.endsWith('.md') || statSync(file).isDirectory())
        continue;
      if (!anchors(file).has(decodeURIComponent(fragment))) broken.push(`${where} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});
