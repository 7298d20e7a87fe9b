// The decisions store's contract against the NATS backend: a real nats-server, one KV key per entry.
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { encodeToken } from '../../src/store/nats/names.js';
import { openStore } from '../../src/store/open-store.js';
import { natsBackend } from '../helpers/nats-server.js';
import { runDecisionsContract } from './decisions-contract.js';

runDecisionsContract('nats', async (t) => {
  const { node, dataDir, config } = await natsBackend(t);
  const logger = pino({ level: 'silent' });
  const store = await openStore(config, { dataDir, logger });
  t.after(() => store.close());
  for (let health = await store.health({ waitMs: 10_000 }); !health.ok; health = await store.health()) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    store,
    open: () => openStore(config, { dataDir, logger }),
    putRaw: async (kind, key, value) => {
      const nc = await connect({ servers: node.url });
      try {
        const kv = await new Kvm(nc).open(config.blocklist.bucket);
        await kv.put(`${kind}.${encodeToken(key)}`, JSON.stringify(value));
      } finally {
        await nc.close();
      }
    },
  };
});
