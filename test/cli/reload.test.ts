// `threatcol reload`, what ExecReload= runs: it signals the daemon named by $MAINPID (no /bin/kill needed), and
// fails with the reason when the configuration file is invalid while the daemon keeps serving.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, spawnServe } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

test('reload without $MAINPID or --pid is a usage error that says what to run', async () => {
  const r = await runCli(['reload']);
  assert.equal(r.code, 64, r.stderr);
  assert.match(r.stderr, /^threatcol: USAGE: .*systemctl reload threatcol/m);
});

test('reload of a process that is gone says so (69)', async () => {
  const gone = spawnSync(process.execPath, ['-e', '0']).pid;
  const r = await runCli(['reload'], { env: { MAINPID: String(gone) } });
  assert.equal(r.code, 69, r.stderr);
  assert.match(r.stderr, /CONNECTION_FAILED: no process \d+/);
});

test('reload signals $MAINPID; an invalid file fails it (78) while the daemon keeps serving', async (t) => {
  const dataDir = makeTempDir(t);
  const config = join(makeTempDir(t), 'config.json');
  writeFileSync(config, JSON.stringify({ log: { level: 'info' } }));
  const serve = await spawnServe(dataDir, ['--config', config]);
  t.after(() => serve.stop('SIGKILL'));
  const env = { MAINPID: String(serve.child.pid) };
  const logged = (msg: string) => () => serve.logs.some((l) => l.msg === msg);

  writeFileSync(config, JSON.stringify({ log: { level: 'debug' } }));
  const ok = await runCli(['reload', '--config', config], { env });
  assert.equal(ok.code, 0, ok.stderr);
  await until(logged('configuration reloaded'), 15_000, 'the reload');

  writeFileSync(config, '{ "log": { "level": "debug" }');
  const bad = await runCli(['reload', '--config', config], { env });
  assert.equal(bad.code, 78, bad.stderr);
  assert.match(bad.stderr, /keeps its running configuration/);
  assert.match(bad.stderr, /CONFIG_INVALID/);
  await until(
    logged('configuration not reloaded: the running configuration stays in force'),
    15_000,
    'the refusal',
  );
  assert.equal(serve.child.exitCode, null);
  assert.deepEqual(await serve.stop('SIGTERM'), { code: 0, signal: null });
});
