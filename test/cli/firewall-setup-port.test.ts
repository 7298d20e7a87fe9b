// Black box: the PAN-OS setup printed by `sensor add`, `sensor rotate` and `sensor show --firewall` names the port
// the collector listens on (server.port, from the file, a THREATCOL_* variable or the default), not a fixed 443.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const profile = (port: string) => new RegExp(`protocol HTTPS, port ${port}, TLS version 1\\.2`);

test('the printed firewall setup names server.port: 8443 from the file, 9443 from the environment, 443 by default', async (t) => {
  const dir = makeTempDir(t);
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ dataDir: join(dir, 'data'), server: { port: 8443 } }));
  const add = await runCli(['sensor', 'add', 'fw-port', '--config', config]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stdout, profile('8443'));
  const [rotate, show, showJson, fromEnv, byDefault] = await Promise.all([
    runCli(['sensor', 'rotate', 'fw-port', '--config', config]),
    runCli(['sensor', 'show', 'fw-port', '--firewall', '--config', config]),
    runCli(['sensor', 'show', 'fw-port', '--firewall', '--json', '--config', config]),
    runCli(['sensor', 'show', 'fw-port', '--firewall', '--config', config], {
      env: { THREATCOL_SERVER_PORT: '9443' },
    }),
    runCli(['sensor', 'show', 'fw-port', '--firewall', '--data-dir', join(dir, 'data')]),
  ]);
  for (const r of [rotate, show, showJson, fromEnv, byDefault]) assert.equal(r.code, 0, r.stderr);
  assert.match(rotate.stdout, profile('8443'));
  assert.match(show.stdout, profile('8443'));
  assert.equal(
    (JSON.parse(showJson.stdout) as { server_profile: { port: number } }).server_profile.port,
    8443,
  );
  assert.match(fromEnv.stdout, profile('9443'));
  assert.match(byDefault.stdout, profile('443'));
});
