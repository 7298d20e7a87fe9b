// The quick start from a checkout: `npx threatcol` runs the CLI (compiling only stale sources, in a copy of the
// checkout so no other test's dist/ changes under it), and LISTEN_FAILED's advice works under npm start.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, cpSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cleanEnv, runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const isRoot = process.getuid?.() === 0;

function npm(args: string[], options: { uid?: number; home: string; cwd?: string }) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('npm', args, {
      cwd: options.cwd ?? ROOT,
      // The stale build compiles without the type check (the same JavaScript; npm run typecheck does it).
      env: {
        ...userEnv(),
        HOME: options.home,
        npm_config_update_notifier: 'false',
        BUILD_NO_TYPECHECK: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // A hang guard: a stale checkout's build (generate, then tsc) takes about 8 s on a quiet box.
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The environment of a user at a shell: under `npm test` npm hands its children its own settings (`npm_config_cache`
 * and the like), which would point the npm run here at the suite's npx cache instead of the fresh HOME's.
 */
function userEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(cleanEnv()).filter(([k]) => !/^npm_/i.test(k)));
}

/** What `npx` needs of a checkout, copied (node_modules linked): npx runs `prepare`, which may write dist/. */
function copyCheckout(t: Parameters<typeof makeTempDir>[0]): string {
  const copy = makeTempDir(t);
  for (const entry of [
    'package.json',
    'tsconfig.json',
    'bin',
    'dist',
    'src',
    'packaging/build-dist.mjs',
    'packaging/generate',
  ])
    cpSync(join(ROOT, entry), join(copy, entry), { recursive: true, preserveTimestamps: true });
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}

test('npx threatcol runs the CLI of a checkout and leaves a current dist/ alone; stale sources are compiled', async (t) => {
  const copy = copyCheckout(t);
  const main = join(copy, 'dist/cli/main.js');
  const before = statSync(main);
  const r = await npm(['exec', '--', 'threatcol', '--version'], { home: makeTempDir(t), cwd: copy });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^threatcol \d+\.\d+\.\d+\n/);
  // npm runs the linked package's `prepare` on every npx: it must not have rewritten (or replaced) dist/.
  const after = statSync(main);
  assert.deepEqual([after.ino, after.mtimeMs], [before.ino, before.mtimeMs], 'dist/ was rebuilt by npx');
  // A changed source is compiled when npm links the checkout into a (here: new) npx cache, into a new tree
  // that replaces dist/ whole; the generated code, missing as in a fresh clone, is written first.
  appendFileSync(join(copy, 'src/cli/version.ts'), '\nexport const quickStartMarker = 1;\n');
  rmSync(join(copy, 'src/generated'), { recursive: true });
  const stale = await npm(['exec', '--', 'threatcol', '--version'], { home: makeTempDir(t), cwd: copy });
  assert.equal(stale.code, 0, stale.stderr);
  assert.match(readFileSync(join(copy, 'dist/cli/version.js'), 'utf8'), /quickStartMarker/);
  assert.notEqual(statSync(main).ino, before.ino, 'the new tree replaced dist/ by rename');
  assert.match(
    readFileSync(join(copy, 'dist/generated/completion-scripts.js'), 'utf8'),
    /bash completion for threatcol/,
  );
});

test('LISTEN_FAILED says npm start -- --port 8443 under npm start, --port 8443 otherwise', {
  skip: isRoot ? false : 'needs root to run as an ordinary user (port 443 is allowed to root)',
}, async (t) => {
  const home = makeTempDir(t);
  chmodSync(home, 0o777);
  const dataDir = join(home, 'data');
  const args = ['--port', '443', '--host', '127.0.0.1', '--data-dir', dataDir, '--log-format', 'json'];
  const viaNpm = await npm(['start', '--silent', '--', ...args], { uid: 65534, home });
  assert.equal(viaNpm.code, 69, viaNpm.stderr);
  assert.match(viaNpm.stderr, /LISTEN_FAILED: .*use npm start -- --port 8443/);
  const direct = await runCli(['serve', ...args], { uid: 65534, env: { HOME: home } });
  assert.equal(direct.code, 69, direct.stderr);
  assert.match(direct.stderr, /LISTEN_FAILED: .*use --port 8443/);
  assert.doesNotMatch(direct.stderr, /npm start/);
});
