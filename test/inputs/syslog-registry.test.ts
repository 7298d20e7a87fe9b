// A sensor's syslog identity through both registry backends: stored by add, replaced and removed by set.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { openStore } from '../../src/store/open-store.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { makeTestCa } from '../helpers/test-ca.js';

for (const backend of ['files', 'nats'] as const) {
  test(`${backend}: add stores the syslog identity, set replaces it, set null removes it; other sensors have none`, async (t) => {
    const dataDir = makeTempDir(t);
    const overrides: Record<string, unknown> = { dataDir };
    if (backend === 'nats') {
      const node = await startNatsServer(t);
      Object.assign(overrides, { 'store.backend': 'nats', 'nats.servers': [node.url] });
    }
    const { config } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent/threatcol.json', overrides });
    const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
    t.after(() => store.close());
    const identity = { format: 'panos', from: ['192.0.2.0/24'], client_cert_sha256: ['ab'.repeat(32)] };
    await store.registry.add({ name: 'pa', syslog: identity });
    await store.registry.add({ name: 'https-only' });
    const syslogOf = async (name: string) =>
      (await store.registry.list()).find((s) => s.name === name)?.syslog;
    assert.deepEqual(await syslogOf('pa'), identity);
    assert.equal(await syslogOf('https-only'), undefined);
    // A CA-identified sender (--client-ca, --client-cn): its CA's PEM is kept in the registry.
    const next = {
      format: 'cef',
      from: [],
      client_cert_sha256: ['cd'.repeat(32)],
      client_ca: readFileSync(makeTestCa(dataDir, 'branch-ca').certPath, 'utf8'),
      client_cn: 'fw.example.org',
    };
    assert.deepEqual((await store.registry.set('pa', { syslog: next })).syslog, next);
    assert.deepEqual(await syslogOf('pa'), next);
    await store.registry.set('pa', { description: 'kept' });
    assert.deepEqual(await syslogOf('pa'), next, 'a change of something else keeps the identity');
    assert.equal((await store.registry.set('pa', { syslog: null })).syslog, undefined);
    assert.equal(await syslogOf('pa'), undefined);
  });
}
