// `systemctl reload` (SIGHUP) re-reads the whole configuration: the real binary applies a changed log level
// and rate limit live, names the settings that need a restart at warn, and keeps serving with the previous
// configuration when the file has become invalid, saying why.
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { reloadStatus } from '../../src/daemon/run-service.js';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

async function start(t: { after(fn: () => unknown): void }, config: unknown, extraArgs: string[] = []) {
  const dataDir = makeTempDir(t);
  const configPath = join(makeTempDir(t), 'config.json');
  writeFileSync(configPath, JSON.stringify(config));
  const key = await addSensorCli(dataDir, 'fw1');
  const serve = await spawnServe(dataDir, ['--config', configPath, ...extraArgs]);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const send = (body: unknown = genericRecord()) =>
    post(serve.url, '/generic', body, { agent, sensor: 'fw1', key });
  /** Sends SIGHUP and resolves with the first line at or after `from` that `match` accepts. */
  const reload = async (match: (l: Record<string, unknown>) => boolean) => {
    const from = serve.logs.length;
    serve.child.kill('SIGHUP');
    let found: Record<string, unknown> | undefined;
    await until(
      () => {
        found = serve.logs.slice(from).find(match);
        return found !== undefined;
      },
      15_000,
      'the reload line',
    );
    return found as Record<string, unknown>;
  };
  return { serve, send, reload, write: (c: unknown) => writeFileSync(configPath, JSON.stringify(c)) };
}

test('a reload applies a changed log level and record rate limit without a restart', async (t) => {
  const { serve, send, reload, write } = await start(t, {
    log: { level: 'info' },
    rateLimit: { recordsPerSecond: 100_000, burst: 100_000 },
  });
  assert.equal((await send()).status, 200);
  assert.ok(!serve.logs.some((l) => l.level === 20), 'no debug line at level info');

  write({ log: { level: 'debug' }, rateLimit: { recordsPerSecond: 1, burst: 1000 } });
  const line = await reload((l) => l.msg === 'configuration reloaded');
  assert.deepEqual(line.applied, ['log.level', 'rateLimit.burst', 'rateLimit.recordsPerSecond']);
  assert.ok(!serve.logs.some((l) => l.level === 40), 'nothing needs a restart');

  // The bucket now holds at most 1000 records, refilled at one a second: 1000 pass, the next 100 are refused
  // (a slow box may refill a record or two between the requests, never a hundred).
  assert.equal((await send(Array.from({ length: 1000 }, () => genericRecord()))).status, 200);
  const refused = await send(Array.from({ length: 100 }, () => genericRecord()));
  assert.equal(refused.status, 429, refused.text);
  assert.ok(
    serve.logs.some((l) => l.level === 20),
    'debug lines once the level is debug',
  );
  const end = await serve.stop('SIGTERM');
  assert.deepEqual(end, { code: 0, signal: null }, serve.stderr());
});

test('under --workers the primary applies the record rate limit and says so once; each worker its own parts', async (t) => {
  const { serve, send, reload, write } = await start(
    t,
    { rateLimit: { recordsPerSecond: 100_000, burst: 100_000 } },
    ['--workers', '2'],
  );
  write({ log: { level: 'debug' }, rateLimit: { recordsPerSecond: 1, burst: 1000 } });
  const line = await reload((l) => l.msg === 'configuration reloaded');
  assert.deepEqual(line.applied, ['log.level', 'rateLimit.burst', 'rateLimit.recordsPerSecond']);
  assert.equal(line.worker, undefined, 'the primary says it');
  // Both workers read the file again (at debug, now that the level is debug).
  await until(
    () =>
      serve.logs.filter((l) => l.worker !== undefined && String(l.msg).startsWith('configuration reloaded'))
        .length === 2,
    15_000,
    'both workers reloaded',
  );
  assert.equal(serve.logs.filter((l) => l.msg === 'configuration reloaded' && l.level === 30).length, 1);
  assert.equal((await send(Array.from({ length: 1000 }, () => genericRecord()))).status, 200);
  assert.equal((await send(Array.from({ length: 100 }, () => genericRecord()))).status, 429);
  const end = await serve.stop('SIGTERM');
  assert.deepEqual(end, { code: 0, signal: null }, serve.stderr());
});

test('a reload names at warn the changed settings that need a restart, and applies none of them', async (t) => {
  const { serve, send, reload, write } = await start(t, { server: { maxConnectionsPerAddress: 100 } });
  write({ server: { maxConnectionsPerAddress: 50, maxRecordsPerRequest: 10 } });
  const warn = await reload((l) => l.level === 40);
  assert.deepEqual(warn.keys, ['server.maxConnectionsPerAddress', 'server.maxRecordsPerRequest']);
  assert.match(String(warn.msg), /restart/);
  assert.equal((await send()).status, 200);
  // Changed back: nothing is pending any more.
  write({ server: { maxConnectionsPerAddress: 100 } });
  const again = await reload((l) => l.msg === 'configuration reloaded: nothing to apply live');
  assert.ok(again);
  await new Promise((resolve) => setImmediate(resolve));
  const lastWarn = serve.logs.slice(serve.logs.indexOf(again)).find((l) => l.level === 40);
  assert.equal(lastWarn, undefined);
});

test('a reload with an invalid file keeps serving with the previous configuration and says why', async (t) => {
  const { serve, send, reload, write } = await start(t, {
    rateLimit: { recordsPerSecond: 1000, burst: 1000 },
  });
  write({ rateLimit: { recordsPerSecond: 'many' } });
  const refused = await reload((l) => l.level === 50);
  assert.match(String(refused.msg), /not reloaded/);
  assert.match(String(refused.err), /rateLimit\.recordsPerSecond/);
  // Still running, still with the old limits.
  assert.equal(serve.child.exitCode, null);
  for (let i = 0; i < 3; i++) assert.equal((await send()).status, 200);
  const end = await serve.stop('SIGTERM');
  assert.deepEqual(end, { code: 0, signal: null }, serve.stderr());
});

test('the status line systemd shows after a reload says what happened', () => {
  const at = 'listening on :: port 443';
  assert.equal(
    reloadStatus(at, { ok: true, applied: ['log.level'], restartNeeded: [] }),
    `${at}; configuration reloaded`,
  );
  assert.equal(
    reloadStatus(at, { ok: true, applied: [], restartNeeded: ['server.port', 'store.backend'] }),
    `${at}; configuration reloaded; restart to apply: server.port, store.backend`,
  );
  assert.equal(
    reloadStatus(at, { ok: false, reason: 'the configuration is invalid:\n  x: bad' }),
    `${at}; configuration NOT reloaded, the previous one stays in force: the configuration is invalid: x: bad`,
  );
});
