// The decisions store's contract against the files backend: one document in a temp data directory.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { openStore } from '../../src/store/open-store.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { runDecisionsContract } from './decisions-contract.js';

runDecisionsContract('files', async (t) => {
  const dataDir = makeTempDir(t);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir, 'registry.pollIntervalMs': 100 },
  });
  const logger = pino({ level: 'silent' });
  const store = await openStore(config, { dataDir, logger });
  t.after(() => store.close());
  return {
    store,
    open: () => openStore(config, { dataDir, logger }),
    putRaw: async (kind, key, value) => {
      const path = join(dataDir, 'decisions.json');
      const doc = JSON.parse(readFileSync(path, 'utf8')) as {
        entries: Record<string, Record<string, unknown>>;
      };
      doc.entries[kind] = { ...doc.entries[kind], [key]: value };
      writeFileSync(path, JSON.stringify(doc));
    },
  };
});
