// ARCHITECTURE.md stays true: its folder map names every folder of src/ and nothing else, every folder sits in
// a layer of .dependency-cruiser.cjs, the layering holds for src/ (also under `npm test`, which CI runs),
// and the rules do reject an upward import.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeTempDir } from '../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

/** Folders under src/, relative to it ("cli", "store/files", ...). */
function folders(dir = SRC, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [`${prefix}${e.name}`, ...folders(join(dir, e.name), `${prefix}${e.name}/`)]);
}
const topModules = () => readdirSync(SRC).filter((name) => name.endsWith('.ts'));

const doc = () => readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');

test('ARCHITECTURE.md fits in 8 KB', () => {
  assert.ok(statSync(join(ROOT, 'ARCHITECTURE.md')).size <= 8192);
});

test("ARCHITECTURE.md's map names every folder of src/ and no other, and every top-level module", () => {
  const text = doc();
  const map = text.slice(text.indexOf('\n## Map\n'), text.indexOf('\n## ', text.indexOf('\n## Map\n') + 1));
  const mapped = [...map.matchAll(/^- `src\/([a-z0-9/-]+)\/`/gm)].map((m) => m[1]);
  assert.deepEqual([...mapped].sort(), folders().sort());
  for (const name of topModules()) assert.match(map, new RegExp(`\`src/${name.replace('.', '\\.')}\``), name);
});

test('every folder and top-level module of src/ belongs to a layer of .dependency-cruiser.cjs', () => {
  const config = createRequire(import.meta.url)(CONFIG) as {
    forbidden: { name: string; from: { pathNot?: string[] } }[];
  };
  const layered = (config.forbidden.find((rule) => rule.name === 'in-a-layer')?.from.pathNot ?? []).map(
    (pattern) => new RegExp(pattern),
  );
  for (const path of [...folders().map((f) => `src/${f}/a.ts`), ...topModules().map((m) => `src/${m}`)]) {
    assert.ok(
      layered.some((re) => re.test(path)),
      `${path}: its folder is in no layer of .dependency-cruiser.cjs`,
    );
  }
});

function depcruise(cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [DEPCRUISE, 'src', '--config', CONFIG, '--output-type', 'err-long'],
      { cwd, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? Number((error as { code?: unknown }).code ?? 1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

test('the layering holds in src/ (npm run lint:deps)', async () => {
  const result = await depcruise(ROOT);
  assert.equal(result.code, 0, result.output);
  assert.match(result.output, /no dependency violations found/);
});

test('the rules reject an upward import, a cycle and a backend imported from outside the store', async (t) => {
  const dir = makeTempDir(t);
  const write = (path: string, text: string) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'nodenext', strict: true } }));
  write('src/store/store.ts', "import { start } from '../daemon/start.js';\nexport const s = start;\n");
  write('src/daemon/start.ts', "import { s } from '../store/store.js';\nexport const start = () => s;\n");
  write('src/cli/main.ts', "import { f } from '../store/files/file.js';\nexport const m = f;\n");
  write('src/store/files/file.ts', 'export const f = 1;\n');
  const result = await depcruise(dir);
  assert.notEqual(result.code, 0, result.output);
  assert.match(
    result.output,
    /no-upward-import-from-store-tls-json-metrics: src\/store\/store\.ts → src\/daemon\/start\.ts/,
  );
  assert.match(result.output, /no-circular: /);
  assert.match(result.output, /store-backends-private: src\/cli\/main\.ts → src\/store\/files\/file\.ts/);
});
