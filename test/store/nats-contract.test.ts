// The store contract against the NATS backend: a real nats-server (JetStream, temp store dir, free loopback
// port) per test; the write fault is the server itself stopping and coming back on the same port and data.
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { encodeToken } from '../../src/store/nats/names.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { natsBackend } from '../helpers/nats-server.js';
import { runStoreContract } from './contract.js';

/** Waits until the store says it would accept an append (reconnected after a server restart). */
export async function untilHealthy(store: Store, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const health = await store.health();
    if (health.ok) return;
    if (Date.now() > deadline) throw new Error(`store not healthy: ${health.reason}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

runStoreContract('nats', async (t, overrides = {}) => {
  // 5 s for an acknowledgement, not natsBackend's 1.5 s: on a busy box (the suite's files run at once) the first
  // write to a bucket just made took longer, and a registry test failed on the timeout.
  const { node, dataDir, config } = await natsBackend(t, { 'nats.publishTimeoutMs': 5000, ...overrides });
  const logger = pino({ level: 'silent' });
  const store = await openStore(config, { dataDir, logger });
  await untilHealthy(store);
  return {
    config,
    store,
    open: () => openStore(config, { dataDir, logger }),
    failWrites: async () => {
      await node.kill();
      return async () => {
        await node.start();
        await untilHealthy(store);
      };
    },
    cleanup: () => store.close(),
    putRegistryEntry: async (name, value) => {
      const nc = await connect({ servers: node.url });
      try {
        const kv = await new Kvm(nc).open(config.nats.registryBucket);
        await kv.put(encodeToken(name), JSON.stringify(value));
      } finally {
        await nc.close();
      }
    },
  };
});
