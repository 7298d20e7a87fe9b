// Black box: `outputs list` (and `sensor show --syslog-errors`, which ask the same admin listener) with a token
// the running daemon refuses (401) says so and exits 77, as `check` reports a refused admin.token, instead of
// reading as "no daemon" and showing every output stopped.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until } from '../helpers/until.js';
import { startReceiver } from './webhook-receiver.js';

const TOKEN = 'the-daemons-admin-token';

test('outputs list with an admin token the daemon refuses says so and exits 77, never "stopped"', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver({});
  t.after(() => receiver.close());
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      admin: { token: TOKEN },
      outputs: { hook: { type: 'webhook', url: receiver.url } },
    }),
  );
  const serve = await spawnServe(dir, ['--config', config]);
  t.after(() => serve.stop('SIGKILL'));
  const admin = new URL(serve.adminUrl as string).host;
  const cli = (token: string, ...args: string[]) =>
    runCli([...args, '--data-dir', dir, '--config', config, '--admin-listen', admin], {
      env: { THREATCOL_ADMIN_TOKEN: token },
    });

  // The reference: the daemon's own token lists its output running.
  await until(
    async () => {
      const listed = await cli(TOKEN, 'outputs', 'list', '--json');
      return (JSON.parse(listed.stdout) as { outputs: { state: string }[] }).outputs[0]?.state === 'running';
    },
    OUTPUTS_THREAD_MS,
    'the output running',
  );

  const wrong = 'not-the-daemons-token';
  for (const args of [
    ['outputs', 'list'],
    ['outputs', 'list', '--json'],
  ]) {
    const refused = await cli(wrong, ...args);
    assert.equal(refused.code, 77, `${args.join(' ')}: ${refused.stdout}${refused.stderr}`);
    assert.match(refused.stderr, /ADMIN_TOKEN_REFUSED: .*refused admin\.token \(HTTP 401\)/);
    assert.match(refused.stderr, new RegExp(admin.replaceAll('.', '\\.')));
    assert.doesNotMatch(refused.stdout + refused.stderr, /stopped|no daemon/);
    assert.doesNotMatch(refused.stderr, new RegExp(wrong), 'the token is not echoed');
  }
  await addSensorCli(dir, 'fw1');
  const syslog = await cli(wrong, 'sensor', 'show', 'fw1', '--syslog-errors');
  assert.equal(syslog.code, 77, syslog.stderr);
  assert.match(syslog.stderr, /ADMIN_TOKEN_REFUSED: .*refused admin\.token \(HTTP 401\)/);
});
