// Review findings seen from outside: an unterminated /* in the config is refused, and the load generator's memory
// does not grow with --count.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, BIN, cleanEnv, runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('a configuration file with an unterminated /* comment is refused, naming the line', async (t) => {
  const dir = makeTempDir(t);
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    '{\n  "server": { "port": 8443 }\n}\n/* oops, the rest of the file was meant to count\n',
  );
  const r = await runCli(['sensor', 'list', '--config', file, '--data-dir', dir]);
  assert.equal(r.code, 78, r.stderr);
  assert.match(r.stderr, /CONFIG_INVALID: .*not valid JSON: unterminated \/\* comment starting on line 4/);
  writeFileSync(file, '{\n  /* a comment */ "server": { "port": 8443 } // and another\n}\n');
  assert.equal((await runCli(['sensor', 'list', '--config', file, '--data-dir', dir])).code, 0);
});

/** Virtual memory of a process in MiB (VmSize): counts what it allocated, touched or not. */
function vmSizeMiB(pid: number): number {
  const m = /^VmSize:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1]) / 1024;
}

test('send --count 100000000 does not allocate per request (fixed-size latency histogram)', async (t) => {
  const dir = makeTempDir(t);
  const key = await addSensorCli(dir, 'load');
  const serve = await spawnServe(dir, ['--log-level', 'debug']);
  t.after(() => serve.stop());
  /** Starts a paced load, waits until the server has accepted a request of it, and returns its VmSize. */
  const measure = async (count: number) => {
    const before = serve.logs.filter((l) => l.msg === 'accepted').length;
    const child = spawn(
      process.execPath,
      [
        BIN,
        'send',
        'generic',
        '--sample',
        '--count',
        String(count),
        '--rate',
        '20',
        '--url',
        serve.url,
        '--sensor',
        'load',
        '--key',
        key,
        '--data-dir',
        dir,
      ],
      { env: cleanEnv(), stdio: 'ignore' },
    );
    try {
      const deadline = Date.now() + 20_000;
      while (serve.logs.filter((l) => l.msg === 'accepted').length < before + 3) {
        assert.ok(Date.now() < deadline, 'the load generator never got going');
        await new Promise((r) => setTimeout(r, 25));
      }
      return vmSizeMiB(child.pid as number);
    } finally {
      child.kill('SIGKILL');
    }
  };
  const small = await measure(1000);
  const huge = await measure(100_000_000);
  t.diagnostic(`VmSize: --count 1000 ${small.toFixed(0)} MiB, --count 100000000 ${huge.toFixed(0)} MiB`);
  // An array of every latency would be 800 MB more.
  assert.ok(huge - small < 200, `VmSize grew by ${(huge - small).toFixed(0)} MiB`);
});

test("a removed registry file empties the running daemon's sensors (lowdb never keeps stale data)", async (t) => {
  const dir = makeTempDir(t);
  const key = await addSensorCli(dir, 'fw');
  const serve = await spawnServe(dir);
  t.after(() => serve.stop());
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  const send = () => post(serve.url, '/generic', genericRecord(), { sensor: 'fw', key, agent });
  assert.equal((await send()).status, 200);
  rmSync(join(dir, 'sensors.json'));
  const deadline = Date.now() + 10_000;
  let status = 200;
  while (status === 200 && Date.now() < deadline) status = (await send()).status;
  assert.equal(status, 401);
  const list = await runCli(['sensor', 'list', '--data-dir', dir, '--json']);
  assert.equal(list.stdout, '[]\n');
});
