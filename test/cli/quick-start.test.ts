// The quick start from a checkout: `npx threatcol` runs the CLI, and LISTEN_FAILED's advice works under npm start.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cleanEnv, runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const isRoot = process.getuid?.() === 0;

function npm(args: string[], options: { uid?: number; home: string }) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('npm', args, {
      cwd: ROOT,
      env: cleanEnv({ HOME: options.home, npm_config_update_notifier: 'false' }),
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('npx threatcol runs the CLI of a checkout (threatcol itself is not on PATH after npm ci)', async (t) => {
  const r = await npm(['exec', '--no-install', '--', 'threatcol', '--version'], { home: makeTempDir(t) });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^threatcol \d+\.\d+\.\d+\n/);
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
