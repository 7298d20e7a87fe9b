// A store opened on a data directory with the defaults and some dotted-key overrides, as a command opens it
// (no configuration file), logging nothing.
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';

export function openStoreAt(dataDir: string, overrides: Record<string, unknown> = {}): Promise<Store> {
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir, ...overrides },
  });
  return openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
}
