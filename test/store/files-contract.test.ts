// The store contract against the files backend: real files in a temp directory, faults injected in FileOps.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { type FileOps, nodeFileOps } from '../../src/store/file-ops.js';
import { openStore } from '../../src/store/open-store.js';
import { diskFullError, writeHalf } from '../helpers/file-faults.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { runStoreContract, type StoreFactory } from './contract.js';
import { runOutputContract } from './output-contract.js';

const factory: StoreFactory = async (t, overrides = {}) => {
  const dataDir = makeTempDir(t);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir, 'registry.pollIntervalMs': 100, ...overrides },
  });
  let failing = false;
  const fileOps: FileOps = {
    ...nodeFileOps,
    // Half the batch reaches the file, then ENOSPC: the writer must take the partial write back.
    writev: async (fd, buffers) => {
      if (!failing) return nodeFileOps.writev(fd, buffers);
      await writeHalf(fd, buffers);
      throw diskFullError();
    },
  };
  const logger = pino({ level: 'silent' });
  const store = await openStore(config, { dataDir, logger, fileOps });
  return {
    config,
    store,
    open: () => openStore(config, { dataDir, logger }),
    failWrites: () => {
      failing = true;
      return () => {
        failing = false;
      };
    },
    cleanup: () => store.close(),
    putRegistryEntry: async (_name, value) => {
      const path = join(dataDir, 'sensors.json');
      const data = JSON.parse(readFileSync(path, 'utf8')) as { sensors: unknown[] };
      data.sensors.push(value);
      writeFileSync(path, JSON.stringify(data));
    },
  };
};

runStoreContract('files', factory);
runOutputContract('files', factory, { retention: 'held' });
