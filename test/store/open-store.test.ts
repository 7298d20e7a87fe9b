// openStore: the store keys of DESIGN 10 with their defaults and environment variables, the files backend by
// default, and a clear CONFIG_INVALID when the NATS backend is asked for but not built in.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { ThreatcolError } from '../../src/errors.js';
import { openStore } from '../../src/store/open-store.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const none = '/nonexistent/threatcol/config.json';
const logger = pino({ level: 'silent' });

test('store and NATS keys have the DESIGN 10 defaults; the server list comes comma-separated from the environment', () => {
  const { config } = loadConfig({ env: {}, defaultConfigPath: none });
  assert.equal(config.store.backend, 'files');
  assert.deepEqual(config.nats.servers, ['nats://127.0.0.1:4222']);
  assert.equal(config.nats.stream, 'THREATCOL');
  assert.equal(config.nats.registryBucket, 'threatcol_sensors');
  assert.equal(config.nats.statsBucket, 'threatcol_stats');
  assert.equal(config.nats.outputsBucket, 'threatcol_outputs');
  assert.equal(config.nats.replicas, 1);
  assert.equal(config.nats.publishTimeoutMs, 5000);
  assert.equal(config.nats.tls.ca, null);
  assert.equal(config.dedupe.windowSeconds, 120);
  const env = {
    THREATCOL_STORE_BACKEND: 'nats',
    THREATCOL_NATS_SERVERS: 'nats://10.0.0.1:4222, nats://10.0.0.2:4222',
    THREATCOL_DEDUPE_WINDOW_SECONDS: '0',
  };
  const fromEnv = loadConfig({ env, defaultConfigPath: none }).config;
  assert.equal(fromEnv.store.backend, 'nats');
  assert.deepEqual(fromEnv.nats.servers, ['nats://10.0.0.1:4222', 'nats://10.0.0.2:4222']);
  assert.equal(fromEnv.dedupe.windowSeconds, 0);
  assert.throws(
    () => loadConfig({ env: { THREATCOL_STORE_BACKEND: 'sqlite' }, defaultConfigPath: none }),
    (e: unknown) =>
      e instanceof ThreatcolError && e.code === 'CONFIG_INVALID' && /store\.backend/.test(e.message),
  );
});

test('the files backend opens without creating anything; reading an absent store gives nothing', async (t) => {
  const dataDir = join(makeTempDir(t), 'absent');
  const { config } = loadConfig({ env: {}, defaultConfigPath: none, overrides: { dataDir } });
  const store = await openStore(config, { dataDir, logger });
  assert.equal(store.backend, 'files');
  assert.deepEqual(await store.registry.list(), []);
  assert.deepEqual({ ...(await store.stats.read()) }, {});
  const recent = await store.reader.readRecent({ limit: 10 });
  assert.deepEqual(recent.records, []);
  assert.equal((await store.health()).ok, true);
  await store.close();
  assert.equal(existsSync(dataDir), false);
});
