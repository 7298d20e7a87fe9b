// Review finding: the admin listener (no token, loopback) answers any Host header. A web page the operator
// opens in a browser on the box (or through the SSH tunnel the README suggests) can DNS-rebind its own name
// to 127.0.0.1 and read /api/sensors, /api/feed and /metrics as same-origin: loopback binding alone does not
// keep other origins out. Expected: a Host that is not the listener's own address (or localhost) is refused.
import { strict as assert } from 'node:assert';
import { request } from 'node:http';
import { test } from 'node:test';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('admin listener: a request whose Host is a foreign name (DNS rebinding) is not served', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensorCli(dataDir, 'fw1');
  const serve = await spawnServe(dataDir);
  t.after(() => serve.stop('SIGKILL'));
  assert.ok(serve.adminUrl);
  const port = new URL(serve.adminUrl).port;
  const own = await getWithHost(`${serve.adminUrl}/api/sensors`, `127.0.0.1:${port}`);
  assert.equal(own.status, 200, 'control: the own address is served');
  const foreign = await getWithHost(`${serve.adminUrl}/api/sensors`, `rebind.attacker.example:${port}`);
  assert.notEqual(foreign.status, 200, `served to a foreign Host: ${foreign.body.slice(0, 200)}`);
});
